'use strict'
// A stand-in of the FlowFuse platform as a container driver sees it: the `app` the wrapper
// passes to init() (log, config, db.models, caches, license) and Project objects with the
// methods the driver calls (refreshAuthTokens, save, getSetting, updateSetting). Tokens are
// tracked as the platform's database would: a refresh revokes the previous set at once.
// `Wrapper` models forge/containers/wrapper.js's order of events around the driver's calls
// (start not awaited, the state saved as suspended before stop, a rejected start recorded as
// startFailed and the instance marked suspended).

const crypto = require('node:crypto')

const token = prefix => `${prefix}_${crypto.randomBytes(12).toString('hex')}`

class Log {
  constructor ({ echo = !!process.env.DRIVER_TEST_LOG } = {}) {
    this.lines = []
    this._echo = echo
    for (const level of ['trace', 'debug', 'info', 'warn', 'error']) {
      this[level] = msg => {
        this.lines.push({ level, msg: String(msg) })
        if (this._echo || level === 'error') process.stderr.write(`[platform ${level}] ${msg}\n`)
      }
    }
  }

  grep (re) { return this.lines.filter(l => re.test(l.msg)) }
}

class Project {
  constructor (platform, { id, name, teamId, stack = {}, state = 'running', settings = {} }) {
    this._platform = platform
    this.id = id || crypto.randomUUID()
    this.name = name
    this.TeamId = teamId ?? 7
    this.Team = { hashid: platform.app.db.models.Team.encodeHashid(this.TeamId) }
    this.ProjectStack = { hashid: 'stack1', properties: { ...stack } }
    this.state = state
    this.url = ''
    this.saves = 0
    this.rotations = 0
    this._settings = new Map(Object.entries(settings))
    this.tokens = null // the set the platform accepts now
    this.revoked = new Set() // every project token the platform has revoked
  }

  get safeName () { return this.name.toLowerCase() }

  async refreshAuthTokens () {
    this.rotations++
    this._platform.rotations++
    if (this.tokens) this.revoked.add(this.tokens.token)
    this.tokens = {
      token: token('ffpt'),
      clientID: token('ffp'),
      clientSecret: token('ffps'),
      broker: { url: 'mqtt://broker.example.com:1883', username: `instance:${this.id}`, password: token('ffbp') }
    }
    return { ...this.tokens }
  }

  async save () { this.saves++ }
  async getSetting (key) { return this._settings.get(key) }
  async updateSetting (key, value) { this._settings.set(key, value) }
  setStack (props) { this.ProjectStack = { hashid: token('stack'), properties: { ...props } } }
}

class Broker {
  constructor (platform, { hashid, teamHashid }) {
    this.hashid = hashid
    this.Team = { hashid: teamHashid }
    this.state = 'running'
    this.rotations = 0
    this.token = null
    this._platform = platform
  }

  async refreshAuthTokens () {
    this.rotations++
    this._platform.rotations++
    this.token = token('ffbt')
    return { token: this.token }
  }
}

// The platform's team broker agent: the driver tells it from a third-party broker by its
// constructor's name, as driver-k8s does.
class TeamBrokerAgent extends Broker {}

class Caches {
  constructor () { this._caches = new Map() }
  getCache (name) {
    if (!this._caches.has(name)) {
      const m = new Map()
      this._caches.set(name, {
        get: async k => m.get(k),
        set: async (k, v) => { m.set(k, v) },
        del: async k => { m.delete(k) },
        keys: async () => [...m.keys()]
      })
    }
    return this._caches.get(name)
  }
}

class Platform {
  constructor ({ steward, driverOptions = {}, domain = 'localhost' } = {}) {
    this.rotations = 0
    this.projects = new Map()
    this.brokers = new Map() // hashid -> Broker: the platform's BrokerCredentials
    this.audit = []
    this.log = new Log()
    const self = this
    this.app = {
      log: this.log,
      config: {
        domain,
        base_url: 'http://forge.localhost',
        api_url: 'http://forge.localhost',
        driver: { type: 'kubernetes', options: { ...driverOptions, steward } }
      },
      license: { active: () => false, status: () => ({ expired: false }) },
      caches: new Caches(),
      db: {
        models: {
          Team: { encodeHashid: id => `Tm${id}`, decodeHashid: h => Number(String(h).slice(2)) },
          BrokerCredentials: {
            // As the platform's model with include: [Team]: every broker, the Team loaded.
            findAll: async () => [...self.brokers.values()]
          },
          Project: {
            findAll: async () => [...self.projects.values()],
            byId: async id => self.projects.get(id) || null
          }
        }
      }
    }
  }

  addProject (opts) {
    const p = new Project(this, opts)
    this.projects.set(p.id, p)
    return p
  }

  // An instance object the platform's database does not list (init() does not see it).
  transient (opts) { return new Project(this, opts) }

  // A broker the platform's database lists (init() sees it); drop it from `brokers` when the
  // platform deletes it.
  broker (opts) {
    const b = new Broker(this, opts)
    this.brokers.set(b.hashid, b)
    return b
  }

  teamBrokerAgent (opts) { return new TeamBrokerAgent(this, opts) }
}

// The wrapper's side of each call, as forge/containers/wrapper.js orders it.
class Wrapper {
  constructor (platform, driver) {
    this.platform = platform
    this.driver = driver
  }

  async init () {
    this.properties = await this.driver.init(this.platform.app, { domain: this.platform.app.config.domain })
    return this.properties
  }

  // Answers at once with the driver's promise; a rejection is recorded as the platform does.
  async start (project) {
    const started = this.driver.start(project).catch(async err => {
      this.platform.log.error(`Failed to start project ${project.id}: ${err.toString()}`)
      this.platform.audit.push({ event: 'startFailed', project: project.id, error: err.toString() })
      project.state = 'suspended'
      await project.save()
    })
    return { started }
  }

  async stop (project) {
    if (project.state === 'suspended') return
    project.state = 'suspended'
    await project.save()
    await this.driver.stop(project)
  }

  async remove (project) {
    await this.driver.remove(project)
    if (project.state !== 'suspended') {
      project.state = 'deleting'
      await project.save()
    }
  }

  // POST /api/v1/projects/:id/actions/start on a suspended instance.
  async startAction (project) {
    project.state = 'running'
    await project.save()
    return this.start(project)
  }

  // A stack change (PUT /api/v1/projects/:id with a new stack): stop, the new stack, start at once.
  async changeStack (project, props) {
    await this.stop(project)
    project.setStack(props)
    project.state = 'running'
    await project.save()
    return this.start(project)
  }
}

module.exports = { Platform, Project, Broker, TeamBrokerAgent, Wrapper, Log }
