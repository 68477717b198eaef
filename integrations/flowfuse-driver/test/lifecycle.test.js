'use strict'
// The driver as the platform drives it, against `steward serve --embedded-cluster` (a realistic
// cluster: pods ready 1-3 s after creation, deletions that take seconds): every driver method,
// in the order an instance's life calls them, with what each promise claims checked against
// Steward, the cluster and the project's URL at the moment it resolves.

const test = require('node:test')
const assert = require('node:assert/strict')
const { EventEmitter } = require('node:events')

const { Steward, waitFor } = require('./helpers/steward')
const { Platform, Wrapper, TeamBrokerAgent } = require('./helpers/platform')
const { sampleTokens } = require('./helpers/checks')
const { checkCreationOrder } = require('./helpers/creation_order')
const { createDriver } = require('../lib/driver')
const { StewardClient } = require('../lib/client')
const { readConfig } = require('../lib/config')
const fs = require('node:fs')
const path = require('node:path')

let steward
let platform
let wrapper

// Deployments that cannot progress fail after 600 s × 0.04 = 24 s (room for a loaded CI machine).
const PROFILE = 'base: realistic\nprogress_deadline_scale: 0.04\n'
const CONFIG = 'instance:\n  resourcesPoll: 200ms\n'

test.before(async () => {
  steward = await Steward.start({ profileText: PROFILE, config: CONFIG })
  platform = new Platform({ steward: steward.driverConfig({ pollInterval: 2000 }) })
  wrapper = new Wrapper(platform, createDriver())
})

test.after(async () => {
  if (wrapper) await wrapper.driver.shutdown()
  if (steward) await steward.stop()
})

// Every ready pod of `p` holds exactly the tokens the platform issued last.
async function assertPodsHoldCurrentTokens (p, replicas = 1) {
  const pods = await steward.readyPods(p.id)
  assert.equal(pods.length, replicas, `ready pods of ${p.name}: ${pods.map(x => x.name)}`)
  for (const pod of pods) {
    assert.equal(pod.env.FORGE_PROJECT_TOKEN, p.tokens.token, `${pod.name}: FORGE_PROJECT_TOKEN`)
    assert.equal(pod.env.FORGE_CLIENT_ID, p.tokens.clientID, `${pod.name}: FORGE_CLIENT_ID`)
    assert.equal(pod.env.FORGE_CLIENT_SECRET, p.tokens.clientSecret, `${pod.name}: FORGE_CLIENT_SECRET`)
    assert.equal(pod.env.FORGE_BROKER_PASSWORD, p.tokens.broker.password, `${pod.name}: FORGE_BROKER_PASSWORD`)
  }
  return pods
}

// A log entry's time in ms: the launcher's ts is a string, epoch ms and a 4-digit counter.
const tsMs = ts => typeof ts === 'string' ? Number(ts.slice(0, -4)) : ts

// Starts `p` through the wrapper; resolves, at the moment the driver's promise does, with what
// Steward and the URL say then.
async function startAndObserve (p, how = 'start') {
  const { started } = how === 'start' ? await wrapper.start(p) : await wrapper.startAction(p)
  await started
  const [rec, answers] = await Promise.all([steward.project(p.id), steward.urlAnswers(p.safeName)])
  return { rec, answers }
}

let alpha

test('init answers the stack schema from Steward and the defaults without a call', async () => {
  const props = await wrapper.init()
  assert.deepEqual(Object.keys(props.stack.properties).sort(), ['container', 'cpu', 'memory'])
  assert.match(props.stack.properties.cpu.validate, /1000/)
  platform.app.config.driver.options.default_stack = { memory: 512 }
  assert.deepEqual(wrapper.driver.getDefaultStackProperties(), { cpu: 10, memory: 512, container: 'flowfuse/node-red' })
  delete platform.app.config.driver.options.default_stack
  assert.deepEqual(wrapper.driver.adoption.counts.steward, 0)
})

test('start resolves once Steward says Running at its generation, the URL answers, every pod holds the platform\'s tokens', async (t) => {
  alpha = platform.addProject({ name: 'alpha', stack: { cpu: 20, memory: 300 } })
  await alpha.updateSetting('credentialSecret', 'nr-secret-1')
  const statesSeen = new Set()
  let sampling = true
  const sampler = (async () => {
    while (sampling) {
      const d = await wrapper.driver.details(alpha)
      statesSeen.add(d.state)
      if (d.state === 'running') assert.ok(await steward.urlAnswers('alpha'), 'details() said running while the URL did not answer')
      await new Promise(resolve => setTimeout(resolve, 100))
    }
  })()
  t.after(() => { sampling = false; return sampler.catch(() => {}) })
  const { rec, answers } = await startAndObserve(alpha)
  sampling = false
  await sampler
  assert.equal(rec.status.phase, 'Running')
  assert.equal(rec.status.observedGeneration, rec.generation)
  assert.ok(answers, 'the URL answers when start resolves')
  assert.ok(statesSeen.has('starting'), `details() while starting: ${[...statesSeen]}`)
  assert.equal(platform.audit.length, 0)
  assert.equal(alpha.rotations, 1)
  assert.equal(alpha.url, rec.status.url.replace(/\/$/, ''), 'start sets the instance URL')
  assert.deepEqual(rec.spec.stack, { cpu: 20, memory: 300 })
  assert.equal(rec.spec.team, 'Tm7')
  const [pod] = await assertPodsHoldCurrentTokens(alpha)
  assert.equal(pod.env.FORGE_NR_SECRET, 'nr-secret-1')
  assert.equal(pod.env.FORGE_PROJECT_ID, alpha.id)
  assert.equal(pod.env.FORGE_TEAM_ID, 'Tm7')
  const d = await wrapper.driver.details(alpha)
  assert.equal(d.state, 'running')
  assert.equal(d.id, alpha.id)
  assert.ok(d.versions && d.versions['node-red'], JSON.stringify(d))
  assert.deepEqual(await wrapper.driver.settings(alpha), { projectID: alpha.id, port: 1880, rootDir: '/', userDir: 'data' })
})

test('start rejects with Steward\'s reason when the project fails, and the platform and Steward agree it is suspended', async () => {
  const bad = platform.addProject({ name: 'broken', stack: { container: 'registry.invalid/node-red:1' } })
  const { started } = await wrapper.start(bad)
  await started // the wrapper's handler has run
  assert.equal(platform.audit.length, 1)
  assert.match(platform.audit[0].error, /Failed \(ProgressDeadlineExceeded\)/)
  assert.equal(bad.state, 'suspended')
  await waitFor('Steward to suspend the failed project', async () => {
    const rec = await steward.project(bad.id)
    return rec.desiredState === 'suspended' && rec.status.phase === 'Suspended'
  }, { timeoutMs: 60000 })
  const d = await wrapper.driver.details(bad)
  assert.equal(d.state, 'suspended')
})

test('stop resolves only once Steward says Suspended: nothing left in the cluster, the URL gone, tokens kept', async () => {
  await wrapper.stop(alpha)
  const [rec, answers, objects] = await Promise.all([steward.project(alpha.id), steward.urlAnswers('alpha'), steward.objectsOf(alpha.id)])
  assert.equal(rec.status.phase, 'Suspended')
  assert.equal(rec.status.observedGeneration, rec.generation)
  assert.equal(answers, false)
  assert.deepEqual(objects, [])
  assert.equal(alpha.rotations, 1)
  assert.equal((await wrapper.driver.details(alpha)).state, 'suspended')
})

test('a start from suspended rotates the tokens once, before any pod exists to hold the old ones', async (t) => {
  const tokens = sampleTokens(steward, [alpha], { t })
  const { rec, answers } = await startAndObserve(alpha, 'startAction')
  const sampled = await tokens.stop()
  assert.equal(rec.status.phase, 'Running')
  assert.ok(answers)
  assert.equal(alpha.rotations, 2)
  assert.deepEqual(sampled.violations, [])
  await assertPodsHoldCurrentTokens(alpha)
})

test('the platform\'s stack change (stop, then start at once) ends Running on the new stack with no pod on revoked tokens', async (t) => {
  const tokens = sampleTokens(steward, [alpha], { t })
  const { started } = await wrapper.changeStack(alpha, { cpu: 30, memory: 400 })
  await started
  const [rec, answers] = await Promise.all([steward.project(alpha.id), steward.urlAnswers('alpha')])
  const sampled = await tokens.stop()
  assert.equal(platform.audit.length, 1, 'no startFailed for alpha')
  assert.equal(rec.status.phase, 'Running')
  assert.deepEqual(rec.spec.stack, { cpu: 30, memory: 400 })
  assert.ok(answers)
  assert.equal(alpha.rotations, 3)
  assert.ok(sampled.samples > 0)
  assert.deepEqual(sampled.violations, [])
  const [pod] = await assertPodsHoldCurrentTokens(alpha)
  assert.equal(pod.env.FORGE_MEMORY_LIMIT, '400')
})

test('a start while the stop is still under way wins, and rotates nothing a pod may hold', async (t) => {
  const tokens = sampleTokens(steward, [alpha], { t })
  alpha.state = 'running'
  const stopping = wrapper.driver.stop(alpha) // the platform's suspend, not awaited (flowfuse #4839)
  await waitFor('the suspend to reach Steward', async () => (await steward.project(alpha.id)).desiredState === 'suspended')
  const { started } = await wrapper.start(alpha)
  await assert.rejects(stopping, /superseded: a later call asked for running/)
  await started
  const rec = await steward.project(alpha.id)
  const sampled = await tokens.stop()
  assert.equal(rec.status.phase, 'Running')
  assert.equal(rec.desiredState, 'running')
  assert.deepEqual(sampled.violations, [])
  assert.equal(alpha.rotations, 3, 'pods could hold the tokens: no rotation')
  await assertPodsHoldCurrentTokens(alpha)
})

test('flows: stopFlows, startFlows, restartFlows, and details() shows the launcher\'s state', async () => {
  assert.deepEqual(await wrapper.driver.stopFlows(alpha), { status: 'okay' })
  assert.equal((await wrapper.driver.details(alpha)).state, 'stopped')
  assert.equal(await steward.urlAnswers('alpha'), false, 'flows stopped: Node-RED does not listen')
  assert.deepEqual(await wrapper.driver.startFlows(alpha), { status: 'okay' })
  const before = await waitFor('the launcher to run again', async () => {
    const d = await wrapper.driver.details(alpha)
    return d.state === 'running' && d
  }, { timeoutMs: 20000 })
  const answer = await wrapper.driver.restartFlows(alpha)
  assert.deepEqual(answer, { state: 'okay' })
  const after = await wrapper.driver.details(alpha)
  assert.equal(after.state, 'running', 'single replica: answered once the launcher runs again')
  assert.ok(after.lastStartTime > before.lastStartTime)
  await wrapper.driver.revokeUserToken(alpha, 'editor-token')
  const logs = await wrapper.driver.logs(alpha)
  const msgs = logs.map(l => l.msg)
  for (const m of ['Stopping Node-RED', 'Node-RED logout requested']) assert.ok(msgs.includes(m), m)
  assert.equal(msgs.filter(m => m === 'Starting Node-RED').length, 3, 'started, started again, restarted')
  assert.ok(logs.every((l, i) => i === 0 || tsMs(logs[i - 1].ts) <= tsMs(l.ts)), 'sorted by ts')
  await assert.rejects(wrapper.driver.startFlows(platform.transient({ name: 'never-made' })), err => err.statusCode === 404)
})

test('files: directories, uploads, renames and deletes in the launcher\'s storage, errors with their status', async () => {
  const d = wrapper.driver
  await d.createDirectory(alpha, '', 'assets/img')
  await d.uploadFile(alpha, 'assets/img/logo.png', Buffer.from('not really a png'))
  let list = await d.listFiles(alpha, 'assets/img')
  assert.deepEqual(list.files.map(f => [f.name, f.type, f.size]), [['logo.png', 'file', 16]])
  assert.equal(list.count, 1)
  list = await d.listFiles(alpha, '')
  assert.deepEqual(list.files.filter(f => f.name === 'assets').map(f => f.type), ['directory']) // beside the launcher's ff-logs/
  await d.updateFile(alpha, 'assets/img/logo.png', { path: 'assets/logo.png' })
  assert.deepEqual((await d.listFiles(alpha, 'assets')).files.map(f => f.name).sort(), ['img', 'logo.png'])
  await d.deleteFile(alpha, 'assets/logo.png')
  assert.deepEqual((await d.listFiles(alpha, 'assets')).files.map(f => f.name), ['img'])
  await assert.rejects(d.listFiles(alpha, 'nothing/here'), err => err.statusCode === 404)
  await assert.rejects(d.listFiles(alpha, '../etc'), err => err.statusCode === 400)
})

test('resources and resourcesStream: the launcher\'s samples, sent on the platform\'s socket until it closes', async () => {
  const r = await wrapper.driver.resources(alpha)
  assert.deepEqual(Object.keys(r).sort(), ['count', 'meta', 'resources'])
  assert.equal(r.count, r.resources.length)
  const socket = new EventEmitter()
  socket.sent = []
  socket.closed = 0
  socket.send = data => socket.sent.push(JSON.parse(data))
  socket.close = () => { socket.closed++ }
  const handle = await wrapper.driver.resourcesStream(alpha, socket)
  await waitFor('two samples on the socket', () => socket.sent.length >= 2, { timeoutMs: 15000 })
  assert.ok(socket.sent.every(s => typeof s.ts === 'number' && typeof s.cpu === 'number'))
  assert.ok(socket.sent[1].ts > socket.sent[0].ts)
  socket.emit('close')
  assert.equal(await handle.ended, null, 'the stream to Steward is closed with the socket')
  await assert.rejects(wrapper.driver.resourcesStream(platform.transient({ name: 'nostream' }), new EventEmitter()), err => err.statusCode === 404)
})

test('MCP: features, a tool call and a resource read reach the launcher', async () => {
  const features = await wrapper.driver.getMCPFeatures(alpha, ['/mcp'])
  assert.equal(features[0].features.tools[0].name, 'echo')
  const result = await wrapper.driver.callMCPTool(alpha, '/mcp', 'echo', { text: 'hi' })
  assert.deepEqual(result.content, [{ type: 'text', text: 'hi' }])
  const res = await wrapper.driver.readMCPResource(alpha, { mcpEndpoint: '/mcp' }, 'nodered://flows')
  assert.equal(res.contents[0].uri, 'nodered://flows')
  await assert.rejects(wrapper.driver.callMCPTool(alpha, '/mcp', 'nope', {}), /Failed to call MCP tool: .*Tool nope not found/)
})

test('HA: restartFlows answers at once and restarts the replicas one at a time; logs come from every replica', async () => {
  const ha = platform.addProject({ name: 'ha-one' })
  await ha.updateSetting('ha', { replicas: 2 })
  const { rec } = await startAndObserve(ha)
  assert.equal(rec.status.phase, 'Running')
  assert.equal(rec.spec.replicas, 2)
  await assertPodsHoldCurrentTokens(ha, 2)
  const t0 = Date.now()
  const answer = await wrapper.driver.restartFlows(ha)
  const answeredIn = Date.now() - t0
  assert.deepEqual(answer, { state: 'okay' })
  const outcome = await answer.done
  assert.ok(answeredIn < outcome.pods.reduce((a, p) => a + p.elapsedMs, 0), `answered in ${answeredIn} ms, before the restarts were done`)
  assert.equal(outcome.mode, 'sequential')
  assert.deepEqual(outcome.pods.map(p => p.outcome), ['restarted', 'restarted'])
  const logs = await wrapper.driver.logs(ha)
  const restartsByPod = new Map()
  for (const l of logs) if (l.msg === 'Stopping Node-RED') restartsByPod.set(l.pod, tsMs(l.ts))
  assert.equal(restartsByPod.size, 2, 'each replica restarted')
  const [first, second] = outcome.pods.map(p => restartsByPod.get(p.pod))
  assert.ok(second >= first + outcome.pods[0].elapsedMs - 50, 'the second replica restarted after the first ran again')
  ha.state = 'running'
  await wrapper.stop(ha)
})

test('a rename (stop, rename, start) renames the project in Steward and keeps its URL, as FlowFuse keeps it', async () => {
  const ha = [...platform.projects.values()].find(p => p.name === 'ha-one')
  assert.equal((await steward.project(ha.id)).status.phase, 'Suspended')
  const keptUrl = ha.url
  ha.name = 'ha-two'
  const { rec, answers } = await startAndObserve(ha, 'startAction')
  assert.equal(rec.name, 'ha-two')
  assert.equal(rec.status.phase, 'Running')
  assert.equal(ha.url, keptUrl, 'the URL is kept across the rename')
  assert.equal(answers, false, 'the new name\'s host is not served: the kept URL is')
  assert.ok(await steward.urlAnswers('ha-one'))
  await wrapper.stop(ha)
})

test('a change of team (stop, move, start) moves the project in Steward, as FlowFuse moves an instance', async () => {
  const ha = [...platform.projects.values()].find(p => p.name === 'ha-two')
  assert.equal((await steward.project(ha.id)).status.phase, 'Suspended')
  const before = (await steward.project(ha.id)).spec.team
  ha.TeamId = 9
  ha.Team = { hashid: platform.app.db.models.Team.encodeHashid(9) }
  const { rec } = await startAndObserve(ha, 'startAction')
  assert.notEqual(before, 'Tm9')
  assert.equal(rec.spec.team, 'Tm9')
  assert.equal(rec.status.phase, 'Running')
  await wrapper.stop(ha)
})

test('broker agents: started with the broker\'s token, asked for state and commands, stopped and gone', async () => {
  const broker = platform.broker({ hashid: 'Brk1', teamHashid: 'TeamA' })
  await wrapper.driver.startBrokerAgent(broker)
  assert.equal(broker.rotations, 1)
  const name = 'mqtt-schema-agent-teama-brk1'
  await waitFor('the agent to run', async () => (await steward.api('GET', `/v1/agents/${name}`)).body?.status?.phase === 'Running', { timeoutMs: 60000 })
  const state = await wrapper.driver.getBrokerAgentState(broker)
  assert.equal(typeof state.connected, 'boolean', JSON.stringify(state))
  await wrapper.driver.sendBrokerAgentCommand(broker, 'stop')
  await wrapper.driver.sendBrokerAgentCommand(broker, 'restart')
  // Started again while it runs (the platform's /start on a running broker): no new token.
  await wrapper.driver.startBrokerAgent(broker)
  assert.equal(broker.rotations, 1)
  const team = new TeamBrokerAgent(platform, { hashid: 'x', teamHashid: 'TeamA' })
  await wrapper.driver.startBrokerAgent(team)
  const teamRec = (await steward.api('GET', '/v1/agents/mqtt-schema-agent-teama-team-broker')).body
  assert.equal(teamRec.spec.broker, 'team-broker')
  await wrapper.driver.stopBrokerAgent(broker)
  platform.brokers.delete(broker.hashid) // the platform deletes the broker next
  assert.equal((await steward.api('GET', `/v1/agents/${name}`)).status, 404, 'stopBrokerAgent resolves once the agent is gone')
  assert.deepEqual(await wrapper.driver.getBrokerAgentState(broker), { error: 'error_getting_status', message: (await wrapper.driver.getBrokerAgentState(broker)).message })
  await wrapper.driver.stopBrokerAgent(team)
  await wrapper.driver.stopBrokerAgent(team) // gone already: nothing to do
})

test('remove resolves once Steward has purged the project and every object is gone', async () => {
  const gone = platform.addProject({ name: 'doomed' })
  await startAndObserve(gone)
  await wrapper.remove(gone)
  assert.equal(await steward.project(gone.id), null)
  assert.deepEqual(await steward.objectsOf(gone.id), [])
  assert.equal(gone.state, 'deleting')
  platform.projects.delete(gone.id)
  await wrapper.remove(gone) // a second remove: nothing there, nothing to wait for
})

// The platform asks details() right after start() returns, before the package's PUT reached
// Steward: an instance whose start is in flight is starting, not unknown.
test('details() says starting, not unknown, while a start has not reached Steward yet', async () => {
  const early = platform.addProject({ name: 'early' })
  const { started } = await wrapper.start(early)
  const first = await wrapper.driver.details(early)
  assert.equal(first.state, 'starting', JSON.stringify(first))
  await started
  assert.equal((await wrapper.driver.details(early)).state, 'running')
  await wrapper.remove(early)
  platform.projects.delete(early.id)
  assert.equal((await wrapper.driver.details(early)).state, 'unknown', 'no start in flight: unknown again')
})

// The user suspends (or deletes) an instance while its start still waits for Running: the start
// ends with that call, quietly. The wrapper would otherwise log "Failed to start project", audit
// project.start-failed and mark the instance suspended for a failure that never was. A real
// failure still rejects (the broken project above).
test('a suspend or a delete while the start still waits ends the start quietly: no startFailed, no error', async () => {
  const quiet = p => platform.log.lines.filter(l => l.level === 'error' && l.msg.includes(p.id))
  const hasty = platform.addProject({ name: 'hasty' })
  const { started } = await wrapper.start(hasty)
  await waitFor('the start to reach Steward', async () => (await steward.project(hasty.id)) !== null)
  await wrapper.stop(hasty)
  await started
  assert.deepEqual(platform.audit.filter(a => a.project === hasty.id), [])
  assert.deepEqual(quiet(hasty), [])
  assert.equal(hasty.state, 'suspended')
  assert.equal((await steward.project(hasty.id)).status.phase, 'Suspended')

  const gone = platform.addProject({ name: 'hasty-gone' })
  const { started: removing } = await wrapper.start(gone)
  await waitFor('the start to reach Steward', async () => (await steward.project(gone.id)) !== null)
  await wrapper.remove(gone)
  platform.projects.delete(gone.id)
  await removing
  assert.deepEqual(platform.audit.filter(a => a.project === gone.id), [])
  assert.deepEqual(quiet(gone), [])
  assert.equal(await steward.project(gone.id), null)

  await wrapper.remove(hasty)
  platform.projects.delete(hasty.id)
})

test('a platform restart: the second init() rotates no token and makes Steward write nothing to Kubernetes', async () => {
  // alpha runs; broken and ha-one are suspended; a project Steward does not know, and one the
  // platform does not know, are counted.
  const orphan = await steward.api('PUT', '/v1/projects/orphan', { spec: { team: 'x' } })
  assert.equal(orphan.status, 201)
  platform.addProject({ name: 'missing-one', state: 'running' })
  // A broker agent that runs, and one the platform runs that Steward does not know.
  const kept = platform.broker({ hashid: 'Keep1', teamHashid: 'TeamB' })
  await wrapper.driver.startBrokerAgent(kept)
  await waitFor('the kept agent to run', async () => (await steward.api('GET', '/v1/agents/mqtt-schema-agent-teamb-keep1')).body?.status?.phase === 'Running', { timeoutMs: 60000 })
  platform.broker({ hashid: 'Lost1', teamHashid: 'TeamB' })
  await waitFor('Steward to settle', async () => {
    const list = (await steward.api('GET', '/v1/projects')).body.items
    return list.every(r => r.status.observedGeneration === r.generation && ['Running', 'Suspended', 'Pending'].includes(r.status.phase))
  })
  await wrapper.driver.shutdown()
  const writes = await steward.metric('steward_kube_writes_total')
  const rotations = platform.rotations
  wrapper = new Wrapper(platform, createDriver())
  await wrapper.init()
  // The platform asks for details of every running instance when its UI loads.
  for (const p of platform.projects.values()) if (p.state === 'running') await wrapper.driver.details(p)
  assert.equal((await wrapper.driver.details(alpha)).state, 'running')
  assert.equal(platform.rotations, rotations, 'no token rotated')
  assert.equal(await steward.metric('steward_kube_writes_total'), writes, 'no Kubernetes write')
  const c = wrapper.driver.adoption.counts
  assert.deepEqual({ inStep: c.inStep, missing: c.missing, unknownToPlatform: c.unknownToPlatform, stateDiffers: c.stateDiffers },
    { inStep: 3, missing: 1, unknownToPlatform: 1, stateDiffers: 0 })
  assert.equal(platform.log.grep(/init: 4 instances in the platform, 4 projects in Steward: 3 in step/).length, 1)
  const a = wrapper.driver.adoption.agents.counts
  assert.deepEqual({ platform: a.platform, steward: a.steward, inStep: a.inStep, missing: a.missing, unknownToPlatform: a.unknownToPlatform },
    { platform: 2, steward: 1, inStep: 1, missing: 1, unknownToPlatform: 0 })
  assert.equal(kept.rotations, 1, 'the running agent\'s token is not refreshed')
  assert.equal(platform.log.grep(/init: 2 broker agents in the platform, 1 agents in Steward: 1 in step, .*1 running in the platform but unknown to Steward \(mqtt-schema-agent-teamb-lost1\)/).length, 1)
})

test('caFile: HTTPS is verified against the CA given (the embedded cluster\'s API server stands in for a TLS Steward)', async () => {
  const caFile = path.join(steward.dir, 'ca.pem')
  fs.writeFileSync(caFile, steward.kube.ca)
  const cfg = readConfig({ steward: { url: steward.kube.server, token: steward.kube.token, caFile } }, {})
  const trusted = new StewardClient({ ...cfg, timeoutMs: 10000 })
  const r = await trusted.request('GET', '/version')
  assert.equal(r.status, 200)
  trusted.close()
  const untrusted = new StewardClient({ url: steward.kube.server, token: steward.kube.token, timeoutMs: 10000 })
  await assert.rejects(untrusted.request('GET', '/version'), err => err.statusCode === 0 && /certificate/.test(err.message))
  untrusted.close()
})

test('reconcileAtInit: init() starts the instances the platform runs and Steward does not, and nothing else', async () => {
  const missing = [...platform.projects.values()].find(p => p.name === 'missing-one')
  const rotations = platform.rotations
  await wrapper.driver.shutdown()
  platform.app.config.driver.options.steward.reconcileAtInit = true
  wrapper = new Wrapper(platform, createDriver())
  await wrapper.init()
  await waitFor('missing-one to run', async () => (await steward.project(missing.id))?.status.phase === 'Running', { timeoutMs: 60000 })
  await waitFor('the lost agent to run', async () => (await steward.api('GET', '/v1/agents/mqtt-schema-agent-teamb-lost1')).body?.status?.phase === 'Running', { timeoutMs: 60000 })
  assert.equal(platform.rotations, rotations + 2, 'two rotations: the new instance\'s and the new agent\'s')
  assert.equal(missing.rotations, 1)
  assert.equal(platform.brokers.get('Lost1').rotations, 1)
  assert.equal(platform.brokers.get('Keep1').rotations, 1)
  assert.equal((await steward.project(alpha.id)).status.phase, 'Running')
})

test('every Service and Ingress Steward created in these tests found its Deployment or Service existing (the audit log)', () => {
  const order = checkCreationOrder(steward.auditText(), [...platform.projects.values()].map(p => p.safeName))
  assert.deepEqual(order.violations, [])
  assert.ok(order.checked > 0, 'the audit log shows Steward\'s creates')
})
