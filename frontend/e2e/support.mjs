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

/** The Python that runs Corpus (CORPUS_PYTHON, else the project's virtual environment). */
export function python() {
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

// How long one step may wait for the state it needs: a page to load, an element to appear, an
// upload to settle. Twice Playwright's 30 s, for a machine busy with other work (under four
// busy loops on two cores, a test took up to twice its idle time); a step whose state never
// comes still fails, only later.
export const STEP_TIMEOUT_MS = 60_000
// A server's start makes a PostgreSQL cluster and migrates it: 5-11 s at a load of 4 here, past
// 90 s when starved under `nice`, and past 180 s at a load of 25 (pytest's workers, four busy
// loops and other work on two cores). A bound, not an expectation: a server that exits fails the
// wait at once, and one that lives is given ten minutes to answer.
const SERVER_START_TIMEOUT_MS = 600_000

async function waitFor(check, what, timeoutMs) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const result = await check()
    if (result) return result
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((ok) => setTimeout(ok, 200))
  }
}

/**
 * Run `check` until it stops throwing, and return what it returns: an assertion on state the
 * page reaches by itself (an upload settling, a count growing) waits for that state instead of
 * reading it once. After `timeoutMs`, the last failure is thrown.
 */
export async function eventually(check, timeoutMs = STEP_TIMEOUT_MS) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      return await check()
    } catch (error) {
      if (Date.now() > deadline) throw error
    }
    await new Promise((ok) => setTimeout(ok, 100))
  }
}

/** `corpus serve` on a free port, in a data folder of its own; stopped by `stop()`. `env`
 *  adds settings (a model: `modelSettings(model.url)`). */
export async function startCorpus({ env = {} } = {}) {
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
      ...env,
      // Every test signs in from 127.0.0.1: the per-address budget (10 a minute) is for a
      // guesser, and a test that locks an account on purpose spends most of it.
      CORPUS_SIGNIN_RATE_PER_ADDRESS: '1000/minute',
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
    }, 'corpus serve to be ready', SERVER_START_TIMEOUT_MS)
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

/** The settings that point a server at a model server of `startModel`. */
export function modelSettings(modelUrl) {
  return { ANSWER_PROVIDER: 'openai', OPENAI_BASE_URL: `${modelUrl}/v1`, ANSWER_MODEL: 'scripted' }
}

function readBody(request) {
  return new Promise((ok, fail) => {
    const parts = []
    request.on('data', (part) => parts.push(part))
    request.on('end', () => { ok(Buffer.concat(parts).toString('utf8')) })
    request.on('error', fail)
  })
}

function textOf(message) {
  if (typeof message?.content === 'string') return message.content
  if (Array.isArray(message?.content)) return message.content.map((part) => part.text ?? '').join('')
  return ''
}

/**
 * A scripted OpenAI-compatible model on 127.0.0.1, as a model that reads its tools' results
 * would answer: offered `search_corpus` and not yet given a result, it searches `SEARCHED`;
 * then it answers `ANSWER`, citing the first passage, streamed in pieces. A question that says
 * "hold" is answered only after `release()` (so a test sees the steps before the answer); one
 * that says "forever" streams a first token and then nothing until its caller goes (so a test
 * can stop it). `requests` counts the completions asked for.
 */
export async function startModel() {
  let held = []
  // Releases asked for before the answer they release was asked for (a test sees the steps
  // before the model is asked to answer): the next held answer goes at once.
  let released = 0
  // While shut: a promise every "gated" call waits on, and what opens it.
  let gate = null
  const model = { requests: 0, open: 0, gated: 0 }
  const server = createServer(async (request, response) => {
    if (request.method !== 'POST' || !request.url.endsWith('/chat/completions')) {
      response.writeHead(404).end()
      return
    }
    const body = JSON.parse(await readBody(request))
    model.requests += 1
    const messages = body.messages ?? []
    const question = textOf(messages.findLast((m) => m.role === 'user'))
    const searches = (body.tools ?? []).some((tool) => tool.function?.name === 'search_corpus')
    const searched = messages.some((m) => m.role === 'tool')
    const chunk = (delta, finish = null) =>
      `data: ${JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion.chunk',
        created: 0,
        model: 'scripted',
        choices: [{ index: 0, delta, finish_reason: finish }],
      })}\n\n`
    response.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' })
    if (searches && !searched) {
      response.write(chunk({
        role: 'assistant',
        content: null,
        tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'search_corpus', arguments: JSON.stringify({ query: SEARCHED }) } }],
      }))
      response.write(chunk({}, 'tool_calls'))
      response.end('data: [DONE]\n\n')
      return
    }
    if (gate && /\bgated\b/i.test(`${textOf(messages.find((m) => m.role === 'user'))} ${question}`)) {
      model.gated += 1
      await gate.shut
    }
    if (/\bhold\b/i.test(question)) {
      if (released > 0) released -= 1
      else await new Promise((ok) => held.push(ok))
    }
    response.write(chunk({ role: 'assistant', content: '' }))
    if (/\bforever\b/i.test(question)) {
      model.open += 1
      response.write(chunk({ content: 'Still thinking about it' }))
      response.on('close', () => { model.open -= 1 })
      return
    }
    for (const piece of ANSWER.match(/.{1,12}/gs) ?? []) response.write(chunk({ content: piece }))
    response.write(chunk({}, 'stop'))
    response.end('data: [DONE]\n\n')
  })
  const port = await freePort()
  await new Promise((ok) => server.listen(port, '127.0.0.1', ok))
  return {
    url: `http://127.0.0.1:${port}`,
    model,
    /** Answer the question held (or, when none is held yet, the next one that says "hold"). */
    release() {
      if (held.length === 0) {
        released += 1
        return
      }
      for (const ok of held) ok()
      held = []
    },
    shutGate() {
      let open
      const shut = new Promise((ok) => { open = ok })
      gate = { shut, open }
    },
    openGate() {
      gate?.open()
      gate = null
    },
    close: () => {
      server.closeAllConnections()
      return new Promise((ok) => server.close(ok))
    },
  }
}

export const SEARCHED = 'roll back a deploy kubectl rollout'
export const ANSWER = 'Roll back with **make rollback VERSION=previous**, then watch `kubectl rollout status` [1].'

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
export async function newPage(browser, baseURL, { session } = {}) {
  const context = await browser.newContext({ baseURL, viewport: VIEWPORTS.desktop, colorScheme: 'light' })
  if (session) {
    await context.addCookies([{ ...session, url: baseURL, httpOnly: true, sameSite: 'Lax' }])
  }
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
  page.setDefaultTimeout(STEP_TIMEOUT_MS)
  page.setDefaultNavigationTimeout(STEP_TIMEOUT_MS)
  return page
}

/**
 * A session for `account` over HTTP, as a script would open one (no Origin: sign-in allows
 * that): `signUp` creates the account first. Returns the session cookie, which `newPage` puts
 * in a page's browser and `api` sends.
 */
export async function openSession(baseURL, account, { signUp = false } = {}) {
  const [path, body] = signUp
    ? ['/api/auth/signup', { email: account.email, password: account.password, display_name: account.name }]
    : ['/api/auth/login', { email: account.email, password: account.password }]
  const reply = await fetch(`${baseURL}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  })
  if (!reply.ok) throw new Error(`${path} answered ${reply.status}: ${await reply.text()}`)
  for (const header of reply.headers.getSetCookie()) {
    const [name, value] = header.split(';')[0].split('=')
    if (name === 'corpus_session') return { name, value }
  }
  throw new Error(`${path} set no session cookie`)
}

/**
 * The API as a signed-in page calls it (the session cookie, and this server's Origin, which a
 * write with the cookie needs): `{ status, body }`. A `FormData` body is sent as multipart.
 */
export function api(baseURL, session) {
  return async (method, path, body) => {
    const headers = { Accept: 'application/json', Origin: baseURL, Cookie: `${session.name}=${session.value}` }
    if (body !== undefined && !(body instanceof FormData)) headers['Content-Type'] = 'application/json'
    const reply = await fetch(`${baseURL}${path}`, {
      method,
      headers,
      body: body === undefined || body instanceof FormData ? body : JSON.stringify(body),
    })
    const text = await reply.text()
    return { status: reply.status, body: text ? JSON.parse(text) : null }
  }
}

/**
 * `items` in the order given, or shuffled when E2E_SEED (an integer) or E2E_SHUFFLE=1 (a seed
 * drawn now) is set: the same seed gives the same order, so a failure an order caused can be
 * run again. The seed is printed.
 */
export function inTestOrder(items) {
  const given = process.env.E2E_SEED
  if (!given && process.env.E2E_SHUFFLE !== '1') return items
  const seed = given ? Number.parseInt(given, 10) : Math.floor(Math.random() * 2 ** 31)
  if (!Number.isSafeInteger(seed)) throw new Error(`E2E_SEED must be an integer, not ${given}`)
  // mulberry32: a small seeded generator, good enough to shuffle a dozen tests.
  let state = seed >>> 0
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32
  }
  const shuffled = [...items]
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]]
  }
  console.log(`tests shuffled with E2E_SEED=${seed}`)
  return shuffled
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
 * Findings are collected in `findings` (asserted at the end of the test, so that one run
 * shows them all).
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

// The sizes a screen must fit without sideways scrolling (issue #30): a laptop and a phone.
export const FIT_SIZES = [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
]

/** The sizes at which the page scrolls sideways (`scrollWidth` past `innerWidth`), measured as
 *  the screen is now; none, when it fits. */
export async function overflows(page) {
  const found = []
  for (const size of FIT_SIZES) {
    await page.setViewportSize(size)
    await settle(page)
    const [scroll, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth])
    if (scroll > inner) found.push(`${size.width}×${size.height}: ${scroll}px wide`)
  }
  await page.setViewportSize(VIEWPORTS.desktop)
  return found
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
