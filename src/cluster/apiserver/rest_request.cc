#include "cluster/apiserver/rest_request.h"

#include <charconv>

namespace steward::cluster::rest {

std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

bool IsTrue(std::string_view v) { return v == "true" || v == "1" || v == "True"; }

std::optional<uint64_t> QueryRevision(std::string_view rv) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(rv.data(), rv.data() + rv.size(), v);
  if (rv.empty() || ec != std::errc() || ptr != rv.data() + rv.size() || v == 0) {
    return std::nullopt;
  }
  return v;
}

uint64_t RevisionToAwait(const std::string& verb, const net::HttpRequest& http, uint64_t current) {
  auto rv = QueryRevision(http.Query("resourceVersion"));
  if (!rv || *rv <= current) return 0;
  if (verb == "get") return *rv;
  if (verb == "list") {
    bool exact = http.Query("resourceVersionMatch") == "Exact";
    return exact || !http.Query("continue").empty() ? 0 : *rv;
  }
  if (verb == "watch") return IsTrue(http.Query("sendInitialEvents")) ? *rv : 0;
  return 0;
}

WriteOptions WriteOptionsOf(const net::HttpRequest& http) {
  WriteOptions opts;
  opts.dry_run = http.Query("dryRun") == "All";
  opts.field_manager = std::string(http.Query("fieldManager"));
  return opts;
}

}  // namespace steward::cluster::rest
