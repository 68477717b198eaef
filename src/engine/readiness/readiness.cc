#include "engine/readiness/readiness.h"

#include <array>
#include <cstdint>
#include <string_view>

#include "common/json_access.h"

namespace steward::engine {
namespace {

using State = Readiness::State;

Readiness Make(State state, std::string reason, std::string message) {
  Readiness r;
  r.state = state;
  r.reason = std::move(reason);
  r.message = std::move(message);
  return r;
}

std::string Plural(int64_t n, std::string_view word) {
  return std::to_string(n) + " " + std::string(word) + (n == 1 ? "" : "s");
}

const Json* FindCondition(const Json& status, std::string_view type) {
  const Json& conditions = MemberOrNull(status, "conditions");
  if (!conditions.is_array()) return nullptr;
  for (const auto& c : conditions) {
    if (GetString(c, "type") == type) return &c;
  }
  return nullptr;
}

}  // namespace

// Follows kubectl rollout status: nothing in status is trusted until the controller has
// observed the current generation (a deadline condition from an older spec may no longer apply).
Readiness DeploymentReadiness(const Json& deployment) {
  const Json& meta = MemberOrNull(deployment, "metadata");
  const Json& spec = MemberOrNull(deployment, "spec");
  const Json& status = MemberOrNull(deployment, "status");
  const int64_t generation = GetInt(meta, "generation");
  const int64_t observed = GetInt(status, "observedGeneration");
  if (observed < generation) {
    return Make(State::kWaiting, "GenerationNotObserved",
                "waiting for the deployment controller to observe generation " +
                    std::to_string(generation) + " (observed " + std::to_string(observed) + ")");
  }
  if (const Json* progressing = FindCondition(status, "Progressing");
      progressing != nullptr && GetString(*progressing, "status") != "True" &&
      GetString(*progressing, "reason") == "ProgressDeadlineExceeded") {
    std::string message = GetString(*progressing, "message");
    if (message.empty()) message = "deployment exceeded its progress deadline";
    return Make(State::kFailed, "ProgressDeadlineExceeded", std::move(message));
  }
  const int64_t desired = GetInt(spec, "replicas", 1);  // the API's default when unset
  const int64_t replicas = GetInt(status, "replicas");
  const int64_t updated = GetInt(status, "updatedReplicas");
  const int64_t available = GetInt(status, "availableReplicas");
  if (updated < desired) {
    return Make(
        State::kWaiting, "RolloutInProgress",
        "rollout: " + std::to_string(updated) + " of " + Plural(desired, "replica") + " updated");
  }
  if (replicas > updated) {
    return Make(State::kWaiting, "RolloutInProgress",
                "rollout: " + Plural(replicas - updated, "old replica") + " pending termination");
  }
  if (available < updated) {
    return Make(State::kWaiting, "WaitingForAvailable",
                "waiting for " + Plural(updated, "available replica") + " (" +
                    std::to_string(available) + " available)");
  }
  return Make(State::kReady, "Ready", Plural(available, "replica") + " available");
}

Readiness ReplicaSetsReadiness(const Json& deployment, const std::vector<Json>& replica_sets) {
  constexpr std::string_view kRevision = "deployment.kubernetes.io/revision";
  const Json& dep_meta = MemberOrNull(deployment, "metadata");
  const std::string uid = GetString(dep_meta, "uid");
  const std::string revision = GetString(MemberOrNull(dep_meta, "annotations"), kRevision);
  bool current_seen = revision.empty();
  for (const Json& rs : replica_sets) {
    const Json& meta = MemberOrNull(rs, "metadata");
    bool controlled = false;
    const Json& owners = MemberOrNull(meta, "ownerReferences");
    if (owners.is_array()) {
      for (const Json& o : owners) {
        controlled = controlled || (MemberOrNull(o, "controller") == true &&
                                    GetString(o, "uid") == uid && !uid.empty());
      }
    }
    if (!controlled) continue;
    const std::string name = GetString(meta, "name");
    const Json& status = MemberOrNull(rs, "status");
    const int64_t have = GetInt(status, "replicas");
    if (meta.contains("deletionTimestamp") && have == 0) continue;
    const bool current =
        !revision.empty() && GetString(MemberOrNull(meta, "annotations"), kRevision) == revision;
    current_seen = current_seen || current;
    const int64_t generation = GetInt(meta, "generation");
    const int64_t observed = GetInt(status, "observedGeneration");
    if (observed < generation) {
      return Make(State::kWaiting, "RolloutInProgress",
                  "waiting for the replica set controller to observe generation " +
                      std::to_string(generation) + " of ReplicaSet " + name + " (observed " +
                      std::to_string(observed) + ")");
    }
    // Only the Deployment's own ReplicaSet may run pods (an older one still scaled up, or a newer
    // one the cached Deployment does not know of yet, means the rollout is not over).
    const int64_t want = current ? GetInt(MemberOrNull(rs, "spec"), "replicas", 1) : 0;
    const int64_t spec = GetInt(MemberOrNull(rs, "spec"), "replicas", 1);
    if (have != want || spec != want) {
      return Make(State::kWaiting, "RolloutInProgress",
                  "rollout: ReplicaSet " + name + " has " + Plural(have, "replica") + " of " +
                      std::to_string(spec) + (current ? "" : " (not the Deployment's revision)"));
    }
  }
  if (!current_seen) {
    return Make(State::kWaiting, "RolloutInProgress",
                "waiting to see the ReplicaSet of revision " + revision);
  }
  return Make(State::kReady, "Ready", "only the ReplicaSet of the Deployment's revision runs pods");
}

void SlimReplicaSet(Json& rs) {
  if (!rs.is_object()) return;
  constexpr std::string_view kRevision = "deployment.kubernetes.io/revision";
  const std::string revision = AnnotationOf(rs, kRevision);
  Json slim = Json::object();
  for (const char* key : {"apiVersion", "kind", "status"}) {
    if (rs.contains(key)) slim[key] = std::move(rs[key]);
  }
  if (rs.contains("metadata") && rs["metadata"].is_object()) {
    Json& meta = rs["metadata"];
    Json& out = slim["metadata"];
    for (const char* key : {"name", "namespace", "uid", "resourceVersion", "generation", "labels",
                            "ownerReferences", "deletionTimestamp"}) {
      if (meta.contains(key)) out[key] = std::move(meta[key]);
    }
    if (!revision.empty()) out["annotations"][std::string(kRevision)] = revision;
  }
  const Json& spec = MemberOrNull(rs, "spec");
  if (spec.is_object() && spec.contains("replicas")) slim["spec"]["replicas"] = spec["replicas"];
  rs = std::move(slim);
}

Readiness PvcReadiness(const Json& pvc) {
  const std::string phase = GetString(MemberOrNull(pvc, "status"), "phase");
  if (phase == "Bound") return Make(State::kReady, "Ready", "claim is Bound");
  if (phase == "Lost") {
    return Make(State::kFailed, "Lost", "claim is Lost: its persistent volume no longer exists");
  }
  return Make(State::kWaiting, "NotBound",
              phase.empty() ? "claim has no phase yet" : "claim is " + phase);
}

// True when `object` has no ownerReferences, or one of them has this uid (or uid is unknown).
static bool OwnedBy(const Json& object, const std::string& uid) {
  const Json& refs = MemberOrNull(MemberOrNull(object, "metadata"), "ownerReferences");
  if (uid.empty() || !refs.is_array() || refs.empty()) return true;
  for (const Json& ref : refs) {
    if (GetString(ref, "uid") == uid) return true;
  }
  return false;
}

Readiness ServiceReadiness(const Json& service, const std::vector<Json>& endpoint_slices) {
  const std::string name = GetString(MemberOrNull(service, "metadata"), "name");
  int64_t total = 0;
  int64_t ready = 0;
  for (const Json& slice : endpoint_slices) {
    // The caller passes this Service's slices; a slice labelled for another is ignored rather
    // than allowed to make this one look ready.
    const Json& owner = MemberOrNull(MemberOrNull(MemberOrNull(slice, "metadata"), "labels"),
                                     "kubernetes.io/service-name");
    if (owner.is_string() && !name.empty() && owner.get_ref<const std::string&>() != name) continue;
    // A slice owned by another Service object of the same name (a predecessor deleted and
    // re-created) says nothing about this one, however ready its endpoints were.
    if (!OwnedBy(slice, GetString(MemberOrNull(service, "metadata"), "uid"))) continue;
    const Json& endpoints = MemberOrNull(slice, "endpoints");
    if (!endpoints.is_array()) continue;
    for (const Json& endpoint : endpoints) {
      ++total;
      // discovery/v1: a nil ready condition is to be interpreted as ready.
      const Json& r = MemberOrNull(MemberOrNull(endpoint, "conditions"), "ready");
      if (!(r.is_boolean() && !r.get<bool>())) ++ready;
    }
  }
  if (ready > 0) {
    return Make(State::kReady, "Ready",
                std::to_string(ready) + " of " + Plural(total, "endpoint") + " ready");
  }
  if (total == 0) return Make(State::kWaiting, "NoReadyEndpoints", "service has no endpoints yet");
  return Make(State::kWaiting, "NoReadyEndpoints",
              "none of " + Plural(total, "endpoint") + " ready");
}

Readiness IngressReadiness(const Json& ingress, bool require_address) {
  if (!require_address) return Make(State::kReady, "Ready", "no load balancer address required");
  const Json& entries =
      MemberOrNull(MemberOrNull(MemberOrNull(ingress, "status"), "loadBalancer"), "ingress");
  if (entries.is_array()) {
    for (const Json& e : entries) {
      std::string address = GetString(e, "ip");
      if (address.empty()) address = GetString(e, "hostname");
      if (!address.empty()) return Make(State::kReady, "Ready", "address " + address);
    }
  }
  return Make(State::kWaiting, "NoAddress",
              "waiting for the ingress controller to publish a load balancer address");
}

std::string PodFailureDetail(const std::vector<Json>& pods) {
  static constexpr std::array<std::string_view, 5> kFailures = {
      "ErrImagePull", "ImagePullBackOff", "CrashLoopBackOff", "InvalidImageName",
      "CreateContainerConfigError"};
  for (const Json& pod : pods) {
    const Json& statuses = MemberOrNull(MemberOrNull(pod, "status"), "containerStatuses");
    if (!statuses.is_array()) continue;
    for (const Json& cs : statuses) {
      const Json& waiting = MemberOrNull(MemberOrNull(cs, "state"), "waiting");
      const std::string reason = GetString(waiting, "reason");
      bool failure = false;
      for (auto f : kFailures) failure = failure || reason == f;
      if (!failure) continue;
      const std::string message = GetString(waiting, "message");
      return message.empty() ? reason : reason + ": " + message;
    }
  }
  return "";
}

}  // namespace steward::engine
