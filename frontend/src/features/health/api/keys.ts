/** Every query key of the health feature, for its queries and its invalidations alike. */
export const healthKeys = {
  health: ['health'],
  readiness: ['readiness'],
} as const
