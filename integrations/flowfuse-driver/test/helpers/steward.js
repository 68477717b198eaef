'use strict'
// `steward serve --embedded-cluster <profile>` as a child process, as tests/e2e starts it: the
// API's URL and token file and the embedded cluster's ingress listener read from what it prints,
// a kubeconfig for the embedded cluster's API server, /metrics, and its audit log (one JSON line
// per request it answered: `kubernetes.embedded.auditLog`). The binary is $STEWARD_BINARY
// (scripts/test.sh points it at build-asan/steward).

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const http = require('node:http')
const https = require('node:https')

function stewardBinary () {
  const bin = process.env.STEWARD_BINARY
  if (!bin) throw new Error('set STEWARD_BINARY to the steward binary (e.g. build-asan/steward)')
  if (!fs.existsSync(bin)) throw new Error(`STEWARD_BINARY=${bin}: no such file`)
  return path.resolve(bin)
}

// Polls `fn` (async; a truthy answer ends the wait) every `everyMs` until `timeoutMs`: a wait
// on a condition with a deadline, never a sleep standing in for one.
async function waitFor (what, fn, { timeoutMs = 60000, everyMs = 100 } = {}) {
  const deadline = Date.now() + timeoutMs
  let last
  for (;;) {
    try {
      const v = await fn()
      if (v) return v
    } catch (err) {
      last = err
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ': ' + last.message : ''}`)
    await new Promise(resolve => setTimeout(resolve, everyMs))
  }
}

// `agent`: a connection pool to use (default none: a connection per request).
function request (url, { method = 'GET', headers = {}, body, ca, agent = false, timeoutMs = 10000 } = {}) {
  const u = new URL(url)
  const mod = u.protocol === 'https:' ? https : http
  return new Promise((resolve, reject) => {
    const req = mod.request({ method, hostname: u.hostname, port: u.port, path: u.pathname + u.search, headers, ca, agent }, res => {
      const chunks = []
      res.on('data', c => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${url}: timed out`)))
    req.on('error', reject)
    req.end(body)
  })
}

class Steward {
  // profile: instant | realistic | hostile | a profile file. config: YAML text for --config (with
  // no `kubernetes:` section: the audit log's key is added to it).
  static async start ({ profile = 'realistic', config = '', profileText = '' } = {}) {
    const s = new Steward()
    s.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'steward-driver-test-'))
    let prof = profile
    if (profileText) {
      prof = path.join(s.dir, 'profile.yaml')
      fs.writeFileSync(prof, profileText)
    }
    const args = ['serve', '--embedded-cluster', prof, '--data-dir', path.join(s.dir, 'data'),
      '--listen', '127.0.0.1:0', '--log-level', process.env.STEWARD_LOG_LEVEL || 'warn',
      '--kubeconfig-out', path.join(s.dir, 'kubeconfig')]
    if (/^kubernetes:/m.test(config)) throw new Error('Steward.start: config must not have a kubernetes: section')
    s.auditLog = path.join(s.dir, 'audit.log')
    fs.writeFileSync(path.join(s.dir, 'steward.yaml'),
      `${config}${config && !config.endsWith('\n') ? '\n' : ''}kubernetes:\n  embedded:\n    auditLog: ${JSON.stringify(s.auditLog)}\n`)
    args.push('--config', path.join(s.dir, 'steward.yaml'))
    s.args = args
    await s._run()
    return s
  }

  // Stops this Steward (SIGTERM, as an upgrade or a node drain does) and starts it again on the
  // same data directory: the same store, token and embedded cluster, a new process (and a new
  // API port: read `url` again).
  async restart () {
    await this._terminate()
    await this._run()
  }

  async _run () {
    const s = this
    s.output = ''
    s.proc = spawn(stewardBinary(), s.args, { stdio: ['ignore', 'pipe', 'pipe'] })
    s.exited = new Promise(resolve => s.proc.on('exit', (code, signal) => resolve({ code, signal })))
    const collect = d => {
      s.output += d
      if (process.env.STEWARD_TEST_ECHO) process.stderr.write(d)
    }
    s.proc.stdout.setEncoding('utf8').on('data', collect)
    s.proc.stderr.setEncoding('utf8').on('data', collect)
    let exited = false
    s.exited.then(() => { exited = true })
    await waitFor('steward serve to print its addresses', async () => {
      if (exited) throw new Error(`steward serve exited:\n${s.output}`)
      return /API token +\S+/.test(s.output) && /ingress (http:\/\/\S+)/.test(s.output)
    }, { timeoutMs: 90000 })
    s.url = s.output.match(/ {2}API +(https?:\/\/\S+)/)[1]
    s.tokenFile = s.output.match(/API token +(\S+)/)[1]
    s.token = fs.readFileSync(s.tokenFile, 'utf8').trim()
    s.ingress = new URL(s.output.match(/ingress (http:\/\/[^\s,]+)/)[1])
    await waitFor('steward to be ready', async () => (await request(s.url + '/readyz')).status === 200, { timeoutMs: 90000 })
    s._readKubeconfig(path.join(s.dir, 'kubeconfig'))
  }

  _readKubeconfig (file) {
    const text = fs.readFileSync(file, 'utf8')
    this.kube = {
      server: text.match(/server: "?([^"\s]+)"?/)[1],
      ca: Buffer.from(text.match(/certificate-authority-data: "?([^"\s]+)"?/)[1], 'base64').toString('utf8'),
      token: text.match(/token: "?([^"\s]+)"?/)[1]
    }
  }

  // The embedded cluster's audit log so far (the whole text).
  auditText () {
    return fs.existsSync(this.auditLog) ? fs.readFileSync(this.auditLog, 'utf8') : ''
  }

  // The driver options that point the driver at this Steward.
  driverConfig (extra = {}) {
    return { url: this.url, tokenFile: this.tokenFile, ...extra }
  }

  async api (method, p, body) {
    const r = await request(this.url + p, {
      method,
      headers: { Authorization: `Bearer ${this.token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined
    })
    return { status: r.status, body: r.text ? JSON.parse(r.text) : null }
  }

  async project (idOrName) {
    const r = await this.api('GET', '/v1/projects/' + encodeURIComponent(idOrName))
    if (r.status === 404) return null
    if (r.status !== 200) throw new Error(`GET project ${idOrName}: ${r.status} ${JSON.stringify(r.body)}`)
    return r.body
  }

  async metric (name) {
    const r = await request(this.url + '/metrics')
    let sum = 0
    for (const line of r.text.split('\n')) {
      if (line.startsWith(name + ' ') || line.startsWith(name + '{')) sum += Number(line.slice(line.lastIndexOf(' ') + 1))
    }
    return sum
  }

  // A GET of the embedded cluster's API server (JSON), sent again after the hostile profile's
  // injected 429s, 5xx and resets.
  async kubeGet (p) {
    let last
    for (let attempt = 0; attempt < 20; attempt++) {
      try {
        const r = await request(this.kube.server + p, { headers: { Authorization: `Bearer ${this.kube.token}` }, ca: this.kube.ca })
        if (r.status === 200) return JSON.parse(r.text)
        if (r.status === 404) return null
        last = new Error(`GET ${p}: ${r.status} ${r.text.slice(0, 200)}`)
        if (r.status !== 429 && r.status < 500) throw last
      } catch (err) {
        last = err
        if (/: 4\d\d /.test(err.message) && !/: 429 /.test(err.message)) throw err
      }
      await new Promise(resolve => setTimeout(resolve, 50 * (attempt + 1)))
    }
    throw last
  }

  // The project's pods that are ready and not terminating, each with the launcher's environment.
  async readyPods (projectId) {
    const list = await this.kubeGet(`/api/v1/namespaces/steward/pods?labelSelector=${encodeURIComponent('steward.io/project=' + projectId)}`)
    const pods = []
    for (const pod of list.items) {
      const ready = (pod.status?.conditions || []).some(c => c.type === 'Ready' && c.status === 'True')
      if (!ready || pod.metadata.deletionTimestamp) continue
      const env = await this.kubeGet(`/api/v1/namespaces/steward/pods/${pod.metadata.name}:2880/proxy/flowforge/env`)
      pods.push({ name: pod.metadata.name, env: env || {} })
    }
    return pods
  }

  async objectsOf (projectId) {
    const sel = encodeURIComponent('steward.io/project=' + projectId)
    const kinds = ['/apis/apps/v1/namespaces/steward/deployments', '/api/v1/namespaces/steward/services',
      '/apis/networking.k8s.io/v1/namespaces/steward/ingresses', '/api/v1/namespaces/steward/pods']
    const out = []
    for (const k of kinds) {
      const list = await this.kubeGet(`${k}?labelSelector=${sel}`)
      for (const o of list.items) out.push(`${k.split('/').pop()}/${o.metadata.name}`)
    }
    return out
  }

  // GET / of a project's URL through the embedded cluster's ingress listener, as a browser would.
  async urlAnswers (name) {
    try {
      const r = await request(`http://${this.ingress.host}/`, { headers: { Host: `${name}.localhost:${this.ingress.port}` }, timeoutMs: 3000 })
      return r.status === 200
    } catch (err) {
      return false
    }
  }

  async stop () {
    try {
      await this._terminate()
    } finally {
      if (!process.env.KEEP_STEWARD_DIR) fs.rmSync(this.dir, { recursive: true, force: true })
    }
  }

  async _terminate () {
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      this.proc.kill('SIGTERM')
      const timer = setTimeout(() => this.proc.kill('SIGKILL'), 20000)
      await this.exited
      clearTimeout(timer)
    }
    const { code, signal } = await this.exited
    // A sanitizer report, a crash or an unclean stop fails the test that ran this server.
    if (code !== 0) throw new Error(`steward serve exited with ${code ?? signal}:\n${this.output.slice(-6000)}`)
  }
}

module.exports = { Steward, waitFor, request }
