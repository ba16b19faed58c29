import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'

import { api, unwrap } from '@/lib/api-client'
import type { components } from '@/lib/api/schema'

export type Source = components['schemas']['KnowledgeSource']
export type SourceCreate = components['schemas']['SourceCreate']
export type SourceUpdate = components['schemas']['SourceUpdate']
export type SourceRun = components['schemas']['SourceRun']
export type Provenance = components['schemas']['Provenance']
export type StaleDocument = components['schemas']['StaleDocument']

const sourceKeys = {
  all: ['sources'] as const,
  of: (slug: string) => ['sources', 'workspace', slug] as const,
  runs: (id: string) => ['sources', 'runs', id] as const,
}

export const useSources = (slug: string) =>
  useQuery({
    queryKey: sourceKeys.of(slug),
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/workspaces/{slug}/sources', { params: { path: { slug } }, signal })),
    enabled: slug !== '',
  })

export const useSourceRuns = (id: string) =>
  useQuery({
    queryKey: sourceKeys.runs(id),
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/sources/{source_id}/runs', { params: { path: { source_id: id }, query: { limit: 5 } }, signal })),
  })

function useInvalidate() {
  const queryClient = useQueryClient()
  // A sync adds and removes documents: the lists, counts and stale flags all move.
  return () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: sourceKeys.all }),
      queryClient.invalidateQueries({ queryKey: ['workspaces'] }),
      queryClient.invalidateQueries({ queryKey: ['documents'] }),
      queryClient.invalidateQueries({ queryKey: ['provenance'] }),
      queryClient.invalidateQueries({ queryKey: ['stale'] }),
    ])
}

export const useCreateSource = () => {
  const invalidate = useInvalidate()
  return useMutation({
    mutationFn: ({ slug, body }: { slug: string; body: SourceCreate }) =>
      unwrap(api.POST('/api/workspaces/{slug}/sources', { params: { path: { slug } }, body })),
    onSuccess: invalidate,
  })
}

export const useUpdateSource = () => {
  const invalidate = useInvalidate()
  return useMutation({
    mutationFn: ({ id, body }: { id: string; body: SourceUpdate }) =>
      unwrap(api.PATCH('/api/sources/{source_id}', { params: { path: { source_id: id } }, body })),
    onSuccess: invalidate,
  })
}

export const useDeleteSource = () => {
  const invalidate = useInvalidate()
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(api.DELETE('/api/sources/{source_id}', { params: { path: { source_id: id } } })),
    onSuccess: invalidate,
  })
}

export const useSyncSource = () => {
  const invalidate = useInvalidate()
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(api.POST('/api/sources/{source_id}/sync', { params: { path: { source_id: id } } })),
    onSettled: invalidate,
  })
}

export const useProvenance = (documentId: string) =>
  useQuery({
    queryKey: ['provenance', documentId],
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/documents/{document_id}/provenance', { params: { path: { document_id: documentId } }, signal })),
  })

export const useStaleDocuments = () =>
  useQuery({
    queryKey: ['stale'],
    queryFn: ({ signal }) => unwrap(api.GET('/api/sources/stale', { params: { query: { limit: 20 } }, signal })),
  })
