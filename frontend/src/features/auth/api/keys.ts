/** Every query key of the auth feature, for its queries and its invalidations alike. */
export const authKeys = {
  me: ['me'],
  signInOptions: ['sign-in-options'],
} as const
