#include "torture/epochs.h"

#include <algorithm>
#include <limits>
#include <set>

#include "common/json.h"
#include "common/json_access.h"
#include "common/time_util.h"
#include "engine/manifests/manifests.h"

namespace steward::torture {
namespace {

const std::set<std::string, std::less<>>& WriteVerbs() {
  static const std::set<std::string, std::less<>> verbs = {"create", "update", "patch", "delete",
                                                           "deletecollection"};
  return verbs;
}

int64_t MicrosOf(SystemTime t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

// One owner's tenure of a shard: [from_us, until_us).
struct Tenure {
  std::string owner;
  int64_t epoch = 0;
  int64_t from_us = 0;
  int64_t until_us = std::numeric_limits<int64_t>::max();
};

std::map<int, std::vector<Tenure>> TenuresOf(const std::vector<store::ShardEvent>& history) {
  std::map<int, std::vector<Tenure>> out;
  for (const store::ShardEvent& e : history) {
    std::vector<Tenure>& t = out[e.shard];
    const int64_t at_us = e.at_ms * 1000;
    if (!t.empty() && t.back().until_us == std::numeric_limits<int64_t>::max()) {
      t.back().until_us = at_us;  // ended by this release or by the next acquisition
    }
    if (e.acquired) t.push_back({e.owner, e.epoch, at_us});
  }
  return out;
}

std::string DescribeTenures(const std::vector<Tenure>& tenures, int64_t at_us) {
  for (const Tenure& t : tenures) {
    if (t.from_us <= at_us && at_us < t.until_us) {
      return "owned by " + t.owner + " at epoch " + std::to_string(t.epoch);
    }
  }
  return "owned by nobody";
}

}  // namespace

std::string ReplicaOfUserAgent(std::string_view user_agent) {
  constexpr std::string_view kKey = "replica/";
  size_t at = user_agent.find(kKey);
  if (at == std::string_view::npos || (at > 0 && user_agent[at - 1] != ' ')) return "";
  std::string_view rest = user_agent.substr(at + kKey.size());
  return std::string(rest.substr(0, rest.find(' ')));
}

std::vector<AuditWrite> ParseAuditWrites(std::string_view audit_log) {
  std::vector<AuditWrite> out;
  while (!audit_log.empty()) {
    const size_t nl = audit_log.find('\n');
    std::string_view line = audit_log.substr(0, nl);
    audit_log = nl == std::string_view::npos ? std::string_view() : audit_log.substr(nl + 1);
    auto entry = ParseJson(line);
    if (!entry.ok() || !entry->is_object()) continue;
    const std::string verb = StringAtPath(*entry, "verb");
    if (WriteVerbs().count(verb) == 0) continue;
    auto time = ParseRfc3339(StringAtPath(*entry, "time"));
    if (!time) continue;
    AuditWrite w;
    w.end_us = MicrosOf(*time);
    const Json* latency = Member(*entry, "latencyMs");
    const double latency_ms =
        latency != nullptr && latency->is_number() ? latency->get<double>() : 0.0;
    w.start_us = w.end_us - static_cast<int64_t>(latency_ms * 1000.0);
    // The arrival's own time when the line has it (clusters since the creation-order check).
    if (auto started = ParseRfc3339(StringAtPath(*entry, "startTime"))) {
      w.start_us = MicrosOf(*started);
    }
    w.replica = ReplicaOfUserAgent(StringAtPath(*entry, "userAgent"));
    w.verb = verb;
    w.resource = StringAtPath(*entry, "resource");
    w.ns = StringAtPath(*entry, "namespace");
    w.name = StringAtPath(*entry, "name");
    w.code = static_cast<int>(GetInt(*entry, "code"));
    out.push_back(std::move(w));
  }
  return out;
}

void ObjectOwners::Add(const std::string& key, const std::string& id, int64_t created_ms) {
  auto& list = by_name_[key];
  list.emplace_back(created_ms, id);
  std::sort(list.begin(), list.end());
}

void ObjectOwners::AddProject(const std::string& id, const std::string& name, int64_t created_ms) {
  const engine::ObjectNames n = engine::NamesFor(id, name);
  for (const auto& [resource, object] :
       std::vector<std::pair<std::string, std::string>>{{"secrets", n.secret},
                                                        {"secrets", n.tls},
                                                        {"secrets", n.custom_tls},
                                                        {"persistentvolumeclaims", n.pvc},
                                                        {"deployments", n.deployment},
                                                        {"services", n.service},
                                                        {"ingresses", n.ingress},
                                                        {"ingresses", n.custom_ingress}}) {
    if (!object.empty()) Add(resource + "/" + object, id, created_ms);
  }
  depends_on_["services/" + n.service] = {"deployments", n.deployment};
  depends_on_["ingresses/" + n.ingress] = {"services", n.service};
  depends_on_["ingresses/" + n.custom_ingress] = {"services", n.service};
  ids_.insert(id);
}

void ObjectOwners::AddAgent(const std::string& id, const std::string& name, int64_t created_ms) {
  for (const char* resource : {"secrets", "deployments", "services"}) {
    Add(std::string(resource) + "/" + name, id, created_ms);
  }
  depends_on_["services/" + name] = {"deployments", name};
  ids_.insert(id);
}

std::optional<ObjectOwners::ObjectRef> ObjectOwners::DependencyOf(std::string_view resource,
                                                                  std::string_view name) const {
  auto it = depends_on_.find(std::string(resource) + "/" + std::string(name));
  if (it == depends_on_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> ObjectOwners::RecordOf(std::string_view resource, std::string_view name,
                                                  int64_t at_us, bool* exempt) const {
  *exempt = false;
  auto it = by_name_.find(std::string(resource) + "/" + std::string(name));
  if (it != by_name_.end()) {
    // The latest incarnation created by then (the first, for a write before any).
    const auto& list = it->second;
    const std::string* id = &list.front().second;
    for (const auto& [created_ms, candidate] : list) {
      if (created_ms * 1000 <= at_us) id = &candidate;
    }
    return *id;
  }
  if (resource != "secrets") return std::nullopt;
  const size_t at = name.rfind("-credentials-");
  if (at == std::string_view::npos) return std::nullopt;
  auto id = ids_.find(std::string(name.substr(0, at)));
  if (id == ids_.end()) return std::nullopt;
  *exempt = true;
  return *id;
}

EpochReport CheckWriteEpochs(const std::vector<AuditWrite>& writes,
                             const std::vector<store::ShardEvent>& history,
                             const ObjectOwners& owners,
                             const std::function<int(const std::string&)>& shard_of) {
  const std::map<int, std::vector<Tenure>> tenures = TenuresOf(history);
  static const std::vector<Tenure> kNone;
  EpochReport report;
  for (const AuditWrite& w : writes) {
    if (w.replica.empty()) continue;
    ++report.writes;
    bool exempt = false;
    std::optional<std::string> id = owners.RecordOf(w.resource, w.name, w.start_us, &exempt);
    if (!id) continue;
    if (exempt) {
      ++report.exempt;
      continue;
    }
    ++report.attributed;
    const int shard = shard_of(*id);
    auto found = tenures.find(shard);
    const std::vector<Tenure>& of_shard = found == tenures.end() ? kNone : found->second;
    // History is in ms: a tenure begun in the same ms as the write's start still covers it.
    const bool held = std::any_of(of_shard.begin(), of_shard.end(), [&](const Tenure& t) {
      return t.owner == w.replica && t.from_us <= w.start_us + 999 && w.end_us <= t.until_us;
    });
    if (held) continue;
    report.violations.push_back(
        "replica " + w.replica + " sent " + w.verb + " " + w.resource + "/" + w.name + " (record " +
        *id + ", shard " + std::to_string(shard) + ") over [" +
        FormatRfc3339Micro(SystemTime(std::chrono::microseconds(w.start_us))) + ", " +
        FormatRfc3339Micro(SystemTime(std::chrono::microseconds(w.end_us))) +
        "] while the shard was " + DescribeTenures(of_shard, w.start_us) + " at the start and " +
        DescribeTenures(of_shard, w.end_us) + " at the end");
  }
  return report;
}

HandoverReport CheckHandovers(const std::vector<Death>& deaths,
                              const std::vector<store::ShardEvent>& history, int64_t bound_ms) {
  const std::map<int, std::vector<Tenure>> tenures = TenuresOf(history);
  HandoverReport report;
  std::vector<int64_t> waits;
  for (const Death& d : deaths) {
    const int64_t at_us = d.at_ms * 1000;
    for (const auto& [shard, list] : tenures) {
      auto held = std::find_if(list.begin(), list.end(), [&](const Tenure& t) {
        return t.owner == d.replica && t.from_us <= at_us && at_us < t.until_us;
      });
      if (held == list.end()) continue;
      ++report.shards;
      auto next = held + 1;
      if (next == list.end()) {
        report.violations.push_back("shard " + std::to_string(shard) + " of " + d.replica +
                                    " (epoch " + std::to_string(held->epoch) +
                                    ") was never acquired again after it died");
        continue;
      }
      const int64_t wait_ms = (next->from_us - at_us) / 1000;
      waits.push_back(wait_ms);
      report.max_ms = std::max(report.max_ms, wait_ms);
      const bool own_comeback = d.back_ms > d.at_ms && next->owner == d.replica;
      const int64_t timed_ms = own_comeback ? (next->from_us - d.back_ms * 1000) / 1000 : wait_ms;
      if (timed_ms > bound_ms) {
        report.violations.push_back(
            "shard " + std::to_string(shard) + " of " + d.replica + " was acquired by " +
            next->owner + " " + std::to_string(wait_ms) + " ms after it died" +
            (own_comeback
                 ? " (" + std::to_string(timed_ms) + " ms after its next process was ready)"
                 : "") +
            " (bound " + std::to_string(bound_ms) + " ms)");
      }
    }
  }
  if (!waits.empty()) {
    std::sort(waits.begin(), waits.end());
    report.median_ms = waits[waits.size() / 2];
  }
  return report;
}

}  // namespace steward::torture
