import type { DefaultOptions } from '@tanstack/react-query'

/** Every query's defaults. No retries: a failure shows at once and "Check again" (or the next
 *  visit) asks again; a minute's staleness spares refetches on every mount. */
export const queryConfig = {
  queries: {
    retry: false,
    refetchOnWindowFocus: false,
    staleTime: 60_000,
  },
} satisfies DefaultOptions

/** What a `use<Noun>` hook lets its caller override: everything but the key and the function,
 *  which belong to the feature's `get<Noun>QueryOptions`. */
export type QueryConfig<T extends (...args: never[]) => unknown> = Omit<
  ReturnType<T>,
  'queryKey' | 'queryFn'
>
