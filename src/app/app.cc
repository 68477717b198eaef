#include "app/app.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "api/api_server.h"
#include "app/engine_metrics.h"
#include "common/file.h"
#include "common/host_port.h"
#include "common/log.h"
#include "common/mutex.h"
#include "engine/intents/intents.h"
#include "engine/intents/placement.h"
#include "engine/probe/http_prober.h"
#include "instance/instance_ops.h"
#include "kube/client/client.h"
#include "kube/config/credential_providers.h"
#include "kube/config/in_cluster.h"
#include "kube/config/kubeconfig.h"
#include "kube/transport/transport.h"
#include "replica/membership.h"
#include "store/postgres_store.h"

namespace steward::app {
namespace {

namespace fs = std::filesystem;

Status WithPrefix(const Status& st, const std::string& prefix) {
  return Status(st.code(), prefix + st.message());
}

// Splits a listen address (the configuration parser already checked it).
Status SplitListen(const std::string& text, const std::string& key, std::string* host,
                   uint16_t* port) {
  if (!SplitHostPort(text, host, port)) {
    return InvalidArgument(key + ": expected HOST:PORT (got \"" + text + "\")");
  }
  return Status::Ok();
}

// The URL a client on this host uses for a server bound to `host`: wildcard addresses are
// reached over loopback.
std::string UrlHost(const std::string& host) {
  if (host.empty() || host == "0.0.0.0") return "127.0.0.1";
  if (host == "::") return "[::1]";
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

// The data dir holds the store (instance credentials), the API token and the cluster's keys.
// An existing one is not chmod'ed: its mode may be the operator's (a volume's root, a group that
// takes backups), and the files in it are private anyway; a loose one is only named.
Status EnsurePrivateDirectory(const std::string& dir, const std::string& key) {
  if (Status st = CreatePrivateDir(dir); !st.ok()) return WithPrefix(st, key + " ");
  std::string warning = PrivateDirWarning(dir);
  if (!warning.empty()) LOG_WARN("{} {}", key, warning);
  return Status::Ok();
}

// The whole file; errors name the configuration key and the path.
StatusOr<std::string> ReadConfiguredFile(const std::string& path, const std::string& key) {
  auto text = ReadSmallFile(path);
  if (!text.ok()) return FailedPrecondition(key + " " + text.error().message());
  return text;
}

StatusOr<std::string> ReadToken(const std::string& path, const std::string& key) {
  ASSIGN_OR_RETURN(std::string token, ReadConfiguredFile(path, key));
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ' ||
                            token.back() == '\t')) {
    token.pop_back();
  }
  if (token.empty()) return FailedPrecondition(key + " " + path + ": the file is empty");
  if (token.find_first_of(" \t\r\n") != std::string::npos) {
    return FailedPrecondition(key + " " + path + ": the token must be one line without spaces");
  }
  return token;
}

bool IsPostgres(const std::string& database) {
  return database.rfind("postgres://", 0) == 0 || database.rfind("postgresql://", 0) == 0;
}

// A PEM file of the API's TLS configuration.
StatusOr<std::string> ReadPem(const std::string& path, const std::string& key) {
  ASSIGN_OR_RETURN(std::string text, ReadConfiguredFile(path, key));
  if (text.find("-----BEGIN ") == std::string::npos) {
    return InvalidArgument(key + " " + path + ": not a PEM file");
  }
  return text;
}

// Reads the configured token file, or the default one, creating the default with a new random
// token (mode 0600) when absent. A configured file is never created: a typo in its path must
// not silently produce a token nobody knows.
StatusOr<std::string> LoadOrCreateToken(const std::string& path, bool configured) {
  const std::string key = configured ? "apiTokenFile" : "API token file";
  if (configured || fs::exists(path)) {
    ASSIGN_OR_RETURN(std::string token, ReadToken(path, key));
    struct stat st {};
    if (configured && stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
      // The operator's file (perhaps a read-only mounted Secret): named, not changed.
      LOG_WARN("{} {} is readable by others (mode {:o}); chmod 600 it", key, path,
               st.st_mode & 0777);
    } else if (!configured) {
      ASSIGN_OR_RETURN(std::string warning, TightenPrivateFile(path));
      if (!warning.empty()) LOG_WARN("{} {}", key, warning);
    }
    return token;
  }
  const std::string token = engine::NewToken();
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return FailedPrecondition(key + " " + path + ": cannot create: " + strerror(errno));
  const std::string line = token + "\n";
  bool ok = write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  ok = fsync(fd) == 0 && ok;
  ok = close(fd) == 0 && ok;
  if (!ok) {
    unlink(path.c_str());
    return FailedPrecondition(key + " " + path + ": cannot write: " + strerror(errno));
  }
  LOG_INFO("created API token file {}", path);
  return token;
}

// How Steward reaches the embedded cluster: its URL, CA and token, as a kubeconfig would say.
kube::RestConfig RestConfigFor(const cluster::EmbeddedCluster& cluster) {
  kube::RestConfig config;
  config.server = cluster.api_url();
  config.ca_pem = cluster.ca_pem();
  kube::Credentials credentials;
  credentials.bearer_token = cluster.token();
  config.credentials = kube::MakeStaticCredentialProvider(credentials, "embedded cluster token");
  config.source = "embedded cluster " + cluster.api_url();
  return config;
}

// How one cluster is reached: its configuration, and once started its client (and its embedded
// cluster). Index i of AppImpl's vectors is the i-th cluster of EffectiveClusters.
struct ClusterLink {
  ServeConfig::Cluster config;
  kube::RestConfig rest;  // empty for an embedded one until it starts
  bool in_cluster = false;
  std::unique_ptr<cluster::EmbeddedCluster> embedded;
  std::shared_ptr<kube::Client> client;
  // False for one of several clusters that did not answer at start: Steward starts without it
  // (its engine does not wait for its caches).
  bool answered_at_start = true;
};

class AppImpl final : public App {
 public:
  explicit AppImpl(ServeConfig config) : config_(std::move(config)) {}
  ~AppImpl() override { Stop(); }

  Status Init();

  std::string api_url() const override { return api_url_; }
  std::string probe_url() const override { return probe_url_; }
  std::string api_token() const override { return token_; }
  std::string api_token_file() const override { return token_file_; }
  cluster::EmbeddedCluster* embedded_cluster() override { return links_[0]->embedded.get(); }
  store::Store& store() override { return *store_; }
  engine::Engine& engine() override { return *engines_[0]; }
  MetricsRegistry& metrics() override { return *metrics_; }
  std::vector<std::string> cluster_names() const override {
    std::vector<std::string> out;
    for (const auto& l : links_) out.push_back(l->config.name);
    return out;
  }
  cluster::EmbeddedCluster* embedded_cluster_of(std::string_view name) override {
    const int i = IndexOf(name);
    return i < 0 ? nullptr : links_[i]->embedded.get();
  }
  engine::Engine* engine_of(std::string_view name) override {
    const int i = IndexOf(name);
    return i < 0 || static_cast<size_t>(i) >= engines_.size() ? nullptr : engines_[i].get();
  }
  engine::Intents& intents() override { return *intents_; }

  void Stop() override {
    MutexLock lock(stop_mu_);
    if (api_) api_->Stop();
    // Drains the engines, releases the shards and then the Lease: the others take over at once.
    if (membership_) membership_->Stop();
    for (auto& e : engines_) e->Stop();
    for (auto& l : links_) {
      if (l->embedded) l->embedded->Stop();
    }
  }

 private:
  int IndexOf(std::string_view name) const {
    for (size_t i = 0; i < links_.size(); ++i) {
      if (links_[i]->config.name == name) return static_cast<int>(i);
    }
    return -1;
  }
  // The configuration of a kubeconfig or in-cluster source; an empty one for kEmbedded.
  StatusOr<kube::RestConfig> LoadRestConfig(const ServeConfig::Cluster& c);
  Status StartCluster(ClusterLink& link);
  Status OpenStore();
  Status StartEngine(ClusterLink& link);
  Status StartPlacement();
  Status StartApi();
  // Sharded mode (config_.replicas): the replica's name resolved, and a database several
  // processes can share.
  Status CheckReplicas();
  Status StartMembership();
  // What messages about a cluster start with: "" for the one cluster of a configuration without
  // clusters:, else "cluster NAME: ".
  std::string Where(const ClusterLink& link) const {
    return config_.clusters.empty() ? "" : "cluster " + link.config.name + ": ";
  }

  ServeConfig config_;
  Mutex stop_mu_;  // serialises Stop(); guards no member (the parts are thread-safe)
  std::string token_, token_file_, api_url_, probe_url_;
  std::optional<net::TlsConfig> tls_;  // the API's, read before anything starts
  // Declared in start order: destroyed in reverse, after Stop().
  std::vector<std::unique_ptr<ClusterLink>> links_;  // never empty once Init began
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<MetricsRegistry> metrics_;
  std::unique_ptr<EngineMetrics> engine_metrics_;
  std::vector<std::unique_ptr<engine::Engine>> engines_;  // one per link, in its order
  std::unique_ptr<engine::Placement> placement_;
  std::unique_ptr<engine::Intents> intents_;  // the API's: places records on the clusters
  std::unique_ptr<replica::Membership> membership_;
  std::vector<std::unique_ptr<instance::InstanceOps>> instances_;  // one per link
  std::unique_ptr<api::ApiServer> api_;
};

Status AppImpl::Init() {
  spdlog::set_level(spdlog::level::from_str(config_.log_level));
  if (config_.data_dir.empty()) return InvalidArgument("dataDir: must not be empty");
  RETURN_IF_ERROR(CheckReplicas());
  // Cheap, local checks first, so a configuration mistake does not start a cluster.
  const std::string& db = config_.database;
  if (IsPostgres(db)) {
    RETURN_IF_ERROR(store::ValidatePostgresUrl(db));  // never echoes a password
  } else if (!config_.database_password_file.empty()) {
    return InvalidArgument("databasePasswordFile: only for a postgres:// database");
  } else if (!db.empty() && (db.rfind("sqlite:", 0) != 0 || db.size() == 7)) {
    return InvalidArgument("database: must be sqlite:PATH or postgres://... (got \"" +
                           db.substr(0, 64) + "\")");
  }
  if (config_.tls_cert_file.empty() != config_.tls_key_file.empty()) {
    return InvalidArgument("tls: certFile and keyFile go together");
  }
  if (!config_.tls_cert_file.empty()) {
    net::TlsConfig tls;
    ASSIGN_OR_RETURN(tls.cert_chain_pem, ReadPem(config_.tls_cert_file, "tls.certFile"));
    ASSIGN_OR_RETURN(tls.private_key_pem, ReadPem(config_.tls_key_file, "tls.keyFile"));
    tls_ = std::move(tls);
  }
  RETURN_IF_ERROR(EnsurePrivateDirectory(config_.data_dir, "dataDir"));
  // A kubeconfig or service account that cannot be read is refused before anything is written.
  for (ServeConfig::Cluster& c : EffectiveClusters(config_)) {
    auto link = std::make_unique<ClusterLink>();
    ASSIGN_OR_RETURN(link->rest, LoadRestConfig(c));
    link->config = std::move(c);
    links_.push_back(std::move(link));
  }
  token_file_ = config_.api_token_file.empty() ? (fs::path(config_.data_dir) / "api-token").string()
                                               : config_.api_token_file;
  ASSIGN_OR_RETURN(token_, LoadOrCreateToken(token_file_, !config_.api_token_file.empty()));

  for (auto& link : links_) RETURN_IF_ERROR(StartCluster(*link));
  RETURN_IF_ERROR(OpenStore());
  metrics_ = std::make_unique<MetricsRegistry>();
  engine_metrics_ = std::make_unique<EngineMetrics>(*metrics_);
  for (auto& link : links_) RETURN_IF_ERROR(StartEngine(*link));
  InstallStoreMetrics(*metrics_, *store_);
  RETURN_IF_ERROR(StartPlacement());
  RETURN_IF_ERROR(StartMembership());
  return StartApi();
}

StatusOr<kube::RestConfig> AppImpl::LoadRestConfig(const ServeConfig::Cluster& c) {
  StatusOr<kube::RestConfig> rest = kube::RestConfig{};
  if (c.cluster == ClusterSource::kInCluster) {
    rest = kube::LoadInCluster(kube::InClusterSources::FromEnvironment());
  } else if (c.cluster == ClusterSource::kKubeconfig) {
    rest = kube::LoadKubeconfig(kube::KubeconfigSourcesFromEnvironment(c.kubeconfig, c.context));
  }
  if (!rest.ok()) {
    return WithPrefix(rest.error(), config_.clusters.empty()
                                        ? "kubernetes: "
                                        : "clusters." + c.name + ".kubernetes: ");
  }
  return rest;
}

Status AppImpl::StartCluster(ClusterLink& link) {
  const ServeConfig::Cluster& c = link.config;
  const std::string where = Where(link);
  link.in_cluster = c.cluster == ClusterSource::kInCluster;
  kube::RestConfig rest = link.rest;
  if (c.cluster == ClusterSource::kEmbedded) {
    cluster::EmbeddedCluster::Options o;
    auto profile = cluster::LoadProfile(c.embedded_profile);
    if (!profile.ok()) {
      return InvalidArgument(where + "kubernetes.embedded.profile: " + profile.error().message());
    }
    o.profile = *profile;
    RETURN_IF_ERROR(SplitListen(c.embedded_listen, where + "kubernetes.embedded.listen",
                                &o.api_host, &o.api_port));
    RETURN_IF_ERROR(SplitListen(c.ingress_listen, where + "kubernetes.embedded.ingressListen",
                                &o.ingress_host, &o.ingress_port));
    o.seed = c.seed;
    // The one cluster of a configuration without clusters: keeps its state where it always had.
    if (config_.clusters.empty()) {
      o.data_dir = (fs::path(config_.data_dir) / "cluster").string();
    } else {
      const std::string parent = (fs::path(config_.data_dir) / "clusters").string();
      RETURN_IF_ERROR(EnsurePrivateDirectory(parent, "dataDir/clusters"));
      o.data_dir = (fs::path(parent) / c.name).string();
    }
    o.audit_log = c.audit_log;
    auto cluster = cluster::EmbeddedCluster::Start(o);
    if (!cluster.ok()) return WithPrefix(cluster.error(), where + "embedded cluster: ");
    link.embedded = std::move(*cluster);
    if (!c.kubeconfig_out.empty()) {
      Status st = link.embedded->WriteKubeconfig(c.kubeconfig_out);
      if (!st.ok()) return WithPrefix(st, where + "kubernetes.embedded.kubeconfigOut: ");
    }
    rest = RestConfigFor(*link.embedded);
  }
  kube::TransportOptions transport_options;
  if (config_.replicas.enabled) {
    // The audit log tells which replica wrote what.
    transport_options.user_agent += " replica/" + config_.replicas.name;
  }
  auto transport = kube::Transport::Create(rest, transport_options);
  if (!transport.ok()) {
    return WithPrefix(transport.error(), where + "kubernetes: " + rest.source + ": ");
  }
  link.client = std::make_shared<kube::Client>(*transport);
  if (!link.embedded) {
    // Fail fast and say why: otherwise an unreachable server or refused credentials surface
    // only as informers that never sync (engine.syncTimeout later).
    kube::TransportRequest version;
    version.method = "GET";
    version.target = "/version";
    version.timeout = std::chrono::seconds(10);
    auto answer = (*transport)->Do(version);
    const std::string at = where + "kubernetes: " + rest.server + " (" + rest.source + "): ";
    // No answer, or a 5xx: what the engine's health thread counts as unreachable.
    const bool down = !answer.ok() || answer->status >= 500;
    if (down && config_.clusters.size() > 1) {
      // One of several clusters down holds up neither Steward nor the others: its projects
      // are told Unknown once its grace has passed, and run again when it answers.
      LOG_ERROR("{}{}; starting without it: its projects are Unknown until it answers", at,
                answer.ok() ? "GET /version answered " + std::to_string(answer->status)
                            : "no answer (" + answer.error().message() + ")");
      link.answered_at_start = false;
    } else if (!answer.ok()) {
      return Unavailable(at + answer.error().message());
    } else if (answer->status == 401 || answer->status == 403) {
      return Status(
          answer->status == 401 ? StatusCode::kUnauthenticated : StatusCode::kPermissionDenied,
          at + "GET /version answered " + std::to_string(answer->status) +
              ": the credentials are refused");
    } else if (answer->status != 200) {
      return Unavailable(at + "GET /version answered " + std::to_string(answer->status));
    }
  }
  LOG_INFO("{}kubernetes: {} ({})", where, rest.server, rest.source);

  if (link.embedded) {
    // The embedded cluster is ours and starts empty: give the engine its namespace. A real
    // cluster's namespace is the operator's to create (with the RBAC that goes with it).
    // Read first: a restart over a data dir then sends the cluster no write at all.
    const std::string& ns = c.engine.namespace_name;
    Json body = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}};
    if (!link.client->Get(kube::ResourceType::Namespace(), "", ns).ok()) {
      if (auto r = link.client->Create(kube::ResourceType::Namespace(), "", body);
          !r.ok() && !r.error().IsAlreadyExists()) {
        return Status(StatusCode::kUnavailable, where + "embedded cluster: creating namespace " +
                                                    ns + ": " + r.error().ToString());
      }
    }
  }
  return Status::Ok();
}

Status AppImpl::OpenStore() {
  if (IsPostgres(config_.database)) {
    store::PostgresOptions po;
    po.url = config_.database;
    po.password_file = config_.database_password_file;
    auto store = store::OpenPostgresStore(po);
    if (!store.ok()) return WithPrefix(store.error(), "database: ");
    store_ = std::move(*store);
    return Status::Ok();
  }
  store::SqliteOptions so;
  so.path = config_.database.empty() ? (fs::path(config_.data_dir) / "steward.db").string()
                                     : config_.database.substr(7);
  auto store = store::OpenSqliteStore(so);
  if (!store.ok()) return WithPrefix(store.error(), "database: ");
  store_ = std::move(*store);
  return Status::Ok();
}

Status AppImpl::StartEngine(ClusterLink& link) {
  engine::EngineOptions eo;
  eo.cluster = link.config.name;
  eo.unreachable_grace = link.config.unreachable_grace;
  eo.wait_for_sync = link.answered_at_start;
  eo.config = link.config.engine;
  eo.config.shards = config_.replicas.enabled ? config_.replicas.shards : 0;
  if (link.embedded) {
    // Project URLs must be reachable through the embedded ingress listener: its port goes
    // into the URL unless the configuration names one, and probes go to the listener.
    if (eo.config.url_port == 0 && eo.config.url_scheme == "http") {
      eo.config.url_port = link.embedded->ingress_port();
    }
    if (eo.config.http_probe && eo.config.http_probe_address.empty()) {
      eo.config.http_probe_address = "127.0.0.1:" + std::to_string(link.embedded->ingress_port());
    }
  }
  if (eo.config.http_probe) {
    engine::HttpProberOptions po;
    po.address = eo.config.http_probe_address;
    po.timeout = std::chrono::milliseconds(eo.config.http_probe_timeout_ms);
    eo.prober = engine::MakeHttpProber(po);
  }
  engine_metrics_->Hook(eo);
  auto engine = engine::Engine::Create(std::move(eo), link.client, *store_);
  if (!engine.ok()) return WithPrefix(engine.error(), Where(link) + "engine: ");
  engines_.push_back(std::move(*engine));
  if (Status st = engines_.back()->Start(); !st.ok()) {
    // A sync that never completes is what an unreachable cluster or missing RBAC looks like.
    return WithPrefix(st, Where(link) + "engine: ");
  }
  engine_metrics_->Watch(*engines_.back());
  return Status::Ok();
}

Status AppImpl::StartPlacement() {
  std::vector<engine::ClusterTarget> targets;
  std::vector<std::pair<std::string, int64_t>> capacities;
  for (size_t i = 0; i < links_.size(); ++i) {
    engine::ClusterTarget t;
    t.name = links_[i]->config.name;
    t.config = &engines_[i]->options().config;
    t.vault = &engines_[i]->vault();
    t.capacity = links_[i]->config.capacity;
    t.labels = links_[i]->config.labels;
    capacities.emplace_back(t.name, t.capacity);
    targets.push_back(std::move(t));
  }
  engine::PlacementPolicy policy;
  policy.required_labels = config_.placement.required_labels;
  policy.team_affinity = config_.placement.team_affinity;
  placement_ = std::make_unique<engine::Placement>(std::move(targets), std::move(policy), *store_);
  // No enqueue: every commit reaches the engines through the store's listener.
  // Without clusters: in the configuration every record is the one cluster's: no placement (and
  // no read of the record before each put to find its cluster).
  intents_ = std::make_unique<engine::Intents>(
      *store_, nullptr, &engines_[0]->options().config, &engines_[0]->vault(),
      config_.clusters.empty() ? nullptr : placement_.get());
  InstallClusterMetrics(*metrics_, *store_, std::move(capacities));
  // Records placed on a cluster the configuration no longer lists are nobody's: said loudly, not
  // moved (a move is an intent) and not refused (the operator may be mid-change).
  auto counts = store_->CountByCluster();
  if (!counts.ok()) return WithPrefix(counts.error(), "database: ");
  for (const auto& [name, n] : *counts) {
    if (IndexOf(name) < 0) {
      LOG_ERROR(
          "{} records are placed on cluster {}, which the configuration does not list: no "
          "engine runs them until it is listed again",
          n, name);
    }
  }
  return Status::Ok();
}

Status AppImpl::CheckReplicas() {
  ServeConfig::Replicas& r = config_.replicas;
  if (!r.enabled) return Status::Ok();
  if (r.name.empty()) {
    char host[256] = {};
    if (gethostname(host, sizeof(host) - 1) != 0) {
      return FailedPrecondition("replicas.name: not set, and the host name cannot be read");
    }
    r.name = host;
    if (!engine::IsDns1123Label(r.name)) {
      return InvalidArgument("replicas.name: not set, and the host name \"" + r.name.substr(0, 64) +
                             "\" is not a DNS label; set replicas.name or --replica-name");
    }
  }
  const std::string& db = config_.database;
  if (db.rfind("postgres://", 0) != 0 && db.rfind("postgresql://", 0) != 0) {
    return FailedPrecondition(
        "replicas: need a postgres:// database; SQLite is one process's (database: " +
        (db.empty() ? std::string("sqlite in dataDir") : db.substr(0, 64)) + ")");
  }
  return Status::Ok();
}

Status AppImpl::StartMembership() {
  const ServeConfig::Replicas& r = config_.replicas;
  if (!r.enabled) return Status::Ok();
  replica::MembershipOptions mo;
  mo.name = r.name;
  // A replica acts for its shards on every cluster (shards cover (cluster, shard) pairs by
  // covering the ids on each). Its Lease lives in the first cluster's namespace, or in the store:
  // by default with several clusters, so that the loss of one stops no replica's work on the
  // others (it would stop every renewal).
  mo.ns = links_[0]->config.engine.namespace_name;
  const bool in_store = r.leases == "store" || (r.leases.empty() && config_.clusters.size() > 1);
  mo.shards = r.shards;
  mo.lease_duration = r.lease_duration;
  mo.renew_deadline = r.renew_deadline;
  mo.retry_period = r.retry_period;
  std::vector<engine::Engine*> engines;
  for (auto& e : engines_) engines.push_back(e.get());
  mo.apply = [engines](std::map<int, store::Fence> owned) {
    Status first = Status::Ok();
    for (engine::Engine* e : engines) {
      Status st = e->SetOwnedShards(owned);
      if (!st.ok() && first.ok()) first = st;
    }
    return first;
  };
  auto membership = replica::Membership::Create(
      std::move(mo),
      in_store ? replica::StoreLeases(*store_)
               : replica::KubeLeases(links_[0]->client, links_[0]->config.engine.namespace_name),
      *store_);
  if (!membership.ok()) return membership.error();
  membership_ = std::move(*membership);
  InstallReplicaMetrics(*metrics_, *membership_);
  membership_->Start();
  LOG_INFO("replica {} ({}): {} shards, lease {} ms, {}", r.name, membership_->identity(), r.shards,
           r.lease_duration.count(), in_store ? "Leases in the store" : "Leases in the cluster");
  return Status::Ok();
}

Status AppImpl::StartApi() {
  for (size_t i = 0; i < links_.size(); ++i) {
    const ClusterLink& link = *links_[i];
    instance::InstanceOptions io;
    io.ns = link.config.engine.namespace_name;
    io.timeout = config_.instance_timeout;
    switch (config_.instance_access) {
      case InstanceAccess::kDirect:
        io.access = instance::Access::kDirect;
        break;
      case InstanceAccess::kProxy:
        io.access = instance::Access::kProxy;
        break;
      case InstanceAccess::kAuto:
        io.access = link.in_cluster ? instance::Access::kDirect : instance::Access::kProxy;
        break;
    }
    // Pods to ask come from the engine's EndpointSlice cache (no list request per call); the
    // engine outlives the API (Stop stops the API first).
    engine::Engine* slices_of = engines_[i].get();
    io.cached_endpoint_slices = [slices_of](const std::string& service) {
      return slices_of->EndpointSlicesOf(service);
    };
    if (membership_) {
      // Replicas: one lifecycle command at a time per pod across every process on the store (the
      // store outlives the API, as the engine does). The identity names this process, so a
      // restarted replica does not take over a hold its past self left: that runs out. Keys
      // name the cluster's pods (names are unique over the store, so over the clusters).
      store::Store* slots = store_.get();
      const std::string holder = membership_->identity();
      io.shared_slots = instance::InstanceOptions::SharedSlots{
          [slots, holder](const std::string& key, std::chrono::milliseconds ttl) {
            return slots->TakeSlot(key, holder, ttl);
          },
          [slots, holder](const std::string& key) {
            Status released = slots->ReleaseSlot(key, holder);
            if (!released.ok()) {
              LOG_WARN("{}: not released ({}); it runs out by itself", key, released.message());
            }
          }};
    }
    instances_.push_back(std::make_unique<instance::InstanceOps>(link.client, io));
  }

  api::ApiOptions ao;
  RETURN_IF_ERROR(SplitListen(config_.listen, "listen", &ao.http.host, &ao.http.port));
  ao.token = token_;
  ao.stack_placement = !config_.clusters.empty();
  ao.workers = config_.api_workers;
  ao.credential_workers = config_.api_credential_workers;
  ao.credential_queue = config_.api_credential_queue;
  ao.max_file_bytes = config_.instance_max_file_bytes;
  ao.restart_per_pod = config_.instance_restart_per_pod;
  ao.resources_poll = config_.instance_resources_poll;
  std::string probe_host;
  if (!config_.probe_listen.empty()) {
    net::HttpServer::Options probe;
    RETURN_IF_ERROR(SplitListen(config_.probe_listen, "probeListen", &probe.host, &probe.port));
    probe_host = probe.host;
    ao.probe_http = probe;
  }
  ao.http.tls = tls_;
  ao.http.max_connections = config_.api_max_connections;
  ao.http.max_connections_per_client = config_.api_max_connections_per_client;
  ao.http.read_header_timeout = config_.api_read_header_timeout;
  ao.http.read_timeout = config_.api_read_timeout;
  ao.watch_window_events = config_.api_watch_window_events;
  ao.watch_window_bytes = config_.api_watch_window_bytes;
  const bool https = ao.http.tls.has_value();
  api::ApiDeps deps;
  deps.store = store_.get();
  deps.intents = intents_.get();
  deps.config = &engines_[0]->options().config;
  deps.instance = instances_[0].get();
  std::map<std::string, instance::InstanceCalls*, std::less<>> by_cluster;
  for (size_t i = 0; i < links_.size(); ++i) {
    by_cluster[links_[i]->config.name] = instances_[i].get();
  }
  deps.instances = [by_cluster](std::string_view cluster) -> instance::InstanceCalls* {
    auto it = by_cluster.find(cluster);
    return it == by_cluster.end() ? nullptr : it->second;
  };
  deps.metrics = metrics_.get();
  std::vector<engine::Engine*> engines;
  for (auto& e : engines_) engines.push_back(e.get());
  store::Store* store = store_.get();
  replica::Membership* membership = membership_.get();
  deps.ready = [engines, store, membership]() -> Status {
    for (engine::Engine* engine : engines) {
      if (!engine->stats().started) {
        return Unavailable("the engine of cluster " + engine->options().cluster +
                           " is not running");
      }
    }
    if (membership != nullptr) RETURN_IF_ERROR(membership->Ready());
    store::ListFilter one;
    one.limit = 1;
    if (auto r = store->ListProjects(one); !r.ok()) {
      return Unavailable("store: " + r.error().message());
    }
    return Status::Ok();
  };
  const std::string host = ao.http.host;
  auto server = api::ApiServer::Start(std::move(ao), std::move(deps));
  if (!server.ok()) {
    if (https && server.error().code() == StatusCode::kInvalidArgument) {
      return WithPrefix(server.error(), "tls.certFile " + config_.tls_cert_file + ", tls.keyFile " +
                                            config_.tls_key_file + ": ");
    }
    return WithPrefix(server.error(), "listen " + config_.listen + ": ");
  }
  api_ = std::move(*server);
  api_url_ = std::string(https ? "https://" : "http://") + UrlHost(host) + ":" +
             std::to_string(api_->port());
  if (api_->probe_port() != 0) {
    probe_url_ = "http://" + UrlHost(probe_host) + ":" + std::to_string(api_->probe_port());
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::unique_ptr<App>> App::Start(ServeConfig config) {
  auto app = std::make_unique<AppImpl>(std::move(config));
  if (Status st = app->Init(); !st.ok()) {
    app->Stop();
    return st;
  }
  return std::unique_ptr<App>(std::move(app));
}

}  // namespace steward::app
