// App: Steward assembled. Configuration (a YAML file, then command-line overrides) picks the
// cluster (kubeconfig, in-cluster service account, or an embedded cluster in this process), the
// store (SQLite in the data dir), the engine and the API server, and starts them in that order.
// `steward serve` runs one; `steward demo` runs one with the embedded cluster and demo projects.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/embedded_cluster.h"
#include "common/json.h"
#include "common/metrics.h"
#include "common/status.h"
#include "engine/model/project.h"
#include "engine/reconciler/engine.h"
#include "store/store.h"

namespace steward::app {

enum class ClusterSource { kKubeconfig, kInCluster, kEmbedded };
enum class InstanceAccess { kAuto, kDirect, kProxy };  // auto: direct when in-cluster

// The configuration file's shape (YAML or JSON, camelCase keys; unknown keys are refused, naming
// the key with its path; null = absent). docs/operations.md is the reference:
//   listen, dataDir, database, databasePasswordFile, apiTokenFile, apiWorkers, logLevel,
//   api: {maxConnections, readHeaderTimeout, readTimeout}  (the API's HTTP limits),
//   kubernetes: {source: kubeconfig|in-cluster|embedded, kubeconfig, context,
//                embedded: {profile, listen, ingressListen, seed, kubeconfigOut}},
//   clusters: [{name, kubernetes: {...as above}, engine: {...over the top-level engine:},
//               capacity, labels, unreachableGrace}]  (instead of kubernetes:),
//   placement: {requiredLabels, teamAffinity},
//   instance: {access: auto|direct|proxy, timeout},
//   engine: {...}  (engine::ParseEngineConfig, errors named "engine.<field>")
// Most fields have a command-line flag of `steward serve` that wins over the file.
struct ServeConfig {
  std::string listen = "127.0.0.1:8080";  // the API's address; port 0 picks one
  // "" = /healthz, /readyz and /metrics on `listen`; else only on this HOST:PORT (plain HTTP).
  std::string probe_listen;
  std::string data_dir = "steward-data";  // store, API token, embedded cluster state
  std::string database;  // "" = sqlite:<data_dir>/steward.db; "sqlite:PATH"; "postgres://..."
  // The PostgreSQL password: a file, 0600 or stricter (never in the URL). "" = libpq's
  // PGPASSWORD / PGPASSFILE, if any.
  std::string database_password_file;
  std::string api_token_file;  // "" = <data_dir>/api-token, created 0600 if absent
  int api_workers = 8;
  // The API over HTTPS: PEM files of the serving certificate (then intermediates) and its key.
  // Both or neither; read at start.
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string log_level = "info";
  // The API's HTTP limits (net::HttpServer::Options; the `api:` section).
  size_t api_max_connections = 512;
  size_t api_max_connections_per_client = 256;  // the smaller of this and the above applies
  std::chrono::milliseconds api_read_header_timeout{10000};
  std::chrono::milliseconds api_read_timeout{60000};
  // GET /v1/watch's replay window (api::ApiOptions::watch_window_*; `api:` watchWindowEvents,
  // watchWindowBytes).
  size_t api_watch_window_events = 10000;
  size_t api_watch_window_bytes = 16u << 20;
  // PUTs with supplied credentials: their threads and how many may wait for one
  // (api::ApiOptions::credential_*; `api:` credentialWorkers, credentialQueue).
  int api_credential_workers = 2;
  size_t api_credential_queue = 64;

  ClusterSource cluster = ClusterSource::kKubeconfig;
  std::string kubeconfig;  // "" = $KUBECONFIG or ~/.kube/config
  std::string context;     // "" = current-context
  // Embedded cluster (cluster = kEmbedded).
  std::string embedded_profile = "realistic";  // instant | realistic | hostile | FILE
  std::string embedded_listen = "127.0.0.1:0";
  std::string ingress_listen = "127.0.0.1:0";
  uint64_t seed = 1;
  std::string kubeconfig_out;  // write a kubeconfig for the embedded cluster here
  std::string audit_log;       // the embedded API server appends one JSON line per request here

  InstanceAccess instance_access = InstanceAccess::kAuto;
  std::chrono::milliseconds instance_timeout{5000};
  // The files routes' size limit, the HA flow restart's wait per pod, the resources stream's
  // poll interval (api::ApiOptions; `instance:` maxFileBytes, restartPerPod, resourcesPoll).
  size_t instance_max_file_bytes = 32u << 20;
  std::chrono::milliseconds instance_restart_per_pod{60000};
  std::chrono::milliseconds instance_resources_poll{1000};

  engine::EngineConfig engine;  // the `engine:` section (ParseEngineConfig)

  // Several clusters (`clusters:`; docs/operations.md "Several clusters"). Empty: one cluster,
  // "default", reached as the top-level fields above say (kubernetes:, engine: and their flags).
  struct Cluster {
    std::string name;  // a DNS label, unique; what records are placed on
    // How it is reached: the top-level fields of the same names, for this cluster.
    ClusterSource cluster = ClusterSource::kKubeconfig;
    std::string kubeconfig, context;
    std::string embedded_profile = "realistic";
    std::string embedded_listen = "127.0.0.1:0";
    std::string ingress_listen = "127.0.0.1:0";
    uint64_t seed = 0;  // 0: the cluster's position in the list (1, 2, ...): each its own
    std::string kubeconfig_out, audit_log;
    // The top-level `engine:` with this cluster's `engine:` merged over it, key by key.
    engine::EngineConfig engine;
    int64_t capacity = 0;                       // records placed on it at most; 0 = no limit
    std::map<std::string, std::string> labels;  // what placement.requiredLabels and
                                                // spec.placement.labels match
    // How long its API server may be unreachable before its records say so.
    std::chrono::milliseconds unreachable_grace{30000};
  };
  std::vector<Cluster> clusters;
  struct Placement {
    std::map<std::string, std::string> required_labels;
    bool team_affinity = false;  // a team's new records go where its others are, if room
  } placement;

  // Several replicas sharing one database (`replicas:`; docs/operations.md "Several replicas"):
  // {enabled, name, shards, leaseDuration, renewDeadline, retryPeriod, leases}. Enabled by
  // `enabled: true` or by a name (--replica-name); the name defaults to the host name.
  struct Replicas {
    bool enabled = false;
    std::string name;  // "" = the host name (must then be a DNS label)
    int shards = 64;   // 1..4096, the same on every replica
    std::chrono::milliseconds lease_duration{15000};  // whole seconds, >= 1s
    std::chrono::milliseconds renew_deadline{10000};  // < lease_duration
    std::chrono::milliseconds retry_period{2000};     // < renew_deadline
    // Where the replicas' Leases live: "kubernetes" (the first cluster's namespace), "store"
    // (the shared database), "" = the store with several clusters, else Kubernetes.
    std::string leases;
  } replicas;
};

// Parses a configuration document (YAML or JSON). kInvalidArgument naming the key
// ("kubernetes.profile: ...") for unknown keys, wrong types or bad values.
StatusOr<ServeConfig> ParseServeConfig(std::string_view text);
// Reads and parses a file; errors are prefixed "config file PATH: " (kNotFound when absent).
StatusOr<ServeConfig> LoadServeConfig(const std::string& path);

// The clusters Steward runs: `config.clusters`, or the one named "default" made of the
// top-level fields when that is empty.
std::vector<ServeConfig::Cluster> EffectiveClusters(const ServeConfig& config);

// A duration value of the configuration: a string in common/duration.h's syntax ("500ms",
// "1.5s", "2m", "1h", "7") or a JSON integer of seconds. kInvalidArgument naming `path` otherwise.
StatusOr<std::chrono::milliseconds> ParseDuration(const Json& j, std::string_view path);

class App {
 public:
  // Starts everything; on failure stops what was started and returns why (kInvalidArgument for
  // configuration, kUnavailable for an unreachable cluster, ...). Order: local checks (database
  // URL — a postgres:// one with a password is refused —, data dir created (0700; an existing one
  // open to group or others is used with a warning), kubeconfig / service account read;
  // kFailedPrecondition naming the path), the API token (api_token_file must exist and hold one
  // non-empty word; the default <data_dir>/api-token is created 0600 with a random 64-hex token
  // when absent, and tightened to 0600 with a warning when looser), the cluster (embedded: state in
  // <data_dir>/cluster, the engine's namespace created; real: GET /version must answer), the store,
  // the engine (started, caches synced), the API server. With an embedded cluster engine.urlPort 0
  // becomes the ingress listener's port (http) and HTTP probes go to that listener.
  static StatusOr<std::unique_ptr<App>> Start(ServeConfig config);
  virtual ~App() = default;

  virtual std::string api_url() const = 0;    // http://host:port
  virtual std::string probe_url() const = 0;  // http://host:port; "" without probeListen
  virtual std::string api_token() const = 0;
  virtual std::string api_token_file() const = 0;
  virtual cluster::EmbeddedCluster* embedded_cluster() = 0;  // the first cluster's; or null
  virtual store::Store& store() = 0;
  virtual engine::Engine& engine() = 0;  // the first cluster's
  virtual MetricsRegistry& metrics() = 0;
  // Several clusters: their names in configuration order, and each one's parts by name (null
  // for a name not configured; the embedded cluster null unless that cluster is embedded).
  virtual std::vector<std::string> cluster_names() const = 0;
  virtual cluster::EmbeddedCluster* embedded_cluster_of(std::string_view name) = 0;
  virtual engine::Engine* engine_of(std::string_view name) = 0;
  // The intents the API serves: they place new records on the clusters (engine/intents/
  // placement.h). Each engine's own intents() knows its cluster only.
  virtual engine::Intents& intents() = 0;
  // Stops the API, then the engine, then the embedded cluster. Idempotent.
  virtual void Stop() = 0;
};

}  // namespace steward::app
