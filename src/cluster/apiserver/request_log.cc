#include "cluster/apiserver/request_log.h"

#include <algorithm>
#include <set>

#include "cluster/model/resource_types.h"
#include "common/json.h"
#include "common/time_util.h"

namespace steward::cluster {

RequestLog::~RequestLog() {
  if (audit_ != nullptr) std::fclose(audit_);
}

Status RequestLog::OpenAuditLog(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (f == nullptr) return InvalidArgument("cannot open audit log " + path);
  MutexLock lock(mu_);
  if (audit_ != nullptr) std::fclose(audit_);
  audit_ = f;
  return Status::Ok();
}

namespace {

// Every label of apiserver_request_total takes its value from a fixed set ("other" for the
// rest): the record holds what the request said (an unknown method, group or resource), and a
// label copied from it would let any client add series to /metrics without bound.
const std::string kOther = "other";

const std::string& Bounded(const std::set<std::string>& known, const std::string& value) {
  return known.count(value) != 0 ? value : kOther;
}

const std::set<std::string>& KnownVerbs() {
  static const std::set<std::string> verbs = {
      // Kubernetes verbs, then the lowercased HTTP methods recorded for refused requests.
      "get",   "list", "watch",   "create", "update", "patch", "delete", "deletecollection",
      "proxy", "head", "options", "post",   "put"};
  return verbs;
}

const std::set<std::string>& KnownGroups() {
  static const std::set<std::string> groups = [] {
    std::set<std::string> g = {""};
    for (const auto& rt : AllResourceTypes()) g.insert(rt.group);
    return g;
  }();
  return groups;
}

const std::set<std::string>& KnownResources() {
  static const std::set<std::string> resources = [] {
    std::set<std::string> r = {""};
    for (const auto& rt : AllResourceTypes()) r.insert(rt.resource);
    return r;
  }();
  return resources;
}

const std::set<std::string>& KnownSubresources() {
  static const std::set<std::string> subresources = {"", "status", "scale", "proxy", "finalize"};
  return subresources;
}

}  // namespace

void RequestLog::Record(const RequestRecord& r) {
  std::string line;
  {
    MutexLock lock(mu_);
    ++counts_[{Bounded(KnownVerbs(), r.verb), Bounded(KnownGroups(), r.group),
               Bounded(KnownResources(), r.resource), Bounded(KnownSubresources(), r.subresource),
               r.code}];
    if (audit_ == nullptr) return;
  }
  const SystemTime answered = r.answered == SystemTime{} ? clock_.WallNow() : r.answered;
  Json entry = {{"time", FormatRfc3339Micro(answered)},
                {"user", r.user},
                {"verb", r.verb},
                {"group", r.group},
                {"resource", r.resource},
                {"subresource", r.subresource},
                {"namespace", r.ns},
                {"name", r.name},
                {"uri", r.uri},
                {"userAgent", r.user_agent},
                {"code", r.code},
                {"latencyMs", static_cast<double>(r.latency.count()) / 1000.0}};
  if (r.started != SystemTime{}) entry["startTime"] = FormatRfc3339Micro(r.started);
  line = DumpJson(entry);
  line += '\n';
  MutexLock lock(mu_);
  if (audit_ != nullptr) {
    std::fwrite(line.data(), 1, line.size(), audit_);
    std::fflush(audit_);
  }
}

std::string RequestLog::MetricsText(const std::string& extra) const {
  std::string out =
      "# HELP apiserver_request_total Counter of apiserver requests broken out for each verb, "
      "group, resource, subresource and HTTP response code.\n"
      "# TYPE apiserver_request_total counter\n";
  MutexLock lock(mu_);
  for (const auto& [key, count] : counts_) {
    const auto& [verb, group, resource, subresource, code] = key;
    std::string upper = verb;
    std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
    out += "apiserver_request_total{code=\"" + std::to_string(code) + "\",group=\"" + group +
           "\",resource=\"" + resource + "\",subresource=\"" + subresource + "\",verb=\"" + upper +
           "\"} " + std::to_string(count) + "\n";
  }
  out += extra;
  return out;
}

uint64_t RequestLog::Count(const std::string& verb) const {
  MutexLock lock(mu_);
  uint64_t total = 0;
  for (const auto& [key, count] : counts_) {
    if (std::get<0>(key) == verb) total += count;
  }
  return total;
}

}  // namespace steward::cluster
