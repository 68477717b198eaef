// Processes: the child processes of one torture run — `steward cluster` (one, or several that
// Steward's `clusters:` lists), the `steward serve` replicas (one, or several sharing a PostgreSQL
// server the run starts) and that server — which the run kills and starts again on the same ports
// and data dirs.
//
// Ownership: owns every child process and the PostgreSQL server; the destructor of each child
// kills what is still running. Threads: Start*/Kill*/Stop*/RestartDatabase and
// OwnerOfABusyProject from the run's main or chaos thread, one at a time; KubeClient, Api,
// ReplicaName and the paths from any thread (the token is written once, before other threads
// start).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "api_client/api_client.h"
#include "common/status.h"
#include "kube/client/client.h"
#include "local_postgres/local_postgres.h"
#include "store/store.h"
#include "torture/child_process.h"
#include "torture/torture.h"

namespace steward::torture {

// The namespace every project of a run lives in.
inline constexpr char kNamespace[] = "default";

class Processes {
 public:
  Processes(const TortureOptions& options, std::string dir);

  // The run's clusters, by index: one named "default" (Steward's configuration has no
  // `clusters:`; its files keep their names: cluster/, kubeconfig, audit.log), or several named
  // c0, c1, ... (listed under `clusters:`, each with its own data dir, kubeconfig and audit log).
  int clusters() const { return static_cast<int>(clusters_.size()); }
  std::string ClusterName(int cluster) const;
  // The index of the cluster named `name`; -1 when the run has none of that name.
  int ClusterIndex(const std::string& name) const;

  // Picks a cluster's ports (again) before its first start.
  Status PickClusterPorts(int cluster);
  Status PickApiPort(int replica);
  // Starts one `steward cluster`; ready when its kubeconfig works (90 s at most).
  Status StartCluster(int cluster);
  // Replicas share one API token, written here before the first start (one replica: Steward
  // makes its own in its data dir).
  Status WriteSharedToken();
  // Starts one replica; ready when /readyz answers 200 (120 s at most).
  Status StartSteward(int replica);
  // The PostgreSQL server of a run with database "postgres" (nothing for SQLite), in the work
  // dir's temp space, with a database "steward" the replicas share.
  Status StartDatabase();
  // Stops the server (fast shutdown: open transactions are rolled back), waits `down`, starts it.
  Status RestartDatabase(std::chrono::milliseconds down);
  const std::string& database_url() const { return database_url_; }

  // The replica that owns a project in the middle of a step (a phase other than Running,
  // Suspended or Failed), picked at random, with that project's name; nullopt when none is, or
  // the store cannot tell. Reads the shared store directly (the torture's own connection).
  std::optional<std::pair<int, std::string>> OwnerOfABusyProject(std::mt19937_64& rng);

  // One replica: "steward" (its data dir and log keep their names); several: r0, r1, ...
  std::string ReplicaName(int replica) const;
  int replicas() const { return options_.replicas; }

  void KillSteward(int replica);
  void StopStewards();
  void KillCluster(int cluster);
  void StopAll();

  // A client of one cluster, not rate limited (the oracle must not lag behind Steward).
  StatusOr<std::shared_ptr<kube::Client>> KubeClient(int cluster) const;
  // A client of one replica; without an index, of the next one in turn (every replica serves
  // the whole API).
  StatusOr<std::unique_ptr<api_client::ApiClient>> Api(int replica) const;
  StatusOr<std::unique_ptr<api_client::ApiClient>> Api() const;

  std::string kubeconfig(int cluster) const;
  std::string audit_log(int cluster) const;
  uint16_t ingress_port(int cluster) const {
    return clusters_[static_cast<size_t>(cluster)].ingress_port;
  }

 private:
  struct StewardProcess {
    std::unique_ptr<ChildProcess> proc;
    uint16_t port = 0;
  };
  struct ClusterProcess {
    std::unique_ptr<ChildProcess> proc;
    uint16_t port = 0, ingress_port = 0;
  };
  // A cluster's file or directory: `base` for the one cluster, `base-<name>` for several.
  std::string ClusterPath(int cluster, const std::string& base, const std::string& ext) const;
  // Steward's configuration file for one replica.
  void WriteStewardConfig(const std::string& path, const std::string& name) const;
  const TortureOptions& options_;
  const std::string dir_;
  std::string token_;  // written once before any other thread starts
  std::unique_ptr<LocalPostgres> database_;
  std::unique_ptr<store::Store> watcher_store_;  // OwnerOfABusyProject's connection
  std::string database_url_;                     // "" for SQLite in each replica's data dir
  std::vector<ClusterProcess> clusters_;
  std::vector<StewardProcess> stewards_;
  mutable std::atomic<uint64_t> next_replica_{0};
};

}  // namespace steward::torture
