const consent = ['consent'] as const

/** Every query key of the oauth feature, for its queries and its invalidations alike. */
export const oauthKeys = {
  connections: ['connections'] as const,
  consent: (tx: string) => [...consent, tx] as const,
}
