// Placement: which cluster a new record goes to, and what each cluster's intents are checked
// against (docs/operations.md "Several clusters").
//
// A record's cluster is decided once, when it is created, and stored with it
// (store::ProjectRecord::cluster); it changes only by a move. The request may name the cluster
// (spec.cluster) or ask for labels the cluster must carry (spec.placement.labels, added to the
// configuration's required labels); otherwise the policy picks: among the clusters whose labels
// match, with room left (capacity 0 = no limit), the one holding the team's records when team
// affinity is on and it has room, else the least loaded (records over capacity; records of every
// kind that are not being deleted count), ties by configuration order.
//
// Thread-safe: immutable after construction but for the store reads Place() makes. Concurrent
// creates may each see the same count and overfill a cluster by at most their number (the count
// is read before the create's transaction); docs/operations.md says so.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "engine/intents/credential_vault.h"
#include "engine/model/project.h"
#include "store/store.h"

namespace steward::engine {

// The name of the one cluster of a configuration without `clusters:`.
inline constexpr std::string_view kDefaultCluster = "default";

// What a put asks of placement: spec.cluster and spec.placement.labels, taken out of the spec
// before it is parsed and stored (the cluster lives in the record, not in its spec).
struct PlacementRequest {
  // spec.cluster, or spec.placement.cluster; "" = the policy decides.
  std::string cluster;
  // From spec.cluster: the record must be on `cluster` (an existing one elsewhere is refused).
  // spec.placement only places a new record and is not checked against an existing one (a
  // platform sends the same spec for every instance of a stack, whichever cluster each is on).
  bool strict = false;
  StringMap labels;  // required of the cluster, beside the configuration's
};

// Takes spec.cluster and spec.placement out of `spec` (a JSON object; anything else is left for
// the spec's parser to refuse). kInvalidArgument naming the field: a cluster that is not a DNS
// label, a placement other than {labels: {...}} with valid label keys and values.
StatusOr<PlacementRequest> TakePlacementRequest(Json& spec, std::string_view path);

struct ClusterTarget {
  std::string name;
  const EngineConfig* config = nullptr;  // what intents for it are checked and claimed against
  CredentialVault* vault = nullptr;      // where its supplied credentials go (null: refused)
  int64_t capacity = 0;                  // records at most; 0 = no limit
  StringMap labels;
};

struct PlacementPolicy {
  StringMap required_labels;  // every placed cluster carries these
  bool team_affinity = false;
};

class Placement {
 public:
  // `clusters`: at least one, names unique (the configuration checked both). `store` outlives
  // this.
  Placement(std::vector<ClusterTarget> clusters, PlacementPolicy policy, store::Store& store);

  // The cluster of that name, or null.
  const ClusterTarget* Find(std::string_view cluster) const;
  // The cluster of that name; kInvalidArgument naming `field` and the clusters known otherwise.
  StatusOr<const ClusterTarget*> Named(std::string_view cluster, std::string_view field) const;
  // kFailedPrecondition "cluster C is full (N records: its capacity)" when `c` has a capacity and
  // no room left (records of every kind not being deleted); the store's error when the count
  // cannot be read.
  Status CheckRoom(const ClusterTarget& c);
  const std::vector<ClusterTarget>& clusters() const { return clusters_; }

  // The cluster for a new record of `team`. kInvalidArgument naming spec.cluster for a cluster
  // this Steward does not know, or one whose labels do not match; kFailedPrecondition when no
  // cluster matches the labels, or none that does has room ("spec.placement: ..."); the store's
  // error when the counts cannot be read.
  StatusOr<const ClusterTarget*> Place(const PlacementRequest& request, std::string_view team);

 private:
  std::vector<ClusterTarget> clusters_;
  PlacementPolicy policy_;
  store::Store& store_;
};

}  // namespace steward::engine
