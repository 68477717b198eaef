'use strict'
// The REST API's contract, docs/openapi.yaml, kept true (docs/api.md):
//   - @redocly/cli (pinned by package-lock.json) lints it with its recommended rules
//     (redocly.yaml): no error and no warning;
//   - a real `steward serve --embedded-cluster instant` ($STEWARD_BINARY) is driven through every
//     operation the document describes, good and bad requests alike, and every answer's status
//     code and JSON body is validated against the document with ajv (openapi.js). An operation
//     no answer exercised fails the test, so the document cannot grow what the server lacks.
// The router's side (every route in the document with its methods and query parameters, and
// nothing else) is src/api/openapi_test.cc.
//
// Run: STEWARD_BINARY=build/steward node --test tests/contract/

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const http = require('node:http')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { OpenApi, DOCUMENT } = require('./openapi.js')
const { Steward, request } = require('../../integrations/flowfuse-driver/test/helpers/steward.js')

test('docs/openapi.yaml passes the linter with no problem', () => {
  const cli = path.join(__dirname, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js')
  let out
  try {
    out = execFileSync(process.execPath, [cli, 'lint', '--format=json', '--config', path.join(__dirname, 'redocly.yaml'), DOCUMENT], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      // Nothing leaves the machine: no usage data, no update check.
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }
    })
  } catch (err) {
    out = err.stdout // errors exit 1 with the report on stdout
  }
  const report = JSON.parse(out.slice(out.indexOf('{')))
  const problems = report.problems.map(p => `${p.severity} ${p.ruleId}: ${p.message} at ${(p.location[0] || {}).pointer}`)
  assert.equal(report.totals.errors + report.totals.warnings, 0, problems.join('\n'))
})

test('every component of docs/openapi.yaml is used', () => {
  assert.deepEqual(new OpenApi().unusedComponents(), [])
})

// A server-sent events answer: the head, then the body until an event named `until` has come
// whole (any event when null), or `ms`.
function firstEvents (url, token, until = null, ms = 15000) {
  return new Promise((resolve, reject) => {
    const u = new URL(url)
    const req = http.request({ hostname: u.hostname, port: u.port, path: u.pathname + u.search, headers: { Authorization: `Bearer ${token}` } }, res => {
      let text = ''
      const done = () => { req.destroy(); resolve({ status: res.statusCode, headers: res.headers, text }) }
      const timer = setTimeout(done, ms)
      res.setEncoding('utf8')
      res.on('data', d => {
        text += d
        const whole = text.slice(0, text.lastIndexOf('\n\n') + 1)
        const seen = until ? new RegExp(`^event: ${until}$`, 'm').test(whole) : /^event: /m.test(whole)
        if (res.statusCode !== 200 || seen) { clearTimeout(timer); done() }
      })
      res.on('end', () => { clearTimeout(timer); done() })
    })
    req.on('error', err => (err.code === 'ECONNRESET' ? null : reject(err)))
    req.end()
  })
}

test('every answer of a running steward is one docs/openapi.yaml describes', { timeout: 240000 }, async t => {
  const api = new OpenApi()
  const steward = await Steward.start({ profile: 'instant' })
  t.after(() => steward.stop())

  // One request, its answer checked against the document. `raw`: a body sent as is.
  const call = async (method, p, { body, raw, type, token = steward.token, want } = {}) => {
    const headers = {}
    if (token) headers.Authorization = `Bearer ${token}`
    if (body !== undefined || raw !== undefined) headers['Content-Type'] = type || 'application/json'
    const res = await request(steward.url + p, { method, headers, body: raw !== undefined ? raw : (body !== undefined ? JSON.stringify(body) : undefined), timeoutMs: 60000 })
    api.check(method, p, res)
    if (want !== undefined) {
      const ok = Array.isArray(want) ? want.includes(res.status) : res.status === want
      assert.ok(ok, `${method} ${p}: ${res.status} (wanted ${want}): ${res.text.slice(0, 300)}`)
    }
    const json = /application\/json/.test(res.headers['content-type'] || '') && res.text ? JSON.parse(res.text) : null
    return { status: res.status, body: json, text: res.text }
  }
  const stream = async (p, want, until = null) => {
    const res = await firstEvents(steward.url + p, steward.token, until)
    api.check('GET', p, res)
    assert.equal(res.status, want, `GET ${p}: ${res.status} ${res.text.slice(0, 300)}`)
    return res
  }

  await t.test('probes and metrics, without a token', async () => {
    for (const p of ['/healthz', '/readyz', '/metrics']) {
      await call('GET', p, { token: '', want: 200 })
      await call('HEAD', p, { token: '', want: 200 })
    }
  })

  await t.test('projects: create, read, list, operations, rename, delete', async () => {
    await call('GET', '/v1/stack', { want: 200 })
    await call('PUT', '/v1/projects/c-alpha?wait=60s', { body: { spec: { team: 'team-c' }, start: true }, want: 201 })
    await call('PUT', '/v1/projects/c-alpha', { body: { spec: { team: 'team-c', stack: { memory: 300 } }, start: true }, want: [200, 202] })
    // Platform-issued credentials: the answer shows their fingerprint, never a value.
    const credentials = { clientId: 'contract-client', clientSecret: 'contract-secret', token: 'ffpt_contract-token' }
    const beta = await call('PUT', '/v1/projects/c-beta', { body: { spec: { team: 'team-c', credentials } }, want: 201 })
    assert.ok(!beta.text.includes('contract-secret') && !beta.text.includes('ffpt_contract-token'), beta.text)
    await call('GET', '/v1/projects/c-alpha', { want: 200 })
    await call('GET', '/v1/projects?team=team-c&limit=1', { want: 200 })
    await call('GET', '/v1/projects?phase=Running&desiredState=running', { want: 200 })
    await call('GET', '/v1/projects/c-alpha/history?limit=5', { want: 200 })
    await call('POST', '/v1/projects/c-alpha/restart?wait=60s', { want: 200 })
    await call('POST', '/v1/projects/c-alpha/rotate-credentials?wait=60s', { want: 200 })
    await call('POST', '/v1/projects/c-alpha/start?wait=60s', { want: 200 })
    await call('POST', '/v1/projects/c-beta/start', { want: 202 })
    await call('POST', '/v1/projects/c-beta/suspend?wait=60s', { want: 200 })
    await call('POST', '/v1/projects/c-beta/rename?wait=60s', { body: { name: 'c-gamma' }, want: 200 })
    await call('POST', '/v1/projects/c-gamma/rename', { body: { name: 'c-alpha' }, want: 409 })
    // One cluster ("default"): a move to it changes nothing; any other is unknown.
    await call('POST', '/v1/projects/c-alpha/move', { body: { cluster: 'default' }, want: 202 })
    await call('POST', '/v1/projects/c-alpha/move', { body: { cluster: 'mars', order: 'startFirst' }, want: 400 })
    await call('DELETE', '/v1/projects/c-gamma?wait=60s', { want: 200 })
    await call('POST', '/v1/credentials/check', { body: { token: 'ffpt_not-a-token-of-anyone' }, want: 200 })
  })

  await t.test('bad requests get the error the document names', async () => {
    await call('GET', '/v1/projects', { token: '', want: 401 })
    await call('GET', '/v1/projects/nobody', { want: 404 })
    await call('GET', '/v1/projects?colour=blue', { want: 400 })
    await call('PUT', '/v1/projects/c-bad', { raw: '{"spec": {"team": ', want: 400 })
    await call('PUT', '/v1/projects/c-bad', { raw: '{}', type: 'text/plain', want: 415 })
    await call('PUT', '/v1/projects/Not_A_Name', { body: { spec: { team: 't' } }, want: 400 })
    await call('POST', '/v1/projects/c-alpha/start', { body: { force: true }, want: 400 })
    await call('POST', '/v1/credentials/check', { body: {}, want: 400 })
    await call('DELETE', '/v1/agents/nobody', { want: 404 })
  })

  await t.test('instance operations on the running project', async () => {
    const p = '/v1/projects/c-alpha'
    await call('GET', `${p}/instance`, { want: 200 })
    await call('GET', `${p}/logs`, { want: 200 })
    await call('POST', `${p}/flows/stop`, { want: 200 })
    await call('POST', `${p}/flows/start`, { want: 200 })
    await call('POST', `${p}/flows/restart`, { want: 200 })
    await call('POST', `${p}/flows/restart?mode=parallel`, { want: 200 })
    await call('POST', `${p}/logout`, { body: { token: 'a-session-token' }, want: 200 })
    await call('POST', `${p}/files`, { body: { directory: 'contract' }, want: 201 })
    await call('POST', `${p}/files/contract`, { body: { directory: 'inner' }, want: 201 })
    await call('POST', `${p}/files/contract/a.txt`, { raw: 'hello', type: 'application/octet-stream', want: 201 })
    await call('GET', `${p}/files`, { want: 200 })
    await call('GET', `${p}/files/contract`, { want: 200 })
    await call('PUT', `${p}/files/contract/a.txt`, { body: { newPath: 'contract/b.txt' }, want: 200 })
    await call('DELETE', `${p}/files/contract/b.txt`, { want: 200 })
    await call('DELETE', `${p}/files/contract/b.txt`, { want: 404 })
    await call('GET', `${p}/files/a/%252e%252e`, { want: 400 })
    // The storage directory itself can be neither renamed nor deleted.
    await call('PUT', `${p}/files`, { body: { newPath: 'elsewhere' }, want: 400 })
    await call('DELETE', `${p}/files`, { want: 400 })
    await call('GET', `${p}/resources`, { want: 200 })
    const samples = await stream(`${p}/resources/stream`, 200, 'sample')
    assert.match(samples.text, /^event: sync$/m)
    assert.match(samples.text, /^event: sample$/m)
    await call('POST', `${p}/mcp/features`, { body: { endpoints: ['/mcp'] }, want: [200, 502] })
    await call('POST', `${p}/mcp/tools/call`, { body: { endpoint: '/mcp', name: 'echo', input: {} }, want: [200, 502] })
    await call('POST', `${p}/mcp/resources/read`, { body: { endpoint: '/mcp', uri: 'file:///x' }, want: [200, 502] })
    await call('POST', `${p}/mcp/features`, { body: { endpoints: [7] }, want: 400 })
    await call('POST', `${p}/suspend?wait=60s`, { want: 200 })
    await call('GET', `${p}/instance`, { want: 409 })
    await call('GET', `${p}/resources`, { want: 409 })
    await stream(`${p}/resources/stream`, 409)
  })

  await t.test('the watch stream', async () => {
    const all = await stream('/v1/watch?initial=true&kind=all', 200, 'sync')
    assert.match(all.text, /^event: project$/m)
    // An id from no feed of this store: the stream opens and says `reset` (docs/api.md).
    const reset = await stream('/v1/watch?since=nofeed.12', 200)
    assert.match(reset.text, /^event: reset/m)
    await call('GET', '/v1/watch?colour=blue', { want: 400 })
  })

  await t.test('agents: put, read, operations, status, commands, delete', async () => {
    const a = '/v1/agents/mqtt-schema-agent-team-c-b1'
    await call('PUT', `${a}?wait=60s`, { body: { spec: { team: 'team-c', broker: 'b1', credentials: { token: 'ffbt_contract-agent-token' } }, start: true }, want: 201 })
    await call('PUT', a, { body: { spec: { team: 'team-c', broker: 'b1' }, start: true }, want: 200 })
    await call('PUT', '/v1/agents/mqtt-schema-agent-other', { body: { spec: { team: 'team-c', broker: 'b1' } }, want: 400 })
    await call('GET', '/v1/agents?team=team-c', { want: 200 })
    await call('GET', a, { want: 200 })
    await call('GET', `${a}/history`, { want: 200 })
    const agents = await stream('/v1/watch?initial=true&kind=agent', 200, 'sync')
    assert.match(agents.text, /^event: agent$/m)
    await call('GET', `${a}/status`, { want: 200 })
    await call('POST', `${a}/commands/restart`, { want: 200 })
    await call('POST', `${a}/commands/explode`, { want: 400 })
    await call('POST', `${a}/restart?wait=60s`, { want: 200 })
    await call('POST', `${a}/stop?wait=60s`, { want: 200 })
    await call('GET', `${a}/status`, { want: 409 })
    await call('POST', `${a}/start`, { want: 202 })
    await call('DELETE', `${a}?wait=60s`, { want: 200 })
  })

  await t.test('projects deleted', async () => {
    await call('DELETE', '/v1/projects/c-alpha', { want: 202 })
  })

  await t.test('/metrics passes promtool and has every series the alert rules read', async () => {
    const res = await request(steward.url + '/metrics')
    assert.equal(res.status, 200)
    execFileSync('promtool', ['check', 'metrics'], { input: res.text, encoding: 'utf8' }) // throws on a problem
    const families = new Set([...res.text.matchAll(/^# TYPE (\S+) /gm)].map(m => m[1]))
    const rules = fs.readFileSync(path.join(__dirname, '..', '..', 'deploy', 'monitoring', 'steward-rules.yaml'), 'utf8')
    const read = new Set([...rules.matchAll(/\b(steward_[a-z_]+)/g)].map(m => m[1].replace(/_(bucket|count|sum)$/, '')))
    // The replicas' metrics exist in sharded mode only (src/app/app_test.cc checks them).
    const missing = [...read].filter(name => !families.has(name) && !name.startsWith('steward_replica_'))
    assert.deepEqual(missing, [], 'deploy/monitoring/steward-rules.yaml reads metrics steward does not expose')
  })

  await t.test('every operation of the document was exercised', () => {
    const missing = api.operations().filter(op => !api.exercised.has(op))
    assert.deepEqual(missing, [], 'operations no answer checked')
  })
})
