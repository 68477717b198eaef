#include "cluster/controllers/event_recorder.h"

#include <algorithm>
#include <cstdio>

#include "cluster/controllers/util.h"

namespace steward::cluster::controllers {

EventRecorder::EventRecorder(ObjectApi& api) : api_(api), events_type_(TypeOf("events")) {}

void EventRecorder::Record(const ResourceType& rt, const Json& object, std::string_view type,
                           std::string_view reason, std::string message, const EventSource& source,
                           std::string_view field_path) {
  const Json& meta = At(object, "metadata");
  std::string uid = GetString(meta, "uid");
  std::string obj_ns = GetString(meta, "namespace");
  std::string ns = obj_ns.empty() ? "default" : obj_ns;
  SystemTime wall = api_.clock().WallNow();
  SteadyTime now = api_.clock().Now();
  std::string stamp = Rfc3339(wall);

  std::string dedup;
  dedup.append(uid).append("\x1f").append(type).append("\x1f").append(reason);
  dedup.append("\x1f").append(message).append("\x1f").append(source.component);
  dedup.append("\x1f").append(field_path);
  if (auto it = by_dedup_.find(dedup); it != by_dedup_.end()) {
    std::string id = it->second;
    Tracked& t = events_[id];
    int64_t count = t.count + 1;
    auto res = api_.Modify(events_type_, t.ns, t.name, [&](Json& ev) {
      ev["count"] = count;
      ev["lastTimestamp"] = stamp;
      return true;
    });
    if (res.ok()) {
      t.count = count;
      t.last = now;
      expiry_.emplace_back(now, id);
      return;
    }
    Forget(id);  // deleted by someone else (namespace clean-up): record afresh
  }

  int64_t nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(wall.time_since_epoch()).count();
  nanos = std::max(nanos, last_name_nanos_ + 1);
  last_name_nanos_ = nanos;
  char hex[24];
  std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(nanos));
  std::string name = GetString(meta, "name") + "." + hex;

  Json involved = {{"kind", rt.kind},
                   {"name", GetString(meta, "name")},
                   {"uid", uid},
                   {"apiVersion", rt.ApiVersion()},
                   {"resourceVersion", GetString(meta, "resourceVersion")}};
  if (!obj_ns.empty()) involved["namespace"] = obj_ns;
  if (!field_path.empty()) involved["fieldPath"] = std::string(field_path);
  Json src = {{"component", source.component}};
  if (!source.host.empty()) src["host"] = source.host;
  Json ev = {{"apiVersion", "v1"},
             {"kind", "Event"},
             {"metadata", {{"name", name}, {"namespace", ns}}},
             {"involvedObject", std::move(involved)},
             {"reason", std::string(reason)},
             {"message", std::move(message)},
             {"type", std::string(type)},
             {"source", std::move(src)},
             {"firstTimestamp", stamp},
             {"lastTimestamp", stamp},
             {"count", 1},
             {"eventTime", nullptr},
             {"reportingComponent", source.component},
             {"reportingInstance", source.host}};
  auto res = api_.Create(events_type_, ns, std::move(ev));
  if (!res.ok()) return;  // e.g. the namespace is terminating: events are best effort

  std::string id = NsName(ns, name);
  events_[id] = Tracked{ns, name, uid, dedup, 1, now};
  by_dedup_[dedup] = id;
  expiry_.emplace_back(now, id);
  auto& per_object = by_involved_[uid];
  per_object.push_back(id);
  while (per_object.size() > kMaxEventsPerObject) {
    std::string oldest = per_object.front();
    auto it = events_.find(oldest);
    if (it != events_.end()) DeleteEvent(it->second);
    Forget(oldest);  // also pops it from per_object
  }
}

void EventRecorder::Sweep() {
  SteadyTime now = api_.clock().Now();
  while (!expiry_.empty() && expiry_.front().first + kEventTtl <= now) {
    auto [when, id] = std::move(expiry_.front());
    expiry_.pop_front();
    auto it = events_.find(id);
    if (it == events_.end() || it->second.last != when) continue;  // refreshed or gone
    DeleteEvent(it->second);
    Forget(id);
  }
}

void EventRecorder::DeleteEvent(const Tracked& t) { (void)api_.Delete(events_type_, t.ns, t.name); }

void EventRecorder::Forget(const std::string& id) {
  auto it = events_.find(id);
  if (it == events_.end()) return;
  auto d = by_dedup_.find(it->second.dedup_key);
  if (d != by_dedup_.end() && d->second == id) by_dedup_.erase(d);
  auto inv = by_involved_.find(it->second.involved_uid);
  if (inv != by_involved_.end()) {
    auto& q = inv->second;
    q.erase(std::remove(q.begin(), q.end(), id), q.end());
    if (q.empty()) by_involved_.erase(inv);
  }
  events_.erase(it);
}

}  // namespace steward::cluster::controllers
