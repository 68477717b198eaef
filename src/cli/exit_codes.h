// The exit codes of every steward command, and the one mapping from an API answer (HTTP status)
// or a Status to them. docs/cli.md has the same table with an example command for each code;
// tests/e2e/exit_codes_test.cc produces each one with a real run of the binary.
#pragma once

#include <string_view>
#include <vector>

#include "common/status.h"

namespace steward::cli {

enum ExitCodes : int {
  kExitOk = 0,
  kExitFailed = 1,    // the operation failed: the server failed it, a --wait ended in Failed,
                      // a check or a migration step did not pass
  kExitUsage = 2,     // bad flags or arguments (CLI11's parse errors, the API's 400s), bad
                      // configuration; `serve`, `cluster` and `demo` could not start
  kExitNotFound = 3,  // no such project or agent (404)
  kExitConflict = 4,  // conflict or unmet precondition (409): e.g. restart of a suspended project
  kExitUnauthorized = 5,  // the token was refused (401) or is not allowed (403)
  kExitUnavailable = 6,   // cannot connect, the server is unavailable (503, 429) or a stream broke
  kExitTimeout = 7,       // a deadline passed: --wait, --request-timeout, a watch's sync
};

struct ExitCodeInfo {
  int code;
  std::string_view name;
  std::string_view meaning;
};

// Every code above, in order, with a name and a one-line meaning.
const std::vector<ExitCodeInfo>& ExitCodeTable();

// The exit code for a failed call to the Steward API: from the HTTP status when the server
// answered (`http_status` != 0), otherwise from the Status code of the failure.
int ExitCodeForCall(const Status& status, int http_status);
int ExitCodeForHttpStatus(int http_status);
int ExitCodeForStatus(StatusCode code);

}  // namespace steward::cli
