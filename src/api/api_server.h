// ApiServer: Steward's REST API (docs/api.md, docs/openapi.yaml) on an HttpServer.
//
// Every intent goes through engine::Intents (committed to the store before the answer); reads
// come from the store; `?wait=` and the watch stream are driven by store listeners (no polling);
// instance operations go through instance::InstanceCalls. Blocking work (store transactions,
// instance calls) runs on the server's own worker threads, never on the HTTP I/O threads.
//
// Lifecycle: Start() registers a store listener, starts the watch fan-out thread (which writes
// each change, rendered once by the listener, to every matching stream; a stream whose client
// leaves over 1 MiB unsent is ended with `event: error`; every change gets a stream-wide
// position, and the most recent ones are kept for clients that resume, ApiOptions::watch_window_*)
// and starts serving; Stop() (idempotent, also run by the destructor) lets the fan-out write what
// is queued, ends open watch streams and resources streams (`end` reason Stopping; over WebSocket
// then a close frame 1001), answers pending waits with their current state, removes the listener
// and stops the HTTP server. The dependencies must outlive the server. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/metrics.h"
#include "common/status.h"
#include "engine/intents/intents.h"
#include "engine/model/project.h"
#include "instance/instance_calls.h"
#include "net/http_server.h"
#include "store/store.h"

namespace steward::api {

struct ApiOptions {
  // Listen address, TLS, I/O threads, connection cap and read deadlines (max_body_bytes is ours).
  net::HttpServer::Options http;
  std::string token;  // the bearer token every /v1 request must carry; required
  // Several clusters: GET /v1/stack offers the "placement" stack property too.
  bool stack_placement = false;
  size_t max_body_bytes = 1024 * 1024;
  // The files routes (/v1/projects/{p}/files...): the largest upload accepted (413 beyond, the
  // body is not read past it) and the largest launcher answer read (502 beyond).
  size_t max_file_bytes = 32u << 20;
  // POST .../flows/restart (one pod at a time): how long each pod may take to answer running
  // again after its restart command.
  std::chrono::milliseconds restart_per_pod{60000};
  // GET .../resources/stream: how often every ready pod's /flowforge/resources is read.
  std::chrono::milliseconds resources_poll{1000};
  std::chrono::milliseconds max_wait{600000};  // the largest ?wait= accepted
  std::chrono::milliseconds keepalive{15000};  // watch-stream comment interval
  int workers = 8;                             // threads for blocking work
  // A PUT with supplied credentials writes their Secret to the cluster before it commits (the
  // API's one Kubernetes write, retried for about 1.5 s when the cluster refuses for now): it
  // runs on threads of its own, so that a slow cluster never holds the workers, with at most
  // `credential_queue` such PUTs waiting for one (503 Unavailable, Retry-After: 1, beyond).
  int credential_workers = 2;
  size_t credential_queue = 64;
  // GET /v1/watch's replay window: the most recent committed changes, as rendered, that a
  // client reconnecting with Last-Event-ID is sent again instead of a snapshot. Bounded by both
  // a count and the rendered bytes (the oldest go first); 0 for either keeps none, so that a
  // resume works only from the current position.
  size_t watch_window_events = 10000;
  size_t watch_window_bytes = 16u << 20;
  // When set, /healthz, /readyz and /metrics are served on this second listener only (no token
  // there, as on the main one), and the main listener answers them 404: probes and scrapes can
  // then reach a port the API's clients cannot, and the API's port shows nothing unauthenticated.
  std::optional<net::HttpServer::Options> probe_http;
};

struct ApiDeps {
  store::Store* store = nullptr;
  engine::Intents* intents = nullptr;            // usually &engine->intents()
  const engine::EngineConfig* config = nullptr;  // namespace, for instance operations
  instance::InstanceCalls* instance = nullptr;   // null: instance operations answer 503
  // Several clusters: each record's instance operations go to its cluster's (`instance` is then
  // not used); null for a cluster this Steward does not run: 503.
  std::function<instance::InstanceCalls*(std::string_view cluster)> instances;
  instance::InstanceCalls* InstanceFor(const store::ProjectRecord& r) const {
    return instances ? instances(r.cluster) : instance;
  }
  MetricsRegistry* metrics = nullptr;  // null: /metrics answers 404
  std::function<Status()> ready;       // /readyz; null: always ready
};

class ApiServer {
 public:
  static StatusOr<std::unique_ptr<ApiServer>> Start(ApiOptions options, ApiDeps deps);
  virtual ~ApiServer() = default;
  virtual uint16_t port() const = 0;
  // The probe listener's port; 0 when there is none.
  virtual uint16_t probe_port() const = 0;
  virtual void Stop() = 0;
};

}  // namespace steward::api
