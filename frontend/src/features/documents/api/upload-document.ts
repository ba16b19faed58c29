import { ApiError } from '@/lib/api-client'

import type { Document } from './documents'

export type UploadFields = {
  workspace?: string
  tags: string[]
  visibility: 'org' | 'private'
  /** A file uploaded before (the same path, by the same person, in the workspace) becomes that
   *  document's new version rather than a second document. */
  replace?: boolean
}

export type UploadResult = Document & { unchanged?: boolean; replaced?: boolean }

/** Where a file came from: its path within a chosen folder, else its name. Relative links in
 *  it resolve from there, and a second upload from the same path is recognised. */
export function sourceOf(file: File): string {
  return file.webkitRelativePath || file.name
}

/**
 * Upload one file as multipart (`POST /api/documents`), reporting the bytes sent. XHR rather
 * than fetch: fetch reports no upload progress. The browser adds our Origin, which the server
 * requires of a write with the session cookie.
 */
export function uploadDocument(
  file: File,
  fields: UploadFields,
  onProgress: (fraction: number) => void,
  signal?: AbortSignal,
): Promise<UploadResult> {
  const form = new FormData()
  form.append('file', file, file.name)
  if (fields.workspace) form.append('workspace', fields.workspace)
  if (fields.tags.length) form.append('tags', fields.tags.join(','))
  form.append('visibility', fields.visibility)
  form.append('source', sourceOf(file))
  if (fields.replace) form.append('replace', 'true')

  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open('POST', '/api/documents')
    xhr.setRequestHeader('Accept', 'application/json')
    xhr.responseType = 'json'
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total)
    }
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve(xhr.response as UploadResult)
      else reject(new ApiError(xhr.status, xhr.response))
    }
    xhr.onerror = () => {
      reject(new TypeError('Failed to fetch'))
    }
    xhr.onabort = () => {
      reject(new DOMException('Aborted', 'AbortError'))
    }
    signal?.addEventListener('abort', () => {
      xhr.abort()
    })
    xhr.send(form)
  })
}
