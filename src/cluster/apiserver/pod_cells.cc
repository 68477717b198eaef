// The pod printer (printPod in kubernetes/pkg/printers/internalversion/printers.go): the
// Ready, Status and Restarts columns from the init containers, sidecars and containers.
#include <optional>
#include <string>

#include "cluster/apiserver/table_cells.h"
#include "common/json_access.h"

namespace steward::cluster::tablecells {
namespace {

bool ConditionTrue(const Json& pod, std::string_view type) {
  for (const auto& c : Array(pod, "status.conditions")) {
    if (Str(c, "type") == type) return Str(c, "status") == "True";
  }
  return false;
}

// What printPod gathers for the Ready, Status and Restarts columns.
struct PodSummary {
  int64_t total = 0;  // containers, and restartable init containers (sidecars)
  int64_t ready = 0;
  std::string reason;
  int64_t restarts = 0;
  std::optional<SystemTime> last_restart;
  // The restarts of the sidecars alone: all that counts once the pod is initialized.
  int64_t restartable_init_restarts = 0;
  std::optional<SystemTime> last_restartable_init_restart;
};

void KeepLater(std::optional<SystemTime>& acc, std::optional<SystemTime> t) {
  if (t && (!acc || *acc < *t)) acc = t;
}

// The Status before the containers are looked at: the phase, the status reason, or
// SchedulingGated.
std::string PodBaseReason(const Json& pod) {
  std::string reason = Str(pod, "status.phase");
  if (!Str(pod, "status.reason").empty()) reason = Str(pod, "status.reason");
  for (const auto& c : Array(pod, "status.conditions")) {
    if (Str(c, "type") == "PodScheduled" && Str(c, "reason") == "SchedulingGated") {
      reason = "SchedulingGated";
    }
  }
  return reason;
}

// The Status of a pod held at init container `index` (of `count`), from its status `c`.
std::string InitContainerReason(const Json& c, size_t index, size_t count) {
  const Json& terminated = PathOrNull(c, "state.terminated");
  const Json& waiting = PathOrNull(c, "state.waiting");
  if (terminated.is_object()) {
    const std::string r = Str(terminated, "reason");
    if (r.empty()) {
      return Int(terminated, "signal") != 0
                 ? "Init:Signal:" + std::to_string(Int(terminated, "signal"))
                 : "Init:ExitCode:" + std::to_string(Int(terminated, "exitCode"));
    }
    return "Init:" + r;
  }
  if (waiting.is_object() && !Str(waiting, "reason").empty() &&
      Str(waiting, "reason") != "PodInitializing") {
    return "Init:" + Str(waiting, "reason");
  }
  return "Init:" + std::to_string(index) + "/" + std::to_string(count);
}

// Counts the sidecars into `s` and walks the init containers' statuses in order, as printPod
// does; returns whether one holds the pod initializing (s.reason then says which and why).
bool SummarizeInitContainers(const Json& pod, PodSummary& s) {
  std::map<std::string, bool> init_restartable;  // init container name -> sidecar?
  const Json& init_specs = Array(pod, "spec.initContainers");
  for (const auto& c : init_specs) {
    const bool sidecar = Str(c, "restartPolicy") == "Always";
    init_restartable[Str(c, "name")] = sidecar;
    if (sidecar) ++s.total;
  }
  const Json& init_statuses = Array(pod, "status.initContainerStatuses");
  for (size_t i = 0; i < init_statuses.size(); ++i) {
    const Json& c = init_statuses[i];
    s.restarts += Int(c, "restartCount");
    const Json& last_term = PathOrNull(c, "lastState.terminated");
    if (last_term.is_object()) KeepLater(s.last_restart, Time(last_term, "finishedAt"));
    const bool sidecar = init_restartable[Str(c, "name")];
    if (sidecar) {
      s.restartable_init_restarts += Int(c, "restartCount");
      if (last_term.is_object())
        KeepLater(s.last_restartable_init_restart, Time(last_term, "finishedAt"));
    }
    const Json& terminated = PathOrNull(c, "state.terminated");
    if (terminated.is_object() && Int(terminated, "exitCode") == 0) continue;
    if (sidecar && Bool(c, "started")) {
      if (Bool(c, "ready")) ++s.ready;
      continue;
    }
    s.reason = InitContainerReason(c, i, init_specs.size());
    return true;
  }
  return false;
}

// Walks the containers' statuses, last first, as printPod does for an initialized pod: their
// restarts (on top of the sidecars'), readiness and the Status they give.
void SummarizeContainers(const Json& pod, PodSummary& s) {
  s.restarts = s.restartable_init_restarts;
  s.last_restart = s.last_restartable_init_restart;
  bool has_running = false;
  const Json& statuses = Array(pod, "status.containerStatuses");
  for (size_t n = statuses.size(); n > 0; --n) {
    const Json& c = statuses[n - 1];
    s.restarts += Int(c, "restartCount");
    const Json& last_term = PathOrNull(c, "lastState.terminated");
    if (last_term.is_object()) KeepLater(s.last_restart, Time(last_term, "finishedAt"));
    const Json& waiting = PathOrNull(c, "state.waiting");
    const Json& terminated = PathOrNull(c, "state.terminated");
    if (waiting.is_object() && !Str(waiting, "reason").empty()) {
      s.reason = Str(waiting, "reason");
    } else if (terminated.is_object() && !Str(terminated, "reason").empty()) {
      s.reason = Str(terminated, "reason");
    } else if (terminated.is_object()) {
      s.reason = Int(terminated, "signal") != 0
                     ? "Signal:" + std::to_string(Int(terminated, "signal"))
                     : "ExitCode:" + std::to_string(Int(terminated, "exitCode"));
    } else if (Bool(c, "ready") && PathOrNull(c, "state.running").is_object()) {
      has_running = true;
      ++s.ready;
    }
  }
  if (s.reason == "Completed" && has_running) {
    s.reason = ConditionTrue(pod, "Ready") ? "Running" : "NotReady";
  }
}

// The Readiness Gates column: "<true conditions>/<gates>", "<none>" without gates.
std::string ReadinessGatesCell(const Json& pod) {
  const Json& readiness_gates = Array(pod, "spec.readinessGates");
  if (readiness_gates.empty()) return "<none>";
  int true_conditions = 0;
  for (const auto& gate : readiness_gates) {
    const std::string type = Str(gate, "conditionType");
    for (const auto& c : Array(pod, "status.conditions")) {
      if (Str(c, "type") == type) {
        if (Str(c, "status") == "True") ++true_conditions;
        break;
      }
    }
  }
  return std::to_string(true_conditions) + "/" + std::to_string(readiness_gates.size());
}

}  // namespace

Json PodCells(const Json& pod, SystemTime now) {
  PodSummary s;
  s.total = static_cast<int64_t>(Array(pod, "spec.containers").size());
  s.reason = PodBaseReason(pod);
  const bool initializing = SummarizeInitContainers(pod, s);
  if (!initializing || ConditionTrue(pod, "Initialized")) SummarizeContainers(pod, s);

  const std::string phase = Str(pod, "status.phase");
  if (Terminating(pod) && Str(pod, "status.reason") == "NodeLost") {
    s.reason = "Unknown";
  } else if (Terminating(pod) && phase != "Succeeded" && phase != "Failed") {
    s.reason = "Terminating";
  }

  std::string restarts_str = std::to_string(s.restarts);
  if (s.restarts != 0 && s.last_restart) {
    restarts_str += " (" + Since(s.last_restart, now) + " ago)";
  }

  std::string pod_ip;
  const Json& ips = Array(pod, "status.podIPs");
  if (!ips.empty()) pod_ip = Str(ips[0], "ip");
  return Json::array({Name(pod), std::to_string(s.ready) + "/" + std::to_string(s.total), s.reason,
                      restarts_str, Age(pod, now), OrNone(pod_ip),
                      OrNone(Str(pod, "spec.nodeName")),
                      OrNone(Str(pod, "status.nominatedNodeName")), ReadinessGatesCell(pod)});
}

}  // namespace steward::cluster::tablecells
