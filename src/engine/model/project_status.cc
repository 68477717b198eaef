#include <limits>

#include "engine/model/project.h"
#include "engine/model/value_rules.h"

namespace steward::engine {

Json ToJson(const ProjectStatus& status) {
  Json conditions = Json::array();
  for (const ResourceCondition& c : status.conditions) {
    conditions.push_back({{"resource", c.resource},
                          {"ready", c.ready},
                          {"reason", c.reason},
                          {"message", c.message}});
  }
  Json j = {{"phase", ToString(status.phase)},
            {"reason", status.reason},
            {"message", status.message},
            {"observedGeneration", status.observed_generation},
            {"url", status.url},
            {"conditions", std::move(conditions)},
            {"since", status.since_ms}};
  if (!status.last_phase.empty()) {
    j["lastPhase"] = status.last_phase;
    j["lastPhaseSince"] = status.last_phase_since_ms;
  }
  return j;
}

Json ToStoredJson(const ProjectStatus& status) {
  Json j = ToJson(status);
  if (!status.fingerprint.empty()) j["fingerprint"] = status.fingerprint;
  return j;
}

namespace {

// Reads obj[key] into *out when present; absent and null leave it unchanged.
Status OptString(const Json& obj, std::string_view path, std::string_view key, std::string* out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return Status::Ok();
  ASSIGN_OR_RETURN(*out, ReadString(*it, JoinPath(path, key)));
  return Status::Ok();
}

Status OptInt(const Json& obj, std::string_view path, std::string_view key, int64_t lo,
              int64_t* out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return Status::Ok();
  ASSIGN_OR_RETURN(*out,
                   ReadInt(*it, JoinPath(path, key), lo, std::numeric_limits<int64_t>::max()));
  return Status::Ok();
}

}  // namespace

StatusOr<ProjectStatus> ParseProjectStatus(const Json& j) {
  constexpr std::string_view kPath = "status";
  if (!j.is_object()) {
    return InvalidField(kPath, "must be an object, got " + std::string(JsonTypeName(j)));
  }
  ProjectStatus s;
  auto phase_it = j.find("phase");
  if (phase_it == j.end() || phase_it->is_null())
    return InvalidField("status.phase", "is required");
  ASSIGN_OR_RETURN(std::string phase, ReadString(*phase_it, "status.phase"));
  std::optional<Phase> p = ParsePhase(phase);
  if (!p) return InvalidField("status.phase", "unknown phase \"" + phase.substr(0, 64) + "\"");
  s.phase = *p;
  RETURN_IF_ERROR(OptString(j, kPath, "reason", &s.reason));
  RETURN_IF_ERROR(OptString(j, kPath, "message", &s.message));
  RETURN_IF_ERROR(OptString(j, kPath, "url", &s.url));
  RETURN_IF_ERROR(OptString(j, kPath, "fingerprint", &s.fingerprint));
  RETURN_IF_ERROR(OptString(j, kPath, "lastPhase", &s.last_phase));
  RETURN_IF_ERROR(OptInt(j, kPath, "lastPhaseSince", std::numeric_limits<int64_t>::min(),
                         &s.last_phase_since_ms));
  RETURN_IF_ERROR(OptInt(j, kPath, "observedGeneration", 0, &s.observed_generation));
  RETURN_IF_ERROR(OptInt(j, kPath, "since", std::numeric_limits<int64_t>::min(), &s.since_ms));
  auto cond_it = j.find("conditions");
  if (cond_it != j.end() && !cond_it->is_null()) {
    if (!cond_it->is_array()) {
      return InvalidField("status.conditions",
                          "must be an array, got " + std::string(JsonTypeName(*cond_it)));
    }
    for (size_t i = 0; i < cond_it->size(); ++i) {
      const Json& c = (*cond_it)[i];
      std::string path = IndexPath("status.conditions", i);
      if (!c.is_object()) {
        return InvalidField(path, "must be an object, got " + std::string(JsonTypeName(c)));
      }
      ResourceCondition rc;
      RETURN_IF_ERROR(OptString(c, path, "resource", &rc.resource));
      RETURN_IF_ERROR(OptString(c, path, "reason", &rc.reason));
      RETURN_IF_ERROR(OptString(c, path, "message", &rc.message));
      auto ready = c.find("ready");
      if (ready != c.end() && !ready->is_null()) {
        ASSIGN_OR_RETURN(rc.ready, ReadBool(*ready, JoinPath(path, "ready")));
      }
      s.conditions.push_back(std::move(rc));
    }
  }
  return s;
}

}  // namespace steward::engine

namespace steward::engine {

std::optional<ProjectStatus> ParseStoredStatus(std::string_view status_json) {
  if (status_json.empty()) return std::nullopt;
  auto j = ParseJson(status_json);
  if (!j.ok()) return std::nullopt;
  auto s = ParseProjectStatus(*j);
  if (!s.ok()) return std::nullopt;
  return std::move(*s);
}

ProjectStatus PresentStatus(const std::optional<ProjectStatus>& stored, Intent intent,
                            int64_t generation) {
  if (!stored) {
    ProjectStatus s;
    s.phase = Phase::kPending;
    s.reason = "Accepted";
    s.message = "generation " + std::to_string(generation) + " accepted; waiting for the engine";
    return s;
  }
  if (stored->observed_generation >= generation) return *stored;
  const Phase was = stored->phase;
  if (was == Phase::kUnknown) {
    // Where the project is going cannot be told while its cluster does not answer: still
    // Unknown, with the intent named.
    ProjectStatus s = *stored;
    s.message = "generation " + std::to_string(generation) +
                " accepted; it waits for the cluster to answer (" + stored->message + ")";
    return s;
  }
  Phase now = was;
  switch (intent) {
    case Intent::kRun:
      now = (was == Phase::kRunning || was == Phase::kUpdating || was == Phase::kDegraded)
                ? Phase::kUpdating
                : (was == Phase::kPending ? Phase::kPending : Phase::kProvisioning);
      break;
    case Intent::kSuspend:
      // Nothing runs while the engine has not acted: a Suspended project stays truly suspended.
      now = was == Phase::kSuspended ? Phase::kSuspended : Phase::kSuspending;
      break;
    case Intent::kDelete:
      now = Phase::kDeleting;
      break;
  }
  if (now == was && was == Phase::kSuspended) return *stored;
  ProjectStatus s = *stored;
  s.phase = now;
  s.reason = "Accepted";
  s.message = "generation " + std::to_string(generation) +
              " accepted; waiting for the engine (last observed at generation " +
              std::to_string(stored->observed_generation) + ": " + std::string(ToString(was)) +
              (stored->reason.empty() ? "" : ", " + stored->reason) + ")";
  return s;
}

}  // namespace steward::engine
