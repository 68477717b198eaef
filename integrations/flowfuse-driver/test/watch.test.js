'use strict'
// The driver's watch (lib/watch.js) against `steward serve` itself, through a TCP proxy that can
// cut connections and hold new ones: a cut stream resumes from its last event id (the changes
// made meanwhile, once each, and no second snapshot); after Steward restarts (its window gone),
// the watch is told `reset`, takes the snapshot and delivers a tombstone for the project purged
// while it was away.

const test = require('node:test')
const assert = require('node:assert/strict')
const net = require('node:net')

const { Steward, waitFor } = require('./helpers/steward')
const { StewardClient } = require('../lib/client')
const { Watch } = require('../lib/watch')

// Forwards 127.0.0.1:<port> to `upstream` (a URL; settable). cut() destroys every connection;
// hold() parks new ones (counted in `held`) until release(), which connects them upstream.
class CuttableProxy {
  static async start (upstream) {
    const p = new CuttableProxy()
    p.upstream = new URL(upstream)
    p.pairs = new Set()
    p.parked = null
    p.held = 0
    p.server = net.createServer(client => {
      if (p.parked) {
        p.held++
        p.parked.push(client)
        client.pause()
      } else {
        p._forward(client)
      }
    })
    await new Promise(resolve => p.server.listen(0, '127.0.0.1', resolve))
    p.url = `http://127.0.0.1:${p.server.address().port}`
    return p
  }

  _forward (client) {
    const up = net.connect(Number(this.upstream.port), this.upstream.hostname)
    const pair = [client, up]
    this.pairs.add(pair)
    const drop = () => { client.destroy(); up.destroy(); this.pairs.delete(pair) }
    client.on('error', drop).on('close', drop)
    up.on('error', drop).on('close', drop)
    client.pipe(up)
    up.pipe(client)
    client.resume()
  }

  cut () { for (const [client, up] of [...this.pairs]) { client.destroy(); up.destroy() } }
  hold () { this.parked = this.parked || [] }
  release () {
    const parked = this.parked || []
    this.parked = null
    for (const c of parked) if (!c.destroyed) this._forward(c)
  }

  async close () {
    this.cut()
    await new Promise(resolve => this.server.close(resolve))
  }
}

test('the watch resumes against steward serve after a cut, and is reset after a restart with tombstones', { timeout: 300000 }, async (t) => {
  const steward = await Steward.start({ profile: 'instant' })
  t.after(() => steward.stop())
  const proxy = await CuttableProxy.start(steward.url)
  t.after(() => proxy.close())
  const client = new StewardClient({ url: proxy.url, token: steward.token })
  t.after(() => client.close())
  const put = async name => {
    const r = await steward.api('PUT', `/v1/projects/${name}`, { spec: { team: 'resume' } })
    assert.ok(r.status === 200 || r.status === 201, JSON.stringify(r.body))
    return r.body
  }
  const kept = await put('kept')
  const watch = new Watch(client, { initialMs: 20, maxMs: 200, random: () => 1 })
  const changes = [] // "name@version"
  const deleted = []
  watch.on('change', r => changes.push(`${r.name}@${r.version}`))
  watch.on('deleted', d => deleted.push(d.name))
  watch.start()
  t.after(() => watch.stop())
  await waitFor('the first snapshot', () => watch.synced)
  assert.match(changes[0], /^kept@\d+$/)
  assert.ok(Number(changes[0].split('@')[1]) >= kept.version)

  // Cut while a project is made: it arrives through the replay, once per version, in order.
  proxy.hold()
  proxy.cut()
  await waitFor('the watch to reconnect', () => proxy.held === 1, { everyMs: 10 })
  const made = await put('made')
  const gone = await put('gone')
  proxy.release()
  await waitFor('the resume', () => watch.resumes === 1)
  assert.equal(watch.snapshots, 1, 'no second snapshot')
  const madeVersions = changes.filter(c => c.startsWith('made@')).map(c => Number(c.split('@')[1]))
  assert.deepEqual(madeVersions, [...madeVersions].sort((a, b) => a - b), 'in order')
  assert.equal(new Set(madeVersions).size, madeVersions.length, 'none twice')
  assert.ok(madeVersions.includes(made.version), changes.join(' '))
  assert.ok(changes.includes(`gone@${gone.version}`), changes.join(' '))

  // Purged while the watch is away, then Steward restarts: its replay window starts empty, so
  // the missed changes are gone from it: reset (Expired), snapshot, a tombstone.
  proxy.hold()
  proxy.cut()
  await waitFor('the watch to reconnect', () => proxy.held === 2, { everyMs: 10 })
  const del = await steward.api('DELETE', '/v1/projects/gone?wait=60s')
  assert.equal(del.status, 200, JSON.stringify(del.body))
  const before = watch.lastEventId
  await steward.restart()
  proxy.upstream = new URL(steward.url)
  proxy.release()
  await waitFor('the snapshot after the restart', () => watch.snapshots === 2, { timeoutMs: 90000 })
  assert.deepEqual(deleted, ['gone'])
  assert.equal(watch.resumes, 1)
  // Ids count in the store's feed: the same feed after the restart, further on.
  assert.equal(watch.lastEventId.split('.')[0], before.split('.')[0], 'the same feed')
  assert.ok(Number(watch.lastEventId.split('.')[1]) > Number(before.split('.')[1]))
})
