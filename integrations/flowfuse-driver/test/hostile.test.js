'use strict'
// The platform's calls at random against `steward serve --embedded-cluster hostile` (throttling,
// 5xx, resets, cut watches, slow deletions), several instances at once. Every 100 ms each
// instance's details() is compared with its URL through the embedded cluster's ingress listener:
// details() must never say running while the URL does not answer. At the end every instance is
// as its last call asked, on the platform's current tokens, and every Service and Ingress was
// created only once the object it depends on existed (the cluster's audit log). Seeded:
// DRIVER_HOSTILE_SEED.

const test = require('node:test')
const assert = require('node:assert/strict')

const { Steward, waitFor } = require('./helpers/steward')
const { Platform, Wrapper } = require('./helpers/platform')
const { sampleTokens } = require('./helpers/checks')
const { checkCreationOrder } = require('./helpers/creation_order')
const { createDriver } = require('../lib/driver')

const SEED = Number(process.env.DRIVER_HOSTILE_SEED || 16)
const PROJECTS = Number(process.env.DRIVER_HOSTILE_PROJECTS || 5)
const OPS = Number(process.env.DRIVER_HOSTILE_OPS || 6)

// mulberry32: a small seeded generator, so that a failing run can be replayed.
function rng (seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const pause = ms => new Promise(resolve => setTimeout(resolve, ms)) // the workload's pacing only

test(`hostile cluster: details() never claims running while the URL fails; every instance ends as asked (seed ${SEED})`, { timeout: 900000 }, async (t) => {
  const steward = await Steward.start({ profile: 'hostile' })
  t.after(() => steward.stop())
  const platform = new Platform({ steward: steward.driverConfig() })
  const wrapper = new Wrapper(platform, createDriver())
  t.after(() => wrapper.driver.shutdown())
  await wrapper.init()
  const random = rng(SEED)
  const projects = []
  for (let i = 0; i < PROJECTS; i++) {
    const p = platform.addProject({ name: `h${i}`, stack: { memory: 256 + i } })
    if (i === 0) await p.updateSetting('ha', { replicas: 2 })
    p.calls = 0 // workload calls issued so far (the sampler's "did anything change meanwhile")
    p.restarts = 0 // odd while a restartFlows is under way
    p.history = []
    projects.push(p)
  }

  // The sampler: for every instance on its own, every 100 ms, details() then the URL.
  const claims = { samples: 0, running: 0, excused: 0, excusedBy: {}, violations: [] }
  const t0 = Date.now()
  const stamp = () => `${((Date.now() - t0) / 1000).toFixed(1)}s`
  let sampling = true
  const sampler = Promise.all(projects.map(async p => {
    while (sampling) {
      const round = Date.now()
      const calls = p.calls
      const restarts = p.restarts
      const before = await steward.project(p.id)
      const d = await wrapper.driver.details(p)
      claims.samples++
      if (d.state === 'running') {
        claims.running++
        const answers = await steward.urlAnswers(p.safeName)
        if (!answers) {
          const after = await steward.project(p.id)
          const at = r => `generation ${r.generation} ${r.desiredState} ${r.status.phase} ${r.status.reason} (observed ${r.status.observedGeneration})`
          // A call committed while this sample ran may take the URL down legitimately: only a
          // sample within one generation, with no call issued meanwhile, is a claim to judge.
          // So may a flow restart (the launcher does not listen while it restarts): excused when
          // one was under way at any time during the sample.
          const restarting = restarts % 2 === 1 || p.restarts !== restarts
          if (p.calls === calls && before.generation === after.generation && !restarting) {
            claims.violations.push(`${p.name} at ${stamp()}: details() said running (${JSON.stringify(d)}), the URL did not answer; Steward before: ${at(before)}, after: ${at(after)}`)
          } else {
            claims.excused++
            const why = p.calls !== calls ? 'call' : before.generation !== after.generation ? 'intent' : 'restart'
            claims.excusedBy[why] = (claims.excusedBy[why] || 0) + 1
          }
        }
      }
      const left = 100 - (Date.now() - round)
      if (left > 0) await pause(left)
    }
  }))
  t.after(() => { sampling = false; return sampler })
  const tokens = sampleTokens(steward, projects, { everyMs: 500, t })

  // The workload: per instance, OPS calls as the platform makes them, at random moments.
  const starts = []
  // Half the time the user waits until the instance runs (or failed) before the next click.
  const start = async (p, action) => {
    const { started } = action ? await wrapper.startAction(p) : await wrapper.start(p)
    starts.push(started)
    if (random() < 0.5) await started
  }
  await Promise.all(projects.map(async p => {
    p.calls++
    p.history.push(`${stamp()} start`)
    await start(p)
    p.last = 'running'
    for (let n = 0; n < OPS; n++) {
      await pause(Math.floor(random() * 6000))
      p.calls++
      const r = random()
      if (p.state === 'suspended') {
        p.history.push(`${stamp()} start`)
        p.last = 'running'
        await start(p, true)
      } else if (r < 0.35) {
        p.history.push(`${stamp()} suspend`)
        p.last = 'suspended'
        await wrapper.stop(p).catch(err => p.history.push(`${stamp()} suspend rejected: ${err.message}`))
      } else if (r < 0.7) {
        p.history.push(`${stamp()} stack change`)
        p.last = 'running'
        await wrapper.stop(p).catch(err => p.history.push(`${stamp()} suspend rejected: ${err.message}`))
        p.setStack({ memory: 300 + Math.floor(random() * 200) })
        p.state = 'running'
        await start(p)
      } else {
        p.history.push(`${stamp()} restartFlows`)
        p.restarts++
        await wrapper.driver.restartFlows(p).then(a => a.done).finally(() => { p.restarts++ }).catch(err => p.history.push(`${stamp()} restartFlows rejected: ${err.message}`))
      }
    }
  }))
  await Promise.all(starts)
  sampling = false
  await sampler
  const sampled = await tokens.stop()

  const report = projects.map(p => `${p.name}: ${p.history.join(' → ')}`).join('\n')
  t.diagnostic(`seed ${SEED}: ${claims.samples} details() samples, ${claims.running} said running (${claims.excused} with the URL down across a call, not judged: ${JSON.stringify(claims.excusedBy)}); ${sampled.samples} pod token samples; audit: ${platform.audit.length} startFailed`)
  assert.deepEqual(claims.violations, [], report)
  assert.ok(claims.running > 0, 'some samples saw an instance running')
  assert.deepEqual(sampled.violations, [], report)
  // Each Service created only once its Deployment existed, each Ingress once its Service did
  // (the embedded cluster's audit log).
  const order = checkCreationOrder(steward.auditText(), projects.map(p => p.safeName))
  t.diagnostic(`audit log: ${order.checked} Service and Ingress creates checked for their order`)
  assert.deepEqual(order.violations, [], report)
  assert.ok(order.checked >= PROJECTS * 2, 'the audit log shows every project\'s Service and Ingress created')

  // Every instance as its last call asked: Steward, the platform, the URL, the pods' tokens.
  for (const p of projects) {
    const rec = await waitFor(`${p.name} to settle`, async () => {
      const r = await steward.project(p.id)
      return r.status.observedGeneration === r.generation && ['Running', 'Suspended', 'Failed'].includes(r.status.phase) && r
    }, { timeoutMs: 120000 })
    const msg = `${p.name} (last call: ${p.last}): Steward ${rec.desiredState} ${rec.status.phase}; platform ${p.state}\n${report}`
    assert.equal(rec.status.phase, p.last === 'running' ? 'Running' : 'Suspended', msg)
    assert.equal(p.state, p.last === 'running' ? 'running' : 'suspended', msg)
    assert.equal(await steward.urlAnswers(p.safeName), p.last === 'running', msg)
    if (p.last === 'running') {
      const pods = await steward.readyPods(p.id)
      assert.equal(pods.length, p.name === 'h0' ? 2 : 1, msg)
      for (const pod of pods) assert.equal(pod.env.FORGE_PROJECT_TOKEN, p.tokens.token, `${pod.name}: ${msg}`)
    } else {
      assert.deepEqual(await steward.objectsOf(p.id), [], msg)
    }
  }
})
