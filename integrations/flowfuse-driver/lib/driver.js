'use strict'
// The FlowFuse container driver over Steward. FlowFuse's forge/containers/wrapper.js calls these
// methods with the arguments and expects the answers driver-k8s (@flowfuse/driver-kubernetes)
// gives; what the promises mean is stricter (README.md, docs/flowfuse.md):
//   start   resolves when Steward reports Running at the generation it asked for, rejects with
//           Steward's reason on Failed; rotates the platform's tokens only when no instance of
//           the project can hold the current ones, and hands them to Steward as credentials
//   stop    resolves only at Suspended (everything gone); remove once the project is purged
//   details says running only when Steward says Running
//   init    adopts: reads, compares, logs; writes and rotates nothing
// One driver object per platform process; createDriver() makes another (tests: a restarted
// platform).

const { StewardClient, StewardError, encodePath } = require('./client')
const { Watch } = require('./watch')
const { Waiters, WaitError, describe } = require('./waiters')
const { readConfig, STEWARD_SIDE_OPTIONS } = require('./config')
const { safeNameOf, projectSpec, credentialsOf, agentOf, stackOf } = require('./spec')

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

function projectPath (project, ...rest) {
  return '/v1/projects/' + encodePath([project.id, ...rest])
}

// The platform's files path ("a/b", "" for the storage root) as the API's path segments.
function filesPath (instance, filePath) {
  const p = String(filePath ?? '')
  return projectPath(instance, 'files') + (p === '' ? '' : '/' + p.split('/').map(encodeURIComponent).join('/'))
}

// True when some pod of the project may be running with the credentials Steward holds for it:
// anything but a project that is to be suspended and is Suspended (or was never started).
function mayHoldCredentials (rec) {
  if (!rec) return false
  const phase = rec.status?.phase || 'Pending'
  if (rec.desiredState === 'suspended' && (phase === 'Suspended' || phase === 'Pending')) return false
  return true
}

// True when Steward's Running is about the intent the platform asked for last: a suspend (or a
// new generation) committed a moment ago leaves the record Running at the older generation until
// the engine takes it up — and the engine's first step of a suspend takes the URL down.
function runningNow (rec) {
  return rec?.status?.phase === 'Running' && rec.desiredState === 'running' &&
    rec.status.observedGeneration === rec.generation
}

// Steward's phase, in the words the platform shows (details() when it does not say running:
// a Running record that is not runningNow, or one whose launcher did not answer).
function platformState (phase, rec) {
  // Steward cannot tell what runs on a cluster that does not answer (ClusterUnreachable).
  if (phase === 'Unknown') return 'unknown'
  if (rec?.desiredState === 'suspended') return phase === 'Suspended' || phase === 'Pending' ? 'suspended' : 'suspending'
  if (rec?.desiredState === 'deleted') return 'deleting'
  switch (phase) {
    case 'Suspended': return 'suspended'
    case 'Suspending': return 'suspending'
    case 'Deleting': return 'deleting'
    case 'Failed': return 'unknown'
    default: return 'starting' // Pending, Provisioning, Updating, Degraded
  }
}

class StewardDriver {
  constructor () {
    this._app = null
    this._client = null
    this._locks = new Map()
    this._streams = new Set()
    this._background = new Set()
    this._stackDefaults = { cpu: 10, memory: 256, container: 'flowfuse/node-red' }
    this.adoption = null // what init() found (counts), for logs and tests
    // The platform's lifecycle calls per instance id, numbered in the order they were made: a
    // start outdone by a later call of the platform's own ends with that call, not as a failure.
    this._callSeq = 0
    this._lastCall = new Map() // id → the number of the latest start, stop or remove
    this._starting = new Map() // id → starts in flight (details() says starting meanwhile)
  }

  // Numbers a lifecycle call of the platform for `id` (synchronously, before any await, so that
  // the order is the platform's).
  _noteCall (id) {
    const seq = ++this._callSeq
    this._lastCall.set(id, seq)
    return seq
  }

  get _log () { return this._app?.log || console }

  // ---- plumbing ----

  // A request Steward may be sent again (every lifecycle call is idempotent): retried while
  // Steward is unreachable or answers 503, with backoff, until `deadline`.
  async _call (method, path, opts = {}, { retry = true, deadline } = {}) {
    const until = deadline ?? Date.now() + this._cfg.requestTimeout * 4
    for (let attempt = 1; ; attempt++) {
      try {
        return await this._client.request(method, path, opts)
      } catch (err) {
        const delay = Math.min(5000, 200 * 2 ** (attempt - 1))
        if (!retry || !(err instanceof StewardError) || !err.retryable || Date.now() + delay > until) throw err
        this._log.warn(`[steward] ${method} ${path}: ${err.message}; again in ${delay} ms`)
        await sleep(delay)
      }
    }
  }

  async _read (path) {
    try {
      return (await this._call('GET', path)).body
    } catch (err) {
      if (err.statusCode === 404) return null
      throw err
    }
  }

  // One decision-and-write at a time per key (a project or agent): two starts of one project
  // must not both rotate its tokens.
  _serial (key, fn) {
    const prev = this._locks.get(key) || Promise.resolve()
    const run = prev.then(fn, fn)
    const tail = run.catch(() => {})
    this._locks.set(key, tail)
    tail.then(() => { if (this._locks.get(key) === tail) this._locks.delete(key) })
    return run
  }

  _track (promise) {
    this._background.add(promise)
    promise.finally(() => this._background.delete(promise)).catch(() => {})
    return promise
  }

  _instanceError (what, err) {
    const e = new Error(`${what}: ${err.message}`, { cause: err })
    e.statusCode = err.statusCode
    e.code = err.code
    return e
  }

  // ---- lifecycle ----

  async init (app, options) {
    this._app = app
    this._options = options || {}
    const driverOptions = app.config?.driver?.options || {}
    this._driverOptions = driverOptions
    this._cfg = readConfig(driverOptions)
    this._client = new StewardClient({
      url: this._cfg.url, token: this._cfg.token, tokenFile: this._cfg.tokenFile, ca: this._cfg.ca,
      timeoutMs: this._cfg.requestTimeout, log: this._log
    })
    const ignored = Object.keys(STEWARD_SIDE_OPTIONS).filter(k => driverOptions[k] !== undefined)
    if (ignored.length > 0) {
      this._log.warn(`[steward] driver options Steward takes from its own configuration, ignored here: ${
        ignored.map(k => `${k} (${STEWARD_SIDE_OPTIONS[k]})`).join(', ')}`)
    }
    try {
      return await this._initWithClient()
    } catch (err) {
      await this.shutdown()
      throw err
    }
  }

  async _initWithClient () {
    const stack = await this._call('GET', '/v1/stack', {}, { deadline: Date.now() + this._cfg.requestTimeout * 4 })
    this._stackDefaults = stack.body.defaults || this._stackDefaults
    this._watch = new Watch(this._client, {
      log: this._log, initialMs: this._cfg.watchBackoffInitial, maxMs: this._cfg.watchBackoffMax
    })
    this._waiters = new Waiters({
      watch: this._watch, log: this._log, pollInterval: this._cfg.pollInterval,
      read: id => this._read('/v1/projects/' + encodePath([id])).then(r => r ?? this._read('/v1/agents/' + encodePath([id])))
    })
    this._watch.start()
    await this._adopt()
    this._log.info(`[steward] driver ready: Steward at ${this._client.url}`)
    return { stack: { properties: stack.body.properties } }
  }

  async _listAll (path) {
    const items = []
    let token = ''
    do {
      const page = (await this._call('GET', path, { query: { limit: 1000, continue: token || undefined } })).body
      items.push(...page.items)
      token = page.continue
    } while (token)
    return items
  }

  // What the platform says and what Steward says, compared; nothing written, nothing rotated.
  async _adopt () {
    const Project = this._app.db?.models?.Project
    const platform = Project ? await Project.findAll() : []
    const steward = await this._listAll('/v1/projects')
    const byId = new Map(steward.map(r => [r.id, r]))
    const counts = { platform: platform.length, steward: steward.length, inStep: 0, converging: 0, failed: 0, missing: 0, stateDiffers: 0, stackDiffers: 0, unknownToPlatform: 0 }
    const names = { missing: [], stateDiffers: [], stackDiffers: [], failed: [], unknownToPlatform: [] }
    const toStart = []
    for (const p of platform) {
      const rec = byId.get(p.id)
      byId.delete(p.id)
      const wantRunning = p.state !== 'suspended'
      if (!rec) {
        if (wantRunning) { counts.missing++; names.missing.push(safeNameOf(p)); toStart.push(p) } else counts.inStep++
        continue
      }
      const phase = rec.status?.phase || 'Pending'
      if (phase === 'Failed') { counts.failed++; names.failed.push(rec.name) }
      if ((rec.desiredState === 'running') !== wantRunning) {
        counts.stateDiffers++
        names.stateDiffers.push(`${rec.name} (platform ${p.state}, Steward ${rec.desiredState})`)
        if (wantRunning) toStart.push(p)
      } else if (phase !== 'Failed') {
        if (!wantRunning || phase === 'Running') counts.inStep++; else counts.converging++
      }
      if (p.ProjectStack) {
        const want = stackOf(p, this._driverOptions)
        const have = rec.spec?.stack || {}
        if (['image', 'cpu', 'memory'].some(k => want[k] !== undefined && want[k] !== have[k])) {
          counts.stackDiffers++
          names.stackDiffers.push(rec.name)
        }
      }
    }
    for (const rec of byId.values()) { counts.unknownToPlatform++; names.unknownToPlatform.push(rec.name) }
    this.adoption = { counts, names }
    const list = a => a.length ? ` (${a.slice(0, 10).join(', ')}${a.length > 10 ? ', ...' : ''})` : ''
    this._log.info(`[steward] init: ${counts.platform} instances in the platform, ${counts.steward} projects in Steward: ` +
      `${counts.inStep} in step, ${counts.converging} converging, ${counts.failed} failed${list(names.failed)}, ` +
      `${counts.missing} running in the platform but unknown to Steward${list(names.missing)}, ` +
      `${counts.stateDiffers} whose desired state differs${list(names.stateDiffers)}, ` +
      `${counts.stackDiffers} whose stack differs${list(names.stackDiffers)}, ` +
      `${counts.unknownToPlatform} in Steward only${list(names.unknownToPlatform)}`)
    await this._adoptAgents()
    if (toStart.length > 0 && this._cfg.reconcileAtInit) {
      for (const p of toStart) {
        const full = Project.byId ? await Project.byId(p.id) : p
        this._log.info(`[steward] init: starting ${safeNameOf(full)} (reconcileAtInit)`)
        this._track(this.start(full).catch(err => this._log.error(`[steward] init: starting ${safeNameOf(full)}: ${err.message}`)))
      }
    } else if (toStart.length > 0) {
      this._log.warn(`[steward] init: ${toStart.length} instances the platform runs are not running in Steward; start them from the platform (or set steward.reconcileAtInit)`)
    }
  }

  // The platform's MQTT schema agents (BrokerCredentials whose state is running, as driver-k8s
  // checks them at init) and Steward's, compared the same way; with reconcileAtInit the missing
  // ones are started (their token refreshed: no pod can hold it).
  async _adoptAgents () {
    const models = this._app.db?.models || {}
    if (!models.BrokerCredentials) return
    const brokers = await models.BrokerCredentials.findAll({ include: [{ model: models.Team }] })
    const steward = await this._listAll('/v1/agents')
    const byName = new Map(steward.map(r => [r.name, r]))
    const counts = { platform: 0, steward: steward.length, inStep: 0, converging: 0, failed: 0, missing: 0, stateDiffers: 0, unknownToPlatform: 0 }
    const names = { missing: [], stateDiffers: [], failed: [], unknownToPlatform: [] }
    const toStart = []
    for (const broker of brokers) {
      if (!broker.Team) continue
      let name
      try {
        name = agentOf(broker).name
      } catch (err) {
        continue
      }
      counts.platform++
      const rec = byName.get(name)
      byName.delete(name)
      const wantRunning = broker.state === 'running'
      if (!rec) {
        if (wantRunning) { counts.missing++; names.missing.push(name); toStart.push(broker) } else counts.inStep++
        continue
      }
      const phase = rec.status?.phase || 'Pending'
      if (phase === 'Failed') { counts.failed++; names.failed.push(name) }
      if ((rec.desiredState === 'running') !== wantRunning) {
        counts.stateDiffers++
        names.stateDiffers.push(`${name} (platform ${broker.state}, Steward ${rec.desiredState})`)
        if (wantRunning) toStart.push(broker)
      } else if (phase !== 'Failed') {
        if (!wantRunning || phase === 'Running') counts.inStep++; else counts.converging++
      }
    }
    for (const rec of byName.values()) { counts.unknownToPlatform++; names.unknownToPlatform.push(rec.name) }
    this.adoption.agents = { counts, names }
    const list = a => a.length ? ` (${a.slice(0, 10).join(', ')}${a.length > 10 ? ', ...' : ''})` : ''
    this._log.info(`[steward] init: ${counts.platform} broker agents in the platform, ${counts.steward} agents in Steward: ` +
      `${counts.inStep} in step, ${counts.converging} converging, ${counts.failed} failed${list(names.failed)}, ` +
      `${counts.missing} running in the platform but unknown to Steward${list(names.missing)}, ` +
      `${counts.stateDiffers} whose desired state differs${list(names.stateDiffers)}, ` +
      `${counts.unknownToPlatform} in Steward only${list(names.unknownToPlatform)}`)
    if (toStart.length === 0) return
    if (!this._cfg.reconcileAtInit) {
      this._log.warn(`[steward] init: ${toStart.length} broker agents the platform runs are not running in Steward; start them from the platform (or set steward.reconcileAtInit)`)
      return
    }
    for (const broker of toStart) {
      const name = agentOf(broker).name
      this._log.info(`[steward] init: starting ${name} (reconcileAtInit)`)
      this._track(this.startBrokerAgent(broker).catch(err => this._log.error(`[steward] init: starting ${name}: ${err.message}`)))
    }
  }

  async start (project) {
    const seq = this._noteCall(project.id)
    this._starting.set(project.id, (this._starting.get(project.id) || 0) + 1)
    try {
      await this._start(project, seq)
    } finally {
      const left = this._starting.get(project.id) - 1
      if (left > 0) this._starting.set(project.id, left)
      else this._starting.delete(project.id)
    }
  }

  async _start (project, seq) {
    const name = safeNameOf(project)
    const what = `start ${name}`
    const rec = await this._serial(project.id, async () => {
      const spec = await projectSpec(this._app, project, this._driverOptions)
      let current = await this._read(projectPath(project))
      if (current && current.name !== name) {
        // FlowFuse renames by stop, rename, start: Steward renames a Suspended project.
        current = (await this._call('POST', projectPath(project, 'rename'), { body: { name } })).body
      }
      if (!mayHoldCredentials(current) || !current.spec?.credentials) {
        const tokens = await project.refreshAuthTokens()
        spec.credentials = credentialsOf(tokens, await project.getSetting('credentialSecret'))
      }
      // The id on every put: it creates the project under the platform's id, and it is what lets
      // a put move an instance to another team (FlowFuse's change of team); Steward refuses a
      // team change by name alone.
      const body = { spec, start: true, id: project.id }
      const put = (await this._call('PUT', '/v1/projects/' + encodePath([name]), { body })).body
      // A Failed project the same intent again would leave Failed: a restart is a new intent,
      // and the engine tries again.
      if (current && put.generation === current.generation && put.status?.phase === 'Failed') {
        return (await this._call('POST', projectPath(project, 'restart'))).body
      }
      return put
    })
    // The platform's url getter drops a trailing '/': compared and saved without one.
    const keepUrl = async r => {
      const url = (r.status?.url || '').replace(/\/+$/, '')
      if (url && String(project.url || '').replace(/\/+$/, '') !== url) {
        project.url = url
        await project.save()
      }
    }
    await keepUrl(rec)
    try {
      const done = await this._waiters.wait(rec, {
        generation: rec.generation, want: 'Running', timeoutMs: this._cfg.startTimeout, what,
        onRecord: r => { keepUrl(r).catch(err => this._log.warn(`[steward] ${what}: saving the URL: ${err.message}`)) }
      })
      await keepUrl(done)
      this._log.info(`[steward] ${what}: Running at generation ${done.status.observedGeneration}`)
    } catch (err) {
      // Outdone by a later stop, remove or start the platform itself made for this instance
      // (the user suspended or deleted it while it started): that call decides, and it is no
      // failure to record (the wrapper would log an error, audit project.start-failed and mark
      // the instance suspended). A newer intent from anyone else still rejects.
      const outdone = err instanceof WaitError && (err.reason === 'Superseded' || err.reason === 'Deleted')
      if (outdone && (this._lastCall.get(project.id) || 0) > seq) {
        this._log.info(`[steward] ${what}: ended by a later call of the platform for this instance (${err.reason === 'Deleted' ? 'deleted' : 'a newer intent'})`)
        return
      }
      // The wrapper records startFailed and marks the instance suspended: Steward is asked to
      // match, unless a later call already decided otherwise.
      if (err instanceof WaitError && (err.reason !== 'Superseded' && err.reason !== 'Closed' && err.reason !== 'Deleted')) {
        this._call('POST', projectPath(project, 'suspend')).catch(e => this._log.warn(`[steward] ${what}: suspending after the failure: ${e.message}`))
      }
      throw err
    }
  }

  async stop (project) {
    this._noteCall(project.id)
    const name = safeNameOf(project)
    const what = `stop ${name}`
    let rec
    try {
      rec = (await this._serial(project.id, () => this._call('POST', projectPath(project, 'suspend')))).body
    } catch (err) {
      if (err.statusCode === 404) return // nothing of it runs
      throw err
    }
    await this._waiters.wait(rec, { generation: rec.generation, want: 'Suspended', timeoutMs: this._cfg.stopTimeout, what })
    this._log.info(`[steward] ${what}: Suspended`)
  }

  async remove (project) {
    this._noteCall(project.id)
    const name = safeNameOf(project)
    let rec
    try {
      rec = (await this._serial(project.id, () => this._call('DELETE', projectPath(project)))).body
    } catch (err) {
      if (err.statusCode === 404) return
      throw err
    }
    await this._waiters.wait(rec, { generation: rec.generation, want: 'deleted', timeoutMs: this._cfg.removeTimeout, what: `remove ${name}` })
    this._log.info(`[steward] remove ${name}: purged`)
  }

  async details (project) {
    let rec
    try {
      const answer = (await this._call('GET', projectPath(project, 'instance'), {}, { retry: false })).body
      rec = answer.project
      if (runningNow(rec)) return answer.instance
    } catch (err) {
      if (!(err instanceof StewardError)) throw err
      if (err.statusCode === 404) return this._noProject(project)
      if (err.reason !== 'ProjectNotRunning' && err.statusCode !== 502 && err.statusCode !== 503) {
        return { id: project.id, state: 'unknown', error: err.message, meta: {} }
      }
      try {
        rec = await this._read(projectPath(project))
      } catch (e) {
        return { id: project.id, state: 'unknown', error: e.message, meta: {} }
      }
      if (!rec) return this._noProject(project)
    }
    const s = rec.status || {}
    const out = {
      id: project.id,
      state: platformState(s.phase, rec),
      meta: { phase: s.phase || 'Pending', reason: s.reason, message: s.message, observedGeneration: s.observedGeneration }
    }
    if (s.phase === 'Failed' || s.phase === 'Degraded' || s.phase === 'Running') out.error = describe(rec)
    return out
  }

  // details() of an instance Steward does not know: `starting` while a start() for it is in
  // flight (the platform asks right after start() returns, before its PUT reached Steward),
  // else unknown.
  _noProject (project) {
    if (this._starting.has(project.id)) {
      return { id: project.id, state: 'starting', meta: { phase: 'Pending', reason: 'StartInFlight', message: 'the start has not reached Steward yet' } }
    }
    return { id: project.id, state: 'unknown', error: `Steward has no project ${project.id}`, meta: {} }
  }

  async settings (project) {
    return { projectID: project.id, port: 1880, rootDir: '/', userDir: 'data' }
  }

  // ---- the launcher: flows, logs, logout ----

  async _instance (method, project, rest, opts = {}, what) {
    try {
      return (await this._call(method, projectPath(project, ...rest), opts, { retry: method === 'GET' })).body
    } catch (err) {
      throw this._instanceError(what, err)
    }
  }

  async startFlows (project) {
    await this._instance('POST', project, ['flows', 'start'], {}, `startFlows ${safeNameOf(project)}`)
    return { status: 'okay' }
  }

  async stopFlows (project) {
    await this._instance('POST', project, ['flows', 'stop'], {}, `stopFlows ${safeNameOf(project)}`)
    return { status: 'okay' }
  }

  // One pod at a time (Steward waits for each launcher to run again). With several replicas the
  // answer comes at once, as driver-k8s's does (the platform's request would time out), and the
  // restart goes on; `done` (not enumerable) is its outcome: Steward's answer.
  async restartFlows (project) {
    const ha = await project.getSetting('ha')
    const replicas = Math.max(1, parseInt(ha?.replicas, 10) || 1)
    const what = `restartFlows ${safeNameOf(project)}`
    const timeoutMs = this._cfg.requestTimeout + this._cfg.restartPerPodTimeout * replicas
    const run = this._instance('POST', project, ['flows', 'restart'], { timeoutMs }, what)
    const answer = { state: 'okay' }
    if (replicas > 1) {
      const done = this._track(run.then(r => {
        this._log.info(`[steward] ${what}: ${r.pods.map(p => `${p.pod} ${p.outcome}`).join(', ')}`)
        return r
      }, err => {
        this._log.error(`[steward] ${err.message}`)
        throw err
      }))
      done.catch(() => {})
      Object.defineProperty(answer, 'done', { value: done, enumerable: false })
      return answer
    }
    const r = await run
    Object.defineProperty(answer, 'done', { value: Promise.resolve(r), enumerable: false })
    return answer
  }

  async logs (project) {
    const body = await this._instance('GET', project, ['logs'], {}, `logs ${safeNameOf(project)}`)
    return body.items
  }

  async revokeUserToken (project, token) {
    try {
      await this._call('POST', projectPath(project, 'logout'), { body: { token } }, { retry: false })
    } catch (err) {
      if (err.reason === 'ProjectNotRunning' || err.statusCode === 404) return // no editor session to end
      throw this._instanceError(`revokeUserToken ${safeNameOf(project)}`, err)
    }
  }

  getDefaultStackProperties () {
    return { ...this._stackDefaults, ...this._driverOptions?.default_stack }
  }

  // ---- files (the launcher's storage directory) ----

  async listFiles (instance, filePath) {
    const r = await this._fileCall('GET', instance, filePath, {}, 'listFiles')
    return { meta: r.meta, files: r.files, count: r.count }
  }

  async updateFile (instance, filePath, update) {
    return this._fileCall('PUT', instance, filePath, { body: { newPath: update?.path } }, 'updateFile')
  }

  async deleteFile (instance, filePath) {
    return this._fileCall('DELETE', instance, filePath, {}, 'deleteFile')
  }

  async createDirectory (instance, filePath, directoryName) {
    return this._fileCall('POST', instance, filePath, { body: { directory: directoryName } }, 'createDirectory')
  }

  async uploadFile (instance, filePath, fileBuffer) {
    const body = Buffer.isBuffer(fileBuffer) ? fileBuffer : Buffer.from(fileBuffer)
    return this._fileCall('POST', instance, filePath, { body, contentType: 'application/octet-stream', timeoutMs: this._cfg.requestTimeout * 4 }, 'uploadFile')
  }

  async _fileCall (method, instance, filePath, opts, what) {
    try {
      return (await this._call(method, filesPath(instance, filePath), opts, { retry: method === 'GET' })).body
    } catch (err) {
      throw this._instanceError(`${what} ${safeNameOf(instance)} ${filePath}`, err)
    }
  }

  // ---- MQTT schema agents ----

  // Resolves once Steward has the intent (durable: it will be started); a later failure is
  // logged. The broker's token is refreshed only when no pod of the agent can hold the current one.
  async startBrokerAgent (broker) {
    const { name, spec } = agentOf(broker)
    const path = '/v1/agents/' + encodePath([name])
    const rec = await this._serial(name, async () => {
      const current = await this._read(path)
      if (!mayHoldCredentials(current) || !current.spec?.credentials) {
        const { token } = await broker.refreshAuthTokens()
        spec.credentials = { token }
      }
      return (await this._call('PUT', path, { body: { spec, start: true } })).body
    })
    this._track(this._waiters.wait(rec, { generation: rec.generation, want: 'Running', timeoutMs: this._cfg.startTimeout, what: `startBrokerAgent ${name}` })
      .catch(err => { if (err.reason !== 'Closed' && err.reason !== 'Superseded') this._log.error(`[steward] ${err.message}`) }))
  }

  // Resolves once the agent's objects and record are gone (the platform destroys the broker next).
  async stopBrokerAgent (broker) {
    const { name } = agentOf(broker)
    let rec
    try {
      rec = (await this._serial(name, () => this._call('DELETE', '/v1/agents/' + encodePath([name])))).body
    } catch (err) {
      if (err.statusCode === 404) return
      throw err
    }
    await this._waiters.wait(rec, { generation: rec.generation, want: 'deleted', timeoutMs: this._cfg.removeTimeout, what: `stopBrokerAgent ${name}` })
  }

  async getBrokerAgentState (broker) {
    try {
      const { name } = agentOf(broker)
      const r = await this._call('GET', '/v1/agents/' + encodePath([name, 'status']), {}, { retry: false })
      return r.body.status
    } catch (err) {
      return { error: 'error_getting_status', message: err.toString() }
    }
  }

  async sendBrokerAgentCommand (broker, command) {
    if (!['start', 'restart', 'stop'].includes(command)) return
    const { name } = agentOf(broker)
    try {
      await this._call('POST', '/v1/agents/' + encodePath([name, 'commands', command]), {}, { retry: false })
    } catch (err) {
      this._log.warn(`[steward] sendBrokerAgentCommand ${name} ${command}: ${err.message}`)
    }
  }

  // ---- resources ----

  async resources (project) {
    const r = await this._instance('GET', project, ['resources'], {}, `resources ${safeNameOf(project)}`)
    return { meta: r.meta, resources: r.resources, count: r.count }
  }

  // socket: the platform's WebSocket to the browser (send, close, on('close')). Every sample of
  // every replica is sent as the launcher's own WebSocket sends it (a JSON text); the socket is
  // closed when Steward ends the stream (a pod went, the server stops). Answers the stream's
  // handle ({close(), ended}).
  async resourcesStream (project, socket) {
    const what = `resourcesStream ${safeNameOf(project)}`
    let socketClosed = false
    let handle = null
    socket.on('close', () => { socketClosed = true; if (handle) handle.close() })
    try {
      handle = await this._client.stream(projectPath(project, 'resources', 'stream'), {
        onEvent: ev => {
          if (ev.event === 'sample') socket.send(ev.data)
          else if (ev.event === 'end') this._log.info(`[steward] ${what}: ${ev.data}`)
        }
      })
    } catch (err) {
      throw this._instanceError(what, err)
    }
    if (socketClosed) handle.close()
    this._streams.add(handle)
    handle.ended.then(err => {
      this._streams.delete(handle)
      if (err && !socketClosed) this._log.warn(`[steward] ${what}: ${err.message}`)
      if (!socketClosed) {
        try { socket.close() } catch (e) {}
      }
    })
    return handle
  }

  // ---- MCP (the launcher's mcp:* commands) ----

  async getMCPFeatures (project, endpoints) {
    const r = await this._mcp(project, ['mcp', 'features'], { endpoints }, 'Failed to get MCP features')
    return r.features
  }

  async callMCPTool (project, endpoint, name, input) {
    const body = { endpoint, name }
    if (input !== undefined && input !== null) body.input = input
    return (await this._mcp(project, ['mcp', 'tools', 'call'], body, 'Failed to call MCP tool')).result
  }

  async readMCPResource (project, endpoint, uri) {
    return (await this._mcp(project, ['mcp', 'resources', 'read'], { endpoint, uri }, 'Failed to read MCP resource')).result
  }

  async _mcp (project, rest, body, what) {
    try {
      return (await this._call('POST', projectPath(project, ...rest), { body }, { retry: false })).body
    } catch (err) {
      const e = new Error(`${what}: ${err.message}`, { cause: err })
      e.statusCode = err.statusCode
      throw e
    }
  }

  // Closes the watch, every resources stream and every request in flight; pending waits reject.
  async shutdown () {
    if (this._watch) this._watch.stop()
    if (this._waiters) this._waiters.close()
    for (const h of this._streams) h.close()
    this._streams.clear()
    if (this._client) this._client.close()
    await Promise.allSettled([...this._background])
  }
}

function createDriver () {
  return new StewardDriver()
}

module.exports = { createDriver, StewardDriver, mayHoldCredentials, platformState }
