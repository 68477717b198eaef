#include "store/postgres_connection.h"

namespace steward::store::pg {
namespace {

void IgnoreNotice(void*, const char*) {}

}  // namespace

std::string Flatten(std::string m) {
  for (char& c : m) {
    if (c == '\n' || c == '\t') c = ' ';
  }
  while (!m.empty() && m.back() == ' ') m.pop_back();
  std::string out;
  for (char c : m) {
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out += c;
  }
  return out;
}

StatusOr<std::unique_ptr<PgConn>> Connect(const ConnectParams& p) {
  std::string timeout = std::to_string(p.connect_timeout_s);
  std::vector<const char*> keys = {"dbname", "application_name", "connect_timeout"};
  std::vector<const char*> values = {p.url.c_str(), "steward", timeout.c_str()};
  if (p.password) {
    keys.push_back("password");
    values.push_back(p.password->c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* c = PQconnectdbParams(keys.data(), values.data(), /*expand_dbname=*/1);
  if (c == nullptr) return Unavailable(p.where + ": cannot connect: out of memory");
  auto conn = std::make_unique<PgConn>(c, p.where);
  if (PQstatus(c) != CONNECTION_OK) {
    std::string m = Flatten(PQerrorMessage(c));
    if (PQconnectionNeedsPassword(c)) {
      return FailedPrecondition(p.where +
                                ": the server asks for a password and none was given: put it in "
                                "databasePasswordFile or PGPASSWORD");
    }
    return Unavailable(p.where + ": cannot connect: " + m);
  }
  PQsetNoticeProcessor(c, &IgnoreNotice, nullptr);
  auto set =
      conn->Exec("set statement_timeout", "SELECT set_config('statement_timeout', $1, false)",
                 {std::to_string(p.statement_timeout_ms)});
  if (!set.ok()) return set.error();
  return conn;
}

}  // namespace steward::store::pg
