// Test helpers shared by the store tests (the contract suite and the SQLite-specific tests):
// records, credentials, history entries and mutations as the tests build them.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "local_postgres/local_postgres.h"
#include "store/store.h"

namespace steward::store::test_util {

inline constexpr int64_t kT0 = 1767225600000;  // FakeClock's wall time, in ms

inline ProjectRecord Project(std::string id, std::string name, std::string team = "team-a") {
  ProjectRecord r;
  r.id = std::move(id);
  r.name = std::move(name);
  r.team = std::move(team);
  r.spec_json = R"({"stack":"s1"})";
  return r;
}

inline Credential Cred(std::string id, std::string token, CredentialState state) {
  Credential c;
  c.id = std::move(id);
  c.token = std::move(token);
  c.state = state;
  return c;
}

inline HistoryEntry Entry(std::string kind, std::string summary, int64_t generation = 0) {
  HistoryEntry h;
  h.kind = std::move(kind);
  h.summary = std::move(summary);
  h.generation = generation;
  return h;
}

inline Store::MutateFn SetGeneration(int64_t g) {
  return [g](ProjectRecord& r, const std::vector<Credential>&, Mutation&) {
    r.generation = g;
    return Status::Ok();
  };
}

inline std::vector<std::string> Ids(const std::vector<ProjectRecord>& records) {
  std::vector<std::string> out;
  for (const auto& r : records) out.push_back(r.id);
  return out;
}

inline std::vector<std::string> Summaries(const std::vector<HistoryEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& h : entries) out.push_back(h.summary);
  return out;
}

inline Store::CreateFn CreateAs(std::string id, int64_t generation = 1) {
  return [id = std::move(id), generation](ProjectRecord& r, Mutation& m) {
    r.id = id;
    r.team = "team-a";
    r.spec_json = R"({"stack":"s1"})";
    r.generation = generation;
    m.history.push_back(Entry("operation", "create", generation));
    return Status::Ok();
  };
}

inline Store::MutateFn Bump() {
  return [](ProjectRecord& r, const std::vector<Credential>&, Mutation& m) {
    ++r.generation;
    m.history.push_back(Entry("operation", "update", r.generation));
    return Status::Ok();
  };
}

inline Mutation Hosts(std::vector<std::string> hosts) {
  Mutation m;
  m.hostnames = std::move(hosts);
  return m;
}

inline Store::MutateFn ClaimHosts(std::vector<std::string> hosts) {
  return [hosts](ProjectRecord&, const std::vector<Credential>&, Mutation& m) {
    m.hostnames = hosts;
    return Status::Ok();
  };
}

// The PostgreSQL server every test of this binary shares (started on first use, killed at exit),
// or nullptr with `error` set when it cannot start (the test must fail on it).
inline LocalPostgres* SharedPostgres(Status* error) {
  static Status failed = Status::Ok();
  static std::unique_ptr<LocalPostgres> server = [] {
    auto s = LocalPostgres::Launch();
    if (!s.ok()) {
      failed = s.error();
      return std::unique_ptr<LocalPostgres>();
    }
    return std::move(*s);
  }();
  *error = failed;
  return server.get();
}

// A new, empty database on `server`: "t<pid>_<n>".
inline StatusOr<std::string> NewDatabase(const LocalPostgres& server) {
  static std::atomic<int> next{0};
  std::string name = "t" + std::to_string(getpid()) + "_" + std::to_string(next.fetch_add(1));
  RETURN_IF_ERROR(server.CreateDatabase(name));
  return name;
}

}  // namespace steward::store::test_util
