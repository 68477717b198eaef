// The dashboard's fleet view (docs/dashboard.md, `#/fleet`): projects per phase over time,
// starts and failures per minute, the slowest starts. Fed by app.js from the watch stream.
import { SeriesChart, fmtDuration, phaseColor } from './charts.js'

// What the view needs of the page: set once by initFleet.
let ctx = null
// `projects` (id -> project, the watch stream's map), `phases` (the phase names in order),
// `phaseOf`, `el` (makes an element), `$` (querySelector), `round`, `shown` (whether the
// fleet view is on screen).
export function initFleet (context) { ctx = context }

// All of it from the watch stream, since this page opened: the phase counts of the `projects`
// map (seeded at the first sync, then sampled every few seconds and at each change), and the
// transitions the page sees (a project entering Running from a phase where it was not running
// is a start; entering Failed is a failure). A start's duration is from the acceptance of its
// intent (the updatedAt of the first event with the new generation; createdAt for generation 1)
// to Running at that generation (status.since).

export const FLEET_SAMPLE_MS = 5000
const FLEET_WINDOW_MS = 60 * 60 * 1000 // the phase counts kept: the last hour
const RATE_MINUTES = 30 // the per-minute chart: the last 30 minutes
const RUNNING_PHASES = ['Running', 'Updating', 'Degraded']
export const fleet = {
  synced: false,
  samples: [], // [{t (ms), counts: {phase: n}}]
  seen: new Set(), // phases that have had a project since the page opened
  perMinute: new Map(), // minute (ms / 60000, floored) -> {starts, failures}
  totals: { starts: 0, failures: 0 },
  intents: new Map(), // project id -> {generation, at (ms)}: the intent a start is measured from
  starts: [], // [{id, name, generation, ms, accepted, since}], slowest first, at most 100
  charts: null,
  lastSampleAt: 0
}

export function resetFleet () {
  fleet.synced = false
  fleet.samples = []
  fleet.seen.clear()
  fleet.perMinute.clear()
  fleet.totals = { starts: 0, failures: 0 }
  fleet.intents.clear()
  fleet.starts = []
}

function phaseCounts () {
  const counts = Object.fromEntries(ctx.phases.map(ph => [ph, 0]))
  for (const p of ctx.projects.values()) counts[ctx.phaseOf(p)] = (counts[ctx.phaseOf(p)] || 0) + 1
  return counts
}

export function fleetSample () {
  if (!fleet.synced) return
  const now = Date.now()
  const counts = phaseCounts()
  for (const ph of ctx.phases) if (counts[ph]) fleet.seen.add(ph)
  const last = fleet.samples[fleet.samples.length - 1]
  // At a change the old counts are repeated just before it, so the lines step where it happened.
  if (last && now - last.t > 1 && ctx.phases.some(ph => last.counts[ph] !== counts[ph])) {
    fleet.samples.push({ t: now - 1, counts: last.counts })
  }
  fleet.samples.push({ t: now, counts })
  while (fleet.samples.length && fleet.samples[0].t < now - FLEET_WINDOW_MS) fleet.samples.shift()
  fleet.lastSampleAt = now
}

// The intent a coming start is measured from: noted at the first event with a new generation.
// In the first snapshot only a generation 1 is known exactly (createdAt): a later one was
// accepted at some time before the snapshot, so its start is not measured.
export function noteIntent (p, inSnapshot) {
  const i = fleet.intents.get(p.id)
  if (i && i.generation === p.generation) return
  const at = p.generation === 1 ? Date.parse(p.createdAt) : inSnapshot ? NaN : Date.parse(p.updatedAt)
  fleet.intents.set(p.id, { generation: p.generation, at })
}

export function fleetTransition (known, p) {
  if (!fleet.synced) return
  noteIntent(p, false)
  const before = known ? ctx.phaseOf(known) : ''
  const now = ctx.phaseOf(p)
  if (before === now) return
  const s = p.status || {}
  const when = s.since || Date.now()
  const minute = Math.floor(when / 60000)
  const bucket = fleet.perMinute.get(minute) || { starts: 0, failures: 0 }
  fleet.perMinute.set(minute, bucket)
  if (now === 'Running' && !RUNNING_PHASES.includes(before)) {
    bucket.starts++
    fleet.totals.starts++
    const intent = fleet.intents.get(p.id)
    if (intent && s.since && (s.observedGeneration || 0) >= intent.generation && Number.isFinite(intent.at)) {
      fleet.starts.push({ id: p.id, name: p.name, generation: intent.generation, ms: Math.max(0, s.since - intent.at), accepted: intent.at, since: s.since })
      fleet.starts.sort((a, b) => b.ms - a.ms)
      fleet.starts.length = Math.min(fleet.starts.length, 100)
    }
  } else if (now === 'Failed') {
    bucket.failures++
    fleet.totals.failures++
  }
  for (const m of fleet.perMinute.keys()) if (m < minute - RATE_MINUTES * 2) fleet.perMinute.delete(m)
}

// After a change of the projects map: a sample at once, or at most a second later.
let fleetSampleTimer = null
export function fleetChanged () {
  if (fleetSampleTimer) return
  const wait = Math.max(0, fleet.lastSampleAt + 1000 - Date.now())
  if (wait === 0) { fleetSample(); return }
  fleetSampleTimer = setTimeout(() => {
    fleetSampleTimer = null
    fleetSample()
    if (ctx.shown()) renderFleet()
  }, wait)
}

function fleetCharts () {
  if (!fleet.charts) {
    fleet.charts = {
      phases: new SeriesChart(ctx.$('#chart-phases'), {
        height: 200,
        fmt: v => `${ctx.round(v, 0)}`,
        series: (ph) => ({ stroke: phaseColor(ph), width: 2, paths: uPlot.paths.stepped({ align: 1 }) }) // eslint-disable-line no-undef
      }),
      rates: new SeriesChart(ctx.$('#chart-rates'), {
        height: 200,
        xPad: 40,
        fmt: v => `${ctx.round(v, 0)}`,
        series: (name) => {
          const color = name === 'starts' ? phaseColor('Running') : phaseColor('Failed')
          return { stroke: color, fill: `${color}99`, paths: uPlot.paths.bars({ size: [0.4, 18], align: name === 'starts' ? -1 : 1 }) } // eslint-disable-line no-undef
        }
      })
    }
  }
  return fleet.charts
}

export function renderFleet () {
  const counts = phaseCounts()
  ctx.$('#fleet-counts').replaceChildren(...ctx.phases.filter(ph => counts[ph] || fleet.seen.has(ph)).map(ph =>
    ctx.el('li', { dataset: { phase: ph, count: String(counts[ph]) } },
      ctx.el('span', { className: 'phase', dataset: { phase: ph }, textContent: ph }), ` ${counts[ph]}`)))
  ctx.$('#fleet-total').textContent = `${ctx.projects.size} project${ctx.projects.size === 1 ? '' : 's'}`
  if (!fleet.synced) return
  const charts = fleetCharts()
  // Projects per phase: one line per phase that has had a project, the samples since the page opened.
  const shown = ctx.phases.filter(ph => fleet.seen.has(ph))
  const now = Date.now()
  const samples = fleet.samples.concat([{ t: now, counts }])
  charts.phases.update(shown, [samples.map(s => s.t / 1000), ...shown.map(ph => samples.map(s => s.counts[ph] || 0))])
  // Starts and failures per minute, the last RATE_MINUTES minutes.
  const current = Math.floor(now / 60000)
  const minutes = Array.from({ length: RATE_MINUTES }, (_, k) => current - RATE_MINUTES + 1 + k)
  const at = m => fleet.perMinute.get(m) || { starts: 0, failures: 0 }
  // (a minute with none is no bar: null)
  charts.rates.update(['starts', 'failures'], [minutes.map(m => m * 60), minutes.map(m => at(m).starts || null), minutes.map(m => at(m).failures || null)])
  const thisMinute = at(current)
  ctx.$('#fleet-rates').textContent = `This minute: ${thisMinute.starts} start${thisMinute.starts === 1 ? '' : 's'}, ` +
    `${thisMinute.failures} failure${thisMinute.failures === 1 ? '' : 's'}. Since this page opened: ` +
    `${fleet.totals.starts} start${fleet.totals.starts === 1 ? '' : 's'}, ${fleet.totals.failures} failure${fleet.totals.failures === 1 ? '' : 's'}.`
  ctx.$('#fleet-rates').dataset.starts = String(fleet.totals.starts)
  ctx.$('#fleet-rates').dataset.failures = String(fleet.totals.failures)
  const top = fleet.starts.slice(0, 10)
  ctx.$('#slow-starts tbody').replaceChildren(...top.map(st => ctx.el('tr', { dataset: { project: st.name, ms: String(st.ms) } },
    ctx.el('td', {}, ctx.el('a', { href: `#/projects/${encodeURIComponent(st.id)}`, textContent: st.name })),
    ctx.el('td', { textContent: String(st.generation) }),
    ctx.el('td', { className: 'duration', textContent: fmtDuration(st.ms) }),
    ctx.el('td', {}, ctx.el('time', { dateTime: new Date(st.accepted).toISOString(), textContent: new Date(st.accepted).toLocaleTimeString() })),
    ctx.el('td', {}, ctx.el('time', { dateTime: new Date(st.since).toISOString(), textContent: new Date(st.since).toLocaleTimeString() })))))
  ctx.$('#slow-starts-empty').hidden = top.length > 0
}

