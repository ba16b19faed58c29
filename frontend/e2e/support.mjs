// What the browser tests stand on: a real `corpus serve` over an embedded PostgreSQL in a
// temporary data folder (hash embeddings), Debian's Chromium driven by playwright-core, axe-core
// in every screen, and screenshots of each screen in both themes at desktop and phone width.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { chromium } from 'playwright-core'

const here = dirname(fileURLToPath(import.meta.url))
export const ROOT = resolve(here, '..', '..')
export const SHOTS = resolve(here, 'screenshots')
const require = createRequire(import.meta.url)
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8')

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
// Root needs --no-sandbox; the rest keep Chromium off the network it may not reach.
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-dev-shm-usage',
]

export const VIEWPORTS = {
  desktop: { width: 1366, height: 860 },
  phone: { width: 390, height: 844 },
}
export const THEMES = ['light', 'dark']

function python() {
  if (process.env.CORPUS_PYTHON) return process.env.CORPUS_PYTHON
  const venv = join(ROOT, '.venv', 'bin', 'python')
  return existsSync(venv) ? venv : 'python3'
}

async function freePort() {
  const server = createServer()
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok))
  const { port } = server.address()
  await new Promise((ok) => server.close(ok))
  return port
}

async function waitFor(check, what, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const result = await check()
    if (result) return result
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((ok) => setTimeout(ok, 200))
  }
}

/** `corpus serve` on a free port, in a data folder of its own; stopped by `stop()`. */
export async function startCorpus() {
  const dataDir = mkdtempSync(join(tmpdir(), 'corpus-browser-'))
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const log = join(dataDir, 'serve.log')
  const output = []
  const child = spawn(python(), ['-m', 'app.cli', 'serve', '--port', String(port)], {
    cwd: ROOT,
    env: {
      ...process.env,
      PYTHONPATH: ROOT,
      CORPUS_DATA_DIR: dataDir,
      EMBEDDINGS_PROVIDER: 'hash',
      DATABASE_URL: '',
      ANSWER_PROVIDER: 'none',
      CORPUS_LOG_LEVEL: 'WARNING',
      CORPUS_STATIC_DIR: join(ROOT, 'frontend', 'dist'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout.on('data', (chunk) => output.push(chunk))
  child.stderr.on('data', (chunk) => output.push(chunk))
  let exited = null
  child.on('exit', (code) => { exited = code })
  try {
    await waitFor(async () => {
      if (exited !== null) {
        throw new Error(`corpus serve exited with ${exited}:\n${Buffer.concat(output).toString()}`)
      }
      try {
        const reply = await fetch(`${url}/readyz`)
        return reply.ok
      } catch {
        return false
      }
    }, 'corpus serve to be ready')
  } catch (error) {
    child.kill('SIGTERM')
    throw error
  }
  return {
    url,
    async stop() {
      writeFileSync(log, Buffer.concat(output))
      if (exited === null) {
        const gone = new Promise((ok) => child.on('exit', ok))
        child.kill('SIGTERM')
        await Promise.race([gone, new Promise((ok) => setTimeout(ok, 20_000))])
        if (exited === null) child.kill('SIGKILL')
      }
      rmSync(dataDir, { recursive: true, force: true, maxRetries: 3 })
    },
  }
}

/** A stand-in for an MCP client's redirect URI: it answers every request with 200. */
export async function startCallback() {
  const server = createServer((request, response) => {
    response.writeHead(200, { 'Content-Type': 'text/html' })
    response.end('<!doctype html><title>callback</title><p>ok</p>')
  })
  const port = await freePort()
  await new Promise((ok) => server.listen(port, '127.0.0.1', ok))
  return { url: `http://127.0.0.1:${port}/callback`, close: () => new Promise((ok) => server.close(ok)) }
}

export async function launchBrowser() {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (scripts/ensure-chromium.sh)`)
  }
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true })
}

/**
 * A page that records what a person must never meet: uncaught errors, console errors (a
 * failed request is the server's answer and is checked by its status instead), and 5xx
 * answers.
 */
export async function newPage(browser, baseURL) {
  const context = await browser.newContext({ baseURL, viewport: VIEWPORTS.desktop, colorScheme: 'light' })
  const page = await context.newPage()
  page.problems = []
  page.on('pageerror', (error) => page.problems.push(`page error: ${error.message}`))
  page.on('console', (message) => {
    if (message.type() !== 'error') return
    if (message.text().startsWith('Failed to load resource')) return
    page.problems.push(`console: ${message.text()}`)
  })
  page.on('response', (response) => {
    if (response.status() >= 500) page.problems.push(`${response.status()} from ${response.url()}`)
  })
  page.setDefaultTimeout(30_000)
  return page
}

async function settle(page) {
  await page.evaluate(
    () => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(() => ok()))),
  )
  await page.evaluate(() => document.fonts.ready.then(() => undefined))
}

/**
 * Photograph the screen as it is now, in both themes at both widths, and check each: axe-core
 * finds no serious or critical violation, and nothing overflows the viewport sideways.
 * Findings are collected in `findings` (asserted at the end, so one run shows them all).
 */
export async function shoot(page, name, findings) {
  mkdirSync(SHOTS, { recursive: true })
  for (const theme of THEMES) {
    await page.emulateMedia({ colorScheme: theme })
    for (const [width, size] of Object.entries(VIEWPORTS)) {
      await page.setViewportSize(size)
      await settle(page)
      await page.screenshot({ path: join(SHOTS, `${name}.${theme}.${width}.png`), animations: 'disabled' })
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      )
      if (overflow > 1) findings.push(`${name} (${theme}, ${width}): ${overflow}px sideways overflow`)
      // Evaluated over the DevTools protocol, which the page's CSP does not govern.
      if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE)
      const violations = await page.evaluate(async () => {
        const result = await window.axe.run(document, { resultTypes: ['violations'] })
        return result.violations
          .filter((v) => v.impact === 'serious' || v.impact === 'critical')
          .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`)
      })
      for (const violation of violations) findings.push(`${name} (${theme}, ${width}): ${violation}`)
    }
  }
  await page.emulateMedia({ colorScheme: 'light' })
  await page.setViewportSize(VIEWPORTS.desktop)
}

/** A minimal valid PDF with one page of text (Helvetica), its xref computed. */
export function pdf(lines, title) {
  const content = `BT /F1 12 Tf 72 720 Td ${lines.map((line) => `(${line}) Tj`).join(' 0 -16 Td ')} ET`
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [4 0 R] /Count 1 >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    `<< /Title (${title}) >>`,
  ]
  let out = '%PDF-1.4\n'
  const offsets = []
  objects.forEach((body, i) => {
    offsets.push(out.length)
    out += `${i + 1} 0 obj\n${body}\nendobj\n`
  })
  const xref = out.length
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`
  out += offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Info 6 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return Buffer.from(out, 'latin1')
}
