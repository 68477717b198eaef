// deploymentutil: the rules of Kubernetes' deployment controller that read one Deployment (or
// ReplicaSet) object, as upstream's pkg/controller/deployment/util has them — replicas and the
// rolling update's fenceposts, revisions, the order of ReplicaSets, the Deployment's conditions
// and whether a rollout completed or progressed. The DeploymentController
// (deployment_controller.h) is built on them.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/json.h"

namespace steward::cluster::controllers::deploymentutil {

// spec.replicas (1 when unset).
int64_t Replicas(const Json& obj);
// Everything but strategy.type Recreate.
bool IsRollingUpdate(const Json& d);
// The rolling update's maxSurge and maxUnavailable resolved against spec.replicas (25% each by
// default, surge rounded up, unavailability down; both 0 makes unavailability 1, as
// ResolveFenceposts). MaxSurge: 0 for Recreate. MaxUnavailable: 0 for Recreate or no replicas,
// at most spec.replicas.
int64_t MaxSurge(const Json& d);
int64_t MaxUnavailable(const Json& d);
// spec.progressDeadlineSeconds is set and not the "no deadline" value (MaxInt32).
bool HasProgressDeadline(const Json& d);
// The deployment.kubernetes.io/revision annotation as a number (0 when absent or not one).
int64_t Revision(const Json& rs);
// ReplicaSetsByCreationTimestamp: oldest first, ties by name.
bool CreatedBefore(const Json& a, const Json& b);
// A DeploymentCondition with both times `now`.
Json NewCondition(std::string_view type, std::string_view status, std::string_view reason,
                  std::string message, const std::string& now);
void RemoveCondition(Json& status, std::string_view type);
// SetDeploymentCondition: no change when status and reason are the same; keeps
// lastTransitionTime when only the reason changes.
void SetCondition(Json& status, Json cond);
// DeploymentComplete: every replica updated and available, this generation observed.
bool DeploymentComplete(const Json& d, const Json& status);
// DeploymentProgressing: more updated, ready or available replicas, or fewer old ones, in
// `new_status` than in the Deployment's status.
bool DeploymentProgressing(const Json& d, const Json& new_status);

}  // namespace steward::cluster::controllers::deploymentutil
