#include "torture/creation_order.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "common/time_util.h"

namespace steward::torture {
namespace {

bool Ok(int code) { return code >= 200 && code < 300; }

std::string At(int64_t us) { return FormatRfc3339Micro(SystemTime(std::chrono::microseconds(us))); }

std::string Key(std::string_view ns, std::string_view resource, std::string_view name) {
  return std::string(ns) + "/" + std::string(resource) + "/" + std::string(name);
}

// "services" → "Service", as a reader of the report knows them.
std::string KindOf(std::string_view resource) {
  if (resource == "deployments") return "Deployment";
  if (resource == "services") return "Service";
  if (resource == "ingresses") return "Ingress";
  return std::string(resource);
}

// What the log says about one object: its successful creates and deletes.
struct Event {
  bool created = false;
  int64_t at_us = 0;  // a create: when answered; a delete: when it arrived
  const AuditWrite* write = nullptr;
};

std::map<std::string, std::vector<Event>> EventsByObject(const std::vector<AuditWrite>& writes) {
  std::map<std::string, std::vector<Event>> out;
  for (const AuditWrite& w : writes) {
    if (!Ok(w.code) || w.name.empty()) continue;
    if (w.verb == "create") {
      out[Key(w.ns, w.resource, w.name)].push_back({true, w.end_us, &w});
    } else if (w.verb == "delete") {
      out[Key(w.ns, w.resource, w.name)].push_back({false, w.start_us, &w});
    }
  }
  return out;
}

}  // namespace

OrderReport CheckCreationOrder(const std::vector<AuditWrite>& writes, const ObjectOwners& owners,
                               const std::vector<int64_t>& cluster_kills_us) {
  const std::map<std::string, std::vector<Event>> events = EventsByObject(writes);
  static const std::vector<Event> kNone;
  OrderReport report;
  for (const AuditWrite& w : writes) {
    if (w.verb != "create" || !Ok(w.code)) continue;
    const std::optional<ObjectOwners::ObjectRef> dep = owners.DependencyOf(w.resource, w.name);
    if (!dep) continue;
    bool exempt = false;
    const std::string record =
        owners.RecordOf(w.resource, w.name, w.start_us, &exempt).value_or("?");
    ++report.checked;
    const int64_t s = w.start_us;
    auto found = events.find(Key(w.ns, dep->resource, dep->name));
    const std::vector<Event>& of_dep = found == events.end() ? kNone : found->second;
    // The latest event before s; of a create and a delete at the same µs, the delete.
    const Event* last = nullptr;
    const Event* next_create = nullptr;  // the first create answered after s, for the report
    for (const Event& e : of_dep) {
      const bool before = e.created ? e.at_us <= s : e.at_us < s;
      if (!before) {
        if (e.created && (next_create == nullptr || e.at_us < next_create->at_us)) next_create = &e;
        continue;
      }
      if (last == nullptr || e.at_us > last->at_us || (e.at_us == last->at_us && !e.created)) {
        last = &e;
      }
    }
    if (last != nullptr && last->created) continue;
    const int64_t since_us = last == nullptr ? INT64_MIN : last->at_us;
    if (std::any_of(cluster_kills_us.begin(), cluster_kills_us.end(),
                    [&](int64_t k) { return since_us < k && k <= s; })) {
      ++report.excused;
      continue;
    }
    const std::string dep_what = KindOf(dep->resource) + " " + dep->name;
    std::string why;
    if (last == nullptr) {
      why = dep_what + " had no create answered before it";
    } else {
      why = dep_what + " was deleted (a delete arrived " + At(last->at_us) + ", answered " +
            std::to_string(last->write->code) + ") with no create answered since";
    }
    if (next_create != nullptr) {
      why += "; a create of " + dep_what + " arrived " + At(next_create->write->start_us) +
             " and was answered " + At(next_create->at_us);
    }
    report.violations.push_back(KindOf(w.resource) + " " + w.name + " was created before its " +
                                dep_what + " existed (record " + record + "; its create arrived " +
                                At(w.start_us) + ", answered " + At(w.end_us) + "): " + why);
  }
  return report;
}

ReadinessReport CheckRunningAfterCreate(const std::vector<RunningClaim>& claims,
                                        const std::vector<AuditWrite>& writes,
                                        int64_t min_ready_ms) {
  ReadinessReport report;
  if (min_ready_ms <= 0) return report;
  // Successful Deployment creates by object, each by its arrival.
  std::map<std::string, std::vector<const AuditWrite*>> creates;
  for (const AuditWrite& w : writes) {
    if (w.verb == "create" && w.resource == "deployments" && Ok(w.code)) {
      creates[Key(w.ns, w.resource, w.name)].push_back(&w);
    }
  }
  std::set<std::pair<std::string, int64_t>> seen;
  for (const RunningClaim& c : claims) {
    if (c.since_ms <= 0 || !seen.insert({c.record, c.since_ms}).second) continue;
    ++report.checked;
    const int64_t since_us = c.since_ms * 1000;
    auto found = creates.find(Key(c.ns, "deployments", c.deployment));
    if (found == creates.end()) continue;
    const AuditWrite* latest = nullptr;
    for (const AuditWrite* w : found->second) {
      if (w->start_us < since_us && (latest == nullptr || w->start_us > latest->start_us)) {
        latest = w;
      }
    }
    // `since` is whole ms: the claim may have been made up to 999 µs after it.
    if (latest == nullptr || since_us + 999 - latest->start_us >= min_ready_ms * 1000) continue;
    report.violations.push_back(
        "record " + c.record + ": " + c.said + " committed " + At(since_us) + ", " +
        std::to_string((since_us - latest->start_us) / 1000) + " ms after the create of its " +
        "Deployment " + c.deployment + " arrived (" + At(latest->start_us) + ", answered " +
        At(latest->end_us) + "): no pod of it can be ready sooner than " +
        std::to_string(min_ready_ms) + " ms after that (the cluster's profile)");
  }
  return report;
}

}  // namespace steward::torture
