// The exit codes of every steward command, and the one mapping from an API answer (HTTP status)
// or a Status to them. docs/cli.md has the same table with an example command for each code;
// tests/e2e/exit_codes_test.cc produces each one with a real run of the binary.
#pragma once

#include <string_view>
#include <vector>

#include "common/status.h"

namespace steward::cli {

// The operation succeeded.
inline constexpr int kExitOk = 0;
// The operation failed: the server failed it, a --wait ended in Failed, a check or a migration
// step did not pass.
inline constexpr int kExitFailed = 1;
// Bad flags or arguments (CLI11's parse errors, the API's 400s), bad configuration; `serve`,
// `cluster` and `demo` could not start.
inline constexpr int kExitUsage = 2;
// No such project or agent (404).
inline constexpr int kExitNotFound = 3;
// Conflict or unmet precondition (409): e.g. restart of a suspended project.
inline constexpr int kExitConflict = 4;
// The token was refused (401) or is not allowed (403).
inline constexpr int kExitUnauthorized = 5;
// Cannot connect, the server is unavailable (503, 429) or a stream broke.
inline constexpr int kExitUnavailable = 6;
// A deadline passed: --wait, --request-timeout, a watch's sync, demo's --timeout.
inline constexpr int kExitTimeout = 7;

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
