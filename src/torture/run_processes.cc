#include "torture/run_processes.h"

#include <signal.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include "common/file.h"
#include "engine/model/shard.h"
#include "kube/config/kubeconfig.h"
#include "kube/transport/transport.h"
#include "net/http_client.h"
#include "store/postgres_store.h"

namespace steward::torture {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

Processes::Processes(const TortureOptions& options, std::string dir)
    : options_(options),
      dir_(dir),
      clusters_(static_cast<size_t>(std::max(1, options.clusters))),
      stewards_(static_cast<size_t>(options.replicas)) {
  for (auto& s : stewards_) s.proc = std::make_unique<ChildProcess>();
  for (auto& c : clusters_) c.proc = std::make_unique<ChildProcess>();
}

std::string Processes::ClusterName(int cluster) const {
  return clusters_.size() == 1 ? "default" : "c" + std::to_string(cluster);
}
int Processes::ClusterIndex(const std::string& name) const {
  for (int i = 0; i < clusters(); ++i) {
    if (ClusterName(i) == name) return i;
  }
  return -1;
}
std::string Processes::ClusterPath(int cluster, const std::string& base,
                                   const std::string& ext) const {
  if (clusters_.size() == 1) return dir_ + "/" + base + ext;
  return dir_ + "/" + base + "-" + ClusterName(cluster) + ext;
}
std::string Processes::kubeconfig(int cluster) const {
  return ClusterPath(cluster, "kubeconfig", "");
}
std::string Processes::audit_log(int cluster) const {
  return ClusterPath(cluster, "audit", ".log");
}

Status Processes::PickClusterPorts(int cluster) {
  ClusterProcess& c = clusters_[static_cast<size_t>(cluster)];
  ASSIGN_OR_RETURN(c.port, PickFreePort());
  ASSIGN_OR_RETURN(c.ingress_port, PickFreePort());
  return Status::Ok();
}
Status Processes::PickApiPort(int replica) {
  ASSIGN_OR_RETURN(stewards_[static_cast<size_t>(replica)].port, PickFreePort());
  return Status::Ok();
}

Status Processes::StartCluster(int cluster) {
  ClusterProcess& c = clusters_[static_cast<size_t>(cluster)];
  const std::string log = ClusterPath(cluster, "cluster", ".log");
  // Each cluster its own seed: two with one seed would mint the same uids and names.
  std::vector<std::string> argv = {options_.steward_binary,
                                   "cluster",
                                   "--listen",
                                   "127.0.0.1:" + std::to_string(c.port),
                                   "--ingress-listen",
                                   "127.0.0.1:" + std::to_string(c.ingress_port),
                                   "--profile",
                                   options_.profile,
                                   "--seed",
                                   std::to_string(options_.seed + static_cast<uint64_t>(cluster)),
                                   "--data-dir",
                                   ClusterPath(cluster, "cluster", ""),
                                   "--kubeconfig-out",
                                   kubeconfig(cluster),
                                   "--audit-log",
                                   audit_log(cluster),
                                   "--log-level",
                                   "warn"};
  for (const auto& s : options_.profile_sets) {
    argv.push_back("--set");
    argv.push_back(s);
  }
  RETURN_IF_ERROR(c.proc->Start(argv, log));
  // Ready when its kubeconfig works: the same test a client would make.
  const auto deadline = Clock::now() + seconds(90);
  Status last = Unavailable("not started");
  while (Clock::now() < deadline) {
    if (!c.proc->Running()) return Unavailable("steward cluster exited; see " + log);
    auto client = KubeClient(cluster);
    if (client.ok()) {
      auto ns = (*client)->Get(kube::ResourceType::Namespace(), "", kNamespace);
      if (ns.ok()) return Status::Ok();
      last = Unavailable(ns.error().message);
    } else {
      last = client.error();
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  return Unavailable("steward cluster " + ClusterName(cluster) +
                     " did not become ready: " + last.message());
}

Status Processes::WriteSharedToken() {
  if (options_.replicas == 1) return Status::Ok();
  std::random_device device;
  std::mt19937_64 gen((uint64_t{device()} << 32) ^ device());
  char hex[33];
  std::snprintf(hex, sizeof(hex), "%016llx%016llx", static_cast<unsigned long long>(gen()),
                static_cast<unsigned long long>(gen()));
  token_ = hex;
  return WritePrivateFile(dir_ + "/api-token", token_ + "\n");
}

void Processes::WriteStewardConfig(const std::string& path, const std::string& name) const {
  std::ofstream f(path);
  // A failing image shows as Failed once the Deployment's progress deadline passes: 15 s
  // here rather than Kubernetes' 600 s default, so a run with failing images can quiesce.
  f << "engine:\n  progressDeadlineSeconds: " << options_.progress_deadline_seconds << "\n";
  if (clusters_.size() > 1) {
    // Placement picks the least loaded (no capacity: by count); every cluster serves
    // <name>.localhost on its own ingress listener.
    f << "clusters:\n";
    for (int i = 0; i < clusters(); ++i) {
      f << "  - name: " << ClusterName(i) << "\n    kubernetes: {source: kubeconfig, kubeconfig: \""
        << kubeconfig(i) << "\"}\n    engine: {namespace: " << kNamespace
        << ", domain: localhost}\n    unreachableGrace: " << options_.unreachable_grace.count()
        << "s\n";
    }
  }
  if (options_.replicas > 1) {
    f << "replicas:\n  name: " << name << "\n  leaseDuration: " << options_.lease_duration.count()
      << "s\n  renewDeadline: " << options_.renew_deadline.count()
      << "s\n  retryPeriod: " << options_.retry_period.count() << "s\n";
  }
}

Status Processes::StartSteward(int replica) {
  const std::string name = ReplicaName(replica);
  const std::string config = dir_ + "/" + name + ".yaml";
  WriteStewardConfig(config, name);
  StewardProcess& s = stewards_[static_cast<size_t>(replica)];
  std::vector<std::string> argv = {options_.steward_binary,
                                   "serve",
                                   "--config",
                                   config,
                                   "--listen",
                                   "127.0.0.1:" + std::to_string(s.port),
                                   "--data-dir",
                                   dir_ + "/" + name,
                                   "--log-level",
                                   options_.steward_log_level};
  if (clusters_.size() == 1) {
    argv.insert(argv.end(), {"--kubeconfig", kubeconfig(0), "--namespace", kNamespace, "--domain",
                             "localhost"});
  }
  if (!database_url_.empty()) {
    argv.insert(argv.end(), {"--database", database_url_});
  }
  if (options_.replicas > 1) {
    argv.insert(argv.end(), {"--api-token-file", dir_ + "/api-token"});
  }
  RETURN_IF_ERROR(s.proc->Start(argv, dir_ + "/" + name + ".log"));
  net::HttpClient::Options http;
  http.port = s.port;
  http.timeout = seconds(5);
  const auto deadline = Clock::now() + seconds(120);
  while (Clock::now() < deadline) {
    if (!s.proc->Running())
      return Unavailable("steward serve exited; see " + dir_ + "/" + name + ".log");
    auto client = net::HttpClient::Create(http);
    auto r = client->Request("GET", "/readyz");
    if (r.ok() && r->status == 200) {
      // Read once, before any other thread runs; a restart keeps the same token.
      if (!token_.empty()) return Status::Ok();
      std::ifstream in(dir_ + "/" + name + "/api-token");
      std::getline(in, token_);
      if (!token_.empty()) return Status::Ok();
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  return Unavailable("steward serve did not become ready; see " + dir_ + "/" + name + ".log");
}

Status Processes::StartDatabase() {
  if (options_.database == "sqlite") return Status::Ok();
  ASSIGN_OR_RETURN(database_, LocalPostgres::Launch());
  RETURN_IF_ERROR(database_->CreateDatabase("steward"));
  database_url_ = database_->Url("steward");
  return Status::Ok();
}
Status Processes::RestartDatabase(milliseconds down) {
  if (!database_) return FailedPrecondition("no PostgreSQL server in this run");
  RETURN_IF_ERROR(database_->Stop());
  std::this_thread::sleep_for(down);
  return database_->Start();
}

std::optional<std::pair<int, std::string>> Processes::OwnerOfABusyProject(std::mt19937_64& rng) {
  if (database_url_.empty()) return std::nullopt;
  if (!watcher_store_) {
    store::PostgresOptions po;
    po.url = database_url_;
    po.pool_size = 1;
    auto opened = store::OpenPostgresStore(po);
    if (!opened.ok()) return std::nullopt;
    watcher_store_ = std::move(*opened);
  }
  auto records = watcher_store_->ListProjects({});
  auto owners = watcher_store_->ListShardOwners();
  if (!records.ok() || !owners.ok()) return std::nullopt;
  std::vector<const store::ProjectRecord*> busy;
  for (const auto& r : *records) {
    if (r.phase != "Running" && r.phase != "Suspended" && r.phase != "Failed") busy.push_back(&r);
  }
  if (busy.empty()) return std::nullopt;
  const store::ProjectRecord& pick = *busy[rng() % busy.size()];
  const int shard = engine::ShardOf(pick.id, options_.shards);
  for (const store::ShardOwner& o : *owners) {
    if (o.shard != shard) continue;
    for (int i = 0; i < options_.replicas; ++i) {
      if (ReplicaName(i) == o.owner) return std::make_pair(i, pick.name);
    }
  }
  return std::nullopt;
}

std::string Processes::ReplicaName(int replica) const {
  return options_.replicas == 1 ? "steward" : "r" + std::to_string(replica);
}

void Processes::KillSteward(int replica) {
  stewards_[static_cast<size_t>(replica)].proc->Stop(SIGKILL);
}
void Processes::StopStewards() {
  for (auto& s : stewards_) s.proc->Stop(SIGTERM, seconds(20));
}
void Processes::KillCluster(int cluster) {
  clusters_[static_cast<size_t>(cluster)].proc->Stop(SIGKILL);
}
void Processes::StopAll() {
  StopStewards();
  for (auto& c : clusters_) c.proc->Stop(SIGTERM, seconds(20));
}

StatusOr<std::shared_ptr<kube::Client>> Processes::KubeClient(int cluster) const {
  kube::KubeconfigSources sources;
  sources.explicit_path = kubeconfig(cluster);
  ASSIGN_OR_RETURN(auto config, kube::LoadKubeconfig(sources));
  kube::TransportOptions transport;
  transport.qps = 0;  // the oracle is not rate limited: it must not lag behind Steward
  transport.max_retries = 8;
  ASSIGN_OR_RETURN(auto t, kube::Transport::Create(config, transport));
  return std::make_shared<kube::Client>(t);
}

StatusOr<std::unique_ptr<api_client::ApiClient>> Processes::Api(int replica) const {
  api_client::ApiClientOptions o;
  o.server = "http://127.0.0.1:" + std::to_string(stewards_[static_cast<size_t>(replica)].port);
  o.token = token_;
  o.timeout = seconds(90);
  return api_client::ApiClient::Create(o);
}
StatusOr<std::unique_ptr<api_client::ApiClient>> Processes::Api() const {
  return Api(static_cast<int>(next_replica_++ % stewards_.size()));
}

}  // namespace steward::torture
