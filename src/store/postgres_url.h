// The PostgreSQL store's URL and password file: what `database:` may say (no password in the
// URL, ever) and how the store names the database in its messages. Pure functions; any thread.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace steward::store::pg {

struct UrlParts {
  std::string user, host, port, dbname;
};

// The parts of a postgres:// or postgresql:// URL (libpq's own parser); kInvalidArgument for
// another scheme, an unparsable URL or one that holds a password (the message never quotes it).
StatusOr<UrlParts> ParseUrl(std::string_view url);
// "postgres://user@host:port/db": what every message names (never a password).
std::string DescribeUrl(const UrlParts& p);
// The password in `path` (trailing line breaks dropped); kFailedPrecondition when the file is
// missing, empty, or readable by group or others.
StatusOr<std::string> ReadPasswordFile(const std::string& path);

}  // namespace steward::store::pg
