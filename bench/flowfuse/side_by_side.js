#!/usr/bin/env node
'use strict'
// The FlowFuse platform's scenarios run against this repository's driver package (over
// `steward serve`) and against FlowFuse's own driver-k8s, on the same embedded cluster
// (`steward cluster`, a fresh one per run, with its audit log). A benchmark, not a test: it
// prints figures, nothing passes or fails. docs/performance.md has the results and how to read
// them.
//
// driver-k8s is not on the npm registry and its code never enters this repository: give the
// path of a checkout of the public repository github.com/FlowFuse/driver-k8s in DRIVER_K8S_DIR,
// with its npm dependencies installed there from its package.json, without its lock file:
//
//   git clone https://github.com/FlowFuse/driver-k8s /tmp/driver-k8s
//   (cd /tmp/driver-k8s && npm install --no-package-lock --omit=dev)
//   DRIVER_K8S_DIR=/tmp/driver-k8s node bench/flowfuse/side_by_side.js
//
// Without DRIVER_K8S_DIR only Steward's driver runs (and the output says so).
//
// One run = one driver, one profile, N projects, these phases (the platform's own order of
// calls, through the wrapper stand-in of integrations/flowfuse-driver/test/helpers/platform.js):
//   start     N instances started at once
//   stack     every instance's stack changed at once (the wrapper: stop, then start at once —
//             the sequence of the bug report that started Steward)
//   restart   the platform restarts: a new driver object, a new memory cache, init() again;
//             token rotations and Kubernetes requests are counted for RESTART_WINDOW_MS after
//             init() resolved (driver-k8s checks its instances from a timer after init; the
//             window starts once its check logged every instance)
//   end       every instance should be running: its URL answers, its pods hold the platform's
//             current token, the platform recorded no startFailed
//   suspend   every instance suspended at once: when stop() resolves, does any pod of it remain,
//             does its URL still answer?
// Throughout, each instance's URL is tried every 100 ms through the cluster's ingress listener,
// and each instance's details() is sampled every DETAILS_EVERY_MS (100 ms for 10 instances,
// 500 ms for 100) and, when it says running, the URL is tried right after: a "false running"
// sample is one where details() said running and the URL did not answer, with no platform call
// issued on that instance meanwhile.
//
// Kubernetes requests are counted by verb from the cluster's audit log (the benchmark's own
// reads at the end are left out). `proxy` is the launcher's admin API reached through the API
// server (driver-k8s's http://<name>.<ns>:2880 calls are sent there by a forwarder here, as
// Steward sends its own when it runs outside the cluster); in a real cluster both go to the pod
// directly, so they are shown apart from the API's own verbs.

const { spawn } = require('node:child_process')
const dns = require('node:dns')
const fs = require('node:fs')
const http = require('node:http')
const https = require('node:https')
const os = require('node:os')
const path = require('node:path')
const { parseArgs } = require('node:util')

const REPO = path.resolve(__dirname, '..', '..')
const { Platform, Wrapper } = require(path.join(REPO, 'integrations/flowfuse-driver/test/helpers/platform'))
const { createDriver } = require(path.join(REPO, 'integrations/flowfuse-driver/lib/driver'))
const { request: requestOnce } = require(path.join(REPO, 'integrations/flowfuse-driver/test/helpers/steward'))

const NAMESPACE = 'flowforge' // driver-k8s's default projectNamespace; Steward is given the same
const FORWARD_HOST = '127.0.0.2' // where <name>.<namespace> resolves for driver-k8s (loopback)
const LAUNCHER_PORT = 2880
const RESTART_WINDOW_MS = 15000
const PHASE_DEADLINE_MS = 180000
const STACK = { cpu: 10, memory: 256, container: 'flowfuse/node-red:4.0.8-3.0.0' }

const HELP = `usage: node bench/flowfuse/side_by_side.js [options]
  --drivers LIST    steward,driver-k8s (default: both; driver-k8s needs DRIVER_K8S_DIR)
  --projects LIST   instance counts, default 10,100
  --profiles LIST   embedded cluster profiles, default realistic,hostile
  --steward PATH    the steward binary (default build/steward: the release build)
  --seed N          the cluster's seed (default 1)
  --json FILE       also write every figure as JSON
  --help`

function options () {
  const { values } = parseArgs({
    options: {
      drivers: { type: 'string', default: 'steward,driver-k8s' },
      projects: { type: 'string', default: '10,100' },
      profiles: { type: 'string', default: 'realistic,hostile' },
      steward: { type: 'string', default: path.join(REPO, 'build/steward') },
      seed: { type: 'string', default: '1' },
      json: { type: 'string' },
      help: { type: 'boolean', default: false }
    },
    strict: true
  })
  if (values.help) {
    console.log(HELP)
    process.exit(0)
  }
  const list = s => s.split(',').map(x => x.trim()).filter(Boolean)
  const o = {
    drivers: list(values.drivers),
    projects: list(values.projects).map(Number),
    profiles: list(values.profiles),
    steward: path.resolve(values.steward),
    seed: Number(values.seed),
    json: values.json
  }
  for (const d of o.drivers) if (!['steward', 'driver-k8s'].includes(d)) usage(`--drivers: unknown driver "${d}"`)
  for (const n of o.projects) if (!Number.isInteger(n) || n < 1 || n > 1000) usage('--projects: counts from 1 to 1000')
  if (!Number.isInteger(o.seed) || o.seed < 0) usage('--seed: a whole number >= 0')
  if (!fs.existsSync(o.steward)) usage(`--steward: ${o.steward}: no such file (build it: scripts/build.sh build)`)
  return o
}

function usage (msg) {
  console.error(`side_by_side: ${msg}\n${HELP}`)
  process.exit(2)
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

// The benchmark's own connections are kept alive, so that its share of the CPU (which the
// driver under test shares: one Node process) stays small.
// HTTPS requests name their agent (the cluster's, which holds its CA).
const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 256 })

function request (url, opts = {}) {
  const agent = opts.agent ?? (url.startsWith('https:') ? false : httpAgent)
  return requestOnce(url, { timeoutMs: 5000, ...opts, agent })
}

async function waitFor (what, fn, timeoutMs) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await fn().catch(() => false)
    if (v) return v
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(100)
  }
}

// A child process whose output is kept, and which prints what the benchmark waits for.
function child (bin, args, env = {}) {
  const c = { output: '' }
  c.proc = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
  c.exited = new Promise(resolve => c.proc.on('exit', (code, signal) => resolve(code ?? signal)))
  c.proc.stdout.setEncoding('utf8').on('data', d => { c.output += d })
  c.proc.stderr.setEncoding('utf8').on('data', d => { c.output += d })
  c.stop = async () => {
    if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGTERM')
    const timer = setTimeout(() => c.proc.kill('SIGKILL'), 20000)
    await c.exited
    clearTimeout(timer)
  }
  return c
}

// `steward cluster`: API server, controllers, ingress listener, audit log.
async function startCluster (bin, dir, profile, seed) {
  const c = child(bin, ['cluster', '--profile', profile, '--seed', String(seed), '--audit-log', path.join(dir, 'audit.jsonl'),
    '--kubeconfig-out', path.join(dir, 'kubeconfig'), '--log-level', 'warn'])
  await waitFor('steward cluster to start', async () => {
    if (c.proc.exitCode !== null) throw new Error(`steward cluster exited:\n${c.output}`)
    return /Ingress: +http/.test(c.output)
  }, 60000)
  c.kubeconfig = path.join(dir, 'kubeconfig')
  c.ingress = new URL(c.output.match(/Ingress: +(http:\/\/\S+)/)[1])
  const text = fs.readFileSync(c.kubeconfig, 'utf8')
  c.server = text.match(/server: "?([^"\s]+)"?/)[1]
  c.ca = Buffer.from(text.match(/certificate-authority-data: "?([^"\s]+)"?/)[1], 'base64').toString('utf8')
  c.token = text.match(/token: "?([^"\s]+)"?/)[1]
  c.agent = new https.Agent({ keepAlive: true, maxSockets: 256, ca: c.ca })
  const stop = c.stop
  c.stop = () => { c.agent.destroy(); return stop() }
  c.auditFile = path.join(dir, 'audit.jsonl')
  c.own = new Map() // uri -> requests the benchmark itself sent (left out of the counts)
  // A read of the API server sent again after the hostile profile's injected failures.
  c.get = async p => {
    let last
    for (let attempt = 0; attempt < 30; attempt++) {
      c.own.set(p, (c.own.get(p) || 0) + 1)
      try {
        const r = await request(c.server + p, { headers: { Authorization: `Bearer ${c.token}` }, agent: c.agent })
        if (r.status === 200) return JSON.parse(r.text)
        if (r.status === 404) return null
        last = new Error(`GET ${p}: ${r.status}`)
        if (r.status !== 429 && r.status < 500) throw last
      } catch (err) { last = err }
      await sleep(50 * (attempt + 1))
    }
    throw last
  }
  const ns = await request(c.server + '/api/v1/namespaces', {
    method: 'POST',
    headers: { Authorization: `Bearer ${c.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } }),
    agent: c.agent
  }).catch(err => ({ status: 0, text: err.message }))
  c.own.set('/api/v1/namespaces', 1)
  if (ns.status !== 201 && ns.status !== 409) {
    // The hostile profile may refuse it once; one more try is enough to tell a real failure.
    await c.get('/api/v1/namespaces/' + NAMESPACE).then(x => { if (!x) throw new Error(`creating namespace ${NAMESPACE}: ${ns.status} ${ns.text}`) })
  }
  return c
}

// The audit log's lines from `from` (a line count) on: [{verb, resource, uri, ...}].
function auditLines (cluster, from = 0) {
  const text = fs.readFileSync(cluster.auditFile, 'utf8')
  const lines = text.split('\n').filter(Boolean)
  return { total: lines.length, records: lines.slice(from).map(l => JSON.parse(l)) }
}

// Requests by verb, the benchmark's own left out (counted per uri, consumed as found).
function byVerb (cluster, records) {
  const own = new Map(cluster.own)
  const out = {}
  for (const r of records) {
    const mine = own.get(r.uri)
    if (mine) {
      own.set(r.uri, mine - 1)
      continue
    }
    out[r.verb] = (out[r.verb] || 0) + 1
  }
  return out
}

// driver-k8s calls its launchers at http://[srv-]<name>.<namespace>:2880/...: those names
// resolve to FORWARD_HOST here, where each request goes on through the API server's service
// proxy to the Service named by the Host header.
function startForwarder (cluster) {
  const lookup = dns.lookup
  dns.lookup = function (hostname, opts, cb) {
    if (typeof opts === 'function') { cb = opts; opts = {} }
    if (typeof opts === 'number') opts = { family: opts }
    if (typeof hostname === 'string' && hostname.endsWith('.' + NAMESPACE)) {
      if (opts?.all) return process.nextTick(cb, null, [{ address: FORWARD_HOST, family: 4 }])
      return process.nextTick(cb, null, FORWARD_HOST, 4)
    }
    return lookup.call(this, hostname, opts, cb)
  }
  const agent = cluster.agent
  const server = http.createServer((req, res) => {
    const svc = String(req.headers.host || '').split(':')[0].split('.')[0]
    const target = new URL(`${cluster.server}/api/v1/namespaces/${NAMESPACE}/services/${svc}:${LAUNCHER_PORT}/proxy${req.url}`)
    const headers = { ...req.headers, authorization: `Bearer ${cluster.token}`, host: target.host }
    const up = https.request({ method: req.method, hostname: target.hostname, port: target.port, path: target.pathname + target.search, headers, agent }, r => {
      res.writeHead(r.statusCode, r.headers)
      r.pipe(res)
    })
    up.on('error', () => { res.destroy() })
    req.pipe(up)
  })
  return new Promise((resolve, reject) => {
    server.once('error', err => reject(new Error(`the launcher forwarder cannot listen on ${FORWARD_HOST}:${LAUNCHER_PORT}: ${err.message}`)))
    server.listen(LAUNCHER_PORT, FORWARD_HOST, () => resolve({
      close: () => {
        dns.lookup = lookup
        server.closeAllConnections()
        return new Promise(resolve => server.close(resolve))
      }
    }))
  })
}

// `steward serve` on that cluster.
async function startSteward (bin, dir, cluster) {
  const s = child(bin, ['serve', '--kubeconfig', cluster.kubeconfig, '--namespace', NAMESPACE, '--domain', 'localhost',
    '--data-dir', path.join(dir, 'steward'), '--listen', '127.0.0.1:0', '--log-level', 'warn'])
  await waitFor('steward serve to start', async () => {
    if (s.proc.exitCode !== null) throw new Error(`steward serve exited:\n${s.output}`)
    return /API token +\S+/.test(s.output)
  }, 60000)
  s.url = s.output.match(/ {2}API +(https?:\/\/\S+)/)[1]
  s.tokenFile = s.output.match(/API token +(\S+)/)[1]
  await waitFor('steward to be ready', async () => (await request(s.url + '/readyz')).status === 200, 60000)
  return s
}

// A fresh require of driver-k8s: its module is the driver object (one per process), so a
// platform restart loads it again.
function loadDriverK8s () {
  const dir = process.env.DRIVER_K8S_DIR
  const main = path.join(dir, 'kubernetes.js')
  for (const k of Object.keys(require.cache)) {
    if (k.startsWith(path.resolve(dir) + path.sep) && !k.includes(`${path.sep}node_modules${path.sep}`)) delete require.cache[k]
  }
  return require(main)
}

// CPU seconds (user + system) a process has used so far, from /proc.
function cpuSeconds (pid) {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = f.slice(f.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100 // utime, stime in clock ticks (USER_HZ 100)
  } catch (err) {
    return NaN
  }
}

function quantile (xs, q) {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]
}

const secs = ms => Number.isFinite(ms) ? (ms / 1000).toFixed(1) : '—'
const spread = xs => xs.length ? `${secs(quantile(xs, 0.5))} / ${secs(quantile(xs, 0.9))} / ${secs(Math.max(...xs))}` : '—'

// The instances' URLs and details(), sampled as described at the top.
class Sampler {
  constructor (cluster, detailsEveryMs) {
    this.cluster = cluster
    this.detailsEveryMs = detailsEveryMs
    this.driver = null
    this.running = false
    this.samples = 0
    this.claims = 0
    this.falseRunning = []
    this.detailsErrors = 0
    this.detailsMs = [] // how long each details() call took
  }

  async urlAnswers (p) {
    try {
      const r = await request(`http://${this.cluster.ingress.host}/`, { headers: { Host: `${p.safeName}.localhost:${this.cluster.ingress.port}` }, timeoutMs: 3000 })
      return r.status === 200 ? (r.headers['x-steward-pod'] || 'pod') : null
    } catch (err) {
      return null
    }
  }

  start (projects) {
    this.running = true
    const loops = []
    for (const p of projects) {
      loops.push((async () => {
        while (this.running) {
          const t = Date.now()
          const pod = await this.urlAnswers(p)
          p.servedBy = pod
          if (pod && p.waitUrl && p.waitUrl.until(pod)) { p.waitUrl.resolve(Date.now()); p.waitUrl = null }
          await sleep(Math.max(0, 100 - (Date.now() - t)))
        }
      })())
      loops.push((async () => {
        await sleep(Math.random() * this.detailsEveryMs)
        while (this.running) {
          const t = Date.now()
          const calls = p.calls
          let d
          try {
            d = await this.driver.details(p)
          } catch (err) {
            this.detailsErrors++
          }
          this.detailsMs.push(Date.now() - t)
          this.samples++
          if (d?.state === 'running') {
            this.claims++
            if (p.waitClaim) { p.waitClaim.resolve(Date.now()); p.waitClaim = null }
            const pod = await this.urlAnswers(p)
            if (!pod && p.calls === calls) this.falseRunning.push(`${p.name} (${p.phaseName})`)
          }
          await sleep(Math.max(0, this.detailsEveryMs - (Date.now() - t)))
        }
      })())
    }
    this.loops = Promise.all(loops)
  }

  async stop () {
    this.running = false
    await this.loops
  }
}

// A promise for the first moment `p` meets a condition the sampler sees.
function expectUrl (p, until) {
  return new Promise(resolve => { p.waitUrl = { until, resolve } })
}
function expectClaim (p) {
  return new Promise(resolve => { p.waitClaim = { resolve } })
}

async function withDeadline (promise, ms) {
  let timer
  const t = new Promise(resolve => { timer = setTimeout(() => resolve(NaN), ms) })
  const v = await Promise.race([promise, t])
  clearTimeout(timer)
  return v
}

// One platform process: a Platform stand-in, its wrapper and a driver object.
function platformFor (which, steward) {
  const platform = new Platform({
    steward: steward ? { url: steward.url, tokenFile: steward.tokenFile } : undefined,
    driverOptions: { projectNamespace: NAMESPACE }
  })
  platform.log.debug = () => {}
  if (which === 'driver-k8s') platform.log.info = msg => { platform.log.lines.push({ level: 'info', msg: String(msg) }) }
  const driver = which === 'steward' ? createDriver() : loadDriverK8s()
  return { platform, wrapper: new Wrapper(platform, driver), driver }
}

// Runs `call(p, arm)` on every instance at once. The times are taken from the start of each
// call: until the URL answers (from a pod `url(p)` accepts; its test is made before the call)
// and until details() says running after `arm()` (the call arms it when the start is issued,
// so that an old pod's claims before a stop do not count).
async function timed (projects, phaseName, call, url) {
  const t0 = Date.now()
  const urlTimes = []
  const claimTimes = []
  await Promise.all(projects.map(async p => {
    p.phaseName = phaseName
    const urlAt = expectUrl(p, url(p))
    let claimAt = null
    const start = Date.now()
    await call(p, () => { claimAt = expectClaim(p) })
    if (p.state === 'suspended') { // the start was rejected (the wrapper recorded startFailed)
      p.waitUrl = p.waitClaim = null
      return
    }
    const [u, c] = await Promise.all([withDeadline(urlAt, PHASE_DEADLINE_MS), claimAt && withDeadline(claimAt, PHASE_DEADLINE_MS)])
    if (Number.isFinite(u)) urlTimes.push(u - start)
    if (Number.isFinite(c)) claimTimes.push(c - start)
  }))
  return { urlTimes, claimTimes, wallMs: Date.now() - t0 }
}

async function run ({ which, n, profile, opts }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `ff-bench-${which}-`))
  const result = { driver: which, projects: n, profile, loadavg: os.loadavg()[0] }
  const cluster = await startCluster(opts.steward, dir, profile, opts.seed)
  let steward = null
  let forwarder = null
  let plat = null
  const sampler = new Sampler(cluster, n <= 10 ? 100 : 500)
  result.detailsEveryMs = sampler.detailsEveryMs
  const cpu0 = process.cpuUsage()
  try {
    if (which === 'steward') steward = await startSteward(opts.steward, dir, cluster)
    else {
      process.env.KUBECONFIG = cluster.kubeconfig // driver-k8s: KubeConfig.loadFromDefault()
      forwarder = await startForwarder(cluster)
    }
    plat = platformFor(which, steward)
    await plat.wrapper.init()
    const projects = []
    for (let i = 0; i < n; i++) {
      const p = plat.platform.addProject({ name: `b${i}`, stack: STACK })
      p.calls = 0
      projects.push(p)
    }
    sampler.driver = plat.driver
    sampler.start(projects)
    const rotations0 = plat.platform.rotations
    const start = p => { p.calls++; return plat.wrapper.start(p).then(r => r.started) }

    // start
    result.start = await timed(projects, 'start', (p, arm) => { arm(); return start(p) }, () => () => true)
    // stack: stop, a new stack, start at once — the URL must answer from a pod of the new stack
    result.stack = await timed(projects, 'stack', async (p, arm) => {
      p.calls++
      await plat.wrapper.stop(p).catch(err => { p.stopError = err.message })
      p.setStack({ ...STACK, memory: 320 })
      p.state = 'running'
      await p.save()
      arm()
      return start(p)
    }, p => { const before = p.servedBy; return pod => pod !== before })
    result.rotationsBeforeRestart = plat.platform.rotations - rotations0

    // The platform restarts: a new process (driver object, memory cache) and init().
    const mark = auditLines(cluster).total
    await plat.driver.shutdown?.()
    const restarted = platformFor(which, steward)
    for (const p of projects) {
      restarted.platform.projects.set(p.id, p)
      p._platform = restarted.platform
    }
    sampler.driver = restarted.driver
    const r0 = Date.now()
    await restarted.wrapper.init()
    if (which === 'driver-k8s') {
      // Its check (a timer after init) logs a line per instance it finds or re-creates; it skips
      // the suspended ones (a rejected start leaves an instance suspended) without a word.
      const expected = projects.filter(p => p.state !== 'suspended').length
      const checked = () => restarted.platform.log.lines.filter(l => / in flowforge found|recreating/.test(l.msg)).length
      await waitFor('driver-k8s to check its instances after init', async () => checked() >= expected, 120000)
        .catch(() => { result.restartCheckIncomplete = `${checked()} of ${expected}` })
    }
    result.restartInitMs = Date.now() - r0
    await sleep(RESTART_WINDOW_MS) // a counting window after the check, not a synchronisation
    result.restartRotations = restarted.platform.rotations
    result.restartRequests = byVerb(cluster, auditLines(cluster, mark).records)
    const startFailedBefore = plat.platform.audit.length
    plat = restarted

    // end: every instance should be running on the platform's current tokens
    await sampler.stop()
    const end = { unreachable: 0, revokedTokenPods: 0, startFailed: startFailedBefore + plat.platform.audit.length, stopErrors: 0 }
    for (const p of projects) {
      if (!(await sampler.urlAnswers(p))) end.unreachable++
      if (p.stopError) end.stopErrors++
      const pods = await cluster.get(`/api/v1/namespaces/${NAMESPACE}/pods?labelSelector=${encodeURIComponent('app=' + p.id)}`)
      for (const pod of pods?.items || []) {
        if (pod.metadata.deletionTimestamp) continue
        const env = await cluster.get(`/api/v1/namespaces/${NAMESPACE}/pods/${pod.metadata.name}:${LAUNCHER_PORT}/proxy/flowforge/env`).catch(() => null)
        if (env && env.FORGE_PROJECT_TOKEN !== p.tokens?.token) end.revokedTokenPods++
      }
    }
    result.end = end
    // details() alone: what one call costs in Kubernetes requests.
    const d0 = auditLines(cluster).total
    for (let round = 0; round < 3; round++) for (const p of projects) await plat.driver.details(p).catch(() => {})
    const dReq = byVerb(cluster, auditLines(cluster, d0).records)
    result.requestsPerDetails = Object.values(dReq).reduce((x, y) => x + y, 0) / (3 * n)

    // suspend: when stop() resolves, is the instance gone?
    sampler.start(projects)
    const t0 = Date.now()
    const left = { pods: 0, urls: 0 }
    const stopTimes = []
    await Promise.all(projects.map(async p => {
      p.calls++
      p.phaseName = 'suspend'
      const s = Date.now()
      await plat.wrapper.stop(p).catch(err => { p.stopError = err.message })
      stopTimes.push(Date.now() - s)
      if (await sampler.urlAnswers(p)) left.urls++
      const pods = await cluster.get(`/api/v1/namespaces/${NAMESPACE}/pods?labelSelector=${encodeURIComponent('app=' + p.id)}`)
      if ((pods?.items || []).length > 0) left.pods++
    }))
    result.suspend = { stopTimes, left, wallMs: Date.now() - t0 }
    await sampler.stop()
    result.samples = sampler.samples
    result.claims = sampler.claims
    result.falseRunning = sampler.falseRunning.length
    result.falseRunningBy = sampler.falseRunning.reduce((m, s) => { const k = s.match(/\((\w+)\)/)[1]; m[k] = (m[k] || 0) + 1; return m }, {})
    result.detailsErrors = sampler.detailsErrors
    result.detailsMs = { p50: quantile(sampler.detailsMs, 0.5), p99: quantile(sampler.detailsMs, 0.99) }
    result.requests = byVerb(cluster, auditLines(cluster).records)
    const cpu = process.cpuUsage(cpu0)
    result.cpu = { node: (cpu.user + cpu.system) / 1e6, steward: steward ? cpuSeconds(steward.proc.pid) : 0, cluster: cpuSeconds(cluster.proc.pid) }
  } finally {
    if (sampler.running) await sampler.stop()
    await plat?.driver.shutdown?.()
    if (forwarder) await forwarder.close()
    if (steward) await steward.stop()
    await cluster.stop()
    if (!process.env.KEEP_BENCH_DIR) fs.rmSync(dir, { recursive: true, force: true })
  }
  return result
}

function report (r) {
  const verbs = Object.entries(r.requests).filter(([v]) => v !== 'proxy').sort((x, y) => y[1] - x[1])
  const api = verbs.reduce((s, [, c]) => s + c, 0)
  const restartWrites = ['create', 'update', 'patch', 'delete'].reduce((s, v) => s + (r.restartRequests[v] || 0), 0)
  return [
    `${r.driver}, ${r.profile}, ${r.projects} instances (load ${r.loadavg.toFixed(1)}; details() every ${r.detailsEveryMs} ms)`,
    `  start: URL answers after ${spread(r.start.urlTimes)} s (median / p90 / max; ${r.start.urlTimes.length}/${r.projects} answered); details() says running after ${spread(r.start.claimTimes)} s`,
    `  stack change (stop, start): new pod answers after ${spread(r.stack.urlTimes)} s (${r.stack.urlTimes.length}/${r.projects}); details() running after ${spread(r.stack.claimTimes)} s`,
    `  false running: ${r.falseRunning} of ${r.claims} running claims in ${r.samples} samples ${JSON.stringify(r.falseRunningBy)}; details() errors ${r.detailsErrors}, took ${r.detailsMs.p50} ms median, ${r.detailsMs.p99} ms p99`,
    `  platform restart: init ${secs(r.restartInitMs)} s${r.restartCheckIncomplete ? ` (its check logged only ${r.restartCheckIncomplete} instances)` : ''}, ${r.restartRotations} token rotations, ${restartWrites} Kubernetes writes in ${RESTART_WINDOW_MS / 1000} s (${JSON.stringify(r.restartRequests)})`,
    `  at the end: ${r.end.unreachable} unreachable, ${r.end.startFailed} startFailed, ${r.end.revokedTokenPods} pods on a revoked token, ${r.end.stopErrors} rejected stops`,
    `  suspend: stop() resolved after ${spread(r.suspend.stopTimes)} s; then ${r.suspend.left.pods} with pods left, ${r.suspend.left.urls} URLs still answering`,
    `  CPU: ${r.cpu.node.toFixed(1)} s in the platform's process (driver and benchmark), ${r.cpu.steward.toFixed(1)} s steward serve, ${r.cpu.cluster.toFixed(1)} s the cluster`,
    `  Kubernetes requests: ${api} (${verbs.map(([v, c]) => `${v} ${c}`).join(', ')}) + proxy ${r.requests.proxy || 0}; ${r.requestsPerDetails.toFixed(2)} per details() call; ${r.rotationsBeforeRestart} token rotations before the restart`
  ].join('\n')
}

async function main () {
  const opts = options()
  let drivers = opts.drivers
  if (drivers.includes('driver-k8s')) {
    const dir = process.env.DRIVER_K8S_DIR
    if (!dir || !fs.existsSync(path.join(dir, 'kubernetes.js')) || !fs.existsSync(path.join(dir, 'node_modules', '@kubernetes', 'client-node'))) {
      console.log('driver-k8s: skipped. Set DRIVER_K8S_DIR to a checkout of https://github.com/FlowFuse/driver-k8s with its dependencies:\n' +
        '  git clone https://github.com/FlowFuse/driver-k8s /tmp/driver-k8s && (cd /tmp/driver-k8s && npm install --no-package-lock --omit=dev)')
      drivers = drivers.filter(d => d !== 'driver-k8s')
    }
  }
  console.log(`# node bench/flowfuse/side_by_side.js ${process.argv.slice(2).join(' ')}`)
  console.log(`# ${os.cpus().length} cores, load ${os.loadavg().map(x => x.toFixed(1)).join(' ')}, node ${process.version}, steward ${opts.steward}` +
    (process.env.DRIVER_K8S_DIR ? `, driver-k8s ${JSON.parse(fs.readFileSync(path.join(process.env.DRIVER_K8S_DIR, 'package.json'), 'utf8')).version}` : ''))
  const results = []
  for (const profile of opts.profiles) {
    for (const n of opts.projects) {
      for (const which of drivers) {
        const r = await run({ which, n, profile, opts })
        results.push(r)
        console.log(report(r))
      }
    }
  }
  if (opts.json) fs.writeFileSync(opts.json, JSON.stringify(results, null, 2))
}

main().catch(err => {
  console.error(err.stack || err)
  process.exit(1)
})
