'use strict'
// docs/openapi.yaml as a checker of real answers: finds the operation a request reached (method
// and path template), and checks that the answer's status code is one the operation lists and
// that a JSON body matches the schema the document gives for that code (ajv, OpenAPI 3.0's
// `nullable` included). It also counts which operations were exercised, so a test can say which
// parts of the document no answer has checked.

const fs = require('node:fs')
const path = require('node:path')
const YAML = require('yaml')
const Ajv = require('ajv')
const addFormats = require('ajv-formats')

const DOCUMENT = path.join(__dirname, '..', '..', 'docs', 'openapi.yaml')
const METHODS = ['get', 'put', 'post', 'delete', 'head', 'patch', 'options']

// RFC 6901: "/" → "~1", "~" → "~0".
const pointerPart = s => String(s).replace(/~/g, '~0').replace(/\//g, '~1')

class OpenApi {
  constructor (file = DOCUMENT) {
    this.doc = YAML.parse(fs.readFileSync(file, 'utf8'))
    this.ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false })
    addFormats(this.ajv)
    this.ajv.addSchema(this.doc, 'openapi')
    this.validators = new Map()
    this.exercised = new Map() // "GET /v1/projects/{project}" → Set of status codes seen
    // Templates with more literal segments first, so "/files/{path}" does not take "/files".
    this.templates = Object.keys(this.doc.paths).map(t => {
      const segments = t.split('/').slice(1)
      const last = segments.length - 1
      const re = segments.map((s, i) => {
        if (!/^\{.+\}$/.test(s)) return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
        return i === last && s === '{path}' ? '(.+)' : '([^/]+)'
      }).join('/')
      return { template: t, re: new RegExp('^/' + re + '$'), literal: segments.filter(s => !s.startsWith('{')).length }
    }).sort((a, b) => b.literal - a.literal)
  }

  operations () {
    const out = []
    for (const [t, item] of Object.entries(this.doc.paths)) {
      for (const m of METHODS) if (item[m]) out.push(`${m.toUpperCase()} ${t}`)
    }
    return out
  }

  templateOf (urlPath) {
    const p = urlPath.split('?')[0]
    const hit = this.templates.find(t => t.re.test(p))
    return hit ? hit.template : null
  }

  // Throws (an assertion-style Error naming the operation) when the answer is not one the
  // document describes. `res`: {status, headers, text}.
  check (method, urlPath, res) {
    const template = this.templateOf(urlPath)
    if (!template) throw new Error(`${method} ${urlPath}: no path of docs/openapi.yaml matches`)
    const m = method.toLowerCase()
    const op = this.doc.paths[template][m]
    if (!op) throw new Error(`${method} ${template}: not in docs/openapi.yaml`)
    const key = `${method.toUpperCase()} ${template}`
    if (!this.exercised.has(key)) this.exercised.set(key, new Set())
    this.exercised.get(key).add(res.status)
    const code = String(res.status)
    let where = ['paths', template, m, 'responses']
    let response
    for (const c of [code, `${code[0]}XX`, 'default']) {
      if (op.responses[c]) {
        response = op.responses[c]
        where = [...where, c]
        break
      }
    }
    if (!response) {
      throw new Error(`${key} answered ${code}, which docs/openapi.yaml does not list (it lists ${Object.keys(op.responses).join(', ')}): ${res.text.slice(0, 300)}`)
    }
    if (response.$ref) {
      const name = response.$ref.replace('#/components/responses/', '')
      response = this.doc.components.responses[name]
      where = ['components', 'responses', name]
    }
    const type = String(res.headers['content-type'] || '').split(';')[0].trim()
    if (method.toUpperCase() === 'HEAD' || res.status === 204 || res.status === 101) return
    const content = response.content || {}
    if (!type) {
      if (res.text.length) throw new Error(`${key} ${code}: a body without a Content-Type`)
      return
    }
    if (!content[type]) {
      throw new Error(`${key} ${code}: Content-Type ${type}, the document gives ${Object.keys(content).join(', ') || 'no body'}`)
    }
    if (type === 'text/event-stream') return this.checkEvents(key, code, response, where, res.text)
    if (type !== 'application/json' || !content[type].schema) return
    let body
    try {
      body = JSON.parse(res.text)
    } catch (err) {
      throw new Error(`${key} ${code}: a body that is not JSON: ${res.text.slice(0, 200)}`)
    }
    this.validate(`${key} ${code}: the body`, [...where, 'content', 'application/json', 'schema'], body)
  }

  // The schema at `path` (keys from the document's root) against `value`; throws naming `what`.
  validate (what, path, value) {
    const pointer = '/' + path.map(pointerPart).join('/')
    let validate = this.validators.get(pointer)
    if (!validate) {
      validate = this.ajv.compile({ $ref: 'openapi#' + pointer })
      this.validators.set(pointer, validate)
    }
    if (!validate(value)) {
      throw new Error(`${what} does not match docs/openapi.yaml: ${this.ajv.errorsText(validate.errors)}\n${JSON.stringify(value).slice(0, 600)}`)
    }
  }

  // A server-sent events body: every event's data against the response's x-event-data schema
  // for that event name (comments and a last unfinished event aside). Returns the events.
  checkEvents (key, code, response, where, text) {
    const schemas = response['x-event-data']
    if (!schemas) throw new Error(`${key} ${code}: an event stream with no x-event-data in docs/openapi.yaml`)
    const events = []
    for (const block of text.split(/\r?\n\r?\n/).slice(0, -1)) {
      let event = 'message'
      const data = []
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith('event:')) event = line.slice(6).trim()
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''))
      }
      if (!data.length) continue // a keep-alive comment
      if (!schemas[event]) throw new Error(`${key} ${code}: event '${event}', which x-event-data does not describe`)
      const value = JSON.parse(data.join('\n'))
      this.validate(`${key} ${code}: event '${event}'`, [...where, 'x-event-data', event], value)
      events.push({ event, data: value })
    }
    return events
  }

  // Names of components no $ref reaches (the x-event-data extensions included).
  unusedComponents () {
    const refs = new Set()
    const walk = v => {
      if (Array.isArray(v)) return v.forEach(walk)
      if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          if (k === '$ref' && typeof x === 'string') refs.add(x)
          else walk(x)
        }
      }
    }
    walk(this.doc)
    const unused = []
    for (const [section, entries] of Object.entries(this.doc.components || {})) {
      if (section === 'securitySchemes') continue
      for (const name of Object.keys(entries)) {
        if (!refs.has(`#/components/${section}/${name}`)) unused.push(`${section}/${name}`)
      }
    }
    return unused
  }
}

module.exports = { OpenApi, DOCUMENT }
