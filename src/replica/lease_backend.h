// LeaseBackend: where the replicas' Leases live (membership.h). Either a cluster's
// coordination.k8s.io/v1 Leases in the engine's namespace (KubeLeases: one cluster, the default),
// or the shared PostgreSQL store (StoreLeases, `replicas.leases: store`: with several clusters
// none of them has to be the replicas' liveness, so that the loss of one stops no replica's work
// on the others). The objects have the Lease shape either way; the store's carry its version as
// metadata.resourceVersion, and an update at another one is refused as a stale one is by
// Kubernetes.
//
// Errors: kNotFound (Get, Update), kAlreadyExists (Create), kAborted (Update at a stale
// resourceVersion); anything else as the client or the store reports it. Thread-safe as the
// client and the store are. Ownership: KubeLeases shares the client; StoreLeases borrows the
// store, which must outlive it.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "kube/client/client.h"
#include "store/store.h"

namespace steward::replica {

class LeaseBackend {
 public:
  virtual ~LeaseBackend() = default;
  virtual StatusOr<Json> Get(const std::string& name) = 0;
  virtual StatusOr<Json> Create(const Json& lease, std::chrono::milliseconds timeout) = 0;
  virtual StatusOr<Json> Update(const Json& lease, std::chrono::milliseconds timeout) = 0;
  // Every replica Lease (those labelled steward.io/role=replica).
  virtual StatusOr<std::vector<Json>> List() = 0;
  // For logs: "Leases in namespace steward", "Leases in the store".
  virtual std::string Where() const = 0;
};

std::unique_ptr<LeaseBackend> KubeLeases(std::shared_ptr<kube::Client> client, std::string ns);
std::unique_ptr<LeaseBackend> StoreLeases(store::Store& store);

}  // namespace steward::replica
