const all = ['dashboard'] as const

/** Every query key of the dashboard: its figures, its feed, and the documentation gaps. */
export const dashboardKeys = {
  all,
  summary: [...all, 'summary'] as const,
  activity: [...all, 'activity'] as const,
  gaps: [...all, 'gaps'] as const,
}
