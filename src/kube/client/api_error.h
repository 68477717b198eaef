// ApiError: a failed Kubernetes call, typed from the server's `Status` body (code, reason,
// message, causes, Retry-After) or from the transport when no response came back. Callers decide
// from `code` (retry meaning, common/status.h) and the reason predicates, never from message text.
//
// Reason → code: NotFound→kNotFound, AlreadyExists→kAlreadyExists, Conflict→kAborted,
// Invalid/BadRequest/RequestEntityTooLarge→kInvalidArgument, Expired/Gone→kOutOfRange,
// TooManyRequests→kResourceExhausted, Unauthorized→kUnauthenticated, Forbidden→kPermissionDenied,
// MethodNotAllowed/NotAcceptable/UnsupportedMediaType→kUnimplemented,
// Timeout/ServerTimeout→kDeadlineExceeded, InternalError/ServiceUnavailable→kUnavailable. An
// empty or unknown reason falls back to the HTTP status (404, 409, 410, 422, 429, 5xx, ...).
// A plain value type; copy freely.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/json.h"
#include "common/status.h"
#include "net/http.h"

namespace steward::kube {

struct ApiError {
  struct Cause {
    std::string type;  // "FieldValueInvalid", "FieldValueRequired", ...
    std::string field;
    std::string message;
  };

  StatusCode code = StatusCode::kInternal;  // mapped from reason/HTTP status (table above)
  int http_status = 0;                      // 0: no HTTP response (transport failure)
  std::string reason;                       // Status.reason: "NotFound", "Conflict", ... or ""
  std::string message;                      // Status.message, or the transport's message
  std::vector<Cause> causes;                // Status.details.causes
  std::string kind;                         // Status.details.kind ("deployments")
  std::string name;                         // Status.details.name
  std::optional<Millis> retry_after;        // Retry-After header or details.retryAfterSeconds
                                            // (capped at a day)
  // Refused by the client before anything was sent (bad arguments, e.g. Update without a
  // resourceVersion); http_status is 0 but this is not a transport failure.
  bool local = false;

  bool IsNotFound() const;
  bool IsAlreadyExists() const;
  bool IsConflict() const;         // 409 Conflict (stale resourceVersion, uid precondition)
  bool IsInvalid() const;          // 422 Invalid
  bool IsGone() const;             // 410 Expired / Gone: the resourceVersion is too old
  bool IsTooManyRequests() const;  // 429
  bool IsUnauthorized() const;     // 401
  bool IsForbidden() const;        // 403
  bool IsTransport() const { return http_status == 0 && !local; }
  // Worth retrying the same call later: kResourceExhausted (429), kUnavailable (5xx, connection
  // failures), kDeadlineExceeded. Not cancellations, local refusals or client errors.
  bool IsRetryable() const;

  // "Conflict (409): Operation cannot be fulfilled on deployments.apps \"a\": ..."
  std::string ToString() const;
  Status ToStatus() const { return Status(code, ToString()); }
};

// From an HTTP response that is not 2xx. A body that is not a Status (a proxy's HTML page) still
// gives an error with the HTTP status, a reason derived from it and the start of the body.
ApiError ApiErrorFromResponse(int http_status, std::string_view body, const net::Headers& headers);
// From a Status object (watch ERROR events carry one).
ApiError ApiErrorFromStatusObject(const Json& status, int http_status_fallback = 0);
// From a transport failure (no HTTP response).
ApiError ApiErrorFromTransport(const Status& status);
// A call refused by the client itself (local = true, http_status 0), e.g. kInvalidArgument.
ApiError LocalApiError(StatusCode code, std::string message);
// The StatusCode for a Status reason, falling back to the HTTP status when the reason is empty
// or unknown (kInternal when neither says anything).
StatusCode StatusCodeForReason(std::string_view reason, int http_status);
// The reason Kubernetes uses for an HTTP status when the body carries none ("NotFound" for
// 404, "Conflict" for 409, ...; "" for statuses without one).
std::string_view ReasonForHttpStatus(int http_status);

template <typename T>
using Result = Expected<T, ApiError>;

}  // namespace steward::kube
