#include "cli/exit_codes.h"

namespace steward::cli {

const std::vector<ExitCodeInfo>& ExitCodeTable() {
  static const auto* table = new std::vector<ExitCodeInfo>{
      {kExitOk, "ok", "success"},
      {kExitFailed, "failed", "the operation failed (server error, project Failed, check failed)"},
      {kExitUsage, "usage", "bad flags, arguments or configuration (also the API's 400)"},
      {kExitNotFound, "not-found", "no such project or agent (404)"},
      {kExitConflict, "conflict", "conflict or unmet precondition (409)"},
      {kExitUnauthorized, "unauthorized", "token refused or not allowed (401, 403)"},
      {kExitUnavailable, "unavailable", "cannot connect, or the server is unavailable (503, 429)"},
      {kExitTimeout, "timeout", "a deadline passed (--wait, --request-timeout)"},
  };
  return *table;
}

int ExitCodeForHttpStatus(int http_status) {
  switch (http_status) {
    case 400:
    case 413:
    case 415:
    case 422:
      return kExitUsage;
    case 401:
    case 403:
      return kExitUnauthorized;
    case 404:
    case 410:
      return kExitNotFound;
    case 409:
    case 412:
      return kExitConflict;
    case 429:
    case 502:
    case 503:
      return kExitUnavailable;
    case 408:
    case 504:
      return kExitTimeout;
    default:
      return http_status >= 200 && http_status < 300 ? kExitOk : kExitFailed;
  }
}

int ExitCodeForStatus(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
      return kExitUsage;
    case StatusCode::kNotFound:
      return kExitNotFound;
    case StatusCode::kAlreadyExists:
    case StatusCode::kAborted:
    case StatusCode::kFailedPrecondition:
      return kExitConflict;
    case StatusCode::kUnauthenticated:
    case StatusCode::kPermissionDenied:
      return kExitUnauthorized;
    case StatusCode::kUnavailable:
    case StatusCode::kResourceExhausted:
      return kExitUnavailable;
    case StatusCode::kDeadlineExceeded:
      return kExitTimeout;
    case StatusCode::kCancelled:
    case StatusCode::kUnimplemented:
    case StatusCode::kInternal:
      return kExitFailed;
  }
  return kExitFailed;
}

int ExitCodeForCall(const Status& status, int http_status) {
  if (status.ok()) return kExitOk;
  return http_status != 0 ? ExitCodeForHttpStatus(http_status) : ExitCodeForStatus(status.code());
}

}  // namespace steward::cli
