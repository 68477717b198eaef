'use strict'
// Steward's watch stream (GET /v1/watch?kind=all, docs/api.md) kept open: every project and
// agent record as it changes. Reconnects with exponential backoff and jitter, and resumes where
// it left off. Every change's event id is a position in Steward's store, `<feed>.<position>` (the
// record's own version is data.version); a reconnect sends the last id received as
// Last-Event-ID, as a browser's EventSource does:
// - while that id is in Steward's replay window, Steward sends only the changes missed, then
//   `resumed`: no snapshot and nothing to compare;
// - otherwise (a restarted Steward or another replica that did not see what was missed, or the
//   watch was away longer than the window holds) Steward says `reset` and sends its snapshot,
//   then `sync`; the watch passes on only what is news
//   against the version it last saw of each record, and a record it knew that is absent from
//   the new snapshot was purged during the gap and is delivered as deleted (a tombstone).
//
// Events: 'change' (record), 'deleted' ({id, name, kind}), 'sync' (after each snapshot),
// 'resumed' ({from, replayed}: a reconnect caught up without a snapshot), 'disconnected' (Error
// or null). Not thread-safe in any sense that matters to Node: all on the event loop.

const { EventEmitter } = require('node:events')

class Watch extends EventEmitter {
  // client: a StewardClient. backoff: {initialMs, maxMs}; idleMs: how long the stream may be
  // silent (Steward sends a keep-alive comment every 15 s) before it counts as cut.
  constructor (client, { log, initialMs = 500, maxMs = 30000, idleMs = 45000, random = Math.random } = {}) {
    super()
    this._client = client
    this._log = log
    this._initialMs = initialMs
    this._maxMs = maxMs
    this._idleMs = idleMs
    this._random = random
    this._versions = new Map() // id -> {version, name, kind}
    this._stopped = true
    this._handle = null
    this._timer = null
    this._failures = 0
    this._synced = false
    this.connects = 0 // streams opened (a test's view of reconnects)
    this.snapshots = 0 // snapshots taken (sync events)
    this.resumes = 0 // reconnects that resumed without a snapshot (resumed events)
    this.lastEventId = undefined // the id of the last event received that had one
  }

  get synced () { return this._synced }

  start () {
    if (!this._stopped) return
    this._stopped = false
    this._connect()
  }

  stop () {
    this._stopped = true
    clearTimeout(this._timer)
    this._timer = null
    if (this._handle) this._handle.close()
    this._handle = null
    this._synced = false
  }

  // The delay before reconnect number `failures` (1, 2, ...): initialMs doubling up to maxMs,
  // with "equal jitter" (half fixed, half random) so that many drivers do not come back at once.
  backoffMs (failures) {
    const ceiling = Math.min(this._maxMs, this._initialMs * 2 ** Math.max(0, failures - 1))
    return Math.round(ceiling / 2 + this._random() * ceiling / 2)
  }

  async _connect () {
    if (this._stopped) return
    this.connects++
    const sent = this.lastEventId
    // A stream opened without an id begins with a snapshot; one opened with an id, with the
    // changes missed (then `resumed`) or with `reset` and a snapshot. `seen`: the snapshot's ids.
    const conn = { inSnapshot: sent === undefined, seen: new Set() }
    const opened = Date.now()
    let handle
    try {
      handle = await this._client.stream('/v1/watch', {
        query: { kind: 'all' },
        headers: sent !== undefined ? { 'Last-Event-ID': sent } : {},
        idleMs: this._idleMs,
        onEvent: ev => this._event(ev, conn)
      })
    } catch (err) {
      this._scheduleReconnect(err)
      return
    }
    if (this._stopped) { handle.close(); return }
    this._handle = handle
    const err = await handle.ended
    if (this._handle === handle) this._handle = null
    this._synced = false
    if (this._stopped) return
    // A stream that lived a while was healthy: the next failure starts the backoff afresh.
    if (Date.now() - opened > 10000) this._failures = 0
    this.emit('disconnected', err)
    this._scheduleReconnect(err || new Error('the watch stream ended'))
  }

  // One event of the stream opened by _connect; `conn` is that stream's state.
  _event (ev, conn) {
    let data
    try { data = JSON.parse(ev.data) } catch (err) {
      this._log?.warn(`[steward] watch stream: an event that is not JSON: ${ev.data.slice(0, 200)}`)
      return
    }
    switch (ev.event) {
      case 'reset':
        // The id sent cannot be resumed from (Steward restarted, or it is older than Steward's
        // window): a snapshot follows, to be compared with what the watch knows.
        this._log?.info?.(`[steward] watch stream: starting over (${data.reason}): ${data.message}`)
        conn.inSnapshot = true
        break
      case 'sync':
        conn.inSnapshot = false
        this.snapshots++
        this._afterSnapshot(conn.seen)
        break
      case 'resumed':
        this.resumes++
        this._synced = true
        this.emit('resumed', data)
        break
      case 'error':
        // SlowConsumer / Overloaded: the stream ends after this; the reconnect resumes after the
        // last id received.
        this._log?.warn(`[steward] watch stream: ${ev.data}`)
        break
      case 'project':
      case 'agent':
        if (conn.inSnapshot) conn.seen.add(data.id)
        this._record(data, data.version, conn.inSnapshot)
        break
      case 'deleted':
        this._deleted(data.id, data.name)
        break
    }
    // An event without an id leaves the last one as it was (SSE's rule): the snapshot's events
    // have none, so a stream cut before its sync sends the old id again, and is reset again.
    if (ev.id !== undefined) this.lastEventId = ev.id === '' ? undefined : ev.id
  }

  _scheduleReconnect (err) {
    if (this._stopped) return
    this._failures++
    const delay = this.backoffMs(this._failures)
    this._log?.warn(`[steward] watch stream: ${err.message}; reconnecting in ${delay} ms (attempt ${this._failures})`)
    this._timer = setTimeout(() => { this._timer = null; this._connect() }, delay)
  }

  _record (rec, version, inSnapshot) {
    const known = this._versions.get(rec.id)
    // Live events: only a newer version is news. Snapshot events: any other version is (a
    // record deleted and made again during a gap starts its versions afresh).
    if (known && (inSnapshot ? known.version === version : known.version >= version)) return
    this._versions.set(rec.id, { version, name: rec.name, kind: rec.kind })
    this.emit('change', rec)
  }

  _deleted (id, name) {
    const known = this._versions.get(id)
    this._versions.delete(id)
    this.emit('deleted', { id, name: name || known?.name, kind: known?.kind })
  }

  _afterSnapshot (snapshot) {
    for (const [id, known] of [...this._versions]) {
      if (!snapshot.has(id)) this._deleted(id, known.name)
    }
    this._synced = true
    this.emit('sync')
  }
}

module.exports = { Watch }
