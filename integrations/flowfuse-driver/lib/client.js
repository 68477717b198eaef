'use strict'
// The client of Steward's REST API (docs/api.md) on Node's own http/https modules: a keep-alive
// agent, a deadline on every request, errors that carry Steward's reason, and server-sent-event
// streams. fetch is not used because Node's fetch cannot be given a CA file without undici's
// Agent, which Node does not export.

const http = require('node:http')
const https = require('node:https')
const fs = require('node:fs')
const { SseParser } = require('./sse')

// An answer of Steward's other than 2xx, or a request that got no answer.
// statusCode: the HTTP status (0 when there was no answer); reason: Steward's error reason
// (`NotFound`, `Conflict`, `ProjectNotRunning`, ...) or `Timeout` / `ConnectionError` / `Closed`.
class StewardError extends Error {
  constructor (message, { statusCode = 0, reason = '', field, body, cause } = {}) {
    super(message, cause ? { cause } : undefined)
    this.name = 'StewardError'
    this.statusCode = statusCode
    this.code = reason || (statusCode ? `http_${statusCode}` : 'unavailable')
    this.reason = reason
    if (field) this.field = field
    if (body !== undefined) this.body = body
  }

  // Worth sending again (the request is idempotent): no answer, or Steward said 503.
  get retryable () {
    return this.statusCode === 0 ? this.reason !== 'Closed' : this.statusCode === 503
  }
}

function encodePath (segments) {
  return segments.map(s => encodeURIComponent(String(s))).join('/')
}

class StewardClient {
  // options: url (http(s)://host:port), token or tokenFile, ca (PEM text), timeoutMs (default
  // for every request), log (the platform's logger).
  constructor ({ url, token, tokenFile, ca, timeoutMs = 30000, log }) {
    const u = new URL(url)
    if (u.protocol !== 'http:' && u.protocol !== 'https:') {
      throw new Error(`steward.url must be http:// or https:// (got ${url})`)
    }
    this._base = u
    this._basePath = u.pathname.replace(/\/+$/, '')
    this._mod = u.protocol === 'https:' ? https : http
    this._agent = new this._mod.Agent({ keepAlive: true, maxSockets: 64, ca })
    this._ca = ca
    this._token = token
    this._tokenFile = tokenFile
    this._timeoutMs = timeoutMs
    this._log = log
    this._closed = false
    this._inflight = new Set()
    if (!this._token && this._tokenFile) this._token = this._readTokenFile()
    if (!this._token) throw new Error('no Steward API token: set steward.token or steward.tokenFile')
  }

  _readTokenFile () {
    return fs.readFileSync(this._tokenFile, 'utf8').trim()
  }

  get url () { return this._base.href.replace(/\/+$/, '') }

  // One request. opts: body (JSON-serialised unless a Buffer), contentType, query (object),
  // timeoutMs, noAuth. Resolves {status, headers, body}: body is parsed JSON when the answer
  // is JSON, else the text. Rejects with StewardError on a non-2xx answer or no answer.
  async request (method, path, opts = {}) {
    try {
      return await this._request(method, path, opts)
    } catch (err) {
      // The token file may have been replaced (a rotated API token): read it once more.
      if (err.statusCode === 401 && this._tokenFile && !opts.noAuth) {
        const fresh = this._readTokenFile()
        if (fresh && fresh !== this._token) {
          this._token = fresh
          return this._request(method, path, opts)
        }
      }
      throw err
    }
  }

  _options (method, path, query, headers) {
    let p = this._basePath + path
    if (query) {
      const q = new URLSearchParams()
      for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) q.set(k, String(v))
      const s = q.toString()
      if (s) p += '?' + s
    }
    return {
      method,
      protocol: this._base.protocol,
      hostname: this._base.hostname.replace(/^\[|\]$/g, ''),
      port: this._base.port || (this._base.protocol === 'https:' ? 443 : 80),
      path: p,
      agent: this._agent,
      headers
    }
  }

  _request (method, path, { body, contentType, query, timeoutMs, noAuth } = {}) {
    if (this._closed) return Promise.reject(new StewardError('the driver is shut down', { reason: 'Closed' }))
    const headers = { Accept: 'application/json' }
    if (!noAuth) headers.Authorization = `Bearer ${this._token}`
    let payload
    if (body !== undefined) {
      if (Buffer.isBuffer(body)) {
        payload = body
        headers['Content-Type'] = contentType || 'application/octet-stream'
      } else {
        payload = Buffer.from(JSON.stringify(body))
        headers['Content-Type'] = 'application/json'
      }
      headers['Content-Length'] = payload.length
    } else if (method !== 'GET' && method !== 'HEAD' && method !== 'DELETE') {
      headers['Content-Length'] = 0
    }
    const limit = timeoutMs || this._timeoutMs
    const what = `${method} ${path}`
    return new Promise((resolve, reject) => {
      const req = this._mod.request(this._options(method, path, query, headers))
      this._inflight.add(req)
      let settled = false
      const finish = (err, value) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        this._inflight.delete(req)
        if (err) reject(err); else resolve(value)
      }
      const timer = setTimeout(() => {
        finish(new StewardError(`${what}: no answer from Steward within ${limit} ms`, { reason: 'Timeout' }))
        req.destroy()
      }, limit)
      req.on('error', err => finish(new StewardError(
        this._closed ? 'the driver is shut down' : `${what}: ${err.message}`,
        { reason: this._closed ? 'Closed' : 'ConnectionError', cause: err })))
      req.on('response', res => {
        const chunks = []
        res.on('data', c => chunks.push(c))
        res.on('error', err => finish(new StewardError(`${what}: ${err.message}`, { reason: 'ConnectionError', cause: err })))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          let parsed = text
          if (/json/.test(res.headers['content-type'] || '') && text.length > 0) {
            try { parsed = JSON.parse(text) } catch (e) { parsed = text }
          }
          if (res.statusCode >= 200 && res.statusCode < 300) {
            finish(null, { status: res.statusCode, headers: res.headers, body: parsed })
            return
          }
          const e = parsed && typeof parsed === 'object' ? parsed.error || {} : {}
          const message = e.message || (typeof parsed === 'string' && parsed) || `HTTP ${res.statusCode}`
          finish(new StewardError(`${what}: ${res.statusCode} ${e.reason || ''} ${message}`.replace(/ +/g, ' '), {
            statusCode: res.statusCode, reason: e.reason || '', field: e.field, body: parsed
          }))
        })
      })
      if (payload) req.end(payload); else req.end()
    })
  }

  // A server-sent-events stream. onEvent({event, id, data}) for each event (data is the raw
  // text). Resolves, once the answer's head is in, to a handle: {close(), ended} where `ended`
  // is a promise that resolves (with an Error, or null for a clean end) when the stream stops.
  // A non-2xx answer rejects as request() does. idleMs: the stream is ended as an error when
  // nothing at all (not even a keep-alive comment) arrives for this long.
  stream (path, { query, onEvent, idleMs = 45000, headers: extra = {} } = {}) {
    if (this._closed) return Promise.reject(new StewardError('the driver is shut down', { reason: 'Closed' }))
    const headers = { Accept: 'text/event-stream', Authorization: `Bearer ${this._token}`, ...extra }
    const what = `GET ${path}`
    return new Promise((resolve, reject) => {
      const req = this._mod.request(this._options('GET', path, query, headers))
      this._inflight.add(req)
      let endResolve
      const ended = new Promise(resolve => { endResolve = resolve })
      let idle
      let done = false
      const stop = (err) => {
        if (done) return
        done = true
        clearTimeout(idle)
        this._inflight.delete(req)
        req.destroy()
        endResolve(err)
      }
      const touch = () => {
        clearTimeout(idle)
        idle = setTimeout(() => stop(new StewardError(`${what}: nothing received for ${idleMs} ms`, { reason: 'Timeout' })), idleMs)
      }
      touch()
      req.on('error', err => {
        const e = new StewardError(`${what}: ${err.message}`, { reason: this._closed ? 'Closed' : 'ConnectionError', cause: err })
        if (!done && !req.res) {
          done = true
          clearTimeout(idle)
          this._inflight.delete(req)
          reject(e)
          endResolve(e)
        } else {
          stop(e)
        }
      })
      req.on('response', res => {
        if (res.statusCode < 200 || res.statusCode >= 300) {
          const chunks = []
          res.on('data', c => chunks.push(c))
          res.on('end', () => {
            let parsed = Buffer.concat(chunks).toString('utf8')
            try { parsed = JSON.parse(parsed) } catch (e) {}
            const e = parsed && typeof parsed === 'object' ? parsed.error || {} : {}
            const err = new StewardError(`${what}: ${res.statusCode} ${e.reason || ''} ${e.message || ''}`.replace(/ +/g, ' ').trim(), {
              statusCode: res.statusCode, reason: e.reason || '', field: e.field, body: parsed
            })
            done = true
            clearTimeout(idle)
            this._inflight.delete(req)
            reject(err)
            endResolve(err)
          })
          return
        }
        const parser = new SseParser(ev => {
          try {
            onEvent(ev)
          } catch (err) {
            this._log?.error(`[steward] stream ${path}: event handler failed: ${err.stack || err}`)
          }
        })
        res.setEncoding('utf8')
        res.on('data', chunk => {
          touch()
          parser.push(chunk)
        })
        res.on('end', () => stop(null))
        res.on('error', err => stop(new StewardError(`${what}: ${err.message}`, { reason: 'ConnectionError', cause: err })))
        res.on('close', () => stop(res.complete ? null : new StewardError(`${what}: the stream was cut`, { reason: 'ConnectionError' })))
        resolve({ close: () => stop(null), ended })
      })
      req.end()
    })
  }

  // Every request in flight is aborted; later ones are refused.
  close () {
    this._closed = true
    for (const req of this._inflight) req.destroy()
    this._inflight.clear()
    this._agent.destroy()
  }
}

module.exports = { StewardClient, StewardError, encodePath }
