'use strict'
// The package's parts on their own and against a stand-in server that misbehaves on purpose:
// the SSE parser, configuration, the spec mapping, the watch's reconnects and resumption, every
// call's timeout, shutdown.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { SseParser } = require('../lib/sse')
const { readConfig } = require('../lib/config')
const { projectSpec, credentialsOf, agentOf, keptUrl } = require('../lib/spec')
const { StewardClient } = require('../lib/client')
const { Watch } = require('../lib/watch')
const { createDriver, mayHoldCredentials, platformState } = require('../lib/driver')
const { FakeSteward } = require('./helpers/fake_steward')
const { Platform, TeamBrokerAgent } = require('./helpers/platform')
const { waitFor } = require('./helpers/steward')
const { checkCreationOrder, parseAuditWrites, objectNames } = require('./helpers/creation_order')

test('the SSE parser splits events at any chunk boundary and line ending', () => {
  const text = ': keep-alive\r\n\r\nevent: project\nid: 4\ndata: {"a":\ndata: 1}\n\n' +
    'event: deleted\r\ndata: {"id":"x"}\r\n\r\ndata:plain\r\r'
  const want = [
    { event: 'project', id: '4', data: '{"a":\n1}' },
    { event: 'deleted', id: undefined, data: '{"id":"x"}' },
    { event: 'message', id: undefined, data: 'plain' }
  ]
  for (let size = 1; size <= text.length; size++) {
    const got = []
    const p = new SseParser(ev => got.push(ev))
    for (let i = 0; i < text.length; i += size) p.push(text.slice(i, i + size))
    assert.deepEqual(got, want, `chunks of ${size}`)
  }
})

test('configuration: flowforge.yml first, then the CLI\'s environment variables', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cfg-'))
  const tokenFile = path.join(dir, 'token')
  fs.writeFileSync(tokenFile, 'tok\n')
  const env = { STEWARD_SERVER: 'http://env:1', STEWARD_TOKEN_FILE: tokenFile }
  assert.deepEqual(
    [readConfig({}, env).url, readConfig({}, env).tokenFile],
    ['http://env:1', tokenFile])
  const own = readConfig({ steward: { url: 'https://yml:2', token: 't', startTimeout: 5000 } }, env)
  assert.equal(own.url, 'https://yml:2')
  assert.equal(own.token, 't')
  assert.equal(own.tokenFile, '')
  assert.equal(own.startTimeout, 5000)
  assert.throws(() => readConfig({}, {}), /no API URL/)
  assert.throws(() => readConfig({ steward: { url: 'http://x' } }, {}), /no API token/)
  assert.throws(() => readConfig({ steward: { url: 'http://x', token: 't', stopTimeout: -1 } }, {}), /stopTimeout/)
  assert.throws(() => readConfig({ steward: { url: 'http://x', token: 't', caFile: path.join(dir, 'none') } }, {}), /ENOENT/)
  fs.rmSync(dir, { recursive: true })
})

test('a platform instance becomes Steward\'s spec: stack, HA, custom hostname, kept URL, license', async () => {
  const pf = new Platform({ steward: {} })
  const p = pf.addProject({ name: 'Shop', teamId: 3, stack: { container: 'flowfuse/node-red:4.0', cpu: '20', memory: 512 } })
  p.url = 'https://shop.example.com:8443/admin'
  await p.updateSetting('ha', { replicas: 2 })
  await p.updateSetting('customHostname', 'Flows.Example.com')
  pf.app.license.active = () => true
  assert.deepEqual(await projectSpec(pf.app, p, { customHostname: { enabled: true } }), {
    team: 'Tm3',
    stack: { image: 'flowfuse/node-red:4.0', cpu: 20, memory: 512 },
    replicas: 2,
    customHostname: 'flows.example.com',
    url: 'https://shop.example.com:8443',
    licenseType: 'ee'
  })
  // Custom hostnames off in the driver options: the setting is not passed on; one replica is
  // the default; no stack image: the registry's image as driver-k8s names it.
  const q = pf.addProject({ name: 'q', stack: { memory: 256 } })
  await q.updateSetting('ha', { replicas: 1 })
  await q.updateSetting('customHostname', 'x.example.com')
  pf.app.license.active = () => false
  assert.deepEqual(await projectSpec(pf.app, q, { registry: 'registry.example.com' }),
    { team: 'Tm7', stack: { image: 'registry.example.com/flowforge/node-red', memory: 256 } })
  assert.equal(keptUrl(''), '')
  assert.equal(keptUrl('http://a.localhost:8080/'), 'http://a.localhost:8080')
  const tokens = await p.refreshAuthTokens()
  assert.deepEqual(credentialsOf(tokens, 'nrsecret'), {
    clientId: tokens.clientID,
    clientSecret: tokens.clientSecret,
    token: tokens.token,
    broker: tokens.broker,
    nodeRedSecret: 'nrsecret'
  })
  assert.deepEqual(agentOf(pf.broker({ hashid: 'BrK1', teamHashid: 'TeamA' })),
    { name: 'mqtt-schema-agent-teama-brk1', spec: { team: 'TeamA', broker: 'BrK1' } })
  assert.deepEqual(agentOf(new TeamBrokerAgent(pf, { hashid: 'x', teamHashid: 'TeamA' })),
    { name: 'mqtt-schema-agent-teama-team-broker', spec: { team: 'TeamA', broker: 'team-broker' } })
})

test('a stack\'s placement property becomes the spec\'s placement; auto or none says nothing', async () => {
  const pf = new Platform({ steward: {} })
  const spec = async placement => (await projectSpec(pf.app, pf.addProject({ name: 'p' + Math.random().toString(36).slice(2, 8), teamId: 3, stack: { memory: 256, placement } }), {})).placement
  assert.deepEqual(await spec('cluster=east'), { cluster: 'east' })
  assert.deepEqual(await spec('region=eu, tier=prod'), { labels: { region: 'eu', tier: 'prod' } })
  assert.equal(await spec('auto'), undefined)
  assert.equal(await spec(undefined), undefined)
  // A preference for new instances, never spec.cluster (which would refuse a changed stack).
  const p = pf.addProject({ name: 'eu', teamId: 3, stack: { memory: 256, placement: 'cluster=east' } })
  assert.equal((await projectSpec(pf.app, p, {})).cluster, undefined)
})

test('tokens may be held by a pod unless the project is to be suspended and is Suspended', () => {
  const rec = (desiredState, phase) => ({ desiredState, status: phase ? { phase } : undefined })
  assert.equal(mayHoldCredentials(null), false)
  assert.equal(mayHoldCredentials(rec('suspended', 'Suspended')), false)
  assert.equal(mayHoldCredentials(rec('suspended')), false) // created, never started
  for (const phase of ['Suspending', 'Failed', 'Running', 'Degraded']) {
    assert.equal(mayHoldCredentials(rec('suspended', phase)), true, phase)
  }
  for (const phase of [undefined, 'Pending', 'Provisioning', 'Running', 'Suspended', 'Failed']) {
    assert.equal(mayHoldCredentials(rec('running', phase)), true, String(phase))
  }
  assert.deepEqual(['Pending', 'Provisioning', 'Updating', 'Degraded', 'Suspending', 'Suspended', 'Deleting', 'Failed'].map(platformState),
    ['starting', 'starting', 'starting', 'starting', 'suspending', 'suspended', 'deleting', 'unknown'])
  // A cluster that does not answer: Steward cannot tell, whatever was asked last; and a pod there
  // may still hold the tokens.
  for (const desired of ['running', 'suspended', 'deleted']) {
    assert.equal(platformState('Unknown', { desiredState: desired }), 'unknown', desired)
  }
  assert.equal(mayHoldCredentials(rec('suspended', 'Unknown')), true)
})

const record = (id, version, extra = {}) => ({ id, name: id, kind: 'project', generation: 1, desiredState: 'running', status: { phase: 'Running', observedGeneration: 1 }, ...extra, version })

test('the watch reconnects with growing backoff; after a reset, the snapshot is compared: no event twice, purges seen', async (t) => {
  const fake = await FakeSteward.start()
  t.after(() => fake.stop())
  const client = new StewardClient({ url: fake.url, token: 't' })
  t.after(() => client.close())
  // Connection 1: a snapshot of a and b, sync at B.5, a live change of a; cut. 2: cut at once.
  // 3 and later: B.6 cannot be resumed from (reset), a snapshot where b is purged, a
  // unchanged, c new; then a live change of a.
  fake.onWatch = (res, n) => {
    if (n === 1) {
      FakeSteward.event(res, 'project', record('a', 1))
      FakeSteward.event(res, 'project', record('b', 3))
      FakeSteward.event(res, 'sync', { projects: 2 }, 'B.5')
      FakeSteward.event(res, 'project', record('a', 2), 'B.6')
      setImmediate(() => res.destroy())
    } else if (n === 2) {
      res.destroy()
    } else {
      FakeSteward.event(res, 'reset', { reason: 'Expired', message: 'too old' })
      FakeSteward.event(res, 'project', record('a', 2))
      FakeSteward.event(res, 'project', record('c', 1))
      FakeSteward.event(res, 'sync', { projects: 2 }, 'B.9')
      FakeSteward.event(res, 'project', record('a', 3), 'B.10')
    }
  }
  const watch = new Watch(client, { initialMs: 40, maxMs: 1000, random: () => 1 })
  const seen = []
  watch.on('change', r => seen.push(`${r.id}@${r.version}`))
  watch.on('deleted', d => seen.push(`-${d.id}`))
  watch.on('sync', () => seen.push('sync'))
  watch.start()
  t.after(() => watch.stop())
  await waitFor('the live change after the third connection', () => seen.includes('a@3'), { timeoutMs: 10000, everyMs: 10 })
  assert.deepEqual(seen, ['a@1', 'b@3', 'sync', 'a@2', 'c@1', '-b', 'sync', 'a@3'])
  assert.equal(watch.connects, 3)
  assert.equal(watch.lastEventId, 'B.10')
  // Backoff: the first retry after initialMs (jitter fixed at its top), the second after twice that.
  const gaps = [fake.watchConnects[1].at - fake.watchConnects[0].at, fake.watchConnects[2].at - fake.watchConnects[1].at]
  assert.ok(gaps[0] >= 35 && gaps[1] >= 75 && gaps[1] > gaps[0], `gaps ${gaps}`)
  assert.equal(fake.watchConnects[0].headers['last-event-id'], undefined)
  assert.equal(fake.watchConnects[1].headers['last-event-id'], 'B.6')
  assert.equal(fake.watchConnects[2].headers['last-event-id'], 'B.6', 'the id of the last event received that had one')
  assert.deepEqual([watch.backoffMs(1), watch.backoffMs(2), watch.backoffMs(3), watch.backoffMs(10)], [40, 80, 160, 1000])
})

test('the watch resumes after a cut with no second snapshot; after a restart it is reset and delivers tombstones', async (t) => {
  const fake = await FakeSteward.start()
  t.after(() => fake.stop())
  const client = new StewardClient({ url: fake.url, token: 't' })
  t.after(() => client.close())
  fake.put({ id: 'a', name: 'a' })
  fake.put({ id: 'b', name: 'b' })
  fake.put({ id: 'm', name: 'm', kind: 'agent' })
  const watch = new Watch(client, { initialMs: 20, maxMs: 100, random: () => 1 })
  const seen = []
  watch.on('change', r => seen.push(`${r.id}@${r.version}`))
  watch.on('deleted', d => seen.push(`-${d.id}:${d.kind}`))
  watch.on('sync', () => seen.push('sync'))
  watch.on('resumed', r => seen.push(`resumed:${r.replayed}`))
  watch.start()
  t.after(() => watch.stop())
  await waitFor('the first snapshot', () => watch.synced, { everyMs: 10 })
  fake.put({ id: 'a', name: 'a' })
  await waitFor('the live change', () => seen.includes('a@2'), { everyMs: 10 })
  const lastId = watch.lastEventId
  assert.equal(lastId, `${fake.boot}.4`)

  // Cut: the changes made meanwhile come as they were committed, once, and no snapshot.
  fake.holdWatches()
  fake.cutStreams()
  await waitFor('the reconnect', () => fake.watchConnects.length === 2, { everyMs: 5 })
  fake.put({ id: 'b', name: 'b' })
  fake.remove('a')
  fake.put({ id: 'c', name: 'c' })
  fake.releaseWatches()
  await waitFor('the resume', () => watch.resumes === 1, { everyMs: 10 })
  assert.equal(fake.watchConnects[1].headers['last-event-id'], lastId)
  fake.put({ id: 'm', name: 'm', kind: 'agent' })
  await waitFor('the live change after the resume', () => seen.includes('m@2'), { everyMs: 10 })
  assert.deepEqual(seen, ['a@1', 'b@1', 'm@1', 'sync', 'a@2', 'b@2', '-a:project', 'c@1', 'resumed:3', 'm@2'])
  assert.equal(watch.snapshots, 1)
  assert.equal(watch.connects, 2)

  // Records deleted while the watch is away, then Steward restarts (its window is gone): reset,
  // the snapshot (nothing in it is news), a tombstone for each record it no longer has.
  fake.holdWatches()
  fake.cutStreams()
  await waitFor('the reconnect', () => fake.watchConnects.length === 3, { everyMs: 5 })
  fake.remove('b')
  fake.remove('m')
  fake.restart()
  seen.length = 0
  fake.releaseWatches()
  await waitFor('the snapshot after the restart', () => watch.snapshots === 2, { everyMs: 10 })
  assert.deepEqual(seen, ['-b:project', '-m:agent', 'sync'])
  assert.equal(watch.resumes, 1)
  assert.equal(watch.lastEventId, `${fake.boot}.0`)
  fake.put({ id: 'c', name: 'c' })
  await waitFor('a live change on the new boot', () => seen.includes('c@2'), { everyMs: 10 })
})

// A fake Steward that answers the calls init() makes; `extra` adds routes.
async function fakeWithInit (extra = {}) {
  return FakeSteward.start({
    'GET /v1/stack': (req, res) => FakeSteward.json(res, 200, { defaults: { cpu: 10, memory: 256, container: 'flowfuse/node-red' }, properties: { cpu: {} } }),
    'GET /v1/projects': (req, res) => FakeSteward.json(res, 200, { items: [], continue: '' }),
    'GET /v1/agents': (req, res) => FakeSteward.json(res, 200, { items: [], continue: '' }),
    ...extra
  })
}

test('every call has a timeout: an API that never answers makes details() say unknown and stop() reject', async (t) => {
  const fake = await fakeWithInit({ 'GET *': () => {}, 'POST *': () => {} })
  t.after(() => fake.stop())
  const pf = new Platform({ steward: { url: fake.url, token: 't', requestTimeout: 300 } })
  const driver = createDriver()
  await driver.init(pf.app, {})
  t.after(() => driver.shutdown())
  const p = pf.addProject({ name: 'slow' })
  let t0 = Date.now()
  const d = await driver.details(p)
  assert.equal(d.state, 'unknown')
  assert.match(d.error, /no answer from Steward within 300 ms/)
  assert.ok(Date.now() - t0 < 2500, `details took ${Date.now() - t0} ms`)
  t0 = Date.now()
  await assert.rejects(driver.stop(p), /no answer from Steward within 300 ms/)
  // Sent again while it could be (idempotent), then given up at four request timeouts.
  assert.ok(Date.now() - t0 < 4000, `stop took ${Date.now() - t0} ms`)
  assert.ok(fake.requests.filter(r => r.path.endsWith('/suspend')).length >= 2)
})

test('start rejects at its deadline with what Steward last said, and asks Steward to suspend', async (t) => {
  const id = 'a0a0a0a0-0000-4000-8000-000000000001'
  const provisioning = { ...record(id, 1), name: 'stuck', generation: 2, status: { phase: 'Provisioning', reason: 'WaitingForAvailable', message: 'Deployment stuck: waiting', observedGeneration: 2 } }
  let stored = null // what GET answers: nothing until the PUT
  const fake = await fakeWithInit({
    [`GET /v1/projects/${id}`]: (req, res) => stored ? FakeSteward.json(res, 200, stored) : FakeSteward.json(res, 404, { error: { reason: 'NotFound', message: 'no' } }),
    'PUT /v1/projects/stuck': (req, res) => { stored = provisioning; FakeSteward.json(res, 201, provisioning) },
    [`POST /v1/projects/${id}/suspend`]: (req, res) => FakeSteward.json(res, 202, { ...provisioning, desiredState: 'suspended', generation: 3 })
  })
  t.after(() => fake.stop())
  const pf = new Platform({ steward: { url: fake.url, token: 't', startTimeout: 400, pollInterval: 100 } })
  const driver = createDriver()
  await driver.init(pf.app, {})
  t.after(() => driver.shutdown())
  const p = pf.addProject({ id, name: 'stuck' })
  await assert.rejects(driver.start(p), /not Running at generation 2 after 0 s; Steward says Provisioning WaitingForAvailable: Deployment stuck: waiting/)
  const put = fake.requests.find(r => r.method === 'PUT')
  assert.equal(put.body.start, true)
  assert.equal(put.body.id, id)
  assert.equal(put.body.spec.credentials.token, p.tokens.token, 'the platform\'s tokens handed over')
  await waitFor('the suspend after the failed start', () => fake.requests.some(r => r.path.endsWith('/suspend')))
})

test('shutdown closes the watch, every request in flight and every wait', async (t) => {
  const id = 'a0a0a0a0-0000-4000-8000-000000000002'
  const suspending = { ...record(id, 2), desiredState: 'suspended', generation: 2, status: { phase: 'Suspending', observedGeneration: 1 } }
  const fake = await fakeWithInit({
    [`POST /v1/projects/${id}/suspend`]: (req, res) => FakeSteward.json(res, 202, suspending),
    [`GET /v1/projects/${id}`]: (req, res) => FakeSteward.json(res, 200, suspending),
    [`GET /v1/projects/${id}/logs`]: () => {} // never answers
  })
  t.after(() => fake.stop())
  const pf = new Platform({ steward: { url: fake.url, token: 't' } })
  const driver = createDriver()
  await driver.init(pf.app, {})
  const p = pf.addProject({ id, name: 'p' })
  await waitFor('the watch stream', () => fake.streams.length === 1)
  const stopping = driver.stop(p)
  const logs = driver.logs(p)
  await waitFor('the logs request', () => fake.requests.some(r => r.path.endsWith('/logs')))
  await waitFor('the stop to wait', () => driver._waiters.size === 1)
  await driver.shutdown()
  await assert.rejects(stopping, /shut down/)
  await assert.rejects(logs, /shut down/)
  await waitFor('every connection to close', () => fake.sockets.size === 0, { timeoutMs: 5000 })
  assert.equal(fake.watchConnects.length, 1, 'no reconnect after shutdown')
})

test('a start of a project Steward reports Failed is a new intent (a restart), not the same PUT again', async (t) => {
  const id = 'a0a0a0a0-0000-4000-8000-000000000003'
  const failed = { ...record(id, 5), name: 'f', generation: 4, spec: { team: 'Tm7', credentials: { fingerprint: '00', keys: [] } }, status: { phase: 'Failed', reason: 'PolicyViolation', message: 'no', observedGeneration: 4 } }
  let current = failed
  const fake = await fakeWithInit({
    [`GET /v1/projects/${id}`]: (req, res) => FakeSteward.json(res, 200, current),
    'PUT /v1/projects/f': (req, res) => FakeSteward.json(res, 200, failed),
    [`POST /v1/projects/${id}/restart`]: (req, res) => {
      current = { ...failed, generation: 5, status: { ...failed.status, phase: 'Provisioning', reason: 'Accepted' } }
      FakeSteward.json(res, 202, current)
      setTimeout(() => { current = { ...current, status: { phase: 'Running', observedGeneration: 5 } } }, 50)
    }
  })
  t.after(() => fake.stop())
  const pf = new Platform({ steward: { url: fake.url, token: 't', pollInterval: 50 } })
  const driver = createDriver()
  await driver.init(pf.app, {})
  t.after(() => driver.shutdown())
  const p = pf.addProject({ id, name: 'f' })
  await driver.start(p)
  assert.equal(p.rotations, 0, 'pods may hold the tokens of a Failed project: none rotated')
  assert.deepEqual(fake.requests.filter(r => r.method !== 'GET').map(r => `${r.method} ${r.path}`), ['PUT /v1/projects/f', `POST /v1/projects/${id}/restart`])
})

test('details() says running only for a Running at the generation asked for last, with running desired', async (t) => {
  const id = 'a0a0a0a0-0000-4000-8000-000000000005'
  let answer // what GET /instance answers: the record as Steward read it, and the launcher's info
  const fake = await fakeWithInit({
    [`GET /v1/projects/${id}/instance`]: (req, res) => FakeSteward.json(res, 200, answer)
  })
  t.after(() => fake.stop())
  const pf = new Platform({ steward: { url: fake.url, token: 't' } })
  const driver = createDriver()
  await driver.init(pf.app, {})
  t.after(() => driver.shutdown())
  const p = pf.addProject({ id, name: 'gen' })
  const info = { id, state: 'running', versions: { 'node-red': '4.1.15' } }
  const cases = [
    // [the record, what details() says]
    [{ ...record(id, 3), generation: 1 }, 'running'],
    // A suspend just committed: the engine has not taken it up, the record is still Running at 1.
    [{ ...record(id, 4), generation: 2, desiredState: 'suspended' }, 'suspending'],
    // A new generation to run (a stack edit) not yet observed.
    [{ ...record(id, 5), generation: 2 }, 'starting'],
    [{ ...record(id, 6), generation: 3, desiredState: 'deleted' }, 'deleting']
  ]
  for (const [rec, want] of cases) {
    answer = { project: rec, instance: info }
    const d = await driver.details(p)
    assert.equal(d.state, want, JSON.stringify(rec))
    if (want === 'running') assert.deepEqual(d, info)
    else assert.equal(d.meta.phase, 'Running')
  }
})

// Audit lines as the embedded cluster writes them: `at` and `start` are ms after 00:00:00 (µs
// precision), `code` the answer's.
function auditLine (verb, resource, name, start, at, code) {
  const iso = ms => new Date(Date.UTC(2026, 0, 1) + Math.floor(ms)).toISOString().replace('Z', String(Math.round((ms % 1) * 1000)).padStart(3, '0') + 'Z')
  return JSON.stringify({ time: iso(at), startTime: iso(start), user: 'admin', verb, group: '', resource, subresource: '', namespace: 'steward', name, uri: '/', userAgent: 'steward/0.1', code, latencyMs: at - start })
}

test('the creation-order check: an Ingress created before its Service existed, or a Service before its Deployment, fails it', () => {
  const inOrder = [
    auditLine('get', 'deployments', 'shop', 0, 1, 404),
    auditLine('create', 'secrets', 'shop-credentials', 1, 2, 201),
    auditLine('create', 'deployments', 'shop', 3, 5, 201),
    auditLine('create', 'services', 'shop', 5.001, 6, 201), // arrived 1 µs after the answer
    auditLine('create', 'ingresses', 'shop', 7, 8, 201),
    auditLine('create', 'ingresses', 'shop-custom', 7, 9, 201),
    'not json'
  ].join('\n')
  assert.equal(parseAuditWrites(inOrder).length, 5)
  assert.deepEqual(parseAuditWrites(inOrder)[2].startUs % 1000000, 5001)
  assert.deepEqual(checkCreationOrder(inOrder, ['shop']), { checked: 3, violations: [] })

  // The mutant: every object at once. The Ingress arrived while the Service's create was in
  // flight (answered after), the Service while the Deployment's was.
  const racy = [
    auditLine('create', 'deployments', 'shop', 0, 30, 201),
    auditLine('create', 'services', 'shop', 1, 20, 201),
    auditLine('create', 'ingresses', 'shop', 2, 10, 201)
  ].join('\n')
  const r = checkCreationOrder(racy, ['shop'])
  assert.equal(r.checked, 2)
  assert.equal(r.violations.length, 2, r.violations.join('\n'))
  assert.match(r.violations[0], /^Service shop was created before its Deployment shop existed \(its create arrived 2026-01-01T00:00:00\.001000Z.*had no create answered before it; a create of Deployment shop arrived 2026-01-01T00:00:00\.000000Z and was answered 2026-01-01T00:00:00\.030000Z$/)
  assert.match(r.violations[1], /^Ingress shop was created before its Service shop existed/)
  // An Ingress whose Service was never created at all; refused creates are not judged.
  const never = checkCreationOrder([auditLine('create', 'ingresses', 'shop-custom', 0, 1, 201), auditLine('create', 'services', 'other', 0, 1, 409)].join('\n'))
  assert.deepEqual(never.violations.map(v => v.split(' (')[0]), ['Ingress shop-custom was created before its Service shop existed'])

  // Over a deleted Deployment: a create while it is terminating fails, one after it was created
  // again holds.
  const again = [
    auditLine('create', 'deployments', 'shop', 0, 1, 201),
    auditLine('delete', 'deployments', 'shop', 10, 11, 200),
    auditLine('create', 'services', 'shop', 12, 13, 201),
    auditLine('create', 'deployments', 'shop', 20, 21, 201),
    auditLine('create', 'services', 'shop', 22, 23, 201)
  ].join('\n')
  const d = checkCreationOrder(again, ['shop'])
  assert.equal(d.checked, 2)
  assert.equal(d.violations.length, 1)
  assert.match(d.violations[0], /Deployment shop was deleted \(a delete arrived 2026-01-01T00:00:00\.010000Z, answered 200\) with no create answered since/)

  // The engine's names: a project whose name starts with a digit has the Service srv-<name>; an
  // agent's Service needs its Deployment.
  assert.deepEqual(objectNames('0day'), { deployment: '0day', service: 'srv-0day', ingress: '0day', customIngress: '0day-custom' })
  const digit = [
    auditLine('create', 'deployments', '0day', 0, 1, 201),
    auditLine('create', 'services', 'srv-0day', 2, 3, 201),
    auditLine('create', 'ingresses', '0day', 4, 5, 201),
    auditLine('create', 'services', 'mqtt-schema-agent-t-b', 4, 5, 201)
  ].join('\n')
  const a = checkCreationOrder(digit, ['0day', 'mqtt-schema-agent-t-b'])
  assert.equal(a.checked, 3)
  assert.deepEqual(a.violations.map(v => v.split(' (')[0]), ['Service mqtt-schema-agent-t-b was created before its Deployment mqtt-schema-agent-t-b existed'])
})
