#include "store/postgres_url.h"

#include <libpq-fe.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>

#include "common/file.h"

namespace steward::store::pg {
namespace {

bool HasPrefix(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

StatusOr<UrlParts> ParseUrl(std::string_view url) {
  if (!HasPrefix(url, "postgres://") && !HasPrefix(url, "postgresql://")) {
    return InvalidArgument("database: a PostgreSQL URL starts with postgres:// or postgresql://");
  }
  // user:password@ in the authority: refused before libpq sees it, so no message echoes it.
  std::string_view rest = url.substr(url.find("://") + 3);
  std::string_view authority = rest.substr(0, rest.find_first_of("/?"));
  size_t at = authority.rfind('@');
  if (at != std::string_view::npos && authority.substr(0, at).find(':') != std::string_view::npos) {
    return InvalidArgument(
        "database: the URL must not hold a password: put the password in databasePasswordFile "
        "or PGPASSWORD");
  }
  char* err = nullptr;
  std::string text(url);
  PQconninfoOption* opts = PQconninfoParse(text.c_str(), &err);
  if (opts == nullptr) {
    std::string m = err ? err : "out of memory";
    PQfreemem(err);
    while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
    return InvalidArgument("database: cannot parse the URL: " + m);
  }
  UrlParts parts;
  bool password = false;
  for (PQconninfoOption* o = opts; o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    std::string_view k = o->keyword;
    if (k == "password") password = true;
    if (k == "user") parts.user = o->val;
    if (k == "host") parts.host = o->val;
    if (k == "hostaddr" && parts.host.empty()) parts.host = o->val;
    if (k == "port") parts.port = o->val;
    if (k == "dbname") parts.dbname = o->val;
  }
  PQconninfoFree(opts);
  if (password) {
    return InvalidArgument(
        "database: the URL must not hold a password: put the password in databasePasswordFile "
        "or PGPASSWORD");
  }
  return parts;
}

std::string DescribeUrl(const UrlParts& p) {
  return "postgres://" + (p.user.empty() ? "" : p.user + "@") +
         (p.host.empty() ? "localhost" : p.host) + ":" + (p.port.empty() ? "5432" : p.port) + "/" +
         p.dbname;
}

StatusOr<std::string> ReadPasswordFile(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    return FailedPrecondition("databasePasswordFile " + path + ": " + ErrnoText(errno));
  }
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return FailedPrecondition("databasePasswordFile " + path +
                              ": readable by group or others (mode " + mode + "); chmod 600 it");
  }
  ASSIGN_OR_RETURN(std::string password, ReadSmallFile(path, 4096));
  while (!password.empty() && (password.back() == '\n' || password.back() == '\r')) {
    password.pop_back();
  }
  if (password.empty()) return FailedPrecondition("databasePasswordFile " + path + ": is empty");
  return password;
}

}  // namespace steward::store::pg
