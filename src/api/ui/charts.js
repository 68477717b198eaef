// The dashboard's pictures (docs/dashboard.md): time-series charts drawn by uPlot (the global
// `uPlot` of /ui/uplot.js, compiled into the binary like this file), and the phase timeline,
// plain DOM and CSS. Data is text only (textContent); uPlot writes labels with textContent too.

// A phase's colour: the CSS custom property --phase-<Phase> of style.css (one source for the
// timeline's bars, the table's text and the fleet chart's lines).
export function phaseColor (phase) {
  const v = getComputedStyle(document.documentElement).getPropertyValue(`--phase-${phase}`).trim()
  return v || '#667085'
}

// Distinct colours for series (pods), in order.
const PALETTE = ['#2f5bd3', '#d4631d', '#1a7f37', '#8250df', '#bf3989', '#0a7ea4', '#9a6700',
  '#57606a', '#cf222e', '#116329']
export const seriesColor = i => PALETTE[i % PALETTE.length]

// "850 ms", "4.2 s", "3 min 5 s", "2 h 10 min", "3 d 4 h".
export function fmtDuration (ms) {
  if (!(ms >= 0)) return ''
  if (ms < 1000) return `${Math.round(ms)} ms`
  const s = ms / 1000
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m} min ${Math.floor(s % 60)} s`
  const h = Math.floor(m / 60)
  if (h < 24) return `${h} h ${m % 60} min`
  return `${Math.floor(h / 24)} d ${h % 24} h`
}

// One uPlot chart of time series that share an x axis (seconds). `update(names, data)` draws
// `data` ([xs, ys of names[0], ys of names[1], ...]); the chart is made again when the series
// change (a pod comes or goes: rare). It sizes itself to its container, and waits while the
// container is hidden (uPlot cannot measure it then). The uPlot instance is the container's
// `uplot` property (the browser test reads its data: nothing there is secret).
export class SeriesChart {
  // opts: {height, unit, fmt(value) -> text, series(name, i) -> uPlot series options,
  //        yMin: 0 or null, time: true, xPad: seconds of room either side (bars)}
  constructor (container, opts) {
    this.container = container
    this.opts = opts
    this.names = null
    this.data = null
    this.u = null
    this.pending = null
    new ResizeObserver(() => this.resize()).observe(container)
  }

  width () { return Math.max(0, Math.floor(this.container.clientWidth)) }

  update (names, data) {
    this.pending = { names, data }
    if (this.width() === 0) return // hidden: drawn when shown (resize)
    this.flush()
  }

  flush () {
    if (!this.pending) return
    const { names, data } = this.pending
    this.pending = null
    if (!this.u || names.join('\n') !== this.names.join('\n')) {
      this.make(names, data)
    } else {
      this.u.setData(data)
    }
    this.names = names
    this.data = data
  }

  make (names, data) {
    if (this.u) this.u.destroy()
    const { fmt = v => String(v), height = 170, yMin = 0, series, unit = '', xPad = 0 } = this.opts
    const ySeries = names.map((n, i) => ({
      label: n,
      width: 1.5,
      spanGaps: true,
      points: { show: false },
      value: (u, v) => v == null ? '–' : `${fmt(v)}${unit}`,
      ...(series ? series(n, i) : { stroke: seriesColor(i) })
    }))
    const opts = {
      width: this.width(),
      height,
      scales: {
        x: { time: this.opts.time !== false, ...(xPad ? { range: (u, min, max) => [min - xPad, max + xPad] } : {}) },
        y: {
          range: (u, min, max) => {
            const lo = yMin === null ? min : Math.min(yMin, min ?? yMin)
            let hi = max ?? 1
            if (!(hi > lo)) hi = lo + 1
            return [lo, hi + (hi - lo) * 0.1]
          }
        }
      },
      series: [{ value: (u, v) => v == null ? '–' : new Date(v * 1000).toLocaleTimeString() }, ...ySeries],
      axes: [{}, { size: 52, values: (u, vals) => vals.map(v => fmt(v)) }],
      legend: { live: true },
      cursor: { drag: { x: false, y: false } }
    }
    this.u = new uPlot(opts, data, this.container) // eslint-disable-line no-undef
    this.container.uplot = this.u
  }

  resize () {
    const w = this.width()
    if (w === 0) return
    if (this.pending) { this.flush(); return }
    if (this.u && Math.abs(this.u.width - w) > 1) this.u.setSize({ width: w, height: this.u.height })
  }

  destroy () {
    if (this.u) this.u.destroy()
    this.u = null
    this.names = null
    this.pending = null
    this.container.uplot = null
  }
}

// The phase timeline of a project from its history items ({at, kind, generation, summary,
// detail}): one row per phase interval (from one phase entry to the next; the last one to now),
// with its start time, phase, duration and the reason it was in it (where it waited), and a bar
// placed on a shared time axis (from the first interval shown to now), coloured by phase; one
// row per operation (start, suspend, ...) with a mark at its time. Phase and duration are text,
// the colour only repeats them. `el(tag, props, ...children)` builds an element (app.js).
export function renderPhaseTimeline (ol, items, now, el, max = 60) {
  const rows = []
  const entries = items.filter(i => i.kind === 'phase' || i.kind === 'operation')
    .map(i => ({ ...i, t: Date.parse(i.at) })).filter(i => i.t >= 0)
  const phases = entries.filter(i => i.kind === 'phase')
  for (let k = 0; k < phases.length; ++k) {
    const next = phases[k + 1]
    phases[k].end = next ? next.t : now
    phases[k].ongoing = !next
  }
  const shown = entries.slice(-max)
  if (shown.length === 0) {
    ol.replaceChildren()
    return
  }
  const t0 = shown[0].t
  const span = Math.max(1, now - t0)
  const pct = t => `${Math.max(0, Math.min(100, ((t - t0) / span) * 100)).toFixed(3)}%`
  const time = i => el('time', { className: 'tl-time', dateTime: i.at, textContent: new Date(i.t).toLocaleTimeString(), title: i.at })
  for (const i of shown) {
    if (i.kind === 'operation') {
      const mark = el('span', { className: 'tl-mark', title: `${i.summary} at ${i.at}` })
      mark.style.left = pct(i.t)
      rows.push(el('li', { className: 'tl-op', dataset: { kind: 'operation', operation: i.summary } },
        time(i),
        el('span', { className: 'tl-what', textContent: `▸ ${i.summary}` }),
        el('span', { className: 'tl-gen muted', textContent: `generation ${i.generation}` }),
        el('span', { className: 'tl-track' }, mark)))
      continue
    }
    const d = i.detail || {}
    const dur = i.end - i.t
    const bar = el('span', { className: 'tl-bar', dataset: { phase: i.summary } })
    bar.style.left = pct(i.t)
    bar.style.width = `${Math.max(0, Math.min(100, (dur / span) * 100)).toFixed(3)}%`
    const why = [d.reason, d.message].filter(Boolean).join(': ')
    rows.push(el('li', { className: 'tl-phase', dataset: { kind: 'phase', phase: i.summary, ms: String(dur), ongoing: String(i.ongoing) } },
      time(i),
      el('span', { className: 'tl-what phase', dataset: { phase: i.summary }, textContent: i.summary }),
      el('span', { className: 'tl-dur', textContent: i.ongoing ? `${fmtDuration(dur)} so far` : fmtDuration(dur) }),
      el('span', { className: 'tl-track' }, bar),
      el('span', { className: 'tl-why muted', textContent: why, title: why })))
  }
  ol.replaceChildren(...rows)
}
