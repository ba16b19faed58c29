/// <reference types="vitest/config" />
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath, URL } from 'node:url'

import tailwindcss from '@tailwindcss/vite'
import react from '@vitejs/plugin-react'
import { defineConfig, type Plugin } from 'vite'

/**
 * The API reference at `/docs` is Swagger UI, served by Corpus itself so that it works with no
 * internet (FastAPI's default loads it from a CDN). Its files come from `swagger-ui-dist`, the
 * Swagger team's own build, pinned in package.json, and are copied into the build under
 * `swagger-ui/`; `public/swagger-ui/init.js` starts it (app/spa.py serves the page).
 */
function swaggerUi(): Plugin {
  const require = createRequire(import.meta.url)
  const root = dirname(require.resolve('swagger-ui-dist/package.json'))
  return {
    name: 'corpus-swagger-ui',
    apply: 'build',
    generateBundle() {
      for (const file of ['swagger-ui-bundle.js', 'swagger-ui.css', 'LICENSE', 'NOTICE']) {
        this.emitFile({ type: 'asset', fileName: `swagger-ui/${file}`, source: readFileSync(join(root, file)) })
      }
    },
  }
}

// The FastAPI backend during local development (`uvicorn ... --port 8000`).
const backend = 'http://127.0.0.1:8000'
const proxy = {
  '/api': backend,
  '/healthz': backend,
  '/readyz': backend,
  '/mcp': backend,
}

export default defineConfig({
  plugins: [react(), tailwindcss(), swaggerUi()],
  resolve: {
    alias: { '@': fileURLToPath(new URL('./src', import.meta.url)) },
  },
  server: { proxy },
  preview: { proxy },
  build: { outDir: 'dist' },
  test: {
    environment: 'happy-dom',
    setupFiles: ['./src/testing/setup.ts'],
    include: ['src/**/*.test.{ts,tsx}'],
    restoreMocks: true,
    // Above Testing Library's bound on a wait (src/testing/setup.ts), so that a screen that
    // never comes fails with what was on it rather than with a bare timeout.
    testTimeout: 30_000,
    unstubGlobals: true,
    // The test files share one happy-dom environment instead of building one each: 4 s of CPU
    // for the suite against 20 s (`make test` runs it beside pytest on two cores). Each file
    // still runs the setup file, and Testing Library unmounts after every test; the suite passes
    // with its files shuffled (`npx vitest run --sequence.shuffle`).
    isolate: false,
  },
})
