#include "cluster/controllers/pod_status_fields.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "cluster/controllers/util.h"
#include "common/json_access.h"

namespace steward::cluster::controllers {
namespace {

int ConditionOrder(std::string_view type) {
  static constexpr std::string_view kOrder[] = {"PodReadyToStartContainers", "Initialized", "Ready",
                                                "ContainersReady", "PodScheduled"};
  for (int i = 0; i < 5; ++i) {
    if (kOrder[i] == type) return i;
  }
  return 5;
}

std::string Hex64(std::string_view seed) {
  std::string out;
  char buf[9];
  for (uint32_t i = 0; i < 8; ++i) {
    std::snprintf(buf, sizeof buf, "%08x", Fnv32a(seed, 2166136261u + i * 7919u));
    out += buf;
  }
  return out;
}

}  // namespace

// Sets a pod condition; lastTransitionTime moves only when the status changes.
void SetPodCondition(Json& status, std::string_view type, bool value, std::string_view reason,
                     const std::string& message, const std::string& now) {
  Json& conds = status["conditions"];
  if (!conds.is_array()) conds = Json::array();
  std::string s = value ? "True" : "False";
  Json* found = nullptr;
  for (auto& c : conds) {
    if (GetString(c, "type") == type) found = &c;
  }
  if (found == nullptr) {
    conds.push_back(Json{{"type", type}, {"lastProbeTime", nullptr}});
    found = &conds.back();
    (*found)["status"] = "";
  }
  Json& c = *found;
  if (GetString(c, "status") != s) {
    c["status"] = s;
    c["lastTransitionTime"] = now;
  }
  if (reason.empty()) {
    c.erase("reason");
    c.erase("message");
  } else {
    c["reason"] = reason;
    c["message"] = message;
  }
  std::vector<Json> sorted(conds.begin(), conds.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const Json& a, const Json& b) {
    return ConditionOrder(GetString(a, "type")) < ConditionOrder(GetString(b, "type"));
  });
  conds = Json(sorted);
}

// The reference a container runtime reports: "nginx" -> "docker.io/library/nginx:latest".
std::string NormalizeImage(const std::string& image) {
  std::string out = image;
  size_t slash = image.find('/');
  if (slash == std::string::npos) {
    out = "docker.io/library/" + image;
  } else {
    std::string first = image.substr(0, slash);
    if (first.find('.') == std::string::npos && first.find(':') == std::string::npos &&
        first != "localhost") {
      out = "docker.io/" + image;
    }
  }
  size_t last = out.rfind('/');
  std::string tail = out.substr(last + 1);
  if (tail.find(':') == std::string::npos && tail.find('@') == std::string::npos) out += ":latest";
  return out;
}

std::string ImageId(const std::string& normalized) {
  std::string repo = normalized;
  size_t at = repo.find('@');
  if (at != std::string::npos) return repo;
  size_t colon = repo.rfind(':');
  if (colon != std::string::npos && colon > repo.rfind('/')) repo = repo.substr(0, colon);
  return repo + "@sha256:" + Hex64(normalized);
}

std::string ContainerId(std::string_view seed) { return "containerd://" + Hex64(seed); }

std::string GoDuration(std::chrono::milliseconds d) {
  char buf[32];
  if (d < std::chrono::seconds(1)) {
    std::snprintf(buf, sizeof buf, "%lldms", static_cast<long long>(d.count()));
  } else {
    std::snprintf(buf, sizeof buf, "%.3fs", static_cast<double>(d.count()) / 1000.0);
  }
  return buf;
}

std::string QosClass(const Json& pod) {
  bool any = false, guaranteed = true;
  const Json& cs = AtPath(pod, "spec.containers");
  if (!cs.is_array()) return "BestEffort";
  for (const auto& c : cs) {
    const Json& req = AtPath(c, "resources.requests");
    const Json& lim = AtPath(c, "resources.limits");
    if ((req.is_object() && !req.empty()) || (lim.is_object() && !lim.empty())) any = true;
    for (const char* r : {"cpu", "memory"}) {
      const Json& l = At(lim, r);
      const Json& q = At(req, r);
      if (l.is_null() || (!q.is_null() && q != l)) guaranteed = false;
    }
  }
  if (!any) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

}  // namespace steward::cluster::controllers
