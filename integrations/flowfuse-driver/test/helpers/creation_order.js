'use strict'
// The creation-order rule (docs/design.md §3.4, issue 33) over the embedded cluster's audit log, as
// the torture oracle checks it (src/torture/creation_order.h): every successful create (2xx) of
// a project's Service must find the project's Deployment existing when it arrives at the API
// server, and of its Ingresses (main and `<name>-custom`) the project's Service; an MQTT schema
// agent's Service its Deployment. "Existing" at time s: among the dependency's events before s —
// a successful create answered (the line's `time`) at or before s, a delete answered 2xx/202
// that arrived (`startTime`) before s — the latest is a create. A create still in flight, none at
// all, or a delete last (the object terminating or gone) is a violation.
//
// Object names follow the engine's (NamesFor in src/engine/manifests): a project named n has
// the Deployment n, the Service n (or `srv-<n>` when n starts with a digit), the Ingresses n and
// `n-custom`; an agent's Deployment and Service are named as the agent. The records are the
// names given plus every Deployment the log shows created; a Service or Ingress of none of them
// is taken to depend on the object of its own name (without `-custom`).

const crypto = require('node:crypto')

function isDnsLabel (s) {
  return s.length >= 1 && s.length <= 63 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(s)
}

// FitName in src/engine/model/names.cc.
function fitName (base, suffix, max) {
  const whole = base + suffix
  if (whole.length <= max && !base.endsWith('-')) return whole
  const hash = crypto.createHash('sha256').update(base).digest('hex').slice(0, 8)
  const room = max - suffix.length - hash.length - 1
  const cut = base.slice(0, Math.min(room, base.length)).replace(/-+$/, '')
  return cut + (cut ? '-' : '') + hash + suffix
}

// The names of a project's objects (or, for an agent, of its Deployment and Service).
function objectNames (name) {
  const n = isDnsLabel(name) ? name : fitName(name, '', 63)
  const service = /^[0-9]/.test(n) ? fitName('srv-' + n, '', 63) : n
  return { deployment: n, service, ingress: n, customIngress: n + '-custom' }
}

// RFC 3339 with up to microseconds → µs since the epoch.
function micros (text) {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d{1,6})\d*)?(Z|[+-]\d\d:\d\d)$/.exec(text || '')
  if (!m) return null
  const ms = Date.parse(m[1] + m[3])
  if (Number.isNaN(ms)) return null
  return ms * 1000 + Number((m[2] || '').padEnd(6, '0'))
}

// The audit log's writes: {verb, resource, ns, name, code, startUs, endUs}; other lines skipped.
function parseAuditWrites (text) {
  const out = []
  for (const line of text.split('\n')) {
    let e
    try {
      e = JSON.parse(line)
    } catch {
      continue
    }
    if (!e || !['create', 'update', 'patch', 'delete', 'deletecollection'].includes(e.verb)) continue
    const endUs = micros(e.time)
    if (endUs === null) continue
    const startUs = micros(e.startTime) ?? endUs - Math.round((e.latencyMs || 0) * 1000)
    out.push({ verb: e.verb, resource: e.resource || '', ns: e.namespace || '', name: e.name || '', code: e.code || 0, startUs, endUs })
  }
  return out
}

const ok = code => code >= 200 && code < 300
const at = us => new Date(Math.floor(us / 1000)).toISOString().replace('Z', String(us % 1000).padStart(3, '0') + 'Z')
const kinds = { deployments: 'Deployment', services: 'Service', ingresses: 'Ingress' }

// `audit`: the log's text or parseAuditWrites' answer; `names`: records' names (projects and
// agents). Answers {checked, violations}.
function checkCreationOrder (audit, names = []) {
  const writes = typeof audit === 'string' ? parseAuditWrites(audit) : audit
  const dependsOn = new Map() // "resource/name" → "resource/name"
  const bases = new Set(names)
  for (const w of writes) if (w.verb === 'create' && w.resource === 'deployments' && ok(w.code)) bases.add(w.name)
  for (const base of bases) {
    const n = objectNames(base)
    dependsOn.set(`services/${n.service}`, `deployments/${n.deployment}`)
    dependsOn.set(`ingresses/${n.ingress}`, `services/${n.service}`)
    dependsOn.set(`ingresses/${n.customIngress}`, `services/${n.service}`)
  }
  const dependencyOf = w => {
    const known = dependsOn.get(`${w.resource}/${w.name}`)
    if (known) return known
    if (w.resource === 'services') return `deployments/${w.name}`
    if (w.resource === 'ingresses') return `services/${objectNames(w.name.replace(/-custom$/, '')).service}`
    return null
  }
  // Each object's successful creates (at their answer) and deletes (at their arrival).
  const events = new Map()
  for (const w of writes) {
    if (!ok(w.code) || !w.name || (w.verb !== 'create' && w.verb !== 'delete')) continue
    const key = `${w.ns}/${w.resource}/${w.name}`
    if (!events.has(key)) events.set(key, [])
    events.get(key).push(w.verb === 'create' ? { created: true, us: w.endUs, w } : { created: false, us: w.startUs, w })
  }
  const out = { checked: 0, violations: [] }
  for (const w of writes) {
    if (w.verb !== 'create' || !ok(w.code) || !['services', 'ingresses'].includes(w.resource)) continue
    const dep = dependencyOf(w)
    if (!dep) continue
    out.checked++
    const s = w.startUs
    let last = null
    let next = null
    for (const e of events.get(`${w.ns}/${dep}`) || []) {
      const before = e.created ? e.us <= s : e.us < s
      if (!before) {
        if (e.created && (!next || e.us < next.us)) next = e
        continue
      }
      if (!last || e.us > last.us || (e.us === last.us && !e.created)) last = e
    }
    if (last && last.created) continue
    const [depResource, depName] = dep.split('/')
    const depWhat = `${kinds[depResource]} ${depName}`
    let why = last
      ? `${depWhat} was deleted (a delete arrived ${at(last.us)}, answered ${last.w.code}) with no create answered since`
      : `${depWhat} had no create answered before it`
    if (next) why += `; a create of ${depWhat} arrived ${at(next.w.startUs)} and was answered ${at(next.us)}`
    out.violations.push(`${kinds[w.resource]} ${w.name} was created before its ${depWhat} existed (its create arrived ${at(w.startUs)}, answered ${at(w.endUs)}): ${why}`)
  }
  return out
}

module.exports = { checkCreationOrder, parseAuditWrites, objectNames }
