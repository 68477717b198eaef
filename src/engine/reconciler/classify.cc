// Kubernetes errors to a run's outcomes (run.h: Classify).
#include <algorithm>

#include "engine/reconciler/run.h"

namespace steward::engine {

// The reason a request the server refused as wrong is Failed with: its Status reason when it is
// one (CamelCase), else the one its HTTP status implies, else "Rejected".
namespace {

std::string RefusalReason(const kube::ApiError& e) {
  const bool camel = !e.reason.empty() && std::all_of(e.reason.begin(), e.reason.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  });
  if (camel) return e.reason;
  const std::string_view implied = kube::ReasonForHttpStatus(e.http_status);
  return implied.empty() ? "Rejected" : std::string(implied);
}

}  // namespace

// Maps a Kubernetes error to an outcome (docs/design.md §5; docs/lifecycle.md "Errors"). `verb` and
// `object` name the call ("create", "Secret a-1"); `auth_retry` is the delay before a call
// refused for Steward's credentials is tried again (Reconciler::AuthRetry).
//
//   429 TooManyRequests                      Throttled: requeue after Retry-After (1 s if none)
//   401 Unauthorized, no credentials to send KubeUnauthorized: requeue after auth_retry, loud
//   403 Forbidden                            KubeForbidden: requeue after auth_retry, loud
//   409 Conflict                             Conflict: per-key backoff (the view was stale)
//   404 on get, update                       NotFound: per-key backoff (gone since the cache
//                                            saw it; the next run reads it again)
//   retryable (5xx, timeouts), no answer     ApiUnavailable: per-key backoff
//   422 Invalid, 400 BadRequest              Failed Invalid, with the server's message
//   404 on create                            Failed NotFound (the namespace or API is missing)
//   refused by the client before sending     Failed RequestRefused
//   any other 4xx (413, 415, 405, 406, 410, an AlreadyExists on an update, ...)
//                                            Failed with the server's reason
//   anything else (an answer that is no API error: 1xx-3xx, a garbled 2xx body)
//                                            ApiUnavailable: per-key backoff (never success)
// Failed is not retried by the engine: the project runs again on a new intent or a cluster
// event for its objects.
Reconciler::Outcome Classify(const kube::ApiError& e, std::string_view verb,
                             const std::string& object, Millis auth_retry) {
  using O = Reconciler::Outcome;
  const std::string msg = std::string(verb) + " " + object + ": " + e.ToString();
  if (e.IsTooManyRequests()) {
    return O::Error("Throttled", e.ToStatus(), e.retry_after.value_or(Millis(1000)));
  }
  if (e.IsUnauthorized() || (e.IsTransport() && e.code == StatusCode::kUnauthenticated)) {
    return O::Refused(401, "KubeUnauthorized",
                      msg +
                          "; Kubernetes does not accept Steward's credentials (check its "
                          "kubeconfig or service-account token)",
                      e.ToStatus(), auth_retry);
  }
  if (e.IsForbidden()) {
    return O::Refused(403, "KubeForbidden",
                      msg +
                          "; Kubernetes refuses this request with Steward's credentials (check "
                          "Steward's Role and RoleBinding in the namespace, or an admission "
                          "policy)",
                      e.ToStatus(), auth_retry);
  }
  if (e.IsConflict()) return O::Error("Conflict", e.ToStatus());
  if (e.IsNotFound() && verb != "create") return O::Error("NotFound", e.ToStatus());
  if (e.IsRetryable() || e.IsTransport()) return O::Error("ApiUnavailable", e.ToStatus());
  if (e.local) return O::Failed("RequestRefused", msg);
  if (e.http_status >= 400 && e.http_status < 500) {
    // The request itself is wrong: sending it again cannot succeed.
    if (e.IsInvalid() || e.http_status == 400) return O::Failed("Invalid", msg);
    if (e.IsNotFound()) {
      return O::Failed("NotFound", msg + " (the namespace or the API this needs is missing)");
    }
    return O::Failed(RefusalReason(e), msg);
  }
  return O::Error("ApiUnavailable", e.ToStatus());
}

}  // namespace steward::engine
