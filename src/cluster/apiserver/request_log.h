// RequestLog: what an API server tells about the requests it served — an audit log (one JSON
// line per request) and request counters by verb, resource and code for /metrics.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>

#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"

namespace steward::cluster {

struct RequestRecord {
  std::string user;
  std::string verb;  // get, list, watch, create, update, patch, delete, deletecollection, proxy...
  std::string group;
  std::string resource;  // "" for non-resource URLs
  std::string subresource;
  std::string ns;
  std::string name;
  std::string uri;
  std::string user_agent;  // the request's User-Agent ("" when none), as audit events carry it
  int code = 0;
  std::chrono::microseconds latency{0};
  // Wall-clock times of the request's arrival and of its answer, taken with `latency` (the
  // answer's time just before it is sent); unset (the epoch): the time Record() runs. The audit
  // line's "time" is the answer's, "startTime" the arrival's, so that the order of two requests
  // one client sent one after the other (the second once the first was answered) shows in
  // them: first's time < second's startTime.
  SystemTime started{};
  SystemTime answered{};
};

class RequestLog {
 public:
  explicit RequestLog(const Clock& clock) : clock_(clock) {}
  ~RequestLog();
  // Appends audit lines to `path` (created if missing). Fails with kInvalidArgument naming the
  // path when it cannot be opened.
  Status OpenAuditLog(const std::string& path);
  // Writes the audit line (the record as it is) and counts the request. The counter's labels
  // come from fixed sets: verbs and methods the server knows, the served groups, resources and
  // subresources; anything else counts as "other", so requests cannot grow /metrics.
  void Record(const RequestRecord& record);
  // Prometheus text exposition of apiserver_request_total (+ the extra lines given).
  std::string MetricsText(const std::string& extra = "") const;
  // Total requests counted for a verb (all resources and codes); for tests.
  uint64_t Count(const std::string& verb) const;

 private:
  const Clock& clock_;
  mutable Mutex mu_;
  std::FILE* audit_ GUARDED_BY(mu_) = nullptr;
  std::map<std::tuple<std::string, std::string, std::string, std::string, int>, uint64_t> counts_
      GUARDED_BY(mu_);  // verb, group, resource, subresource, code
};

}  // namespace steward::cluster
