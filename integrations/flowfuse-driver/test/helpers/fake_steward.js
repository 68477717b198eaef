'use strict'
// A stand-in of Steward's API for the tests that need a server to misbehave on purpose (never
// answer, cut the watch stream, count connections, restart). `routes` maps "METHOD /path" to a
// handler (req, res, body); /v1/watch streams are kept in `streams` for the test to write to and
// cut.
//
// /v1/watch behaves as Steward's (docs/api.md) over the records the test keeps with put() and
// remove(): every change gets the next stream-wide position and the id `<boot>.<position>`, the
// last `window` changes are kept, and a stream opened with Last-Event-ID (or since=) resumes
// after it (the changes missed, then `resumed`) or is told `reset` and gets the snapshot (then
// `sync`, whose id is the current position). restart() is a new Steward process on the same
// store: a new boot, an empty window, every stream cut. Filters: `kind` only (project, agent,
// all). holdWatches() keeps new watch requests unanswered until releaseWatches(), so that a test
// can commit while a client is known to be reconnecting. A test that sets `onWatch(res, n)`
// writes stream number n itself instead.

const http = require('node:http')
const crypto = require('node:crypto')

class FakeSteward {
  static async start (routes = {}, { window = 1000 } = {}) {
    const f = new FakeSteward()
    f.routes = routes
    f.requests = []
    f.streams = []
    f.sockets = new Set()
    f.watchConnects = []
    f.records = new Map() // id -> record (with its version)
    f.window = window
    f._boot()
    f.server = http.createServer((req, res) => f._handle(req, res))
    f.server.on('connection', s => { f.sockets.add(s); s.on('close', () => f.sockets.delete(s)) })
    await new Promise(resolve => f.server.listen(0, '127.0.0.1', resolve))
    f.url = `http://127.0.0.1:${f.server.address().port}`
    return f
  }

  _boot () {
    this.boot = crypto.randomBytes(8).toString('hex')
    this.position = 0
    this.ring = [] // {position, kind, text}, oldest first
  }

  _handle (req, res) {
    const chunks = []
    req.on('data', c => chunks.push(c))
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      const body = text && /json/.test(req.headers['content-type'] || '') ? JSON.parse(text) : text
      const path = req.url.split('?')[0]
      this.requests.push({ method: req.method, url: req.url, path, body, headers: req.headers })
      if (path === '/v1/watch' && !this.routes['GET /v1/watch']) {
        this.watchConnects.push({ at: Date.now(), headers: req.headers })
        if (this._held) { this._held.push([req, res]); return }
        this._openWatch(req, res)
        return
      }
      const h = this.routes[`${req.method} ${path}`] || this.routes[`${req.method} *`]
      if (!h) {
        res.writeHead(404, { 'Content-Type': 'application/json' })
        res.end(JSON.stringify({ error: { code: 404, reason: 'NotFound', message: `no route ${req.method} ${path}` } }))
        return
      }
      h(req, res, body)
    })
  }

  holdWatches () { this._held = this._held || [] }
  releaseWatches () {
    const held = this._held || []
    this._held = null
    for (const [req, res] of held) this._openWatch(req, res)
  }

  _openWatch (req, res) {
    if (res.destroyed) return
    res.writeHead(200, { 'Content-Type': 'text/event-stream' })
    res.flushHeaders()
    this.streams.push(res)
    res.on('close', () => { this.streams = this.streams.filter(s => s !== res) })
    if (this.onWatch) this.onWatch(res, this.watchConnects.length)
    else this._watch(req, res)
  }

  // Steward's start of a watch stream: resume, or reset and snapshot, or (no id) snapshot.
  _watch (req, res) {
    const query = new URL(req.url, 'http://x').searchParams
    const kind = query.get('kind') || 'project'
    res.kind = kind
    const from = req.headers['last-event-id'] || query.get('since') || ''
    const verdict = from ? this._judge(from) : null
    if (verdict === 'resume') {
      const after = Number(from.split('.')[1])
      const replay = this.ring.filter(e => e.position > after && this._matches(res, e))
      for (const e of replay) res.write(e.text)
      FakeSteward.event(res, 'resumed', { from, replayed: replay.length }, this._id(this.position))
      return
    }
    if (verdict) FakeSteward.event(res, 'reset', { reason: verdict, message: `cannot resume after ${from}` })
    const snapshot = [...this.records.values()].filter(r => kind === 'all' || r.kind === kind)
    for (const r of snapshot) FakeSteward.event(res, r.kind, r)
    FakeSteward.event(res, 'sync', { projects: snapshot.length }, this._id(this.position))
  }

  _judge (id) {
    const m = /^([0-9a-z]{1,32})\.(0|[1-9][0-9]{0,18})$/.exec(id)
    if (!m) return 'Malformed'
    if (m[1] !== this.boot) return 'UnknownFeed'
    const pos = Number(m[2])
    const oldest = this.ring.length ? this.ring[0].position : this.position + 1
    if (pos > this.position) return 'Ahead'
    if (pos + 1 < oldest) return 'Expired'
    return 'resume'
  }

  _matches (res, e) { return res.kind === 'all' || res.kind === e.kind }
  _id (position) { return `${this.boot}.${position}` }

  // A committed change: numbered, kept in the window, written to every live stream it matches.
  _change (kind, event, data) {
    this.position++
    const e = { position: this.position, kind, text: FakeSteward.text(event, data, this._id(this.position)) }
    this.ring.push(e)
    if (this.ring.length > this.window) this.ring.shift()
    for (const s of this.streams) if (!this.onWatch && this._matches(s, e)) s.write(e.text)
  }

  // Creates or updates a record ({id, name, kind?, ...}): its version goes up by one.
  put (rec) {
    const known = this.records.get(rec.id)
    const r = { kind: 'project', ...known, ...rec, version: (known?.version || 0) + 1 }
    this.records.set(r.id, r)
    this._change(r.kind, r.kind, r)
    return r
  }

  // Purges a record: a `deleted` event with its last version + 1.
  remove (id) {
    const known = this.records.get(id)
    this.records.delete(id)
    this._change(known.kind, 'deleted', { id, name: known.name, version: known.version + 1 })
  }

  // A new Steward process on the same store: every stream is cut, the window is gone.
  restart () {
    this.cutStreams()
    this._boot()
  }

  static json (res, status, body) {
    res.writeHead(status, { 'Content-Type': 'application/json' })
    res.end(JSON.stringify(body))
  }

  static text (event, data, id) {
    return `event: ${event}\n${id !== undefined ? `id: ${id}\n` : ''}data: ${JSON.stringify(data)}\n\n`
  }

  static event (res, event, data, id) {
    res.write(FakeSteward.text(event, data, id))
  }

  // Ends every watch stream open now.
  cutStreams () {
    for (const s of this.streams.splice(0)) s.destroy()
  }

  async stop () {
    this.cutStreams()
    for (const s of this.sockets) s.destroy()
    await new Promise(resolve => this.server.close(resolve))
  }
}

module.exports = { FakeSteward }
