#include <cerrno>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include "app/app.h"
#include "common/duration.h"
#include "common/fields.h"
#include "common/host_port.h"
#include "common/yaml.h"
#include "engine/model/value_rules.h"
#include "store/postgres_store.h"

namespace steward::app {
namespace {

// The config file's own keys, in its YAML wording ("unknown key", "a mapping").
StatusOr<FieldReader> Section(const Json* j, std::string path) {
  return FieldReader::Of(j, std::move(path), FieldStyle::kConfig);
}

// HOST:PORT or [v6]:PORT with a port in 0..65535 (0 = any free port).
Status CheckListen(std::string_view text, std::string_view path) {
  std::string host;
  uint16_t port = 0;
  if (!SplitHostPort(std::string(text), &host, &port)) {
    return InvalidField(path, "expected HOST:PORT (got \"" + std::string(text) + "\")");
  }
  return Status::Ok();
}

Status ParseDatabase(const FieldReader& s, ServeConfig* config) {
  RETURN_IF_ERROR(s.String("database", &config->database));
  RETURN_IF_ERROR(s.String("databasePasswordFile", &config->database_password_file));
  const std::string& d = config->database;
  const bool postgres = d.rfind("postgres://", 0) == 0 || d.rfind("postgresql://", 0) == 0;
  if (!config->database_password_file.empty() && !postgres) {
    return InvalidField(s.PathOf("databasePasswordFile"), "only for a postgres:// database");
  }
  if (postgres) {
    Status url = store::ValidatePostgresUrl(d);
    if (!url.ok()) {
      // The store's message starts with "database: ".
      return InvalidField(s.PathOf("database"), url.message().substr(url.message().find(':') + 2));
    }
    return Status::Ok();
  }
  if (d.empty()) return Status::Ok();
  if (d.rfind("sqlite:", 0) == 0 && d.size() > 7) return Status::Ok();
  return InvalidField(s.PathOf("database"),
                      "must be sqlite:PATH or postgres://... (got \"" + d.substr(0, 64) + "\")");
}

// `kubernetes:` at the top level (Out = ServeConfig) or of a cluster (ServeConfig::Cluster): the
// same fields by the same names.
template <typename Out>
Status ParseEmbedded(const Json* j, const std::string& path, Out* out) {
  ASSIGN_OR_RETURN(FieldReader s, Section(j, path));
  RETURN_IF_ERROR(
      s.OnlyKnown({"profile", "listen", "ingressListen", "seed", "kubeconfigOut", "auditLog"}));
  RETURN_IF_ERROR(s.NonEmptyString("profile", &out->embedded_profile));
  RETURN_IF_ERROR(s.String("listen", &out->embedded_listen));
  RETURN_IF_ERROR(CheckListen(out->embedded_listen, s.PathOf("listen")));
  RETURN_IF_ERROR(s.String("ingressListen", &out->ingress_listen));
  RETURN_IF_ERROR(CheckListen(out->ingress_listen, s.PathOf("ingressListen")));
  if (const Json* seed = s.Find("seed")) {
    if (!seed->is_number_integer() || (!seed->is_number_unsigned() && seed->get<int64_t>() < 0)) {
      return InvalidField(
          s.PathOf("seed"),
          "must be a non-negative integer (got " +
              (seed->is_number_integer() ? seed->dump() : std::string(JsonTypeName(*seed))) + ")");
    }
    out->seed = seed->get<uint64_t>();
  }
  RETURN_IF_ERROR(s.String("auditLog", &out->audit_log));
  return s.String("kubeconfigOut", &out->kubeconfig_out);
}

template <typename Out>
Status ParseKubernetes(const Json* j, const std::string& path, Out* out) {
  ASSIGN_OR_RETURN(FieldReader s, Section(j, path));
  RETURN_IF_ERROR(s.OnlyKnown({"source", "kubeconfig", "context", "embedded"}));
  std::string source = "kubeconfig";
  RETURN_IF_ERROR(s.OneOf("source", {"kubeconfig", "in-cluster", "embedded"}, &source));
  out->cluster = source == "embedded"     ? ClusterSource::kEmbedded
                 : source == "in-cluster" ? ClusterSource::kInCluster
                                          : ClusterSource::kKubeconfig;
  RETURN_IF_ERROR(s.String("kubeconfig", &out->kubeconfig));
  RETURN_IF_ERROR(s.String("context", &out->context));
  if (out->cluster == ClusterSource::kInCluster &&
      (!out->kubeconfig.empty() || !out->context.empty())) {
    return InvalidField(s.PathOf(out->kubeconfig.empty() ? "context" : "kubeconfig"),
                        "not used with source: in-cluster");
  }
  return ParseEmbedded(s.Find("embedded"), s.PathOf("embedded"), out);
}

Status ParseTls(const Json* j, ServeConfig* out) {
  ASSIGN_OR_RETURN(FieldReader s, Section(j, "tls"));
  RETURN_IF_ERROR(s.OnlyKnown({"certFile", "keyFile"}));
  RETURN_IF_ERROR(s.String("certFile", &out->tls_cert_file));
  RETURN_IF_ERROR(s.String("keyFile", &out->tls_key_file));
  if (out->tls_cert_file.empty() != out->tls_key_file.empty()) {
    return InvalidField(
        s.PathOf(out->tls_cert_file.empty() ? "certFile" : "keyFile"),
        "required with " + s.PathOf(out->tls_cert_file.empty() ? "keyFile" : "certFile"));
  }
  return Status::Ok();
}

// A duration key of `s` within [lo, hi]; left as it is when absent.
Status BoundedDuration(const FieldReader& s, std::string_view name, std::chrono::milliseconds lo,
                       std::chrono::milliseconds hi, std::string_view range,
                       std::chrono::milliseconds* out) {
  const Json* t = s.Find(name);
  if (t == nullptr) return Status::Ok();
  auto d = ParseDuration(*t, s.PathOf(name));
  if (!d.ok()) return d.status();
  if (*d < lo || *d > hi) {
    return InvalidField(s.PathOf(name),
                        "must be between " + std::string(range) + " (got " + t->dump() + ")");
  }
  *out = *d;
  return Status::Ok();
}

Status ParseApi(const Json* j, ServeConfig* out) {
  ASSIGN_OR_RETURN(FieldReader s, Section(j, "api"));
  RETURN_IF_ERROR(s.OnlyKnown({"maxConnections", "maxConnectionsPerClient", "readHeaderTimeout",
                               "readTimeout", "watchWindowEvents", "watchWindowBytes",
                               "credentialWorkers", "credentialQueue"}));
  int64_t max_connections = static_cast<int64_t>(out->api_max_connections);
  RETURN_IF_ERROR(s.Int("maxConnections", 1, 1000000, &max_connections));
  out->api_max_connections = static_cast<size_t>(max_connections);
  int64_t per_client = static_cast<int64_t>(out->api_max_connections_per_client);
  RETURN_IF_ERROR(s.Int("maxConnectionsPerClient", 1, 1000000, &per_client));
  out->api_max_connections_per_client = static_cast<size_t>(per_client);
  RETURN_IF_ERROR(BoundedDuration(s, "readHeaderTimeout", std::chrono::milliseconds(1),
                                  std::chrono::hours(1), "1ms and 1h",
                                  &out->api_read_header_timeout));
  RETURN_IF_ERROR(BoundedDuration(s, "readTimeout", std::chrono::milliseconds(1),
                                  std::chrono::hours(1), "1ms and 1h", &out->api_read_timeout));
  int64_t window_events = static_cast<int64_t>(out->api_watch_window_events);
  RETURN_IF_ERROR(s.Int("watchWindowEvents", 0, 10000000, &window_events));
  out->api_watch_window_events = static_cast<size_t>(window_events);
  int64_t window_bytes = static_cast<int64_t>(out->api_watch_window_bytes);
  RETURN_IF_ERROR(s.Int("watchWindowBytes", 0, int64_t{1} << 34, &window_bytes));
  out->api_watch_window_bytes = static_cast<size_t>(window_bytes);
  int64_t credential_workers = out->api_credential_workers;
  RETURN_IF_ERROR(s.Int("credentialWorkers", 1, 256, &credential_workers));
  out->api_credential_workers = static_cast<int>(credential_workers);
  int64_t credential_queue = static_cast<int64_t>(out->api_credential_queue);
  RETURN_IF_ERROR(s.Int("credentialQueue", 1, 100000, &credential_queue));
  out->api_credential_queue = static_cast<size_t>(credential_queue);
  return Status::Ok();
}

Status ParseInstance(const Json* j, ServeConfig* out) {
  ASSIGN_OR_RETURN(FieldReader s, Section(j, "instance"));
  RETURN_IF_ERROR(
      s.OnlyKnown({"access", "timeout", "maxFileBytes", "restartPerPod", "resourcesPoll"}));
  int64_t max_file = static_cast<int64_t>(out->instance_max_file_bytes);
  RETURN_IF_ERROR(s.Int("maxFileBytes", 1, int64_t{1} << 34, &max_file));
  out->instance_max_file_bytes = static_cast<size_t>(max_file);
  RETURN_IF_ERROR(BoundedDuration(s, "restartPerPod", std::chrono::seconds(1),
                                  std::chrono::hours(1), "1s and 1h",
                                  &out->instance_restart_per_pod));
  RETURN_IF_ERROR(BoundedDuration(s, "resourcesPoll", std::chrono::milliseconds(100),
                                  std::chrono::minutes(1), "100ms and 1m",
                                  &out->instance_resources_poll));
  std::string access = "auto";
  RETURN_IF_ERROR(s.OneOf("access", {"auto", "direct", "proxy"}, &access));
  out->instance_access = access == "direct"  ? InstanceAccess::kDirect
                         : access == "proxy" ? InstanceAccess::kProxy
                                             : InstanceAccess::kAuto;
  if (const Json* t = s.Find("timeout")) {
    auto d = ParseDuration(*t, s.PathOf("timeout"));
    if (!d.ok()) return d.status();
    if (*d < std::chrono::milliseconds(1) || *d > std::chrono::minutes(10)) {
      return InvalidField(s.PathOf("timeout"),
                          "must be between 1ms and 10m (got " + t->dump() + ")");
    }
    out->instance_timeout = *d;
  }
  return Status::Ok();
}

Status ParseReplicas(const Json* j, ServeConfig* out) {
  ASSIGN_OR_RETURN(FieldReader s, Section(j, "replicas"));
  RETURN_IF_ERROR(s.OnlyKnown(
      {"enabled", "name", "shards", "leaseDuration", "renewDeadline", "retryPeriod", "leases"}));
  ServeConfig::Replicas& r = out->replicas;
  if (s.Find("leases") != nullptr) {  // absent: decided by the clusters (ServeConfig::Replicas)
    RETURN_IF_ERROR(s.OneOf("leases", {"kubernetes", "store"}, &r.leases));
  }
  RETURN_IF_ERROR(s.String("name", &r.name));
  if (!r.name.empty() && !engine::IsDns1123Label(r.name)) {
    return InvalidField(s.PathOf("name"),
                        "must be a DNS label (got \"" + r.name.substr(0, 64) + "\")");
  }
  r.enabled = !r.name.empty();
  RETURN_IF_ERROR(s.Bool("enabled", &r.enabled));
  int64_t shards = r.shards;
  RETURN_IF_ERROR(s.Int("shards", 1, 4096, &shards));
  r.shards = static_cast<int>(shards);
  RETURN_IF_ERROR(BoundedDuration(s, "leaseDuration", std::chrono::seconds(1),
                                  std::chrono::hours(1), "1s and 1h", &r.lease_duration));
  if (r.lease_duration % std::chrono::seconds(1) != std::chrono::milliseconds(0)) {
    return InvalidField(s.PathOf("leaseDuration"),
                        "must be whole seconds (a Lease's leaseDurationSeconds)");
  }
  RETURN_IF_ERROR(BoundedDuration(s, "renewDeadline", std::chrono::milliseconds(1),
                                  std::chrono::hours(1), "1ms and 1h", &r.renew_deadline));
  RETURN_IF_ERROR(BoundedDuration(s, "retryPeriod", std::chrono::milliseconds(1),
                                  std::chrono::hours(1), "1ms and 1h", &r.retry_period));
  if (r.renew_deadline >= r.lease_duration) {
    return InvalidField(s.PathOf("renewDeadline"), "must be less than leaseDuration");
  }
  if (r.retry_period >= r.renew_deadline) {
    return InvalidField(s.PathOf("retryPeriod"), "must be less than renewDeadline");
  }
  return Status::Ok();
}

// A map of label keys to values (placement matches them): checked as Kubernetes labels.
Status ParseLabels(const FieldReader& s, std::string_view name,
                   std::map<std::string, std::string>* out) {
  RETURN_IF_ERROR(s.StringMap(name, out));
  return engine::internal::CheckLabels(*out, s.PathOf(name), /*refuse_reserved=*/false);
}

// One entry of `clusters:`; its `engine:` is merged over the top-level one (`base`), key by key.
Status ParseCluster(const Json& j, const std::string& path, const Json* base,
                    ServeConfig::Cluster* out) {
  ASSIGN_OR_RETURN(FieldReader s, Section(&j, path));
  RETURN_IF_ERROR(
      s.OnlyKnown({"name", "kubernetes", "engine", "capacity", "labels", "unreachableGrace"}));
  if (s.Find("name") == nullptr) return InvalidField(s.PathOf("name"), "is required");
  RETURN_IF_ERROR(s.String("name", &out->name));
  if (!engine::IsDns1123Label(out->name)) {
    return InvalidField(s.PathOf("name"),
                        "must be a DNS label (got \"" + out->name.substr(0, 64) + "\")");
  }
  RETURN_IF_ERROR(ParseKubernetes(s.Find("kubernetes"), s.PathOf("kubernetes"), out));
  Json engine = base != nullptr && base->is_object() ? *base : Json::object();
  if (const Json* own = s.Find("engine")) {
    ASSIGN_OR_RETURN(FieldReader e, Section(own, s.PathOf("engine")));
    (void)e;  // a mapping (or null); its keys are checked by the engine's parser below
    if (own->is_object()) {
      for (const auto& [key, value] : own->items()) engine[key] = value;
    }
  }
  ASSIGN_OR_RETURN(out->engine, engine::ParseEngineConfig(engine, s.PathOf("engine")));
  RETURN_IF_ERROR(s.Int("capacity", 0, 10000000, &out->capacity));
  RETURN_IF_ERROR(ParseLabels(s, "labels", &out->labels));
  return BoundedDuration(s, "unreachableGrace", std::chrono::seconds(1), std::chrono::hours(1),
                         "1s and 1h", &out->unreachable_grace);
}

Status ParseClusters(const Json* j, const Json* engine, ServeConfig* out) {
  if (j == nullptr || j->is_null()) return Status::Ok();
  if (!j->is_array()) {
    return InvalidField("clusters", "must be a list (got " + std::string(JsonTypeName(*j)) + ")");
  }
  if (j->empty()) return InvalidField("clusters", "must list at least one cluster");
  if (j->size() > 64) return InvalidField("clusters", "at most 64 clusters");
  std::set<std::string> names;
  for (size_t i = 0; i < j->size(); ++i) {
    ServeConfig::Cluster c;
    const std::string path = "clusters[" + std::to_string(i) + "]";
    RETURN_IF_ERROR(ParseCluster((*j)[i], path, engine, &c));
    if (!names.insert(c.name).second) {
      return InvalidField(path + ".name", "\"" + c.name + "\" is listed twice");
    }
    if (c.seed == 0) c.seed = i + 1;
    out->clusters.push_back(std::move(c));
  }
  return Status::Ok();
}

Status ParsePlacement(const Json* j, ServeConfig* out) {
  ASSIGN_OR_RETURN(FieldReader s, Section(j, "placement"));
  RETURN_IF_ERROR(s.OnlyKnown({"requiredLabels", "teamAffinity"}));
  RETURN_IF_ERROR(ParseLabels(s, "requiredLabels", &out->placement.required_labels));
  return s.Bool("teamAffinity", &out->placement.team_affinity);
}

}  // namespace

std::vector<ServeConfig::Cluster> EffectiveClusters(const ServeConfig& config) {
  if (!config.clusters.empty()) return config.clusters;
  ServeConfig::Cluster one;
  one.name = "default";
  one.cluster = config.cluster;
  one.kubeconfig = config.kubeconfig;
  one.context = config.context;
  one.embedded_profile = config.embedded_profile;
  one.embedded_listen = config.embedded_listen;
  one.ingress_listen = config.ingress_listen;
  one.seed = config.seed;
  one.kubeconfig_out = config.kubeconfig_out;
  one.audit_log = config.audit_log;
  one.engine = config.engine;
  return {one};
}

StatusOr<std::chrono::milliseconds> ParseDuration(const Json& j, std::string_view path) {
  if (j.is_number_integer()) {
    if (!j.is_number_unsigned() && j.get<int64_t>() < 0) {
      return InvalidField(path, "must be a non-negative duration (got " + j.dump() + ")");
    }
    if (j.get<uint64_t>() > 999999999) {
      return InvalidField(path,
                          "must be a duration of at most 999999999 seconds (got " + j.dump() + ")");
    }
    return std::chrono::milliseconds(j.get<int64_t>() * 1000);
  }
  if (!j.is_string()) {
    return InvalidField(path, "must be a duration " + std::string(kDurationForms) + " (got " +
                                  std::string(JsonTypeName(j)) + ")");
  }
  const std::string s = j.get<std::string>();
  auto d = steward::ParseDuration(s);
  if (!d) {
    return InvalidField(path, "must be a duration " + std::string(kDurationForms) + " (got \"" +
                                  s.substr(0, 64) + "\")");
  }
  return *d;
}

StatusOr<ServeConfig> ParseServeConfig(std::string_view text) {
  ASSIGN_OR_RETURN(Json doc, ParseYaml(text));
  ServeConfig config;
  ASSIGN_OR_RETURN(FieldReader s, Section(&doc, ""));
  RETURN_IF_ERROR(
      s.OnlyKnown({"listen", "probeListen", "dataDir", "database", "databasePasswordFile",
                   "apiTokenFile", "apiWorkers", "logLevel", "api", "tls", "kubernetes", "instance",
                   "engine", "replicas", "clusters", "placement"}));
  RETURN_IF_ERROR(s.String("listen", &config.listen));
  RETURN_IF_ERROR(CheckListen(config.listen, "listen"));
  RETURN_IF_ERROR(s.String("probeListen", &config.probe_listen));
  if (!config.probe_listen.empty()) {
    RETURN_IF_ERROR(CheckListen(config.probe_listen, "probeListen"));
  }
  RETURN_IF_ERROR(s.NonEmptyString("dataDir", &config.data_dir));
  RETURN_IF_ERROR(ParseDatabase(s, &config));
  RETURN_IF_ERROR(s.String("apiTokenFile", &config.api_token_file));
  int64_t workers = config.api_workers;
  RETURN_IF_ERROR(s.Int("apiWorkers", 1, 256, &workers));
  config.api_workers = static_cast<int>(workers);
  RETURN_IF_ERROR(s.OneOf("logLevel",
                          {"trace", "debug", "info", "warn", "error", "critical", "off"},
                          &config.log_level));
  RETURN_IF_ERROR(ParseApi(s.Find("api"), &config));
  RETURN_IF_ERROR(ParseTls(s.Find("tls"), &config));
  if (s.Find("clusters") != nullptr && s.Find("kubernetes") != nullptr) {
    return InvalidField("kubernetes", "not with clusters: (give each cluster its kubernetes:)");
  }
  RETURN_IF_ERROR(ParseKubernetes(s.Find("kubernetes"), "kubernetes", &config));
  RETURN_IF_ERROR(ParseInstance(s.Find("instance"), &config));
  RETURN_IF_ERROR(ParseReplicas(s.Find("replicas"), &config));
  const Json* engine = s.Find("engine");
  ASSIGN_OR_RETURN(config.engine, engine::ParseEngineConfig(engine ? *engine : Json(), "engine"));
  RETURN_IF_ERROR(ParseClusters(s.Find("clusters"), engine, &config));
  RETURN_IF_ERROR(ParsePlacement(s.Find("placement"), &config));
  return config;
}

StatusOr<ServeConfig> LoadServeConfig(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return Status(err == ENOENT ? StatusCode::kNotFound : StatusCode::kFailedPrecondition,
                  "config file " + path + ": " + std::strerror(err));
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto config = ParseServeConfig(text.str());
  if (!config.ok()) {
    return Status(config.error().code(), "config file " + path + ": " + config.error().message());
  }
  return config;
}

}  // namespace steward::app
