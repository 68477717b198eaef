// Renders an MQTT schema agent with FlowFuse driver-k8s's own code (kubernetes.js
// startBrokerAgent → createMQTTTopicAgent), its Kubernetes clients stubbed to record the bodies
// they are given; prints them as a v1 List. This is how driver_k8s_agent.json,
// driver_k8s_team_broker_agent.json (8576aec) and driver_k8s_agent_pod.json (717551a, before
// v2.31.0) were made (no network, no dependency installed: every module other than
// ./templates.js is a stub).
//
//   git -C driver-k8s show 8576aec:kubernetes.js > dir/kubernetes.js   (and templates.js)
//   node render_driver_k8s_agent.js dir TmPh BkPh TOKENPH                 # a broker
//   node render_driver_k8s_agent.js dir TmPh team-broker TOKENPH          # the team broker
// then TmPh → @TEAM@, tmph → @TEAM_LC@, BkPh → @BROKER@, bkph → @BROKER_LC@,
// TOKENPH → @TOKEN@, tbaph → @TEAM_BROKER_HASHID_LC@.
'use strict'
const fs = require('fs')
const path = require('path')

const [dir, team, broker, token] = process.argv.slice(2)
const src = fs.readFileSync(path.join(dir, 'kubernetes.js'), 'utf8')
// The module's top-level `this` (its first exports object) holds _app, _k8sApi, ...: run the
// source with an exports object of ours so they can be set.
const self = {}
const mod = { exports: self }
const stub = new Proxy(function () {}, { get: () => ({}) })
const req = (name) => (name === './templates.js' ? require(path.resolve(dir, 'templates.js')) : stub)
new Function('exports', 'require', 'module', '__filename', '__dirname', src)
  .call(self, self, req, mod, path.join(dir, 'kubernetes.js'), dir)

const created = []
const record = async ({ body }) => { created.push(body) }
self._app = {
  log: { info () {}, debug () {}, error (m) { console.error(m) } },
  config: { api_url: 'http://forge.localhost', driver: { options: {} } }
}
self._namespace = 'flowforge'
self._k8sApi = { createNamespacedPod: record, createNamespacedService: record }
self._k8sAppApi = { createNamespacedDeployment: record }
console.debug = () => {}

class TeamBrokerAgent {}
const b = broker === 'team-broker'
  ? Object.assign(new TeamBrokerAgent(), { hashid: 'TbaPh' })
  : { hashid: broker }
b.Team = { hashid: team }
b.refreshAuthTokens = async () => ({ token })
mod.exports.startBrokerAgent(b)
setTimeout(() => {
  console.log(JSON.stringify({ apiVersion: 'v1', kind: 'List', items: created }, null, 2))
}, 100)
