import { render, type RenderOptions } from '@testing-library/react'
import type { ReactElement } from 'react'

import { AppProvider } from '@/app/provider'

/** Render a feature's component inside the app's providers (a fresh query cache each time). */
export function renderWithProviders(ui: ReactElement, options?: Omit<RenderOptions, 'wrapper'>) {
  return render(ui, { wrapper: AppProvider, ...options })
}
