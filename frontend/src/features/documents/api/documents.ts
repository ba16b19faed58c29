import {
  keepPreviousData,
  queryOptions,
  useMutation,
  useQuery,
  useQueryClient,
} from '@tanstack/react-query'

import { api, unwrap } from '@/lib/api-client'
import type { components, paths } from '@/lib/api/schema'
import { workspaceKeys } from '@/lib/workspaces'

import { documentKeys } from './keys'

export type Document = components['schemas']['Document']
// A listed document: a synced one carries its path, commit and whether it may be stale.
export type ListedDocument = components['schemas']['SyncedDocument']
export type DocumentWithContent = components['schemas']['DocumentWithContent']
export type DocumentUpdate = NonNullable<
  paths['/api/documents/{document_id}']['patch']['requestBody']
>['content']['application/json']
export type DocumentCreate = NonNullable<
  paths['/api/documents']['post']['requestBody']
>['content']['application/json']
export type Chunk = components['schemas']['Chunk']

export type DocumentFilters = {
  workspace?: string
  tag?: string
  owner?: string
  visibility?: 'org' | 'private'
  q?: string
  stale?: boolean
  cursor?: string
}

const PAGE_SIZE = 25

export const getDocumentsQueryOptions = (filters: DocumentFilters = {}) =>
  queryOptions({
    queryKey: documentKeys.list(filters),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/documents', { params: { query: { ...filters, limit: PAGE_SIZE } }, signal }),
      ),
    placeholderData: keepPreviousData,
    staleTime: 10_000,
  })

export const useDocuments = (filters: DocumentFilters) =>
  useQuery(getDocumentsQueryOptions(filters))

export const getDocumentQueryOptions = (id: string) =>
  queryOptions({
    queryKey: documentKeys.detail(id),
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/documents/{document_id}', { params: { path: { document_id: id } }, signal })),
  })

export const useDocument = (id: string) => useQuery(getDocumentQueryOptions(id))

export const getChunksQueryOptions = (id: string) =>
  queryOptions({
    queryKey: documentKeys.chunks(id),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/documents/{document_id}/chunks', {
          params: { path: { document_id: id } },
          signal,
        }),
      ),
  })

export const useChunks = (id: string) => useQuery(getChunksQueryOptions(id))

export const useRelated = (id: string) =>
  useQuery({
    queryKey: documentKeys.related(id),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/documents/{document_id}/related', {
          params: { path: { document_id: id }, query: { limit: 5 } },
          signal,
        }),
      ),
  })

export const useBacklinks = (id: string) =>
  useQuery({
    queryKey: documentKeys.backlinks(id),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/documents/{document_id}/backlinks', {
          params: { path: { document_id: id } },
          signal,
        }),
      ),
  })

/** Where each link in a document leads: the document it reaches, or none (not in the corpus). */
export const useDocumentLinks = (id: string) =>
  useQuery({
    queryKey: documentKeys.links(id),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET('/api/documents/{document_id}/links', {
          params: { path: { document_id: id } },
          signal,
        }),
      ),
  })

/** After documents were added or changed: every document query, and the workspaces (their
 *  counts, and a workspace an upload made). */
export function useInvalidateDocuments() {
  const queryClient = useQueryClient()
  return () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: documentKeys.all }),
      queryClient.invalidateQueries({ queryKey: workspaceKeys.all }),
    ])
}

export const useCreateDocument = () => {
  const invalidate = useInvalidateDocuments()
  return useMutation({
    mutationFn: (body: DocumentCreate) => unwrap(api.POST('/api/documents', { body })),
    onSuccess: invalidate,
  })
}

export const useUpdateDocument = (id: string) => {
  const invalidate = useInvalidateDocuments()
  return useMutation({
    mutationFn: (body: DocumentUpdate) =>
      unwrap(
        api.PATCH('/api/documents/{document_id}', { params: { path: { document_id: id } }, body }),
      ),
    onSuccess: invalidate,
  })
}

export const useDeleteDocument = () => {
  const queryClient = useQueryClient()
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(api.DELETE('/api/documents/{document_id}', { params: { path: { document_id: id } } })),
    onSuccess: async (_, id) => {
      queryClient.removeQueries({ queryKey: documentKeys.detail(id) })
      await queryClient.invalidateQueries({ queryKey: documentKeys.lists })
      await queryClient.invalidateQueries({ queryKey: workspaceKeys.all })
    },
  })
}

export type SampleLoaded = components['schemas']['SampleLoaded']

/** Admins: load the sample documents (`corpus seed`'s) into workspace `sample`; a second load
 *  changes nothing. */
export const useLoadSampleDocuments = () => {
  const invalidate = useInvalidateDocuments()
  return useMutation({
    mutationFn: () => unwrap(api.POST('/api/documents/sample')),
    onSuccess: invalidate,
  })
}
