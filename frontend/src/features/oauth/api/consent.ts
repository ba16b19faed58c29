import { queryOptions, useMutation, useQuery } from '@tanstack/react-query'

import { api, unwrap } from '@/lib/api-client'
import type { components } from '@/lib/api/schema'

import { oauthKeys } from './keys'

export type ConsentRequest = components['schemas']['ConsentRequest']

export const getConsentQueryOptions = (tx: string) =>
  queryOptions({
    queryKey: oauthKeys.consent(tx),
    queryFn: ({ signal }) =>
      unwrap(api.GET('/api/oauth/consent/{tx}', { params: { path: { tx } }, signal })),
    staleTime: Infinity,
  })

export const useConsent = (tx: string) => useQuery(getConsentQueryOptions(tx))

export const useAnswerConsent = (tx: string) =>
  useMutation({
    mutationFn: (approve: boolean) =>
      unwrap(
        api.POST('/api/oauth/consent/{tx}', { params: { path: { tx } }, body: { approve } }),
      ),
  })
