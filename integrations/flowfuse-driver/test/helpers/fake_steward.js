'use strict'
// A stand-in of Steward's API for the tests that need a server to misbehave on purpose (never
// answer, cut the watch stream, count connections). `routes` maps "METHOD /path" to a handler
// (req, res, body); /v1/watch streams are kept in `streams` for the test to write to and cut.

const http = require('node:http')

class FakeSteward {
  static async start (routes = {}) {
    const f = new FakeSteward()
    f.routes = routes
    f.requests = []
    f.streams = []
    f.sockets = new Set()
    f.watchConnects = []
    f.server = http.createServer((req, res) => f._handle(req, res))
    f.server.on('connection', s => { f.sockets.add(s); s.on('close', () => f.sockets.delete(s)) })
    await new Promise(resolve => f.server.listen(0, '127.0.0.1', resolve))
    f.url = `http://127.0.0.1:${f.server.address().port}`
    return f
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
        res.writeHead(200, { 'Content-Type': 'text/event-stream' })
        res.flushHeaders()
        this.streams.push(res)
        if (this.onWatch) this.onWatch(res, this.watchConnects.length)
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

  static json (res, status, body) {
    res.writeHead(status, { 'Content-Type': 'application/json' })
    res.end(JSON.stringify(body))
  }

  static event (res, event, data, id) {
    res.write(`event: ${event}\n${id !== undefined ? `id: ${id}\n` : ''}data: ${JSON.stringify(data)}\n\n`)
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
