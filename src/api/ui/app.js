// Steward's dashboard (docs/dashboard.md). Plain ES modules; the charts are drawn by uPlot
// (/ui/uplot.js, pinned by src/api/ui/package-lock.json and compiled into the binary).
//
// Security: the API token is kept in sessionStorage (this tab only) and sent in the
// Authorization header of each API call, nowhere else (never in a URL, a cookie or a log). The
// page renders API data with textContent only, and never shows credentials.

import { SeriesChart, fmtDuration, phaseColor, renderPhaseTimeline } from './charts.js'
import {
  FLEET_SAMPLE_MS, fleet, fleetChanged, fleetSample, fleetTransition, initFleet, noteIntent,
  renderFleet, resetFleet
} from './fleet.js'

const TOKEN_KEY = 'steward.token'
const PHASES = ['Pending', 'Provisioning', 'Running', 'Updating', 'Degraded', 'Suspending',
  'Suspended', 'Deleting', 'Failed', 'Unknown']
const ACTIONS = {
  start: 'Start',
  suspend: 'Suspend',
  restart: 'Restart',
  'rotate-credentials': 'Rotate the credentials of'
}

const $ = sel => document.querySelector(sel)
const projects = new Map() // id -> project, as the watch stream last showed it
let watchAbort = null
let lastEventId = ''
let reconnectTimer = null

// ---- API ----

function token () { return sessionStorage.getItem(TOKEN_KEY) || '' }

class ApiError extends Error {
  constructor (status, body) {
    const e = body && body.error
    super(e && e.message ? `${e.reason || status}: ${e.message}` : `HTTP ${status}`)
    this.status = status
  }
}

async function api (method, path, { tok = token(), signal, headers = {} } = {}) {
  const r = await fetch(path, {
    method,
    headers: { Authorization: `Bearer ${tok}`, Accept: 'application/json', ...headers },
    cache: 'no-store',
    credentials: 'omit',
    signal
  })
  if (!r.ok) {
    let body = null
    try { body = await r.json() } catch (_) {}
    throw new ApiError(r.status, body)
  }
  return r
}

async function apiJson (method, path) { return (await api(method, path)).json() }

// ---- the watch stream: fetch + a streaming reader (EventSource cannot send the token) ----

function setLive (state, text) {
  const el = $('#live')
  el.dataset.state = state
  el.textContent = text
}

// Parses server-sent events from text chunks: calls onEvent({event, id, data}) per event.
function sseParser (onEvent) {
  let buf = ''
  let ev = { event: 'message', id: null, data: [] }
  return chunk => {
    buf += chunk
    for (;;) {
      const nl = buf.search(/\r\n|\r|\n/)
      if (nl < 0) return
      const line = buf.slice(0, nl)
      buf = buf.slice(nl + (buf.startsWith('\r\n', nl) ? 2 : 1))
      if (line === '') {
        if (ev.data.length) onEvent({ event: ev.event, id: ev.id, data: ev.data.join('\n') })
        ev = { event: 'message', id: null, data: [] }
        continue
      }
      if (line.startsWith(':')) continue // a comment (keep-alive)
      const colon = line.indexOf(':')
      const field = colon < 0 ? line : line.slice(0, colon)
      let value = colon < 0 ? '' : line.slice(colon + 1)
      if (value.startsWith(' ')) value = value.slice(1)
      if (field === 'event') ev.event = value
      else if (field === 'data') ev.data.push(value)
      else if (field === 'id') ev.id = value
    }
  }
}

// While a snapshot arrives (a new stream, or after `reset`), records go here until `sync`.
let snapshot = null

function onWatchEvent ({ event, id, data }) {
  if (id) lastEventId = id
  let d
  try { d = JSON.parse(data) } catch (_) { return }
  switch (event) {
    case 'project':
      if (snapshot) snapshot.set(d.id, d)
      else upsert(d)
      break
    case 'deleted':
      if (snapshot) snapshot.delete(d.id)
      removeProject(d.id)
      break
    case 'reset':
      snapshot = new Map()
      break
    case 'sync':
      if (snapshot) {
        projects.clear()
        for (const [k, v] of snapshot) projects.set(k, v)
        snapshot = null
        for (const p of projects.values()) noteIntent(p, true)
      }
      fleet.synced = true
      fleetSample()
      setLive('live', 'live')
      renderAll()
      break
    case 'resumed':
      setLive('live', 'live')
      break
    case 'error':
      setLive('reconnecting', 'reconnecting')
      break
  }
}

function upsert (p) {
  const known = projects.get(p.id)
  if (known && known.version > p.version) return
  fleetTransition(known, p)
  projects.set(p.id, p)
  fleetChanged()
  renderAll()
}

function removeProject (id) {
  projects.delete(id)
  fleet.intents.delete(id)
  fleetChanged()
  renderAll()
}

async function watch () {
  clearTimeout(reconnectTimer)
  if (watchAbort) watchAbort.abort()
  const ctl = new AbortController()
  watchAbort = ctl
  const headers = { Accept: 'text/event-stream' }
  if (lastEventId) headers['Last-Event-ID'] = lastEventId
  else snapshot = new Map()
  try {
    const r = await api('GET', '/v1/watch?kind=project', { signal: ctl.signal, headers })
    const reader = r.body.pipeThrough(new TextDecoderStream()).getReader()
    const feed = sseParser(onWatchEvent)
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      feed(value)
    }
  } catch (err) {
    if (ctl.signal.aborted) return
    if (err instanceof ApiError && err.status === 401) { signOut('The token is no longer accepted.'); return }
  }
  if (ctl.signal.aborted || !token()) return
  // Cut (server stopped, network, SlowConsumer): resume from the last id received.
  setLive('reconnecting', 'reconnecting')
  reconnectTimer = setTimeout(watch, 1000)
}

// ---- rendering ----

function el (tag, props = {}, ...children) {
  const e = document.createElement(tag)
  for (const [k, v] of Object.entries(props)) {
    if (k === 'dataset') Object.assign(e.dataset, v)
    else e[k] = v
  }
  for (const c of children) e.append(c)
  return e
}

function age (iso) {
  const ms = Date.now() - Date.parse(iso)
  if (!(ms >= 0)) return ''
  const s = Math.floor(ms / 1000)
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m`
  if (s < 86400) return `${Math.floor(s / 3600)}h`
  return `${Math.floor(s / 86400)}d`
}

// Only http(s) links are rendered as links.
function safeUrl (u) {
  try {
    const url = new URL(u)
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : ''
  } catch (_) { return '' }
}

const phaseOf = p => (p.status && p.status.phase) || 'Pending'

function renderFilters () {
  const sel = $('#filter-team')
  const teams = [...new Set([...projects.values()].map(p => p.team))].sort()
  const have = [...sel.options].slice(1).map(o => o.value)
  if (teams.join('\n') === have.join('\n')) return
  const current = sel.value
  sel.replaceChildren(el('option', { value: '', textContent: 'all' }),
    ...teams.map(t => el('option', { value: t, textContent: t })))
  sel.value = teams.includes(current) ? current : ''
}

function renderTable () {
  renderFilters()
  const q = $('#search').value.trim().toLowerCase()
  const phase = $('#filter-phase').value
  const team = $('#filter-team').value
  const rows = [...projects.values()]
    .filter(p => (!q || p.name.toLowerCase().includes(q)) && (!phase || phaseOf(p) === phase) &&
      (!team || p.team === team))
    .sort((a, b) => a.name.localeCompare(b.name))
  $('#project-table tbody').replaceChildren(...rows.map(p => {
    const s = p.status || {}
    const url = safeUrl(s.url || '')
    return el('tr', { dataset: { project: p.name, id: p.id } },
      el('td', {}, el('a', { href: `#/projects/${encodeURIComponent(p.id)}`, textContent: p.name })),
      el('td', { className: 'phase', dataset: { phase: phaseOf(p) }, textContent: phaseOf(p) }),
      el('td', { className: 'reason', textContent: s.reason || '', title: s.message || '' }),
      el('td', { className: 'team', textContent: p.team }),
      el('td', {}, url ? el('a', { href: url, textContent: url, target: '_blank', rel: 'noopener noreferrer' }) : ''),
      el('td', { className: 'age', textContent: age(p.createdAt), title: p.createdAt }))
  }))
  $('#empty').hidden = rows.length > 0
  $('#count').textContent = `${rows.length} of ${projects.size} projects`
}

function selectedId () {
  const m = /^#\/projects\/([^/]+)$/.exec(location.hash)
  if (!m) return ''
  try {
    return decodeURIComponent(m[1])
  } catch {
    return '' // a malformed escape names no project
  }
}

function renderDetail () {
  const id = selectedId()
  const p = projects.get(id)
  if (!p) {
    $('#detail-name').textContent = id ? `${id} (not found)` : ''
    return
  }
  const s = p.status || {}
  $('#detail-name').textContent = p.name
  $('#detail').dataset.phase = phaseOf(p)
  const stack = (p.spec && p.spec.stack) || {}
  const summary = [
    ['Phase', el('span', { className: 'phase', dataset: { phase: phaseOf(p) }, textContent: phaseOf(p) })],
    ['Reason', `${s.reason || ''}${s.message ? ' — ' + s.message : ''}`],
    ['Desired state', p.desiredState],
    ['Generation', `${p.generation} (observed ${s.observedGeneration || 0})`],
    ['Team', p.team],
    ['Id', p.id],
    ['Stack', [stack.image || stack.container, stack.cpu && `cpu ${stack.cpu}`, stack.memory && `memory ${stack.memory} MB`].filter(Boolean).join(', ') || 'defaults'],
    ['URL', safeUrl(s.url || '') ? el('a', { href: safeUrl(s.url), textContent: s.url, target: '_blank', rel: 'noopener noreferrer' }) : ''],
    ['Phase since', s.since ? new Date(s.since).toISOString() : ''],
    ['Created', p.createdAt]
  ]
  $('#detail-summary').replaceChildren(...summary.flatMap(([k, v]) => [el('dt', { textContent: k }), el('dd', {}, v)]))
  const desired = p.desiredState === 'running' ? 'present, ready' : 'absent'
  const conds = s.conditions || []
  $('#objects tbody').replaceChildren(...conds.map(c => el('tr', { dataset: { resource: c.resource } },
    el('td', { textContent: c.resource }),
    el('td', { textContent: desired }),
    el('td', { className: c.ready ? 'ready-yes' : 'ready-no', textContent: c.ready ? (p.desiredState === 'running' ? 'ready' : 'gone') : 'not yet' }),
    el('td', { textContent: c.reason || '' }),
    el('td', { textContent: c.message || '' }))))
  $('#objects-empty').hidden = conds.length > 0
}

let historyFor = ''
let historyVersion = -1
let historyBusy = false
let historyItems = [] // the shown project's history, as last loaded (for the phase timeline)

function renderTimeline () {
  const items = historyFor === selectedId() ? historyItems : []
  renderPhaseTimeline($('#phase-timeline'), items, Date.now(), el)
  $('#phase-timeline-empty').hidden = $('#phase-timeline').children.length > 0
}

async function loadHistory () {
  const id = selectedId()
  const p = projects.get(id)
  if (!p || historyBusy || (historyFor === id && historyVersion === p.version)) return
  historyBusy = true
  let ok = false
  try {
    const v = p.version
    const h = await apiJson('GET', `/v1/projects/${encodeURIComponent(id)}/history?limit=1000`)
    if (selectedId() !== id) {
      ok = true // another project is shown now: the follow-up below loads its history
      return
    }
    historyFor = id
    historyVersion = v
    historyItems = h.items
    renderTimeline()
    $('#history-error').hidden = true
    $('#history').replaceChildren(...h.items.map(i => el('li', { dataset: { kind: i.kind } },
      el('time', { textContent: i.at }), `${i.kind}: ${i.summary}`)))
    ok = true
  } catch (err) {
    $('#history-error').textContent = `History: ${err.message}`
    $('#history-error').hidden = false
  } finally {
    historyBusy = false
  }
  // A change that came meanwhile (or a switch to another project) loads again at once; after a
  // failure only the next watch event does, so a Steward that is down is not asked in a loop.
  if (!ok) return
  const shown = selectedId()
  const now = projects.get(shown)
  if (now && (historyFor !== shown || now.version !== historyVersion)) loadHistory()
}

// The launcher stamps a log line with its millisecond time followed by a four-digit counter
// (nr-launcher's log buffer): "1796414498000" + "0001". Shown as an ISO time; anything else as is.
function logTime (ts) {
  const text = String(ts)
  if (!/^[0-9]{14,}$/.test(text)) return text
  const when = new Date(Number(text.slice(0, -4)))
  return isNaN(when) ? text : when.toISOString()
}

async function loadLogs () {
  const id = selectedId()
  $('#logs-error').hidden = true
  try {
    const l = await apiJson('GET', `/v1/projects/${encodeURIComponent(id)}/logs`)
    $('#logs').textContent = l.items.map(i => `${logTime(i.ts)} ${i.pod} ${i.level} ${i.msg}`).join('\n') || '(no log lines)'
    $('#logs').hidden = false
  } catch (err) {
    $('#logs').hidden = true
    $('#logs-error').textContent = `Logs: ${err.message}`
    $('#logs-error').hidden = false
  }
}

const inFleet = () => location.hash === '#/fleet'

function renderAll () {
  const inDetail = !!selectedId()
  const fleetShown = !inDetail && inFleet()
  $('#projects').hidden = inDetail || fleetShown
  $('#detail').hidden = !inDetail
  $('#fleet').hidden = !fleetShown
  for (const [sel, on] of [['#nav-projects', !inDetail && !fleetShown], ['#nav-fleet', fleetShown]]) {
    if (on) $(sel).setAttribute('aria-current', 'page')
    else $(sel).removeAttribute('aria-current')
  }
  if (inDetail) {
    renderDetail()
    renderTimeline()
    loadHistory()
  } else if (fleetShown) {
    renderFleet()
  } else {
    renderTable()
  }
  followResources()
}

// ---- resources: the launcher's CPU, memory and event-loop lag per pod, live ----
//
// GET /v1/projects/{p}/resources (the launchers' recent samples) fills the charts, then
// GET .../resources/stream (server-sent events, read like the watch) adds each new sample. The
// stream runs while a project's detail view is shown and the project is to run; it stops when
// the view is left or the project stops running. On `end` PodGone (a pod went, e.g. a rollout) it
// reconnects after a second to follow the pods there are now. A 409 (no pod ready) or another
// error is shown, and tried again only when the project changes (its next watch event).

const RESOURCES_WINDOW_MS = 10 * 60 * 1000 // the points kept: the last 10 minutes
const RESOURCE_METRICS = [
  // key, chart container, value of a sample
  ['cpu', '#chart-cpu', s => s.cpu],
  ['mem', '#chart-mem', s => s.ps],
  ['lag', '#chart-lag', s => (typeof s.ela === 'number' ? s.ela * 1000 : null)]
]
const res = {
  id: '', // the project whose samples these are
  abort: null, // the running stream's AbortController
  timer: null, // a reconnect pending
  blockedVersion: -1, // after a refusal: not again until the project's version differs
  pods: [], // the pods of the last sync
  byTs: new Map(), // ts (ms) -> Map(pod -> sample)
  charts: null, // {cpu, mem, lag}: SeriesChart
  drawTimer: null
}

const round = (v, d) => Number.isFinite(v) ? Number(v.toFixed(d)) : v
const RESOURCE_FORMATS = {
  cpu: v => `${round(v, 1)}`,
  mem: v => `${round(v, 0)}`,
  lag: v => `${round(v, v < 10 ? 2 : 0)}`
}

function resourceCharts () {
  if (!res.charts) {
    res.charts = {}
    for (const [key, sel] of RESOURCE_METRICS) {
      res.charts[key] = new SeriesChart($(sel), {
        height: 160,
        fmt: RESOURCE_FORMATS[key],
        unit: { cpu: ' %', mem: ' MB', lag: ' ms' }[key]
      })
    }
  }
  return res.charts
}

function resourcesNote (text) {
  $('#resources-note').textContent = text
  $('#resources-note').hidden = !text
}

// Whether the project has (or is about to have) pods whose launchers can be asked.
const wantsResources = p => p && p.desiredState === 'running' && ['Running', 'Updating', 'Degraded'].includes(phaseOf(p))

function addSamples (samples) {
  for (const s of samples) {
    if (!s || typeof s.ts !== 'number' || typeof s.pod !== 'string') continue
    let at = res.byTs.get(s.ts)
    if (!at) res.byTs.set(s.ts, (at = new Map()))
    at.set(s.pod, s)
  }
  scheduleResourcesDraw()
}

function scheduleResourcesDraw () {
  if (res.drawTimer) return
  res.drawTimer = setTimeout(() => { res.drawTimer = null; drawResources() }, 200)
}

function drawResources () {
  let newest = 0
  for (const ts of res.byTs.keys()) newest = Math.max(newest, ts)
  for (const ts of [...res.byTs.keys()]) if (ts < newest - RESOURCES_WINDOW_MS) res.byTs.delete(ts)
  const times = [...res.byTs.keys()].sort((a, b) => a - b)
  const withData = new Set()
  for (const at of res.byTs.values()) for (const pod of at.keys()) withData.add(pod)
  const pods = [...new Set([...res.pods, ...withData])].sort()
  $('#resources-charts').hidden = times.length === 0
  if (times.length === 0) return
  const xs = times.map(t => t / 1000)
  for (const [key, , value] of RESOURCE_METRICS) {
    const ys = pods.map(pod => times.map(t => {
      const s = res.byTs.get(t).get(pod)
      const v = s ? value(s) : null
      return typeof v === 'number' && Number.isFinite(v) ? v : null
    }))
    resourceCharts()[key].update(pods, [xs, ...ys])
  }
  $('#resources-charts').dataset.pods = pods.join(' ')
}

function stopResources (note) {
  clearTimeout(res.timer)
  res.timer = null
  if (res.abort) res.abort.abort()
  res.abort = null
  if (note !== undefined) resourcesNote(note)
}

function clearResources () {
  stopResources('')
  res.id = ''
  res.pods = []
  res.byTs.clear()
  res.blockedVersion = -1
  if (res.charts) for (const c of Object.values(res.charts)) c.destroy()
  $('#resources-charts').hidden = true
  delete $('#resources-charts').dataset.pods
}

// Called on every render: starts, keeps or stops the stream for what is shown.
function followResources () {
  const id = selectedId()
  if (res.id !== id) clearResources()
  const p = projects.get(id)
  if (!id || !p) { stopResources(); return }
  res.id = id
  if (!wantsResources(p)) {
    stopResources(p.desiredState === 'running'
      ? `No pod is ready yet (${phaseOf(p)}): the charts start when one is.`
      : `The project is ${phaseOf(p)}: no pod runs${res.byTs.size ? '; the last samples stay shown' : ''}.`)
    res.blockedVersion = -1
    return
  }
  if (res.abort || res.timer) return
  if (res.blockedVersion === p.version) return
  streamResources(id)
}

async function streamResources (id) {
  const ctl = new AbortController()
  res.abort = ctl
  const base = `/v1/projects/${encodeURIComponent(id)}/resources`
  const version = (projects.get(id) || {}).version
  let ended = null
  let retryMs = 0
  try {
    const first = await (await api('GET', base, { signal: ctl.signal })).json()
    if (ctl.signal.aborted) return
    res.pods = first.pods || res.pods
    addSamples(first.resources || [])
    const r = await api('GET', `${base}/stream`, { signal: ctl.signal, headers: { Accept: 'text/event-stream' } })
    resourcesNote('')
    const reader = r.body.pipeThrough(new TextDecoderStream()).getReader()
    const feed = sseParser(({ event, data }) => {
      let d
      try { d = JSON.parse(data) } catch (_) { return }
      if (event === 'sync') {
        res.pods = Array.isArray(d.pods) ? d.pods : []
        scheduleResourcesDraw()
      } else if (event === 'sample') {
        addSamples([d])
      } else if (event === 'end') {
        ended = d
      }
    })
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      feed(value)
    }
    // The stream ended: PodGone (follow the pods there are now) after a second, anything else
    // (Unavailable, SlowConsumer, Stopping, a cut) after a few.
    retryMs = ended && ended.reason === 'PodGone' ? 1000 : 3000
    resourcesNote(ended ? `The resources stream ended (${ended.reason}: ${ended.message}); reconnecting.` : 'The resources stream was cut; reconnecting.')
  } catch (err) {
    if (ctl.signal.aborted) return
    if (err instanceof ApiError) {
      if (err.status === 401) { signOut('The token is no longer accepted.'); return }
      res.blockedVersion = version
      resourcesNote(err.status === 409 ? `No pod is ready: ${err.message}` : `Resources: ${err.message}`)
    } else {
      retryMs = 3000 // the network, or Steward restarting
      resourcesNote(`Resources: ${err.message}; reconnecting.`)
    }
  } finally {
    if (res.abort === ctl) res.abort = null
  }
  if (ctl.signal.aborted || !retryMs) return
  res.timer = setTimeout(() => {
    res.timer = null
    if (selectedId() === id) followResources()
  }, retryMs)
}

// ---- actions ----

function confirmDialog (text) {
  const d = $('#confirm')
  $('#confirm-text').textContent = text
  d.returnValue = ''
  d.showModal()
  return new Promise(resolve => d.addEventListener('close', () => resolve(d.returnValue === 'ok'), { once: true }))
}

async function runAction (action) {
  const p = projects.get(selectedId())
  if (!p) return
  $('#action-error').hidden = true
  $('#action-done').hidden = true
  if (!(await confirmDialog(`${ACTIONS[action]} project ${p.name}?`))) return
  try {
    await api('POST', `/v1/projects/${encodeURIComponent(p.id)}/${action}`)
    $('#action-done').textContent = `${ACTIONS[action].split(' ')[0]}: accepted`
    $('#action-done').hidden = false
  } catch (err) {
    $('#action-error').textContent = err.message
    $('#action-error').hidden = false
  }
}

// ---- sign-in ----

function signOut (message) {
  sessionStorage.removeItem(TOKEN_KEY)
  if (watchAbort) watchAbort.abort()
  clearTimeout(reconnectTimer)
  projects.clear()
  lastEventId = ''
  stopResources('')
  resetFleet()
  setLive('off', 'offline')
  $('#projects').hidden = true
  $('#detail').hidden = true
  $('#fleet').hidden = true
  $('#nav').hidden = true
  $('#sign-out').hidden = true
  $('#sign-in').hidden = false
  $('#sign-in-error').textContent = message || ''
  $('#sign-in-error').hidden = !message
}

function signedIn () {
  $('#sign-in').hidden = true
  $('#sign-out').hidden = false
  $('#nav').hidden = false
  setLive('reconnecting', 'connecting')
  renderAll()
  watch()
}

async function signIn (ev) {
  ev.preventDefault()
  const input = $('#token')
  const tok = input.value.trim()
  input.value = ''
  try {
    await api('GET', '/v1/projects?limit=1', { tok })
  } catch (err) {
    $('#sign-in-error').textContent = err.status === 401 ? 'The token was refused (401).' : `Cannot reach the API: ${err.message}`
    $('#sign-in-error').hidden = false
    return
  }
  $('#sign-in-error').hidden = true
  sessionStorage.setItem(TOKEN_KEY, tok)
  signedIn()
}

function init () {
  initFleet({ projects, phases: PHASES, phaseOf, el, $, round, shown: inFleet })
  $('#filter-phase').append(...PHASES.map(p => el('option', { value: p, textContent: p })))
  $('#sign-in-form').addEventListener('submit', signIn)
  $('#sign-out').addEventListener('click', () => signOut(''))
  for (const id of ['#search', '#filter-phase', '#filter-team']) $(id).addEventListener('input', renderTable)
  $('#back').addEventListener('click', ev => { ev.preventDefault(); location.hash = '' })
  $('#load-logs').addEventListener('click', loadLogs)
  for (const b of document.querySelectorAll('[data-action]')) b.addEventListener('click', () => runAction(b.dataset.action))
  window.addEventListener('hashchange', () => {
    $('#action-error').hidden = true
    $('#action-done').hidden = true
    $('#logs').hidden = true
    $('#logs-error').hidden = true
    $('#history').replaceChildren()
    historyFor = ''
    historyItems = []
    renderAll()
  })
  setInterval(() => { if (token() && !selectedId() && !inFleet()) renderTable() }, 10000)
  // The fleet's phase counts are sampled every few seconds; the timeline's last interval grows.
  setInterval(() => {
    if (!token()) return
    fleetSample()
    if (inFleet()) renderFleet()
    if (selectedId()) renderTimeline()
  }, FLEET_SAMPLE_MS)
  if (token()) signedIn()
  else signOut('')
}

init()
