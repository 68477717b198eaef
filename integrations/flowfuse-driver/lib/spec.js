'use strict'
// What the platform knows of an instance, as Steward's project spec (docs/api.md, "Project
// representation"; docs/flowfuse.md maps each driver-k8s input). Operator-wide settings
// (namespace, labels, probes, storage, ...) are Steward's own configuration, not per project.

function safeNameOf (project) {
  return project.safeName || String(project.name || '').toLowerCase()
}

function teamIdOf (app, project) {
  const Team = app?.db?.models?.Team
  if (Team?.encodeHashid && project.TeamId !== undefined && project.TeamId !== null) {
    return Team.encodeHashid(project.TeamId)
  }
  if (project.Team?.hashid) return project.Team.hashid
  throw new Error(`instance ${project.id}: cannot tell its team (no TeamId nor Team.hashid)`)
}

// scheme://host[:port] of a URL the platform keeps for the instance, or '' when it keeps none
// (a new instance's url is not a URL yet). Steward keeps the same three parts (spec.url).
function keptUrl (url) {
  if (typeof url !== 'string' || !/^https?:\/\//.test(url)) return ''
  try {
    const u = new URL(url)
    return `${u.protocol}//${u.hostname}${u.port ? ':' + u.port : ''}`
  } catch (err) {
    return ''
  }
}

function positiveInt (v) {
  const n = typeof v === 'number' ? v : parseInt(v, 10)
  return Number.isInteger(n) && n > 0 ? n : undefined
}

// The stack as Steward's spec.stack: image, cpu (hundredths of a core), memory (MB).
function stackOf (project, driverOptions = {}) {
  const props = project.ProjectStack?.properties || {}
  const stack = {}
  if (props.container) {
    stack.image = props.container
  } else if (driverOptions.registry) {
    // driver-k8s's image when a stack names none: the registry's flowforge/node-red.
    const registry = driverOptions.registry.endsWith('/') ? driverOptions.registry : driverOptions.registry + '/'
    stack.image = `${registry}flowforge/node-red`
  }
  const cpu = positiveInt(props.cpu)
  if (cpu) stack.cpu = cpu
  const memory = positiveInt(props.memory)
  if (memory) stack.memory = memory
  return stack
}

// Where a new instance of the stack goes among Steward's clusters: the stack property
// `placement` Steward offers when it has several ("auto", "cluster=NAME" or labels
// "k=v,k=v"), as spec.placement. Steward uses it only to place a new record, so an instance keeps
// its cluster when its stack changes. undefined for "auto" or when the stack has none.
function placementOf (project) {
  const value = project.ProjectStack?.properties?.placement
  if (typeof value !== 'string' || value === '' || value === 'auto') return undefined
  if (value.startsWith('cluster=')) return { cluster: value.slice('cluster='.length) }
  const labels = {}
  for (const pair of value.split(',')) {
    const at = pair.indexOf('=')
    if (at > 0) labels[pair.slice(0, at).trim()] = pair.slice(at + 1).trim()
  }
  return { labels }
}

// The spec for `project`, without credentials (the caller adds them when it rotates).
async function projectSpec (app, project, driverOptions = {}) {
  const spec = { team: teamIdOf(app, project) }
  const stack = stackOf(project, driverOptions)
  if (Object.keys(stack).length > 0) spec.stack = stack
  const placement = placementOf(project)
  if (placement) spec.placement = placement
  const ha = await project.getSetting('ha')
  const replicas = positiveInt(ha?.replicas)
  if (replicas && replicas > 1) spec.replicas = replicas
  if (driverOptions.customHostname?.enabled) {
    const host = await project.getSetting('customHostname')
    if (host) spec.customHostname = String(host).toLowerCase()
  }
  const url = keptUrl(project.url)
  if (url) spec.url = url
  if (app?.license?.active?.()) spec.licenseType = 'ee'
  return spec
}

// What project.refreshAuthTokens() answers, as spec.credentials (write-only in Steward).
function credentialsOf (tokens, nodeRedSecret) {
  const c = { clientId: tokens.clientID ?? tokens.clientId, clientSecret: tokens.clientSecret, token: tokens.token }
  if (tokens.broker && tokens.broker.url) {
    c.broker = { url: tokens.broker.url, username: tokens.broker.username, password: tokens.broker.password }
  }
  if (nodeRedSecret) c.nodeRedSecret = String(nodeRedSecret)
  return c
}

// The MQTT schema agent of a team broker (BrokerCredentials) or of the team broker itself
// (TeamBrokerAgent), named as driver-k8s names its Deployment.
function agentOf (broker) {
  const teamBroker = broker.constructor?.name === 'TeamBrokerAgent'
  const team = broker.Team?.hashid
  if (!team) throw new Error('broker agent: the broker has no Team loaded')
  const id = teamBroker ? 'team-broker' : broker.hashid
  return {
    name: `mqtt-schema-agent-${team.toLowerCase()}-${id.toLowerCase()}`,
    spec: { team, broker: id }
  }
}

module.exports = { safeNameOf, teamIdOf, keptUrl, stackOf, placementOf, projectSpec, credentialsOf, agentOf }
