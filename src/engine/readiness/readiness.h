// Readiness rules (docs/design.md §4): when an observed object counts as ready, progressing or
// failed. Pure functions over the objects as the API server returns them; no I/O.
#pragma once

#include <string>
#include <vector>

#include "common/json.h"

namespace steward::engine {

struct Readiness {
  enum class State { kReady, kWaiting, kFailed };
  State state = State::kWaiting;
  std::string reason;   // CamelCase: Ready, RolloutInProgress, WaitingForAvailable,
                        // ProgressDeadlineExceeded, NotBound, NoReadyEndpoints, NoAddress, ...
  std::string message;  // for a human, with the cluster's own words where there are some
  bool ready() const { return state == State::kReady; }
  bool failed() const { return state == State::kFailed; }
};

// Deployment: status.observedGeneration >= metadata.generation, updatedReplicas >=
// spec.replicas (1 when unset), replicas <= updatedReplicas (no old pods left),
// availableReplicas >= updatedReplicas; absent counts are 0. Progressing=False with reason
// ProgressDeadlineExceeded is kFailed with the condition's message, but only once the current
// generation is observed (as kubectl rollout status: a new spec may have fixed it). Waiting
// reasons, in the order checked: GenerationNotObserved, RolloutInProgress ("rollout: 1 of 2
// replicas updated", "rollout: 1 old replica pending termination"), WaitingForAvailable
// ("waiting for 2 available replicas (1 available)").
Readiness DeploymentReadiness(const Json& deployment);

// The ReplicaSets of a Deployment its status calls complete (`replica_sets` may hold others:
// only those `deployment` controls count, by uid): kWaiting "RolloutInProgress" until the one of
// the Deployment's revision (annotation deployment.kubernetes.io/revision) is among them, every
// one has observed its generation, that one has status.replicas == spec.replicas (1 when unset)
// and every other one has 0 of 0. The Deployment's counts are sums of the ReplicaSets' status,
// which lags a pod an abandoned ReplicaSet is still creating (a rollout reverted at once, as after
// an out-of-band edit), and a cached Deployment can lag its ReplicaSets: either way a pod of
// another template would serve. A deleted ReplicaSet with no replicas left is ignored.
Readiness ReplicaSetsReadiness(const Json& deployment, const std::vector<Json>& replica_sets);

// Cuts a ReplicaSet down to what ReplicaSetsReadiness and an informer read (identity, labels,
// owners, deletionTimestamp, generation, the revision annotation, spec.replicas, status): the
// engine's ReplicaSet cache keeps them without their pod template.
void SlimReplicaSet(Json& replica_set);

// PVC: status.phase == Bound; Lost is kFailed.
Readiness PvcReadiness(const Json& pvc);

// Service: at least one endpoint with conditions.ready not false in the EndpointSlices labelled
// kubernetes.io/service-name=<service> (the caller passes that service's slices). A slice whose
// ownerReferences name another uid (a deleted Service of the same name) is ignored.
Readiness ServiceReadiness(const Json& service, const std::vector<Json>& endpoint_slices);

// Ingress: status.loadBalancer.ingress has an ip or hostname; always ready when
// `require_address` is false.
Readiness IngressReadiness(const Json& ingress, bool require_address);

// Pods of a Deployment that failed to start: the first container waiting with
// ErrImagePull / ImagePullBackOff / CrashLoopBackOff / InvalidImageName /
// CreateContainerConfigError gives kFailed-worthy detail ("ErrImagePull: <message>"); "" when none.
std::string PodFailureDetail(const std::vector<Json>& pods);

}  // namespace steward::engine
