import { keepPreviousData, queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'

import { api, unwrap } from '@/lib/api-client'
import type { components } from '@/lib/api/schema'

import { chatKeys } from './keys'

export type Chat = components['schemas']['Chat']
export type ChatWithMessages = components['schemas']['ChatWithMessages']
export type ChatMessage = components['schemas']['ChatMessage']
export type ChatRun = components['schemas']['ChatRun']

/** Stop one of the caller's runs that goes on without its stream (a chat's deep run). */
export const cancelRun = (id: string) =>
  unwrap(api.POST('/api/runs/{run_id}/cancel', { params: { path: { run_id: id } } }))

export const getChatsQueryOptions = (q: string) =>
  queryOptions({
    queryKey: chatKeys.list(q),
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/chats', { params: { query: { q: q || undefined, limit: 100 } }, signal })),
    placeholderData: keepPreviousData,
    staleTime: 10_000,
  })

export const useChats = (q: string) => useQuery(getChatsQueryOptions(q))

export const getChatQueryOptions = (id: string) =>
  queryOptions({
    queryKey: chatKeys.detail(id),
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/chats/{chat_id}', { params: { path: { chat_id: id } }, signal })),
    staleTime: 0,
  })

/** A chat, read again every few seconds while one of its runs goes on: its turn appears
 *  when it lands (ADR 0030). */
export const useChat = (id: string | undefined) =>
  useQuery({
    ...getChatQueryOptions(id ?? ''),
    enabled: Boolean(id),
    refetchInterval: (query) =>
      query.state.data?.runs?.some((run) => run.status === 'running') ? 2000 : false,
  })

export function useCancelRun(chatId: string | undefined) {
  const client = useQueryClient()
  return useMutation({
    mutationFn: cancelRun,
    onSettled: () => {
      if (chatId) void client.invalidateQueries({ queryKey: chatKeys.detail(chatId) })
    },
  })
}

export function useRenameChat() {
  const client = useQueryClient()
  return useMutation({
    mutationFn: ({ id, title }: { id: string; title: string }) =>
      unwrap(api.PATCH('/api/chats/{chat_id}', { params: { path: { chat_id: id } }, body: { title } })),
    onSuccess: (chat) => {
      void client.invalidateQueries({ queryKey: chatKeys.lists })
      void client.invalidateQueries({ queryKey: chatKeys.detail(chat.id) })
    },
  })
}

export function useDeleteChat() {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(api.DELETE('/api/chats/{chat_id}', { params: { path: { chat_id: id } } })),
    onSuccess: (_, id) => {
      client.removeQueries({ queryKey: chatKeys.detail(id) })
      void client.invalidateQueries({ queryKey: chatKeys.lists })
    },
  })
}

export const getPolicyQueryOptions = () =>
  queryOptions({
    queryKey: chatKeys.policy,
    queryFn: ({ signal }) => unwrap(api.GET('/api/policy', { signal })),
    staleTime: 5 * 60_000,
  })

export const usePolicy = () => useQuery(getPolicyQueryOptions())

/** The tags of the documents the person may see, the most used first. */
export const getTagsQueryOptions = () =>
  queryOptions({
    queryKey: chatKeys.tags,
    queryFn: ({ signal }) => unwrap(api.GET('/api/tags', { params: { query: { limit: 200 } }, signal })),
    staleTime: 60_000,
  })

export const useTags = () => useQuery(getTagsQueryOptions())
