import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'

import { api, unwrap } from '@/lib/api-client'
import type { components } from '@/lib/api/schema'
import { workspaceKeys } from '@/lib/workspaces'

export type WorkspaceCreate = components['schemas']['WorkspaceCreate']
export type WorkspaceUpdate = components['schemas']['WorkspaceUpdate']
export type Policy = components['schemas']['Policy']
export type ContextBlock = components['schemas']['ContextBlock']

const policyKey = ['policy'] as const

function useInvalidate() {
  const queryClient = useQueryClient()
  // The policy names workspaces (its missing ones, its licenses); the audit log records both.
  return () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: workspaceKeys.all }),
      queryClient.invalidateQueries({ queryKey: policyKey }),
      queryClient.invalidateQueries({ queryKey: ['context'] }),
      queryClient.invalidateQueries({ queryKey: ['audit'] }),
    ])
}

export const useCreateWorkspace = () => {
  const invalidate = useInvalidate()
  return useMutation({
    mutationFn: (body: WorkspaceCreate) => unwrap(api.POST('/api/workspaces', { body })),
    onSuccess: invalidate,
  })
}

export const useUpdateWorkspace = () => {
  const invalidate = useInvalidate()
  return useMutation({
    mutationFn: ({ slug, body }: { slug: string; body: WorkspaceUpdate }) =>
      unwrap(api.PATCH('/api/workspaces/{slug}', { params: { path: { slug } }, body })),
    onSuccess: invalidate,
  })
}

export const useDeleteWorkspace = () => {
  const invalidate = useInvalidate()
  return useMutation({
    mutationFn: (slug: string) =>
      unwrap(api.DELETE('/api/workspaces/{slug}', { params: { path: { slug } } })),
    onSuccess: invalidate,
  })
}

export const usePolicy = () =>
  useQuery({
    queryKey: policyKey,
    queryFn: ({ signal }) => unwrap(api.GET('/api/policy', { signal })),
  })

export const useSetPersona = () => {
  const invalidate = useInvalidate()
  return useMutation({
    mutationFn: ({ slug, workspaces }: { slug: string; workspaces: string[] }) =>
      unwrap(api.PUT('/api/policy/personas/{slug}', { params: { path: { slug } }, body: { workspaces } })),
    onSuccess: invalidate,
  })
}

export const useResetPersona = () => {
  const invalidate = useInvalidate()
  return useMutation({
    mutationFn: (slug: string) =>
      unwrap(api.DELETE('/api/policy/personas/{slug}', { params: { path: { slug } } })),
    onSuccess: invalidate,
  })
}

/** The context block a persona would get for a question (a preview: runs the real search). */
export const useContextPreview = (persona: string, query: string) =>
  useQuery({
    queryKey: ['context', persona, query],
    queryFn: ({ signal }) =>
      unwrap(api.POST('/api/context', { body: { persona, query, top_k: 5 }, signal })),
    enabled: Boolean(persona && query),
  })
