// The official TypeScript MCP SDK (`@modelcontextprotocol/client`, v2 of what was
// `@modelcontextprotocol/sdk`) against a real `corpus serve`, on each revision it speaks, with an
// API key: the same tools and errors the Python SDK's client gets (tests/mcp), and deep research
// as a task through the official tasks client (`@modelcontextprotocol/ext-tasks`), on 2026-07-28
// (the tasks extension) and on 2025-11-25 (that revision's own tasks, which the Python SDK's
// client does not speak); and the SDK's OAuth client through registration and consent. No
// browser: it runs in `make test-browser` because that run already starts servers from node
// (issue #34).
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, test } from 'node:test'

import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client'
import {
  JsonRpcResponseError,
  createTaskSessionFromClient,
  resultFromTaskOutcome,
  toolDeclarationFromMcpTool,
} from '@modelcontextprotocol/ext-tasks/client'

import { ANSWER, api, eventually, modelSettings, openSession, startCorpus, startModel } from './support.mjs'

// The first account, so an admin: it mints the key, and approves the OAuth client.
const ADMIN = { name: 'Otto Operator', email: 'otto@example.com', password: 'agents door staple' }
const CLIENT_INFO = { name: 'corpus-e2e', version: '1.0.0' }
const TASKS = 'io.modelcontextprotocol/tasks'
// A test waits on servers only (no browser): the bound is for a starved machine.
const TEST_TIMEOUT_MS = 5 * 60_000

let model
let corpus
let key
// The admin's browser session: what approves an OAuth client on the consent screen.
let session

before(async () => {
  model = await startModel()
  // deep_research answers with a job at once: what a 2025-11-25 client collects is a job.
  corpus = await startCorpus({ env: { ...modelSettings(model.url), DEEP_RESEARCH_WAIT_S: '0' } })
  session = await openSession(corpus.url, ADMIN, { signUp: true })
  const call = api(corpus.url, session)
  const me = await call('GET', '/api/me')
  const minted = await call('POST', '/api/keys', { user_id: me.body.id, name: 'typescript sdk' })
  assert.equal(minted.status, 201)
  key = minted.body.key
  const runbook = await call('POST', '/api/documents', {
    title: 'Deploy runbook',
    content: '# Rollback\n\nTo roll back a deploy, run make rollback VERSION=previous, then kubectl rollout status.',
  })
  assert.equal(runbook.status, 201)
})

after(async () => {
  await corpus?.stop()
  await model?.close()
})

/** A client connected to /mcp with the key: `mode` 'auto' negotiates 2026-07-28 (the SDK's
 *  newest), 'legacy' the 2025-11-25 handshake. */
async function connect(mode, bearer = key) {
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode } })
  const transport = new StreamableHTTPClientTransport(new URL(`${corpus.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
  })
  await client.connect(transport)
  return client
}

/**
 * The tasks client's raw request path: the SDK's own codecs refuse a task where a tool result is
 * due, so ext-tasks asks its host to post the (already framed) JSON-RPC request itself, with the
 * headers the 2026-07-28 transport sends (Mcp-Name mirrors the tool's name or the task's id).
 */
function rawDispatch(version) {
  let sent = 0
  return async (request, options = {}) => {
    const params = request.params ?? {}
    const name = params.name ?? params.taskId
    const reply = await fetch(`${corpus.url}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${key}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': version,
        'Mcp-Method': request.method,
        ...(name === undefined ? {} : { 'Mcp-Name': name }),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: `raw-${++sent}`, ...request }),
      signal: options.signal,
    })
    const message = await reply.json()
    return 'error' in message ? { kind: 'error', error: message.error } : { kind: 'result', result: message.result }
  }
}

function structured(result) {
  assert.notEqual(result.isError, true, JSON.stringify(result))
  return result.structuredContent
}

/** The searches, the answer and the tool errors, alike on both revisions; the tools listed. */
async function searchesAsksAndRefuses(client) {
  const { tools } = await client.listTools()
  const names = tools.map((tool) => tool.name)
  for (const name of ['search_docs', 'ask_docs', 'deep_research', 'research_result']) assert.ok(names.includes(name), name)

  const found = structured(await client.callTool({ name: 'search_docs', arguments: { query: 'roll back a deploy' } }))
  assert.equal(found.hits[0].title, 'Deploy runbook')

  const answer = structured(await client.callTool({ name: 'ask_docs', arguments: { question: 'How do I roll back a deploy?' } }))
  assert.equal(answer.answer, ANSWER)
  assert.deepEqual(answer.citations.map((c) => c.title), ['Deploy runbook'])
  assert.ok(answer.citations[0].url.startsWith(`${corpus.url}/documents/`), answer.citations[0].url)

  // A tool's refusal is a tool result with isError, its code after the tool's name.
  const missing = await client.callTool({ name: 'read_document', arguments: { document_id: randomUUID() } })
  assert.equal(missing.isError, true)
  assert.match(missing.content[0].text, /^Error executing tool read_document: not_found: /)
  const empty = await client.callTool({ name: 'search_docs', arguments: { query: '' } })
  assert.equal(empty.isError, true)
  assert.match(empty.content[0].text, /^Error executing tool search_docs: /)
  return tools
}

/**
 * Through the tasks client: deep_research as a task polled to its answer, and one that never ends
 * cancelled (its model call ended with it); a task that is not the caller's is invalid params.
 * `options` are each call's (2025-11-25 calls as a task only where asked and declared).
 */
async function researchesAsTasks(tasks, options = {}) {
  const research = await tasks.callTool('deep_research', { question: 'How do I roll back a deploy?' }, options)
  assert.equal(research.kind, 'task')
  const seen = []
  const { outcome } = await research.settle({ onEvent: (event) => { if (event.type === 'task') seen.push(event.task.status) } })
  assert.equal(outcome.status, 'completed')
  assert.equal(seen[0], 'working')
  const { structuredContent: answer } = resultFromTaskOutcome(outcome)
  assert.equal(answer.status, 'done')
  assert.equal(answer.answer, ANSWER)
  assert.deepEqual(answer.citations.map((c) => c.title), ['Deploy runbook'])
  assert.ok(answer.citations[0].url.startsWith(`${corpus.url}/documents/`), answer.citations[0].url)

  // "forever": the run's first model call streams and never ends; cancelling the task ends it.
  const endless = await tasks.callTool('deep_research', { question: 'Keep researching forever' }, options)
  assert.equal(endless.kind, 'task')
  await eventually(() => assert.equal(model.model.open, 1))
  await endless.cancel()
  assert.equal((await endless.result()).status, 'cancelled')
  assert.equal((await tasks.task(endless.handle.taskId).snapshot()).status, 'cancelled')
  await eventually(() => assert.equal(model.model.open, 0))

  await assert.rejects(tasks.task(randomUUID()).snapshot(), (error) => error instanceof JsonRpcResponseError && error.code === -32602)
}

test('2026-07-28: searches, asks, refuses, and runs deep_research as a task it polls, and another it cancels', { timeout: TEST_TIMEOUT_MS }, async () => {
  const client = await connect('auto')
  const tasks = createTaskSessionFromClient(client, {
    endpointId: corpus.url,
    rawDispatch: rawDispatch('2026-07-28'),
    v2RequestFraming: { protocolVersion: '2026-07-28', clientInfo: CLIENT_INFO, clientCapabilities: {} },
  })
  try {
    assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28')
    assert.deepEqual(client.getServerCapabilities().extensions[TASKS], {})
    await searchesAsksAndRefuses(client)
    await researchesAsTasks(tasks)
  } finally {
    await tasks.close()
    await client.close()
  }
})

test('2025-11-25: searches, asks, refuses, runs deep_research as a task it polls and another it cancels, or as a job', { timeout: TEST_TIMEOUT_MS }, async () => {
  const client = await connect('legacy')
  const tasks = createTaskSessionFromClient(client, { endpointId: corpus.url })
  try {
    assert.equal(client.getNegotiatedProtocolVersion(), '2025-11-25')
    // That revision's own tasks, not the extension: tools/call may be a task, and cancelled.
    assert.equal(client.getServerCapabilities().extensions, undefined)
    assert.deepEqual(client.getServerCapabilities().tasks, { cancel: {}, requests: { tools: { call: {} } } })
    const tools = await searchesAsksAndRefuses(client)
    const deep = tools.find((tool) => tool.name === 'deep_research')
    assert.deepEqual(deep.execution, { taskSupport: 'optional' })
    await researchesAsTasks(tasks, { declaration: toolDeclarationFromMcpTool(deep), task: { preference: 'prefer' } })

    // Asked for no task, deep_research answers with a job that research_result collects.
    const started = structured(await client.callTool({ name: 'deep_research', arguments: { question: 'How do I roll back a deploy?' } }))
    assert.equal(started.status, 'running')
    const done = await eventually(async () => {
      const result = structured(await client.callTool({ name: 'research_result', arguments: { job_id: started.job_id } }))
      assert.equal(result.status, 'done')
      return result
    })
    assert.equal(done.answer, ANSWER)
    assert.deepEqual(done.citations.map((c) => c.title), ['Deploy runbook'])
  } finally {
    await tasks.close()
    await client.close()
  }
})

test('a key that is not one is refused before any tool runs, on either revision', { timeout: TEST_TIMEOUT_MS }, async () => {
  for (const mode of ['auto', 'legacy']) {
    await assert.rejects(connect(mode, 'ck_not-a-key'), (error) => error.data?.status === 401, mode)
  }
})

/**
 * The SDK's OAuth client provider, kept in memory, whose "browser" is the admin's session: it
 * follows /authorize to the consent screen and approves there through the consent API, as the
 * screen's Approve does, keeping where the approval redirects (its code, state and issuer).
 */
class ApprovingProvider {
  redirectUrl = 'http://127.0.0.1:9/callback' // loopback: never opened, the code is read off the redirect
  clientMetadata = {
    client_name: 'TypeScript SDK test',
    redirect_uris: [this.redirectUrl],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  }
  stored = {}
  callback = undefined

  clientInformation() { return this.stored.client }
  saveClientInformation(client) { this.stored.client = client }
  tokens() { return this.stored.tokens }
  saveTokens(tokens) { this.stored.tokens = tokens }
  saveCodeVerifier(verifier) { this.stored.verifier = verifier }
  codeVerifier() { return this.stored.verifier }
  // Kept, so that the SDK checks that the code comes back from the server it went to.
  saveDiscoveryState(state) { this.stored.discovery = state }
  discoveryState() { return this.stored.discovery }

  async redirectToAuthorization(authorizationUrl) {
    const toConsent = await fetch(authorizationUrl, { redirect: 'manual' })
    assert.equal(toConsent.status, 302, await toConsent.text())
    const tx = new URL(toConsent.headers.get('location'), corpus.url).searchParams.get('tx')
    const approved = await api(corpus.url, session)('POST', `/api/oauth/consent/${tx}`, { approve: true })
    assert.equal(approved.status, 200, JSON.stringify(approved.body))
    this.callback = new URL(approved.body.redirect_to).searchParams
  }
}

test('OAuth: the SDK registers, a person approves it, and its token calls the tools as that person, each write naming the client', { timeout: TEST_TIMEOUT_MS }, async () => {
  const provider = new ApprovingProvider()
  const url = new URL(`${corpus.url}/mcp`)
  const first = new StreamableHTTPClientTransport(url, { authProvider: provider })
  // No token yet: discovery, registration and the consent, then the client must reconnect.
  await assert.rejects(new Client(CLIENT_INFO, { versionNegotiation: { mode: 'auto' } }).connect(first), UnauthorizedError)
  assert.ok(provider.callback?.get('code'), 'the consent redirected with a code')
  await first.finishAuth(provider.callback)
  assert.match(provider.tokens().access_token, /^cat_/)

  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: 'auto' } })
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }))
  let note
  try {
    assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28')
    const me = structured(await client.callTool({ name: 'whoami', arguments: {} }))
    assert.equal(me.email, ADMIN.email)
    const found = structured(await client.callTool({ name: 'search_docs', arguments: { query: 'roll back a deploy' } }))
    assert.equal(found.hits[0].title, 'Deploy runbook')
    note = structured(await client.callTool({ name: 'upload_document', arguments: { title: 'Agent note', content: 'Written through OAuth.' } }))
  } finally {
    await client.close()
  }
  // The write is audited with the person and the client it came through.
  const audited = await api(corpus.url, session)('GET', `/api/audit?target=${note.id}`)
  const [entry] = audited.body.items
  assert.equal(entry.action, 'document.create')
  assert.equal(entry.actor_email, ADMIN.email)
  assert.equal(entry.agent_client_id, provider.clientInformation().client_id)
  assert.equal(entry.agent_key_id, null)
  const connections = await api(corpus.url, session)('GET', '/api/me/connections')
  const connection = connections.body.items.find((c) => c.client_id === provider.clientInformation().client_id)
  assert.equal(connection?.client_name, 'TypeScript SDK test')
})
