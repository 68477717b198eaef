// EventRecorder: writes core/v1 Events for the simulated controllers through ObjectApi, as
// client-go's recorder does: a repeat of the same (object, type, reason, message, source)
// bumps count and lastTimestamp of the existing Event instead of creating another.
//
// Bounded: Events expire kEventTtl after their last update (kube-apiserver --event-ttl), and at
// most kMaxEventsPerObject are kept per involved object (the oldest are deleted first).
// Sweep() deletes expired Events; the controller manager calls it periodically.
//
// Not thread-safe: used by the controller manager's worker thread only.
#pragma once

#include <chrono>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

#include "cluster/apiserver/object_api.h"
#include "cluster/model/resource_types.h"
#include "common/clock.h"
#include "common/json.h"

namespace steward::cluster::controllers {

inline constexpr std::chrono::minutes kEventTtl{60};
inline constexpr size_t kMaxEventsPerObject = 20;

struct EventSource {
  std::string component;  // "kubelet", "deployment-controller", ...
  std::string host;       // node name for the kubelet, else empty
};

class EventRecorder {
 public:
  explicit EventRecorder(ObjectApi& api);

  // Records an event about `object` (a full object of type `rt`). `field_path` names a
  // container ("spec.containers{web}") for kubelet events. `type` is "Normal" or "Warning".
  void Record(const ResourceType& rt, const Json& object, std::string_view type,
              std::string_view reason, std::string message, const EventSource& source,
              std::string_view field_path = "");
  // Deletes Events whose last update is older than kEventTtl.
  void Sweep();
  size_t tracked() const { return events_.size(); }

 private:
  struct Tracked {
    std::string ns;
    std::string name;
    std::string involved_uid;
    std::string dedup_key;
    int64_t count = 1;
    SteadyTime last;
  };
  void Forget(const std::string& id);
  void DeleteEvent(const Tracked& t);

  ObjectApi& api_;
  const ResourceType& events_type_;
  // id ("ns/name") -> event.
  std::unordered_map<std::string, Tracked> events_;
  std::unordered_map<std::string, std::string> by_dedup_;  // dedup key -> id
  std::unordered_map<std::string, std::deque<std::string>>
      by_involved_;                                        // uid -> ids, oldest first
  std::deque<std::pair<SteadyTime, std::string>> expiry_;  // (last update, id), in time order
  int64_t last_name_nanos_ = 0;
};

}  // namespace steward::cluster::controllers
