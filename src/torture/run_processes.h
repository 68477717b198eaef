// Processes: the child processes of one torture run — `steward cluster`, the `steward serve`
// replicas (one, or several sharing a PostgreSQL server the run starts) and that server — which
// the run kills and starts again on the same ports and data dirs.
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

  // Picks the cluster's ports (again) before its first start.
  Status PickClusterPorts();
  Status PickApiPort(int replica);
  // Starts `steward cluster`; ready when its kubeconfig works (90 s at most).
  Status StartCluster();
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
  void KillCluster();
  void StopAll();

  // A client of the cluster, not rate limited (the oracle must not lag behind Steward).
  StatusOr<std::shared_ptr<kube::Client>> KubeClient() const;
  // A client of one replica; without an index, of the next one in turn (every replica serves
  // the whole API).
  StatusOr<std::unique_ptr<api_client::ApiClient>> Api(int replica) const;
  StatusOr<std::unique_ptr<api_client::ApiClient>> Api() const;

  std::string kubeconfig() const { return dir_ + "/kubeconfig"; }
  std::string audit_log() const { return dir_ + "/audit.log"; }
  uint16_t ingress_port() const { return ingress_port_; }

 private:
  struct StewardProcess {
    std::unique_ptr<ChildProcess> proc;
    uint16_t port = 0;
  };
  const TortureOptions& options_;
  const std::string dir_;
  uint16_t cluster_port_ = 0, ingress_port_ = 0;
  std::string token_;  // written once before any other thread starts
  std::unique_ptr<LocalPostgres> database_;
  std::unique_ptr<store::Store> watcher_store_;  // OwnerOfABusyProject's connection
  std::string database_url_;                     // "" for SQLite in each replica's data dir
  ChildProcess cluster_;
  std::vector<StewardProcess> stewards_;
  mutable std::atomic<uint64_t> next_replica_{0};
};

}  // namespace steward::torture
