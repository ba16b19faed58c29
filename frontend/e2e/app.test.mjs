// The web app in a real browser against a real server: `make test-browser` (part of `make test`).
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { after, before, test } from 'node:test'

import { launchBrowser, newPage, pdf, shoot, startCallback, startCorpus } from './support.mjs'

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

let corpus
let callback
let browser
const findings = []
const pages = []

before(async () => {
  // Each is kept as soon as it starts, so that `after` stops whatever did start when another
  // failed (a Chromium left open kept the run from ever ending).
  const started = await Promise.allSettled([
    startCorpus().then((c) => (corpus = c)),
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
})

async function page() {
  const created = await newPage(browser, corpus.url)
  pages.push(created)
  return created
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

let admin
let runbookId

test('the built page needs nothing its policy refuses: no inline script, nothing from elsewhere', async () => {
  // The browser would refuse these and log it (the last test fails on any console error), but
  // only on a screen that is visited; the page itself is read here whole.
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

test('the first visit creates the admin, who can sign out and back in', async () => {
  admin = await page()
  await admin.goto('/documents')
  await admin.waitForURL('**/setup')
  await shoot(admin, 'setup', findings)

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
  await admin.waitForURL('**/documents')
  await admin.getByRole('heading', { name: 'No documents yet' }).waitFor()
  await shoot(admin, 'documents-empty', findings)

  await admin.getByRole('button', { name: 'Account menu' }).click()
  await admin.getByRole('menuitem', { name: 'Sign out' }).click()
  await admin.waitForURL(/\/login$/)

  await admin.getByLabel('Email').fill(ADMIN.email)
  await admin.getByLabel('Password').fill('not the password at all')
  await admin.getByRole('button', { name: 'Sign in' }).click()
  await admin.getByRole('alert').waitFor()
  await shoot(admin, 'login-failed', findings)

  await admin.getByLabel('Password').fill(ADMIN.password)
  await admin.getByRole('button', { name: 'Sign in' }).click()
  await admin.getByRole('heading', { name: /Good to see you/ }).waitFor()
  await shoot(admin, 'home-empty', findings)
})

test('Markdown and PDF files upload with progress, and a rejected file says why', async () => {
  await admin.goto('/documents')
  await admin.getByRole('button', { name: 'Add documents' }).first().click()
  await admin.getByLabel('Files to upload').setInputFiles([
    { name: 'deploy-runbook.md', mimeType: 'text/markdown', buffer: Buffer.from(RUNBOOK) },
    {
      name: 'oncall-guide.pdf',
      mimeType: 'application/pdf',
      buffer: pdf(['On-call guide', 'Page the secondary after fifteen minutes.', 'Rollback first, debug later.'], 'On-call guide'),
    },
    { name: 'diagram.png', mimeType: 'image/png', buffer: Buffer.from([137, 80, 78, 71]) },
    { name: 'empty.md', mimeType: 'text/markdown', buffer: Buffer.from('   \n') },
  ])
  const files = admin.getByRole('list', { name: 'Files' })
  await files.locator('li[data-state="failed"]').first().waitFor()
  await admin.getByLabel('Tags').fill('ops, runbook')
  await admin.getByRole('button', { name: /^Upload/ }).click()
  await files.locator('li[data-state="done"]').nth(1).waitFor()
  // The image is refused before sending; the blank file by the server; each says so.
  assert.equal(await files.locator('li[data-state="failed"]').count(), 2)
  assert.equal(await files.locator('li[data-state="failed"] [role="alert"]').count(), 2)
  await shoot(admin, 'upload', findings)
  await admin.keyboard.press('Escape')

  const listed = await call(admin, 'GET', '/api/documents')
  const titles = listed.body.items.map((d) => d.title).sort()
  assert.deepEqual(titles, ['Deploy runbook', 'On-call guide'])
  runbookId = listed.body.items.find((d) => d.title === 'Deploy runbook').id
  assert.ok(listed.body.items.find((d) => d.title === 'On-call guide').media_type.includes('pdf'))

  // Pasted text that links to the runbook: the runbook's backlink.
  await admin.getByRole('button', { name: 'Add documents' }).first().click()
  await admin.getByRole('tab', { name: 'Paste text' }).click()
  await admin.getByLabel('Title', { exact: true }).fill('Incident checklist')
  await admin
    .getByLabel('Content (Markdown)')
    .fill(`# Incident checklist\n\nFirst, follow the [deploy runbook](/documents/${runbookId}) to roll back.\n`)
  await admin.getByRole('button', { name: 'Add document' }).click()
  await admin.getByRole('link', { name: 'Incident checklist' }).waitFor()
  await shoot(admin, 'documents', findings)
  await admin.goto('/')
  await admin.getByRole('link', { name: /Incident checklist/ }).waitFor()
  await shoot(admin, 'home', findings)
})

test('search shows each hit’s ranks, and says plainly when nothing is relevant', async () => {
  await admin.goto('/search?q=rollback%20migration')
  const hits = admin.getByTestId('search-hit')
  await hits.first().waitFor()
  const first = hits.first()
  assert.match(await first.getByTestId('rank-vec').textContent(), /vec(#\d+|—)/)
  assert.match(await first.getByTestId('rank-kw').textContent(), /kw#\d+/)
  assert.match(await first.getByTestId('rank-rrf').textContent(), /rrf0\.\d{3}/)
  assert.ok((await first.locator('mark').count()) > 0, 'matched terms are highlighted')
  await shoot(admin, 'search', findings)

  await admin.goto('/search?q=zygomorphic%20quokka%20xylograph')
  await admin.getByRole('heading', { name: 'Nothing relevant found' }).waitFor()
  await shoot(admin, 'search-nothing', findings)
})

test('a hit opens the viewer at its chunk, and the seams show where the document was cut', async () => {
  await admin.goto('/search?q=kubectl%20rollout%20status')
  const link = admin.getByTestId('search-hit').first().getByRole('link').first()
  const href = await link.getAttribute('href')
  assert.match(href, /^\/documents\/[0-9a-f-]+#chunk-[0-9a-f-]+$/)
  await link.click()
  const chunkId = href.split('#')[1]
  const target = admin.locator(`section#${chunkId}`)
  await target.waitFor()
  assert.equal(await target.getAttribute('data-active'), 'true')
  assert.ok(await target.evaluate((el) => {
    const box = el.getBoundingClientRect()
    return box.top < window.innerHeight && box.bottom > 0
  }), 'the chunk is scrolled into view')
  assert.match(await target.textContent(), /kubectl rollout status/)
  await admin.getByRole('navigation', { name: 'Contents' }).waitFor()
  await admin.getByRole('region', { name: 'Backlinks' }).getByRole('link', { name: 'Incident checklist' }).waitFor()
  await shoot(admin, 'viewer', findings)

  const chunks = await call(admin, 'GET', `/api/documents/${runbookId}/chunks`)
  await admin.getByRole('switch', { name: /Chunk seams/ }).click()
  const seams = admin.getByRole('separator')
  await seams.first().waitFor()
  assert.equal(await seams.count(), chunks.body.length)
  const labels = await seams.evaluateAll((all) => all.map((s) => s.getAttribute('aria-label')))
  assert.deepEqual(
    labels,
    chunks.body.map((c) => `Chunk ${c.ordinal + 1}: ${c.heading_path.join(' › ') || 'Top of the document'}`),
  )
  await shoot(admin, 'viewer-seams', findings)

  await admin.getByRole('button', { name: 'Ask about this doc' }).click()
  const panel = admin.getByRole('dialog')
  await panel.getByLabel('Your question').fill('How do I roll back a release?')
  await panel.getByRole('button', { name: 'Ask', exact: true }).click()
  // No model is configured here: POST /api/ask streams the extractive answer, scoped to this
  // document, each citation a deep link to its chunk.
  await panel.getByTestId('answer').waitFor()
  const cited = panel.locator(`a[href^="/documents/${runbookId}#chunk-"]`)
  await cited.first().waitFor()
  const hrefs = await panel.locator('a[href*="#chunk-"]').evaluateAll((all) => all.map((a) => a.getAttribute('href')))
  assert.ok(hrefs.every((h) => h.startsWith(`/documents/${runbookId}#chunk-`)), 'every citation is this document')
  await shoot(admin, 'ask-panel', findings)
  await admin.keyboard.press('Escape')
})

test('an edit to the content says it re-chunks, and saves a new version', async () => {
  await admin.goto(`/documents/${runbookId}`)
  await admin.getByRole('button', { name: 'Edit' }).click()
  await admin.getByLabel('Title', { exact: true }).fill('Deploy and rollback runbook')
  const content = admin.getByLabel('Content (Markdown)')
  await content.fill(`${RUNBOOK}\n## Contacts\n\nThe release captain rotates weekly.\n`)
  await admin.getByTestId('rechunk-note').waitFor()
  await shoot(admin, 'edit', findings)
  await admin.getByRole('button', { name: 'Save changes' }).click()
  await admin.getByRole('heading', { level: 1, name: 'Deploy and rollback runbook' }).waitFor()
  await admin.getByText(/^v2 · updated/).waitFor()
  const saved = await call(admin, 'GET', `/api/documents/${runbookId}`)
  assert.equal(saved.body.version, 2)
  assert.match(saved.body.content, /## Contacts/)
})

test('a delete asks first, then removes the document', async () => {
  await admin.goto('/documents?q=Incident')
  await admin.getByRole('button', { name: 'Actions for Incident checklist' }).click()
  await admin.getByRole('menuitem', { name: 'Delete' }).click()
  await admin.getByRole('alertdialog').waitFor()
  await shoot(admin, 'delete', findings)
  await admin.getByRole('button', { name: 'Delete document' }).click()
  await admin.getByRole('heading', { name: 'No document matches these filters' }).waitFor()
  const listed = await call(admin, 'GET', '/api/documents')
  assert.deepEqual(listed.body.items.map((d) => d.title).sort(), ['Deploy and rollback runbook', 'On-call guide'])
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

test('the consent screen approves and denies an MCP client', async () => {
  const state = await authorize(admin)
  await admin.getByRole('heading', { name: /^Connect 127\.0\.0\.1(:\d+)? to Corpus\?$/ }).waitFor()
  await admin.getByTestId('self-declared').waitFor()
  await shoot(admin, 'consent', findings)
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
  await shoot(admin, 'account', findings)

  await admin.getByRole('button', { name: 'Disconnect' }).click()
  await admin.getByRole('heading', { name: 'No connected apps' }).waitFor()
  const connections = await call(admin, 'GET', '/api/me/connections')
  assert.deepEqual(connections.body.items, [])
})

test('a viewer sees no upload button, and the server refuses an upload anyway', async () => {
  const created = await call(admin, 'POST', '/api/people', {
    email: VIEWER.email,
    display_name: 'Vic Viewer',
    role: 'viewer',
    kind: 'human',
    password: VIEWER.password,
  })
  assert.equal(created.status, 201)

  const viewer = await page()
  await viewer.goto('/documents')
  await viewer.waitForURL('**/login?next=*')
  await shoot(viewer, 'login', findings)
  await viewer.getByLabel('Email').fill(VIEWER.email)
  await viewer.getByLabel('Password').fill(VIEWER.password)
  await viewer.getByRole('button', { name: 'Sign in' }).click()
  await viewer.waitForURL('**/documents')
  await viewer.getByRole('link', { name: /On-call guide/ }).waitFor()
  assert.equal(await viewer.getByRole('button', { name: 'Add documents' }).count(), 0)
  await shoot(viewer, 'documents-viewer', findings)

  const refused = await call(viewer, 'POST', '/api/documents', { title: 'Sneaky', content: 'Nope.' })
  assert.equal(refused.status, 403)
  assert.equal(refused.body.error.code, 'forbidden')

  await viewer.goto(`/documents/${runbookId}`)
  await viewer.getByRole('heading', { level: 1, name: 'Deploy and rollback runbook' }).waitFor()
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
  await shoot(viewer, 'command-palette', findings)
  await palette.press('ArrowDown')
  await palette.press('ArrowUp')
  await palette.press('Enter')
  await viewer.getByRole('heading', { level: 1, name: 'On-call guide' }).waitFor()

  // After an admin reset, the temporary password leads to the forced change, and only then in.
  const reset = await call(admin, 'POST', `/api/people/${created.body.id}/reset-password`)
  assert.equal(reset.status, 200)
  await viewer.goto('/account')
  await viewer.waitForURL('**/login?next=*')
  await viewer.getByLabel('Email').fill(VIEWER.email)
  await viewer.getByLabel('Password').fill(reset.body.temporary_password)
  await viewer.getByRole('button', { name: 'Sign in' }).click()
  await viewer.getByRole('heading', { name: 'Choose a new password' }).waitFor()
  await shoot(viewer, 'password-forced', findings)
  await viewer.getByLabel('Temporary password').fill(reset.body.temporary_password)
  await viewer.getByLabel('New password', { exact: true }).fill('a brand new passphrase')
  await viewer.getByLabel('Confirm new password').fill('a brand new passphrase')
  await viewer.getByRole('button', { name: 'Change password' }).click()
  await viewer.getByRole('heading', { name: 'Account' }).waitFor()
})

test('no screen had a console error, a 5xx, an accessibility violation or an overflow', () => {
  const problems = pages.flatMap((p) => p.problems)
  assert.deepEqual([...problems, ...findings], [])
})
