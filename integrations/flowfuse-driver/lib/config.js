'use strict'
// The driver's configuration: `driver.options.steward` in flowforge.yml, then the environment
// the steward CLI reads (STEWARD_SERVER, STEWARD_TOKEN, STEWARD_TOKEN_FILE, STEWARD_CA_FILE).

const fs = require('node:fs')

const MINUTE = 60000

const DEFAULTS = {
  requestTimeout: 30000, // one API request
  startTimeout: 30 * MINUTE, // start(): until Running (Steward itself reports Failed after its stepTimeoutSeconds)
  stopTimeout: 10 * MINUTE, // stop(): until Suspended
  removeTimeout: 10 * MINUTE, // remove(): until purged
  restartPerPodTimeout: 90000, // restartFlows(): per replica
  pollInterval: 30000, // a waiter asks for its record this often too, should the watch be wedged
  watchBackoffInitial: 500,
  watchBackoffMax: 30000
}

// driver-k8s options that Steward takes from its own configuration (docs/flowfuse.md): the
// driver warns when it sees them, since setting them here changes nothing.
const STEWARD_SIDE_OPTIONS = {
  projectNamespace: 'engine.namespace',
  registrySecrets: 'engine.imagePullSecrets',
  projectSelector: 'engine.nodeSelector',
  projectLabels: 'engine.labels',
  projectProbes: 'engine.probes',
  projectIngressAnnotations: 'engine.ingressAnnotations',
  certManagerIssuer: 'engine.certManagerIssuer',
  cloudProvider: 'engine.podSecurityContext / engine.containerSecurityContext',
  privateCA: 'engine.privateCA',
  storage: 'engine.storage',
  podSecurityContext: 'engine.podSecurityContext',
  containerSecurityContext: 'engine.containerSecurityContext',
  service: 'engine.serviceType',
  schedulerName: 'engine.schedulerName',
  logPassthrough: 'engine.logPassthrough',
  mqttSchemaContainer: 'engine.mqttSchemaContainer',
  k8sDelay: '(nothing: Steward watches and retries with backoff)',
  k8sRetries: '(nothing: Steward watches and retries with backoff)'
}

function readConfig (driverOptions = {}, env = process.env) {
  const s = driverOptions.steward || {}
  const url = s.url || env.STEWARD_SERVER
  if (!url) throw new Error('Steward driver: no API URL (driver.options.steward.url or $STEWARD_SERVER)')
  let token = s.token || ''
  let tokenFile = s.tokenFile || ''
  if (!token && !tokenFile) {
    token = env.STEWARD_TOKEN || ''
    tokenFile = token ? '' : env.STEWARD_TOKEN_FILE || ''
  }
  if (!token && !tokenFile) {
    throw new Error('Steward driver: no API token (driver.options.steward.token or tokenFile, $STEWARD_TOKEN or $STEWARD_TOKEN_FILE)')
  }
  const caFile = s.caFile || env.STEWARD_CA_FILE || ''
  const ca = caFile ? fs.readFileSync(caFile, 'utf8') : undefined
  const cfg = { url, token, tokenFile, caFile, ca }
  for (const [k, v] of Object.entries(DEFAULTS)) {
    const given = s[k]
    if (given === undefined) {
      cfg[k] = v
    } else if (typeof given !== 'number' || !(given > 0)) {
      throw new Error(`Steward driver: steward.${k} must be a positive number of milliseconds (got ${JSON.stringify(given)})`)
    } else {
      cfg[k] = given
    }
  }
  cfg.reconcileAtInit = s.reconcileAtInit === true
  return cfg
}

module.exports = { readConfig, DEFAULTS, STEWARD_SIDE_OPTIONS }
