// The web app in a real browser against a real server: `make test-browser` (part of `make test`).
// Each test makes what it needs, through the API or an `ensure...` helper any test may call first,
// and opens pages of its own: the tests pass in any order. E2E_SEED=n (or E2E_SHUFFLE=1, which
// draws a seed and prints it) runs them shuffled.
import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, before, test } from 'node:test'

import {
  ANSWER,
  api,
  eventually,
  inTestOrder,
  launchBrowser,
  modelSettings,
  newPage,
  openSession,
  overflows,
  pdf,
  python,
  ROOT,
  shoot,
  startCallback,
  startCorpus,
  startModel,
} from './support.mjs'

const ADMIN = { name: 'Ada Admin', email: 'ada@example.com', password: 'correct horse battery' }
const VIEWER = { email: 'vic@example.com', password: 'viewer password 123' }

const RUNBOOK = `# Deploy runbook

How we ship the web service, and how we take it back.

## Release

Run \`make release\` from a clean main. The pipeline builds, tests and tags.

| Step | Command | Owner |
| ---- | ------- | ----- |
| Build | \`make build\` | CI |
| Tag | \`make tag\` | Release captain |

## Rollback

If the error rate climbs, roll back at once:

\`\`\`bash
make rollback VERSION=previous
kubectl rollout status deploy/web
\`\`\`

Database migrations stay where they are; a rollback never runs a down migration.

## Afterwards

Write a short incident note and link the dashboard.
`

// Uploaded through the dialog by the upload test alone: words of their own, so that what the
// other tests search for and open is the library's (ensureLibrary), whichever ran first.
const DRILL = `# Backup restore drill

Once a quarter, last night's backup is restored into a scratch database and checked.

## Steps

1. Pick the newest snapshot.
2. Restore it into a scratch database.
3. Compare row counts with production.

## Afterwards

Note how long the restore took.
`

// A test that waits on a hung browser fails instead of holding the run forever; each step has
// its own, shorter bound (STEP_TIMEOUT_MS).
const TEST_TIMEOUT_MS = 10 * 60_000

// The folder the shared server's sources may read (CORPUS_SOURCE_ROOTS): the git repositories
// the sources scenario makes live here.
const SOURCES_ROOT = mkdtempSync(join(tmpdir(), 'corpus-browser-sources-'))

let corpus
let callback
let browser
// The chat tests' own server, answering with a scripted model (started by the first of them).
let model
let modelCorpus

before(async () => {
  // Each is kept as soon as it starts, so that `after` stops whatever did start when another
  // failed (a Chromium left open kept the run from ever ending).
  const started = await Promise.allSettled([
    startCorpus({ env: { CORPUS_SOURCE_ROOTS: SOURCES_ROOT } }).then((c) => (corpus = c)),
    startCallback().then((c) => (callback = c)),
    launchBrowser().then((b) => (browser = b)),
  ])
  const failed = started.find((result) => result.status === 'rejected')
  if (failed) throw failed.reason
})

after(async () => {
  await browser?.close()
  await callback?.close()
  await corpus?.stop()
  await modelCorpus?.stop()
  await model?.close()
})

/** `make()` the first time it is called, its promise after that; a failure is not kept. */
function once(make) {
  let made
  return () => {
    made ??= make().catch((error) => {
      made = undefined
      throw error
    })
    return made
  }
}

/**
 * The admin's session on the shared server: only the first account becomes admin, so the admin
 * signs up while the server has none (whichever test asks first), and signs in after that.
 */
const ensureAdmin = once(async () => {
  const options = await (await fetch(`${corpus.url}/api/auth/options`)).json()
  return openSession(corpus.url, ADMIN, { signUp: options.first_run })
})

async function adminApi() {
  return api(corpus.url, await ensureAdmin())
}

/** A document made through the API (201, or 200 for content the admin added before). */
async function created(reply) {
  const { status, body } = await reply
  assert.ok(status === 201 || status === 200, `a document was refused: ${status} ${JSON.stringify(body)}`)
  return body
}

/**
 * What the search, viewer and viewer-role tests read: the runbook, the on-call guide (a PDF) and
 * an incident checklist that links to the runbook. Made once; making it again would find the
 * same documents (identical content is not added twice).
 */
const ensureLibrary = once(async () => {
  const call = await adminApi()
  const runbook = await created(call('POST', '/api/documents', { title: 'Deploy runbook', content: RUNBOOK, tags: ['ops', 'runbook'] }))
  const upload = new FormData()
  const guide = pdf(['On-call guide', 'Page the secondary after fifteen minutes.', 'Rollback first, debug later.'], 'On-call guide')
  upload.append('file', new Blob([guide], { type: 'application/pdf' }), 'oncall-guide.pdf')
  upload.append('tags', 'ops')
  const onCall = await created(call('POST', '/api/documents', upload))
  assert.equal(onCall.title, 'On-call guide')
  await created(call('POST', '/api/documents', {
    title: 'Incident checklist',
    content: `# Incident checklist\n\nFirst, follow the [deploy runbook](/documents/${runbook.id}) to roll back.\n`,
  }))
  return { runbookId: runbook.id }
})

/**
 * A server of its own whose answers come from a scripted OpenAI-compatible model on 127.0.0.1
 * (`startModel`), with its admin's session and the runbook to cite: the chat tests' (the
 * shared server has no model, as a new install, and answers extractively).
 */
const ensureModelCorpus = once(async () => {
  model ??= await startModel()
  modelCorpus ??= await startCorpus({ env: modelSettings(model.url) })
  const session = await openSession(modelCorpus.url, ADMIN, { signUp: true }).catch(() =>
    openSession(modelCorpus.url, ADMIN),
  )
  const call = api(modelCorpus.url, session)
  const runbook = await created(call('POST', '/api/documents', { title: 'Deploy runbook', content: RUNBOOK, tags: ['ops'] }))
  return { session, call, runbookId: runbook.id }
})

/** Ask in the chat screen's question box. */
async function askInChat(page, question) {
  await page.getByLabel('Your question').fill(question)
  await page.getByRole('button', { name: 'Ask', exact: true }).click()
}

/** The pages one test opens, closed at its end, and what they met there. */
class Screens {
  pages = []
  findings = []

  async page({ baseURL = corpus.url, session } = {}) {
    const opened = await newPage(browser, baseURL, { session })
    this.pages.push(opened)
    return opened
  }

  async adminPage() {
    return this.page({ session: await ensureAdmin() })
  }

  shoot(page, name) {
    return shoot(page, name, this.findings)
  }

  problems() {
    return [...this.pages.flatMap((p) => p.problems), ...this.findings]
  }

  async close() {
    await Promise.all(this.pages.map((p) => p.context().close()))
  }
}

const scenarios = []

/**
 * A test, registered at the end of the file in the order `inTestOrder` gives. It ends by
 * checking that no screen it opened had a console error, a 5xx, an accessibility violation or
 * an overflow (when it fails before that, what its screens met is printed with the failure).
 */
function scenario(name, body) {
  scenarios.push({ name, body })
}

/** A JSON call from inside the page, with its cookie and Origin, as the app would make it. */
function call(p, method, path, body) {
  return p.evaluate(
    async ([m, u, b]) => {
      const reply = await fetch(u, {
        method: m,
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: b === undefined ? undefined : JSON.stringify(b),
      })
      const text = await reply.text()
      return { status: reply.status, body: text ? JSON.parse(text) : null }
    },
    [method, path, body],
  )
}

scenario('the built page needs nothing its policy refuses: no inline script, nothing from elsewhere', async () => {
  // The browser would refuse these and log it (every test fails on a console error), but only
  // on a screen that is visited; the page itself is read here whole.
  const reply = await fetch(`${corpus.url}/`)
  assert.equal(reply.status, 200)
  const policy = reply.headers.get('content-security-policy')
  assert.match(policy, /script-src 'self'/)
  assert.match(policy, /frame-ancestors 'none'/)
  const index = await reply.text()
  const scripts = [...index.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)]
  assert.ok(scripts.length > 0, 'the page loads the web app')
  for (const [, attributes, body] of scripts) {
    assert.equal(body.trim(), '', 'an inline script')
    assert.match(attributes, /src="\/[^/]/, 'a script from another origin')
  }
  assert.doesNotMatch(index, /<style/)
  assert.doesNotMatch(index, / style=/)
  for (const [, href] of index.matchAll(/<link\b[^>]*href="([^"]+)"/g)) {
    assert.match(href, /^\/[^/]/, 'a file from another origin')
  }
})

scenario('the first visit creates the admin, who can sign out and back in', async (screens) => {
  // The setup screen shows only while no account exists, so this test has a server of its own
  // that nobody has signed up on, whatever ran before it (starting one costs 5-11 s here).
  const fresh = await startCorpus()
  try {
    const admin = await screens.page({ baseURL: fresh.url })
    await admin.goto('/documents')
    await admin.waitForURL('**/setup')
    await screens.shoot(admin, 'setup')

    // The form checks before sending: a short password never leaves the browser.
    await admin.getByLabel('Your name').fill(ADMIN.name)
    await admin.getByLabel('Email').fill(ADMIN.email)
    await admin.getByLabel('Password', { exact: true }).fill('short')
    await admin.getByLabel('Confirm password').fill('short')
    await admin.getByRole('button', { name: 'Create admin account' }).click()
    await admin.locator('#password-error').waitFor()

    await admin.getByLabel('Password', { exact: true }).fill(ADMIN.password)
    await admin.getByLabel('Confirm password').fill(ADMIN.password)
    await admin.getByRole('button', { name: 'Create admin account' }).click()
    // --- The first run's second step: the sample documents (issue #32), loaded once.
    await admin.getByRole('heading', { name: 'Start with sample documents?' }).waitFor()
    await screens.shoot(admin, 'setup-sample')
    await admin.getByRole('button', { name: 'Load sample documents' }).click()
    const loaded = admin.getByRole('status').filter({ hasText: /Loaded \d+ sample documents/ })
    await loaded.waitFor()
    assert.match(await loaded.innerText(), /into workspace “sample”/)
    // A second load (the button is the command's twin) finds every one unchanged.
    const again = await admin.request.post('/api/documents/sample', { headers: { Origin: fresh.url } })
    assert.equal(again.status(), 200)
    const counts = await again.json()
    assert.deepEqual([counts.added, counts.updated, counts.created_workspace], [0, 0, false])
    assert.ok(counts.unchanged > 10)
    await admin.getByRole('button', { name: 'Continue' }).click()
    await admin.waitForURL('**/documents')
    await admin.getByLabel('Filter by title').fill('Deploying')
    await admin.getByRole('link', { name: 'Deploying Corpus' }).first().waitFor()
    await screens.shoot(admin, 'documents-sample')
    // --- end of the sample documents' step

    await admin.getByRole('button', { name: 'Account menu' }).click()
    await admin.getByRole('menuitem', { name: 'Sign out' }).click()
    await admin.waitForURL(/\/login$/)

    await admin.getByLabel('Email').fill(ADMIN.email)
    await admin.getByLabel('Password').fill('not the password at all')
    await admin.getByRole('button', { name: 'Sign in' }).click()
    await admin.getByRole('alert').waitFor()
    await screens.shoot(admin, 'login-failed')

    await admin.getByLabel('Password').fill(ADMIN.password)
    await admin.getByRole('button', { name: 'Sign in' }).click()
    await admin.getByRole('heading', { name: /Good to see you/ }).waitFor()
    await screens.shoot(admin, 'home-empty')
    // Closed before its server stops, so that nothing it still fetches fails meanwhile.
    await admin.context().close()
  } finally {
    await fresh.stop()
  }
})

scenario('Markdown and PDF files upload with progress, and a rejected file says why', async (screens) => {
  const admin = await screens.adminPage()
  await admin.goto('/documents')
  await admin.getByRole('button', { name: 'Add documents' }).first().click()
  await admin.getByLabel('Files to upload').setInputFiles([
    { name: 'backup-drill.md', mimeType: 'text/markdown', buffer: Buffer.from(DRILL) },
    {
      name: 'escalation-policy.pdf',
      mimeType: 'application/pdf',
      buffer: pdf(['Escalation policy', 'Call the duty manager after thirty minutes.', 'Write down every decision.'], 'Escalation policy'),
    },
    { name: 'diagram.png', mimeType: 'image/png', buffer: Buffer.from([137, 80, 78, 71]) },
    { name: 'empty.md', mimeType: 'text/markdown', buffer: Buffer.from('   \n') },
  ])
  const files = admin.getByRole('list', { name: 'Files' })
  // The image is refused before sending; the blank file by the server; each says so.
  await files.locator('li[data-state="failed"]').first().waitFor()
  await admin.getByLabel('Tags').fill('ops, drills')
  await admin.getByRole('button', { name: /^Upload/ }).click()
  // The files go three at a time: the blank one may still be on its way when both others are
  // done.
  await eventually(async () => {
    const states = await files.locator('li').evaluateAll((all) => all.map((li) => li.dataset.state))
    assert.deepEqual(states.sort(), ['done', 'done', 'failed', 'failed'])
  })
  await eventually(async () => assert.equal(await files.locator('li[data-state="failed"] [role="alert"]').count(), 2))
  await screens.shoot(admin, 'upload')
  await admin.keyboard.press('Escape')

  const listed = await call(admin, 'GET', '/api/documents?tag=drills')
  assert.deepEqual(listed.body.items.map((d) => d.title).sort(), ['Backup restore drill', 'Escalation policy'])
  const drillId = listed.body.items.find((d) => d.title === 'Backup restore drill').id
  assert.ok(listed.body.items.find((d) => d.title === 'Escalation policy').media_type.includes('pdf'))

  // The PDF's viewer offers the file as it was sent, on this session.
  const policyId = listed.body.items.find((d) => d.title === 'Escalation policy').id
  await admin.goto(`/documents/${policyId}`)
  const original = admin.getByRole('link', { name: 'Original PDF' })
  const href = await original.getAttribute('href')
  assert.equal(href, `/api/documents/${policyId}/original`)
  const sent = await admin.request.get(new URL(href, corpus.url).href)
  assert.equal(sent.status(), 200)
  assert.equal((await sent.body()).subarray(0, 5).toString('latin1'), '%PDF-')
  await admin.goto('/documents')

  // Pasted text that links to the drill: the drill's backlink.
  await admin.getByRole('button', { name: 'Add documents' }).first().click()
  await admin.getByRole('tab', { name: 'Paste text' }).click()
  await admin.getByLabel('Title', { exact: true }).fill('Restore drill notes')
  await admin
    .getByLabel('Content (Markdown)')
    .fill(`# Restore drill notes\n\nStart from the [backup restore drill](/documents/${drillId}).\n`)
  await admin.getByRole('button', { name: 'Add document' }).click()
  await admin.getByRole('link', { name: 'Restore drill notes' }).waitFor()
  await screens.shoot(admin, 'documents')
  await admin.goto('/')
  await admin.getByRole('link', { name: /Restore drill notes/ }).waitFor()
  await screens.shoot(admin, 'home')
})

scenario('search shows each hit’s ranks, and says plainly when nothing is relevant', async (screens) => {
  await ensureLibrary()
  const admin = await screens.adminPage()
  await admin.goto('/search?q=rollback%20migration')
  const hits = admin.getByTestId('search-hit')
  await hits.first().waitFor()
  const first = hits.first()
  assert.match(await first.getByTestId('rank-vec').textContent(), /matched meaning(#\d+|—)/)
  assert.match(await first.getByTestId('rank-kw').textContent(), /matched words#\d+/)
  // The fused score is shown only for a passage both halves found.
  const fused = first.getByTestId('rank-rrf')
  if (await fused.count()) assert.match(await fused.textContent(), /fused(0\.\d{3}|1\.000)/)
  assert.ok((await first.locator('mark').count()) > 0, 'matched terms are highlighted')
  await screens.shoot(admin, 'search')

  await admin.goto('/search?q=zygomorphic%20quokka%20xylograph')
  await admin.getByRole('heading', { name: 'Nothing relevant found' }).waitFor()
  await screens.shoot(admin, 'search-nothing')
})

scenario('a hit opens the viewer at its chunk, and the seams show where the document was cut', async (screens) => {
  const { runbookId } = await ensureLibrary()
  const admin = await screens.adminPage()
  await admin.goto('/search?q=kubectl%20rollout%20status')
  // Another test's copy of the runbook may rank first: this one opens the library's.
  const link = admin.locator(`[data-testid="search-hit"] a[href^="/documents/${runbookId}#chunk-"]`).first()
  const href = await link.getAttribute('href')
  assert.match(href, /^\/documents\/[0-9a-f-]+#chunk-[0-9a-f-]+$/)
  await link.click()
  const chunkId = href.split('#')[1]
  const target = admin.locator(`section#${chunkId}`)
  await target.waitFor()
  await eventually(async () => {
    assert.equal(await target.getAttribute('data-active'), 'true')
    assert.ok(await target.evaluate((el) => {
      const box = el.getBoundingClientRect()
      return box.top < window.innerHeight && box.bottom > 0
    }), 'the chunk is scrolled into view')
  })
  assert.match(await target.textContent(), /kubectl rollout status/)
  await admin.getByRole('navigation', { name: 'Contents' }).waitFor()
  await admin.getByRole('region', { name: 'Linked from' }).getByRole('link', { name: 'Incident checklist' }).waitFor()
  await screens.shoot(admin, 'viewer')

  const chunks = await call(admin, 'GET', `/api/documents/${runbookId}/chunks`)
  await admin.getByRole('switch', { name: /Chunk seams/ }).click()
  const seams = admin.getByRole('separator')
  await eventually(async () => assert.equal(await seams.count(), chunks.body.length))
  const labels = await seams.evaluateAll((all) => all.map((s) => s.getAttribute('aria-label')))
  assert.deepEqual(
    labels,
    chunks.body.map((c) => `Chunk ${c.ordinal + 1}: ${c.heading_path.join(' › ') || 'Top of the document'}`),
  )
  await screens.shoot(admin, 'viewer-seams')

  await admin.getByRole('button', { name: 'Ask about this doc' }).click()
  const panel = admin.getByRole('dialog')
  await panel.getByLabel('Your question').fill('How do I roll back a release?')
  await panel.getByRole('button', { name: 'Ask', exact: true }).click()
  // No model is configured here: POST /api/ask streams the extractive answer, scoped to this
  // document, each citation a deep link to its chunk. Read once the stream has ended.
  await panel.getByTestId('answer').waitFor()
  await panel.locator('[aria-busy="false"]', { has: admin.getByTestId('answer') }).waitFor()
  const cited = panel.locator(`a[href^="/documents/${runbookId}#chunk-"]`)
  await cited.first().waitFor()
  const hrefs = await panel.locator('a[href*="#chunk-"]').evaluateAll((all) => all.map((a) => a.getAttribute('href')))
  assert.ok(hrefs.every((h) => h.startsWith(`/documents/${runbookId}#chunk-`)), 'every citation is this document')
  await screens.shoot(admin, 'ask-panel')
  await admin.keyboard.press('Escape')
})

scenario('an edit to the content says it re-chunks, and saves a new version', async (screens) => {
  // A runbook of its own (other content than the library's, which would be found instead).
  const content = RUNBOOK.replace('# Deploy runbook', '# Release runbook')
  const call = await adminApi()
  const draft = await created(call('POST', '/api/documents', { title: 'Release runbook', content }))
  const admin = await screens.adminPage()
  await admin.goto(`/documents/${draft.id}`)
  await admin.getByRole('button', { name: 'Edit' }).click()
  await admin.getByLabel('Title', { exact: true }).fill('Release and rollback runbook')
  await admin.getByLabel('Content (Markdown)').fill(`${content}\n## Contacts\n\nThe release captain rotates weekly.\n`)
  await admin.getByTestId('rechunk-note').waitFor()
  await screens.shoot(admin, 'edit')
  await admin.getByRole('button', { name: 'Save changes' }).click()
  await admin.getByRole('heading', { level: 1, name: 'Release and rollback runbook' }).waitFor()
  await admin.getByText(/^v2 · updated/).waitFor()
  const saved = await call('GET', `/api/documents/${draft.id}`)
  assert.equal(saved.body.version, 2)
  assert.match(saved.body.content, /## Contacts/)
})

scenario('a delete asks first, then removes the document', async (screens) => {
  const call = await adminApi()
  const memo = await created(call('POST', '/api/documents', {
    title: 'Superseded pager memo',
    content: '# Superseded pager memo\n\nThe pagers were retired; this memo stays until someone deletes it.\n',
  }))
  const ids = async () => (await call('GET', '/api/documents?limit=200')).body.items.map((d) => d.id).sort()
  const before = await ids()
  const admin = await screens.adminPage()
  await admin.goto('/documents?q=Superseded')
  await admin.getByRole('button', { name: 'Actions for Superseded pager memo' }).click()
  await admin.getByRole('menuitem', { name: 'Delete' }).click()
  await admin.getByRole('alertdialog').waitFor()
  await screens.shoot(admin, 'delete')
  await admin.getByRole('button', { name: 'Delete document' }).click()
  await admin.getByRole('heading', { name: 'No document matches these filters' }).waitFor()
  assert.deepEqual(await ids(), before.filter((id) => id !== memo.id))
  assert.equal((await call('GET', `/api/documents/${memo.id}`)).status, 404)
})

async function authorize(p) {
  const registered = await fetch(`${corpus.url}/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Claude Code',
      redirect_uris: [callback.url],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    }),
  })
  assert.equal(registered.status, 201)
  const { client_id: clientId } = await registered.json()
  const verifier = randomBytes(32).toString('base64url')
  const challenge = createHash('sha256').update(verifier).digest('base64url')
  const state = randomBytes(8).toString('base64url')
  const url = new URL('/authorize', corpus.url)
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: callback.url,
    state,
    resource: `${corpus.url}/mcp`,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString()
  await p.goto(url.toString())
  await p.waitForURL('**/oauth/consent?tx=*')
  return state
}

scenario('the consent screen approves and denies an MCP client', async (screens) => {
  const admin = await screens.adminPage()
  const state = await authorize(admin)
  await admin.getByRole('heading', { name: /^Connect 127\.0\.0\.1(:\d+)? to Corpus\?$/ }).waitFor()
  await admin.getByTestId('self-declared').waitFor()
  await screens.shoot(admin, 'consent')
  await admin.getByRole('button', { name: 'Approve' }).click()
  await admin.waitForURL(`${callback.url}?*`)
  const approved = new URL(admin.url()).searchParams
  assert.ok(approved.get('code'))
  assert.equal(approved.get('state'), state)

  const denyState = await authorize(admin)
  await admin.getByRole('button', { name: 'Deny' }).click()
  await admin.waitForURL(`${callback.url}?*`)
  const denied = new URL(admin.url()).searchParams
  assert.equal(denied.get('error'), 'access_denied')
  assert.equal(denied.get('state'), denyState)
  assert.equal(denied.get('code'), null)

  await admin.goto('/account')
  await admin.getByRole('list', { name: 'Connected apps' }).getByText('Claude Code').waitFor()
  await screens.shoot(admin, 'account')

  await admin.getByRole('button', { name: 'Disconnect' }).click()
  await admin.getByRole('heading', { name: 'No connected apps' }).waitFor()
  const connections = await call(admin, 'GET', '/api/me/connections')
  assert.deepEqual(connections.body.items, [])
})

scenario('a viewer sees no upload button, and the server refuses an upload anyway', async (screens) => {
  const { runbookId } = await ensureLibrary()
  const asAdmin = await adminApi()
  const account = await asAdmin('POST', '/api/people', {
    email: VIEWER.email,
    display_name: 'Vic Viewer',
    role: 'viewer',
    kind: 'human',
    password: VIEWER.password,
  })
  assert.equal(account.status, 201)

  const viewer = await screens.page()
  await viewer.goto('/documents')
  await viewer.waitForURL('**/login?next=*')
  await screens.shoot(viewer, 'login')
  await viewer.getByLabel('Email').fill(VIEWER.email)
  await viewer.getByLabel('Password').fill(VIEWER.password)
  await viewer.getByRole('button', { name: 'Sign in' }).click()
  await viewer.waitForURL('**/documents')
  await viewer.getByRole('link', { name: /On-call guide/ }).waitFor()
  assert.equal(await viewer.getByRole('button', { name: 'Add documents' }).count(), 0)
  await screens.shoot(viewer, 'documents-viewer')

  const refused = await call(viewer, 'POST', '/api/documents', { title: 'Sneaky', content: 'Nope.' })
  assert.equal(refused.status, 403)
  assert.equal(refused.body.error.code, 'forbidden')

  await viewer.goto(`/documents/${runbookId}`)
  await viewer.getByRole('heading', { level: 1, name: 'Deploy runbook' }).waitFor()
  assert.equal(await viewer.getByRole('button', { name: 'Edit' }).count(), 0)

  // The keyboard: `/` focuses the top bar's search from anywhere, Enter searches.
  await viewer.keyboard.press('/')
  await viewer.keyboard.type('on-call secondary')
  await viewer.keyboard.press('Enter')
  await viewer.waitForURL('**/search?q=on-call*')
  await viewer.getByTestId('search-hit').first().waitFor()

  // ⌘K (Ctrl+K) jumps to a document by its title.
  await viewer.keyboard.press('Control+k')
  const palette = viewer.getByRole('combobox', { name: 'Go to a page or a document' })
  await palette.fill('On-call')
  await viewer.getByRole('option', { name: /On-call guide/ }).waitFor()
  await screens.shoot(viewer, 'command-palette')
  await palette.press('ArrowDown')
  await palette.press('ArrowUp')
  await palette.press('Enter')
  await viewer.getByRole('heading', { level: 1, name: 'On-call guide' }).waitFor()

  // After an admin reset, the temporary password leads to the forced change, and only then in.
  const reset = await asAdmin('POST', `/api/people/${account.body.id}/reset-password`)
  assert.equal(reset.status, 200)
  await viewer.goto('/account')
  await viewer.waitForURL('**/login?next=*')
  await viewer.getByLabel('Email').fill(VIEWER.email)
  await viewer.getByLabel('Password').fill(reset.body.temporary_password)
  await viewer.getByRole('button', { name: 'Sign in' }).click()
  await viewer.getByRole('heading', { name: 'Choose a new password' }).waitFor()
  await screens.shoot(viewer, 'password-forced')
  await viewer.getByLabel('Temporary password').fill(reset.body.temporary_password)
  await viewer.getByLabel('New password', { exact: true }).fill('a brand new passphrase')
  await viewer.getByLabel('Confirm new password').fill('a brand new passphrase')
  await viewer.getByRole('button', { name: 'Change password' }).click()
  await viewer.getByRole('heading', { name: 'Account' }).waitFor()
})

scenario('a chat streams its steps before the answer, whose citation chip previews and opens its chunk, and a follow-up stays in the chat', async (screens) => {
  const { session, call, runbookId } = await ensureModelCorpus()
  const page = await screens.page({ baseURL: modelCorpus.url, session })
  await page.goto('/chat')
  await page.getByRole('heading', { name: 'Ask the corpus' }).waitFor()
  // Chat comes first in the navigation.
  const first = page.getByRole('navigation', { name: 'Main' }).getByRole('link').first()
  assert.equal(await first.textContent(), 'Chat')

  // The scope bar's tags picker offers the tags of the documents here: the question keeps to one.
  await page.getByRole('button', { name: 'Any tag' }).click()
  await page.getByRole('menuitemcheckbox', { name: /^ops/ }).click()
  await page.keyboard.press('Escape')
  await page.getByRole('button', { name: 'Tag: ops' }).waitFor()

  await askInChat(page, 'How do I roll back a deploy? hold')
  // The model holds its answer: the steps are on the screen while the answer is not.
  const steps = page.getByRole('list', { name: 'Steps' })
  await steps.getByText(/search/i).first().waitFor()
  assert.equal(await page.getByRole('button', { name: 'Stop' }).count(), 1)
  assert.equal(await page.locator('[data-testid="answer"][data-status="done"]').count(), 0)
  model.release()

  const answer = page.locator('[data-testid="answer"][data-status="done"]')
  await answer.waitFor()
  // The `done` answer replaced the streamed text, rendered.
  assert.equal(await answer.locator('strong').first().textContent(), 'make rollback VERSION=previous')
  assert.match(await page.getByTestId('mode').first().textContent(), /fast.*auto: one direct question; tagged ops/i)
  await page.waitForURL(/\/chat\/[0-9a-f-]+$/)
  const chatId = page.url().split('/').at(-1)

  // The chat list has the new chat: nothing moves under the chip any more.
  await page.getByRole('navigation', { name: 'Chats' }).getByRole('link', { name: /roll back a deploy/ }).waitFor()
  const chip = answer.getByRole('link', { name: /^Source 1: Deploy runbook/ })
  // The preview opens on keyboard focus as on hover.
  await chip.focus()
  const preview = page.getByTestId('citation-preview')
  await preview.waitFor()
  assert.match(await preview.textContent(), /Deploy runbook/)
  await screens.shoot(page, 'chat')
  assert.deepEqual(await overflows(page), [])

  const href = await chip.getAttribute('href')
  assert.match(href, new RegExp(`^/documents/${runbookId}#chunk-[0-9a-f-]+$`))
  await chip.click()
  const target = page.locator(`section#${href.split('#')[1]}`)
  await eventually(async () => { assert.equal(await target.getAttribute('data-active'), 'true') })

  await page.goBack()
  await page.locator('[data-testid="answer"][data-status="done"]').first().waitFor()
  await askInChat(page, 'And after the rollback?')
  await eventually(async () => {
    const chat = await call('GET', `/api/chats/${chatId}`)
    assert.deepEqual(chat.body.messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant'])
  })
  await eventually(async () => { assert.equal(await page.locator('[data-testid="answer"][data-status="done"]').count(), 2) })
  assert.match(page.url(), new RegExp(`/chat/${chatId}$`))

  // The list finds it by its title, and renames it.
  await page.getByLabel('Search chats by title').fill('roll back')
  await page.getByRole('navigation', { name: 'Chats' }).getByRole('link', { name: /roll back a deploy/ }).waitFor()
  await page.getByRole('button', { name: /Actions for How do I roll back/ }).click()
  await page.getByRole('menuitem', { name: 'Rename' }).click()
  await page.getByLabel('Title', { exact: true }).fill('Rollbacks')
  await page.getByRole('button', { name: 'Save' }).click()
  await eventually(async () => {
    assert.equal((await call('GET', `/api/chats/${chatId}`)).body.title, 'Rollbacks')
  })
})

scenario('Auto chooses Deep for a comparison and says why; a stopped run ends on the server too; a deep run outlives its page', async (screens) => {
  const { session } = await ensureModelCorpus()
  const page = await screens.page({ baseURL: modelCorpus.url, session })
  await page.goto('/chat')
  await page.getByRole('radio', { name: 'Auto' }).waitFor()
  assert.equal(await page.getByRole('radio', { name: 'Auto' }).getAttribute('aria-checked'), 'true')
  await askInChat(page, 'Compare a rollback versus a new release: which is better forever?')
  const mode = page.getByTestId('mode')
  await eventually(async () => { assert.match(await mode.textContent(), /deep.*auto: comparative wording/i) })

  await page.getByRole('radio', { name: 'Fast' }).waitFor()
  await page.getByRole('button', { name: 'Stop' }).click()
  await page.getByRole('status').filter({ hasText: 'Stopped' }).waitFor()
  await page.getByRole('button', { name: 'Ask', exact: true }).waitFor()
  // Stop is not taken for an empty question sent as the button turns back into Ask.
  assert.equal(await page.getByText('Type a question first.').count(), 0)
  await screens.shoot(page, 'chat-stopped')
  // The page went, and so did the run: no model call is left streaming.
  await eventually(async () => { assert.equal(model.model.open, 0) })

  await page.getByRole('radio', { name: 'Fast' }).click()
  await askInChat(page, 'Keep going forever')
  await page.getByText('Still thinking about it').waitFor()
  assert.equal(model.model.open, 1)
  await page.getByRole('button', { name: 'Stop' }).click()
  await eventually(async () => { assert.equal(model.model.open, 0) })

  // A deep run goes on when its page goes: its chat exists from the start, says the run is
  // under way when visited, and shows the answer when it lands.
  model.shutGate()
  const gated = model.model.gated
  await page.getByRole('button', { name: 'New chat' }).click()
  await page.getByRole('heading', { name: 'Ask the corpus' }).waitFor()
  await page.getByRole('radio', { name: 'Deep' }).click()
  await askInChat(page, 'How do rollbacks work? gated')
  await page.waitForURL(/\/chat\/[0-9a-f-]+$/)
  const chatUrl = page.url()
  await eventually(async () => { assert.ok(model.model.gated > gated, 'the run waits on the model') })
  await page.goto('/dashboard')
  await page.getByRole('heading', { name: 'Dashboard' }).waitFor()
  await page.goto(chatUrl)
  await page.getByRole('status').filter({ hasText: 'Still researching' }).waitFor()
  await screens.shoot(page, 'chat-researching')
  model.openGate()
  const landed = page.locator('[data-testid="answer"][data-status="done"]')
  await landed.waitFor()
  assert.equal(await landed.locator('strong').first().textContent(), 'make rollback VERSION=previous')
  assert.equal(await page.getByRole('status').filter({ hasText: 'Still researching' }).count(), 0)
})

scenario('with no model the answer is extractive: one notice, rendered passages, citation chips', async (screens) => {
  await ensureLibrary()
  const admin = await screens.adminPage()
  await admin.goto('/chat')
  await askInChat(admin, 'How do I roll back a deploy with kubectl?')
  const answer = admin.locator('[data-testid="answer"][data-status="done"]')
  await answer.waitFor()
  const text = await answer.textContent()
  assert.equal(text.match(/no answer model is configured/g)?.length, 1, 'the notice, once')
  assert.equal(await answer.locator('blockquote').first().locator('strong').textContent(), 'Extractive answer:')
  assert.doesNotMatch(text, /\*\*|^#/m, 'Markdown rendered, not shown')
  assert.ok((await answer.getByRole('link', { name: /^Source \d+:/ }).count()) > 0, 'citation chips')
  await screens.shoot(admin, 'chat-extractive')
})

scenario('a gap shows on the dashboard after an unanswerable question, and none after a search emptied by a filter', async (screens) => {
  await ensureLibrary()
  const call = await adminApi()
  // Words no document here has (hash embeddings: random ones can collide with a document's by
  // chance, these do not with the documents the tests make); the search test asks them too.
  const unanswerable = 'zygomorphic quokka xylograph'
  assert.deepEqual((await call('POST', '/api/search', { query: unanswerable })).body.hits, [])
  const filtered = await call('POST', '/api/search', { query: 'kubectl rollout status web', tags: ['nosuchtag'] })
  assert.deepEqual(filtered.body.hits, [])

  const admin = await screens.adminPage()
  await admin.goto('/dashboard')
  await admin.getByRole('heading', { name: 'Dashboard' }).waitFor()
  const gaps = admin.getByRole('list', { name: 'Gaps' })
  const gap = gaps.getByTestId('gap').filter({ hasText: unanswerable })
  await gap.waitFor()
  assert.equal(await gaps.getByTestId('gap').filter({ hasText: 'kubectl rollout status web' }).count(), 0)
  assert.ok(Number(await admin.getByTestId('figure-documents').textContent()) >= 3)
  await admin.getByRole('list', { name: 'Activity' }).waitFor()
  await screens.shoot(admin, 'dashboard')
  assert.deepEqual(await overflows(admin), [])

  await gap.getByRole('button', { name: 'Write this doc' }).click()
  assert.equal(await admin.getByLabel('Title', { exact: true }).inputValue(), unanswerable)
  assert.match(await admin.getByLabel('Content (Markdown)').inputValue(), /## Short answer/)
  await admin.keyboard.press('Escape')
  await gap.getByRole('button', { name: /Dismiss/ }).click()
  await eventually(async () => { assert.equal(await gap.count(), 0) })

  // The filtered search said so in the app too.
  await admin.goto('/search?q=kubectl%20rollout%20status%20web&tag=nosuchtag')
  await admin.getByRole('heading', { name: 'No document matches these filters' }).waitFor()
})

scenario('search keeps identifiers whole and groups hits by document; the screens fit a laptop and a phone', async (screens) => {
  const { runbookId } = await ensureLibrary()
  const call = await adminApi()
  await created(call('POST', '/api/documents', {
    title: 'Signing keys',
    content: '# Signing keys\n\nSet KEY_ID to the key in use, and CORPUS_OPEN_SIGNUP to false.\n\n## Rotation\n\nA new KEY_ID every quarter.\n',
  }))
  const admin = await screens.adminPage()
  await admin.goto('/search?q=KEY_ID')
  const hit = admin.getByTestId('search-hit').filter({ hasText: 'Signing keys' })
  await hit.waitFor()
  assert.match(await hit.getByTestId('snippet').textContent(), /KEY_ID/)
  assert.deepEqual(await overflows(admin), [])

  await admin.goto(`/documents/${runbookId}`)
  await admin.getByRole('heading', { level: 1, name: 'Deploy runbook' }).waitFor()
  assert.deepEqual(await overflows(admin), [])
  // The drawer's content fits the drawer.
  await admin.getByRole('button', { name: 'Ask about this doc' }).click()
  const drawer = admin.getByRole('dialog')
  await drawer.getByLabel('Your question').waitFor()
  const [inner, outer] = await drawer.evaluate((el) => [el.scrollWidth, el.clientWidth])
  assert.ok(inner <= outer, `the drawer's content is ${inner}px in ${outer}px`)
  await screens.shoot(admin, 'ask-drawer')

  await admin.goto('/chat')
  await admin.getByLabel('Your question').waitFor()
  assert.deepEqual(await overflows(admin), [])
  // On a phone the conversation comes first, and the list when asked for.
  await admin.setViewportSize({ width: 390, height: 844 })
  await admin.getByLabel('Your question').waitFor()
  await admin.getByRole('button', { name: 'All chats' }).click()
  await admin.getByRole('button', { name: 'New chat' }).click()
  await admin.getByLabel('Your question').waitFor()
})

/** A unique name for what one test makes on the shared server. */
function unique(prefix) {
  return `${prefix}-${randomBytes(4).toString('hex')}`
}

/**
 * MCP tool calls through the MCP SDK's own client (Python's, `scripts/mcp_calls.py`), as an
 * agent configured with `url` and `header` (what a copied snippet holds) makes them:
 * `{ calls: [{ is_error, text, structured }] }`, or `{ refused: status }` when the server
 * refuses the credential.
 */
async function mcpClient(url, header, calls) {
  const child = spawn(python(), ['scripts/mcp_calls.py', url, header], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] })
  const out = []
  const err = []
  child.stdout.on('data', (chunk) => out.push(chunk))
  child.stderr.on('data', (chunk) => err.push(chunk))
  const code = new Promise((ok) => child.on('close', ok))
  child.stdin.end(JSON.stringify(calls))
  assert.equal(await code, 0, `the MCP client failed:\n${Buffer.concat(err).toString()}`)
  return JSON.parse(Buffer.concat(out).toString())
}

scenario('an admin invites a person, who must change the temporary password; a role change is audited; a locked account is unlocked', async (screens) => {
  const admin = await screens.adminPage()
  const email = `${unique('invitee')}@example.com`
  await admin.goto('/people')
  await admin.getByRole('table', { name: 'People and agents' }).waitFor()
  await admin.getByRole('button', { name: 'Invite', exact: true }).click()
  const inviting = admin.getByRole('dialog')
  await inviting.getByLabel('Email', { exact: true }).fill(email)
  await inviting.getByLabel('Name', { exact: true }).fill('Ivy Invitee')
  await inviting.getByRole('button', { name: 'Invite', exact: true }).click()
  const password = (await inviting.getByLabel('Temporary password').textContent()).trim()
  assert.ok(password.length >= 12, 'a temporary password is shown')
  await screens.shoot(admin, 'people-invited')
  await admin.getByRole('button', { name: 'Done' }).click()

  const invitee = await screens.page()
  await invitee.goto('/login')
  await invitee.getByLabel('Email').fill(email)
  await invitee.getByLabel('Password').fill(password)
  await invitee.getByRole('button', { name: 'Sign in' }).click()
  await invitee.getByRole('heading', { name: 'Choose a new password' }).waitFor()
  await invitee.getByLabel('Temporary password').fill(password)
  await invitee.getByLabel('New password', { exact: true }).fill('ivy chose this passphrase')
  await invitee.getByLabel('Confirm new password').fill('ivy chose this passphrase')
  await invitee.getByRole('button', { name: 'Change password' }).click()
  await invitee.getByRole('navigation', { name: 'Main' }).waitFor()
  // A viewer is offered no admin screen, and the server refuses the calls anyway.
  assert.equal(await invitee.getByRole('link', { name: 'People' }).count(), 0)
  await invitee.goto('/people')
  await invitee.getByText('For admins only').waitFor()
  assert.equal((await call(invitee, 'GET', '/api/people')).status, 403)
  assert.equal((await call(invitee, 'GET', '/api/audit')).status, 403)

  // The role change, then the audit log with its before and after.
  await admin.getByLabel('Role of Ivy Invitee').selectOption('editor')
  const people = await eventually(async () => {
    const listed = await call(admin, 'GET', '/api/people?limit=200')
    const found = listed.body.items.find((p) => p.email === email)
    assert.equal(found.role, 'editor')
    return found
  })
  await admin.goto('/audit')
  const filters = admin.getByRole('form', { name: 'Filter the audit log' })
  await filters.getByLabel('Action', { exact: true }).fill('user.update')
  await filters.getByLabel('Target', { exact: true }).fill(people.id)
  await filters.getByRole('button', { name: 'Filter' }).click()
  const changes = admin.getByRole('table', { name: 'Changes of user.update' }).first()
  const role = changes.getByRole('row', { name: /role/ })
  await eventually(async () => {
    assert.deepEqual(await role.getByRole('cell').allTextContents(), ['viewer', 'editor'])
  })
  await screens.shoot(admin, 'audit')

  // Eight wrong guesses lock the account; the admin sees it under Locked and unlocks it.
  for (let i = 0; i < 8; i++) {
    const guess = await fetch(`${corpus.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email, password: `wrong guess ${i}` }),
    })
    assert.equal(guess.status, 401)
  }
  await admin.goto('/people')
  await admin.getByRole('button', { name: /^Locked/ }).click()
  const row = admin.getByTestId(`person-${email}`)
  await row.getByText('Locked').waitFor()
  await screens.shoot(admin, 'people')
  await row.getByRole('button', { name: 'Actions for Ivy Invitee' }).click()
  await admin.getByRole('menuitem', { name: 'Unlock' }).click()
  await eventually(async () => {
    const listed = await call(admin, 'GET', '/api/people?limit=200')
    assert.equal(listed.body.items.find((p) => p.email === email).locked, false)
  })
  await row.waitFor({ state: 'detached' })
})

scenario('a key bound to a workspace works at /mcp there only, with the Claude Code snippet, until it is revoked', async (screens) => {
  const admin = await screens.adminPage()
  await admin.context().grantPermissions(['clipboard-read', 'clipboard-write'])
  const workspace = unique('ws')
  const agent = `${unique('agent')}@example.com`
  await admin.goto('/people')
  assert.equal((await call(admin, 'POST', '/api/workspaces', { slug: workspace, title: 'Agent desk' })).status, 201)
  assert.equal((await call(admin, 'POST', '/api/people', { email: agent, display_name: 'Desk bot', role: 'editor', kind: 'agent' })).status, 201)
  await admin.reload()
  await admin.getByRole('table', { name: 'People and agents' }).waitFor()
  await admin.getByTestId(`person-${agent}`).getByRole('button', { name: 'Actions for Desk bot' }).click()
  await admin.getByRole('menuitem', { name: 'Mint a key' }).click()
  const keyName = unique('desk')
  const minting = admin.getByRole('dialog')
  await minting.getByLabel('Name', { exact: true }).fill(keyName)
  await minting.getByLabel('Workspace', { exact: true }).selectOption(workspace)
  await minting.getByRole('button', { name: 'Mint key' }).click()
  const key = (await minting.getByLabel('The new API key').textContent()).trim()
  assert.match(key, /^ck_[A-Za-z0-9_-]{32,}$/)
  await admin.getByRole('button', { name: 'Copy the Claude Code snippet' }).click()
  const copied = await eventually(async () => {
    const text = await admin.evaluate(() => navigator.clipboard.readText())
    assert.match(text, /^claude mcp add --transport http corpus /)
    return text
  })
  await screens.shoot(admin, 'key-minted')
  await admin.getByRole('button', { name: 'Done' }).click()

  // The snippet as Claude Code would read it: the URL and the header, given to the MCP SDK's
  // client. The key writes to its workspace and nowhere else, and lists only what is there.
  const [, url, header] = /claude mcp add --transport http corpus (\S+)[\s\\]+--header "([^"]+)"/.exec(copied)
  assert.equal(url, `${corpus.url}/mcp`)
  assert.equal(header, `Authorization: Bearer ${key}`)
  const { calls } = await mcpClient(url, header, [
    { name: 'upload_document', arguments: { title: 'Desk notes', content: 'The desk opens at nine.' } },
    { name: 'upload_document', arguments: { title: 'Elsewhere', content: 'Not here.', workspace: 'default' } },
    { name: 'list_documents', arguments: {} },
  ])
  const [inside, outside, listed] = calls
  assert.equal(inside.is_error, false, inside.text)
  assert.equal(inside.structured.workspace, workspace)
  assert.equal(outside.is_error, true)
  assert.match(outside.text, /forbidden/)
  assert.deepEqual([...new Set(listed.structured.items.map((d) => d.workspace))], [workspace])

  await admin.getByTestId(`key-${keyName}`).getByRole('button', { name: `Revoke ${keyName}` }).click()
  await admin.getByRole('button', { name: `Confirm revoking ${keyName}` }).click()
  await admin.getByTestId(`key-${keyName}`).waitFor({ state: 'detached' })
  assert.deepEqual(await mcpClient(url, header, [{ name: 'whoami', arguments: {} }]), { refused: 401 })

  // Connect an agent: this server's URL, and each client's OAuth form without a key.
  await admin.goto('/connect')
  await admin.getByLabel('MCP URL').getByText(`${corpus.url}/mcp`).waitFor()
  await admin.getByRole('tab', { name: 'Cursor' }).click()
  assert.doesNotMatch(await admin.getByLabel('Cursor configuration').textContent(), /Bearer/)
  await screens.shoot(admin, 'connect')

  // Each client names how it identifies itself, as docs/mcp-client-setup.md's table says.
  for (const [client, ways] of [
    ['Claude Code', ['API key', 'OAuth: Client ID Metadata Document']],
    ['Cursor', ['API key', 'OAuth: dynamic registration']],
    ['VS Code', ['API key', 'OAuth: Client ID Metadata Document']],
    ['Codex', ['API key', 'OAuth: Client ID Metadata Document']],
    ['Any OAuth client', ['OAuth: Client ID Metadata Document', 'OAuth: dynamic registration']],
  ]) {
    await admin.getByRole('tab', { name: client }).click()
    const named = admin.getByRole('list', { name: `How ${client} connects` }).getByRole('listitem')
    assert.deepEqual(await named.allTextContents(), ways, client)
  }
})

scenario('a licensed workspace shows in a persona’s footnote, and an edit in the admin layer changes the preview', async (screens) => {
  const admin = await screens.adminPage()
  const workspace = unique('lic')
  const persona = unique('persona')
  await admin.goto('/workspaces')
  await admin.getByRole('button', { name: 'New workspace' }).click()
  const creating = admin.getByRole('dialog')
  await creating.getByLabel('Name', { exact: true }).fill(workspace)
  await creating.getByLabel('Title', { exact: true }).fill('Licensed notes')
  await creating.getByLabel('License', { exact: true }).selectOption('spdx')
  await creating.getByLabel('SPDX id').fill('CC-BY-4.0')
  await creating.getByLabel('Searched on another server').check()
  await creating.getByText('Everyone who may read this workspace searches with this key').waitFor()
  await screens.shoot(admin, 'workspace-new')
  await creating.getByLabel('Searched on another server').uncheck()
  await creating.getByRole('button', { name: 'Create workspace' }).click()
  await admin.getByTestId(`workspace-${workspace}`).getByText('CC-BY-4.0').waitFor()
  await created(adminApi().then((call) => call('POST', '/api/documents', {
    title: 'Glacier survey', content: 'The glacier survey counts crevasses every spring.', workspace,
  })))

  await admin.getByRole('button', { name: 'New persona' }).click()
  await admin.getByRole('dialog').getByLabel('Persona', { exact: true }).fill(persona)
  await admin.getByRole('dialog').getByLabel('Workspaces', { exact: true }).fill(workspace)
  await admin.getByRole('dialog').getByRole('button', { name: 'Save' }).click()
  const row = admin.getByTestId(`persona-${persona}`)
  await row.getByText('Admin').waitFor()
  await row.getByRole('button', { name: 'Preview' }).click()
  await admin.getByLabel('Question', { exact: true }).fill('glacier survey crevasses')
  await admin.getByRole('button', { name: 'Preview', exact: true }).last().click()
  const block = admin.getByLabel('Context block')
  await eventually(async () => assert.match(await block.textContent(), /CC-BY-4\.0/))
  await screens.shoot(admin, 'workspaces')

  await row.getByRole('button', { name: `Edit ${persona}` }).click()
  await admin.getByRole('dialog').getByLabel('Workspaces', { exact: true }).fill('default')
  await admin.getByRole('dialog').getByRole('button', { name: 'Save' }).click()
  await admin.getByRole('dialog').waitFor({ state: 'detached' })
  await admin.getByRole('button', { name: 'Preview', exact: true }).last().click()
  await eventually(async () => assert.doesNotMatch(await block.textContent(), /CC-BY-4\.0/))
})

scenario('five files upload at once and one sent again is no duplicate; a relative link leads to its document, which lists it under Linked from', async (screens) => {
  const admin = await screens.adminPage()
  const workspace = unique('desk')
  await admin.goto('/documents')
  assert.equal((await call(admin, 'POST', '/api/workspaces', { slug: workspace, title: 'Release desk' })).status, 201)
  const files = {
    'setup.md': '# Release setup\n\nBefore a release, read the [rollback steps](../ops/deploy.md#rollback) and the [glossary](glossary.md).\n',
    'deploy.md': '# Release deploy\n\nShip with make release.\n\n## Steps\n\nTag, build, ship.\n\n## Rollback\n\nRun make rollback, then watch the rollout settle.\n',
    'faq.md': '# Release questions\n\nWho approves a release? The captain of the week.\n',
    'contacts.md': '# Release contacts\n\nThe captain, the on-call engineer and the database owner.\n',
    'calendar.md': '# Release calendar\n\nReleases leave on Tuesdays and Thursdays.\n',
  }
  const asFiles = (names, change = {}) =>
    names.map((name) => ({ name, mimeType: 'text/markdown', buffer: Buffer.from(change[name] ?? files[name]) }))

  await admin.reload()
  await admin.getByRole('button', { name: 'Add documents' }).first().click()
  const dialog = admin.getByRole('dialog')
  await dialog.getByLabel('Files to upload').setInputFiles(asFiles(Object.keys(files)))
  await dialog.getByLabel('Workspace', { exact: true }).selectOption(workspace)
  await dialog.getByRole('button', { name: 'Upload 5 files' }).click()
  const rows = dialog.getByRole('list', { name: 'Files' }).locator('li')
  await eventually(async () => {
    assert.deepEqual(await rows.evaluateAll((all) => all.map((li) => li.dataset.state)), Array(5).fill('done'))
  })
  await screens.shoot(admin, 'upload-five')

  // Again: the deploy notes as they were, the questions changed. Nothing is added twice.
  await dialog.getByLabel('Files to upload').setInputFiles(
    asFiles(['deploy.md', 'faq.md'], { 'faq.md': `${files['faq.md']}\nAnd who rolls back? Whoever is on call.\n` }),
  )
  await dialog.getByLabel('Workspace', { exact: true }).selectOption(workspace)
  await dialog.getByRole('button', { name: 'Upload 2 files' }).click()
  await dialog.getByText('Already here, unchanged.').waitFor()
  await dialog.getByText('Replaced: now version 2.').waitFor()
  await screens.shoot(admin, 'upload-again')
  await admin.keyboard.press('Escape')
  const listed = await call(admin, 'GET', `/api/documents?workspace=${workspace}`)
  assert.deepEqual(
    listed.body.items.map((d) => d.title).sort(),
    ['Release calendar', 'Release contacts', 'Release deploy', 'Release questions', 'Release setup'],
  )
  const idOf = (title) => listed.body.items.find((d) => d.title === title).id

  // The setup notes link to ../ops/deploy.md: uploaded flat, the deploy notes are found by
  // their file's name; the glossary is in no upload, and the page says so.
  await admin.goto(`/documents/${idOf('Release setup')}`)
  const body = admin.getByTestId('document-body')
  await body.getByText('glossary (not in the corpus)').waitFor()
  await screens.shoot(admin, 'document-links')
  await body.getByRole('link', { name: 'rollback steps' }).click()
  await admin.waitForURL(`**/documents/${idOf('Release deploy')}#h-rollback`)
  await admin.getByRole('heading', { name: 'Release deploy', level: 1 }).waitFor()
  await admin.getByRole('region', { name: 'Linked from' }).getByRole('link', { name: 'Release setup' }).waitFor()
  await screens.shoot(admin, 'document-linked-from')
})

scenario('the API reference at /docs loads with every request on the server’s own origin', async (screens) => {
  const page = await screens.page()
  const requested = []
  page.on('request', (request) => requested.push(request.url()))
  await page.goto('/docs')
  await page.getByRole('heading', { name: /Corpus/ }).first().waitFor()
  await page.getByText('/api/documents/{document_id}/backlinks').first().waitFor()
  assert.ok(requested.some((url) => url === `${corpus.url}/openapi.json`), requested.join('\n'))
  const elsewhere = requested.filter((url) => !url.startsWith(`${corpus.url}/`) && !url.startsWith('data:'))
  assert.deepEqual(elsewhere, [])
})

/** A git repository under SOURCES_ROOT, committed to with increasing dates. */
function gitRepository(name) {
  const path = join(SOURCES_ROOT, name)
  mkdirSync(path, { recursive: true })
  let commits = 0
  const git = (...args) => {
    const when = `2026-02-${String(1 + commits).padStart(2, '0')}T12:00:00+00:00`
    return execFileSync('git', args, {
      cwd: path,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.com', GIT_AUTHOR_DATE: when,
        GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.com', GIT_COMMITTER_DATE: when,
        GIT_CONFIG_NOSYSTEM: '1', HOME: path,
      },
    }).toString()
  }
  git('init', '--quiet', '--initial-branch=main')
  return {
    path,
    write(file, content) {
      mkdirSync(dirname(join(path, file)), { recursive: true })
      writeFileSync(join(path, file), content)
    },
    commit(message) {
      git('add', '--all')
      git('commit', '--quiet', '-m', message)
      commits += 1
    },
  }
}

scenario('an admin adds a git source to a workspace, syncs it, reads the run’s report and a stale badge on a document', async (screens) => {
  const workspace = unique('synced')
  const repo = gitRepository(workspace)
  repo.write('docs/config.md', '# Loading the config\n\nCall `load_config` in `src/config.py` before the server starts.\n')
  repo.write('src/config.py', 'def load_config(path):\n    return {}\n')
  repo.commit('config and its guide')
  const call = await adminApi()
  const made = await call('POST', '/api/workspaces', { slug: workspace, title: 'Synced docs' })
  assert.equal(made.status, 201)

  const admin = await screens.adminPage()
  await admin.goto('/workspaces')
  const section = admin.getByRole('region', { name: 'Sources' })
  await section.getByLabel('Workspace', { exact: true }).selectOption(workspace)
  await section.getByText('No sources').waitFor()
  await section.getByLabel('Location', { exact: true }).fill(repo.path)
  await section.getByRole('button', { name: 'Add source' }).click()
  const runs = section.getByRole('list', { name: `Runs of ${repo.path}` })
  await section.getByText('Not synced yet.').waitFor()
  await section.getByRole('button', { name: 'Sync now' }).click()
  await runs.getByText('1 added, 0 updated, 0 removed, 0 unchanged, 0 failed').waitFor()
  await screens.shoot(admin, 'sources')

  repo.write('src/config.py', 'def load_config(path, strict=True):\n    return {}\n')
  repo.commit('load_config is strict')
  await section.getByRole('button', { name: 'Sync now' }).click()
  await runs.getByText('0 added, 0 updated, 0 removed, 1 unchanged, 0 failed').waitFor()
  await section.getByRole('button', { name: `Edit ${repo.path}` }).click()
  const editing = section.getByRole('form', { name: `Edit ${repo.path}` })
  await editing.getByLabel('Sync every (minutes)').fill('30')
  await editing.getByRole('button', { name: 'Save source' }).click()
  await section.getByText(/every 30 min/).waitFor()

  const listed = await call('GET', `/api/documents?workspace=${workspace}`)
  const [document] = listed.body.items
  await admin.goto(`/documents/${document.id}`)
  const provenance = admin.getByRole('region', { name: 'Provenance' })
  await provenance.getByText('docs/config.md').waitFor()
  await provenance.getByText('May be stale').waitFor()
  await provenance.getByText(/Code it names changed in 1 later commit/).click()
  await provenance.getByText(/src\/config\.py, `load_config`/).waitFor()
  await screens.shoot(admin, 'document-stale')

  // The documents list finds it by its freshness filter (kept in the URL), badged.
  await admin.goto(`/documents?workspace=${workspace}&stale=true`)
  assert.equal(await admin.getByLabel('Freshness').inputValue(), 'true')
  const row = admin.getByRole('row').filter({ hasText: document.title })
  await row.getByText('May be stale').waitFor()
  await screens.shoot(admin, 'documents-stale')
  await admin.getByLabel('Freshness').selectOption('false')
  await admin.getByText('No document matches these filters').waitFor()
  await admin.waitForURL(/stale=false/)
})

for (const { name, body } of inTestOrder(scenarios)) {
  test(name, { timeout: TEST_TIMEOUT_MS }, async (t) => {
    const screens = new Screens()
    let failure
    try {
      await body(screens)
    } catch (error) {
      failure = error
    }
    const problems = screens.problems()
    await screens.close()
    if (failure) {
      for (const problem of problems) t.diagnostic(problem)
      throw failure
    }
    assert.deepEqual(problems, [], 'no screen had a console error, a 5xx, an accessibility violation or an overflow')
  })
}
