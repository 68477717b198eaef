#include "cluster/controllers/deployment_util.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <utility>

#include "cluster/controllers/util.h"
#include "common/json_access.h"

namespace steward::cluster::controllers::deploymentutil {
namespace {

// (maxSurge, maxUnavailable) resolved against spec.replicas (deploymentutil.ResolveFenceposts).
std::pair<int64_t, int64_t> ResolveFenceposts(const Json& d) {
  int64_t desired = Replicas(d);
  const Json& ru = AtPath(d, "spec.strategy.rollingUpdate");
  const Json& surge_v = At(ru, "maxSurge");
  const Json& unavail_v = At(ru, "maxUnavailable");
  int64_t surge = ScaledValue(surge_v.is_null() ? Json("25%") : surge_v, desired, true);
  int64_t unavailable = ScaledValue(unavail_v.is_null() ? Json("25%") : unavail_v, desired, false);
  if (surge == 0 && unavailable == 0) unavailable = 1;
  return {surge, unavailable};
}

}  // namespace

int64_t Replicas(const Json& obj) { return IntAt(obj, "spec.replicas", 1); }
bool IsRollingUpdate(const Json& d) { return StrAt(d, "spec.strategy.type") != "Recreate"; }

int64_t MaxSurge(const Json& d) {
  if (!IsRollingUpdate(d)) return 0;
  return ResolveFenceposts(d).first;
}

int64_t MaxUnavailable(const Json& d) {
  if (!IsRollingUpdate(d) || Replicas(d) == 0) return 0;
  int64_t mu = ResolveFenceposts(d).second;
  return std::min(mu, Replicas(d));
}

bool HasProgressDeadline(const Json& d) {
  const Json& v = AtPath(d, "spec.progressDeadlineSeconds");
  return v.is_number_integer() && v.get<int64_t>() != INT32_MAX;
}

int64_t Revision(const Json& rs) {
  std::string s = GetString(AtPath(rs, "metadata.annotations"), kRevisionAnnotation);
  if (s.empty()) return 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  return (end != nullptr && *end == '\0') ? v : 0;
}

// ReplicaSetsByCreationTimestamp: oldest first, ties by name.
bool CreatedBefore(const Json& a, const Json& b) {
  std::string ta = StrAt(a, "metadata.creationTimestamp");
  std::string tb = StrAt(b, "metadata.creationTimestamp");
  if (ta != tb) return ta < tb;
  return StrAt(a, "metadata.name") < StrAt(b, "metadata.name");
}

Json NewCondition(std::string_view type, std::string_view status, std::string_view reason,
                  std::string message, const std::string& now) {
  return Json{{"type", type},          {"status", status},
              {"lastUpdateTime", now}, {"lastTransitionTime", now},
              {"reason", reason},      {"message", std::move(message)}};
}

void RemoveCondition(Json& status, std::string_view type) {
  if (!status.contains("conditions") || !status["conditions"].is_array()) return;
  Json kept = Json::array();
  for (auto& c : status["conditions"]) {
    if (GetString(c, "type") != type) kept.push_back(std::move(c));
  }
  if (kept.empty()) {
    status.erase("conditions");
  } else {
    status["conditions"] = std::move(kept);
  }
}

// deploymentutil.SetDeploymentCondition: no change when status and reason are the same; keeps
// lastTransitionTime when only the reason changes.
void SetCondition(Json& status, Json cond) {
  const Json* cur = FindCondition(status, GetString(cond, "type"));
  if (cur != nullptr && GetString(*cur, "status") == GetString(cond, "status") &&
      GetString(*cur, "reason") == GetString(cond, "reason")) {
    return;
  }
  if (cur != nullptr && GetString(*cur, "status") == GetString(cond, "status")) {
    cond["lastTransitionTime"] = At(*cur, "lastTransitionTime");
  }
  RemoveCondition(status, GetString(cond, "type"));
  status["conditions"].push_back(std::move(cond));
}

bool DeploymentComplete(const Json& d, const Json& status) {
  int64_t r = Replicas(d);
  return IntAt(status, "updatedReplicas") == r && IntAt(status, "replicas") == r &&
         IntAt(status, "availableReplicas") == r &&
         IntAt(status, "observedGeneration") >= IntAt(d, "metadata.generation");
}

bool DeploymentProgressing(const Json& d, const Json& new_status) {
  const Json& old = At(d, "status");
  int64_t old_old = IntAt(old, "replicas") - IntAt(old, "updatedReplicas");
  int64_t new_old = IntAt(new_status, "replicas") - IntAt(new_status, "updatedReplicas");
  return IntAt(new_status, "updatedReplicas") > IntAt(old, "updatedReplicas") ||
         new_old < old_old || IntAt(new_status, "readyReplicas") > IntAt(old, "readyReplicas") ||
         IntAt(new_status, "availableReplicas") > IntAt(old, "availableReplicas");
}

}  // namespace steward::cluster::controllers::deploymentutil
