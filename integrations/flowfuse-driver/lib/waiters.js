'use strict'
// Waiting for a record to be done with a generation: "done" as docs/api.md defines it
// (observedGeneration >= G and the phase the desired state leads to), told by the watch stream,
// checked once against a fresh read when the wait begins (an event may have come before), and
// polled slowly should the watch be wedged. A wait ends, too, when a later call asked for another
// desired state (superseded), when Steward reports Failed, when the record is deleted, at its
// deadline, and at shutdown.

const { StewardError } = require('./client')

const DESIRED = { Running: 'running', Suspended: 'suspended', deleted: 'deleted' }

class WaitError extends Error {
  constructor (message, { reason, record, cause } = {}) {
    super(message, cause ? { cause } : undefined)
    this.name = 'WaitError'
    this.code = reason
    this.reason = reason
    if (record) this.record = record
  }
}

function describe (rec) {
  const s = rec?.status || {}
  return `${s.phase || 'Pending'}${s.reason ? ' ' + s.reason : ''}${s.message ? ': ' + s.message : ''}`
}

class Waiters {
  // read(id): the record now (null when there is none). watch: a Watch.
  constructor ({ watch, read, pollInterval, log }) {
    this._read = read
    this._poll = pollInterval
    this._log = log
    this._byId = new Map() // id -> Set of waits
    this._closed = false
    this._onChange = rec => this._judgeAll(rec.id, rec)
    this._onDeleted = ({ id }) => this._judgeAll(id, null)
    watch.on('change', this._onChange)
    watch.on('deleted', this._onDeleted)
    this._watch = watch
  }

  get size () {
    let n = 0
    for (const set of this._byId.values()) n += set.size
    return n
  }

  // Resolves with the record once `rec` (as Steward answered the call) is done with
  // `generation` in phase `want` ('Running' | 'Suspended'), or with null once it is purged
  // (want 'deleted'). onRecord(rec): every newer record seen meanwhile.
  wait (rec, { generation, want, timeoutMs, what, onRecord }) {
    if (this._closed) return Promise.reject(new WaitError('the driver is shut down', { reason: 'Closed' }))
    return new Promise((resolve, reject) => {
      const w = { id: rec.id, name: rec.name, generation, want, last: rec, onRecord, what }
      const finish = (err, value) => {
        if (w.done) return
        w.done = true
        clearTimeout(w.timer)
        clearInterval(w.poller)
        const set = this._byId.get(w.id)
        if (set) {
          set.delete(w)
          if (set.size === 0) this._byId.delete(w.id)
        }
        if (err) reject(err); else resolve(value)
      }
      w.finish = finish
      w.timer = setTimeout(() => finish(new WaitError(
        `${what}: not ${want === 'deleted' ? 'purged' : want} at generation ${generation} after ${Math.round(timeoutMs / 1000)} s; Steward says ${describe(w.last)}`,
        { reason: 'Timeout', record: w.last })), timeoutMs)
      if (!this._byId.has(w.id)) this._byId.set(w.id, new Set())
      this._byId.get(w.id).add(w)
      this._judge(w, rec)
      if (w.done) return
      const check = () => this._read(w.id).then(r => this._judge(w, r), err => {
        if (!(err instanceof StewardError && err.reason === 'Closed')) {
          this._log?.debug?.(`[steward] ${what}: reading ${w.name}: ${err.message}`)
        }
      })
      check()
      w.poller = setInterval(check, this._poll)
    })
  }

  _judgeAll (id, rec) {
    const set = this._byId.get(id)
    if (!set) return
    for (const w of [...set]) this._judge(w, rec)
  }

  _judge (w, rec) {
    if (w.done) return
    if (rec === null) {
      if (w.want === 'deleted') w.finish(null, null)
      else w.finish(new WaitError(`${w.what}: the project was deleted`, { reason: 'Deleted', record: w.last }))
      return
    }
    // An older record than one already seen (a slow read) tells nothing new.
    if ((rec.generation || 0) < (w.last?.generation || 0)) return
    w.last = rec
    if (w.onRecord) {
      try { w.onRecord(rec) } catch (err) { this._log?.warn(`[steward] ${w.what}: ${err.message}`) }
    }
    if (w.want === 'deleted') return
    const s = rec.status || {}
    if (rec.desiredState !== DESIRED[w.want] && rec.generation > w.generation) {
      w.finish(new WaitError(`${w.what}: superseded: a later call asked for ${rec.desiredState} (generation ${rec.generation})`,
        { reason: 'Superseded', record: rec }))
      return
    }
    if ((s.observedGeneration || 0) < w.generation) return
    if (s.phase === w.want) {
      w.finish(null, rec)
    } else if (s.phase === 'Failed') {
      w.finish(new WaitError(`${w.what}: Steward reports Failed (${s.reason || 'no reason'}): ${s.message || ''}`.trim(),
        { reason: s.reason || 'Failed', record: rec }))
    }
  }

  close () {
    this._closed = true
    this._watch.off('change', this._onChange)
    this._watch.off('deleted', this._onDeleted)
    for (const set of [...this._byId.values()]) {
      for (const w of [...set]) w.finish(new WaitError(`${w.what}: the driver is shut down`, { reason: 'Closed', record: w.last }))
    }
  }
}

module.exports = { Waiters, WaitError, describe }
