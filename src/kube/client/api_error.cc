#include "kube/client/api_error.h"

#include <algorithm>
#include <charconv>
#include <utility>

namespace steward::kube {
namespace {

struct ReasonCode {
  std::string_view reason;
  StatusCode code;
};

// Status reasons (apimachinery pkg/apis/meta/v1/types.go) and what they mean to a caller.
constexpr ReasonCode kReasonCodes[] = {
    {"NotFound", StatusCode::kNotFound},
    {"AlreadyExists", StatusCode::kAlreadyExists},
    {"Conflict", StatusCode::kAborted},
    {"Invalid", StatusCode::kInvalidArgument},
    {"BadRequest", StatusCode::kInvalidArgument},
    {"RequestEntityTooLarge", StatusCode::kInvalidArgument},
    {"Expired", StatusCode::kOutOfRange},
    {"Gone", StatusCode::kOutOfRange},
    {"TooManyRequests", StatusCode::kResourceExhausted},
    {"Unauthorized", StatusCode::kUnauthenticated},
    {"Forbidden", StatusCode::kPermissionDenied},
    {"MethodNotAllowed", StatusCode::kUnimplemented},
    {"NotAcceptable", StatusCode::kUnimplemented},
    {"UnsupportedMediaType", StatusCode::kUnimplemented},
    {"Timeout", StatusCode::kDeadlineExceeded},
    {"ServerTimeout", StatusCode::kDeadlineExceeded},
    {"InternalError", StatusCode::kUnavailable},
    {"ServiceUnavailable", StatusCode::kUnavailable},
};

struct HttpReason {
  int http_status;
  std::string_view reason;
};

// client-go's NewGenericServerResponse: the reason implied by a bare HTTP status.
constexpr HttpReason kHttpReasons[] = {
    {400, "BadRequest"},
    {401, "Unauthorized"},
    {403, "Forbidden"},
    {404, "NotFound"},
    {405, "MethodNotAllowed"},
    {406, "NotAcceptable"},
    {409, "Conflict"},
    {410, "Gone"},
    {413, "RequestEntityTooLarge"},
    {415, "UnsupportedMediaType"},
    {422, "Invalid"},
    {429, "TooManyRequests"},
    {500, "InternalError"},
    {503, "ServiceUnavailable"},
    {504, "Timeout"},
};

constexpr size_t kBodySnippetBytes = 200;
// A server may ask for any wait; anything longer than a day is read as a day, so the conversion
// to milliseconds cannot overflow.
constexpr int64_t kMaxRetryAfterSeconds = 24 * 3600;

Millis RetryAfter(int64_t seconds) {
  return Millis(std::min(seconds, kMaxRetryAfterSeconds) * 1000);
}

std::optional<StatusCode> CodeForReason(std::string_view reason) {
  for (const auto& rc : kReasonCodes) {
    if (rc.reason == reason) return rc.code;
  }
  return std::nullopt;
}

StatusCode CodeForHttpStatus(int http_status) {
  auto reason = ReasonForHttpStatus(http_status);
  if (!reason.empty()) return *CodeForReason(reason);
  if (http_status >= 500 && http_status < 600) return StatusCode::kUnavailable;
  if (http_status >= 400 && http_status < 500) return StatusCode::kInvalidArgument;
  return StatusCode::kInternal;
}

// The start of a non-Status body, printable and on one line.
std::string Snippet(std::string_view body) {
  std::string out;
  bool space = false;
  for (char c : body.substr(0, kBodySnippetBytes)) {
    auto u = static_cast<unsigned char>(c);
    if (u <= ' ' || u == 0x7f) {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(u >= 0x80 ? '?' : c);
  }
  if (body.size() > kBodySnippetBytes) out += "...";
  return out;
}

std::optional<int64_t> ParseSeconds(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

bool ReasonIs(const ApiError& e, std::string_view reason, int http_status) {
  if (e.reason == reason) return true;
  // A bare HTTP status (no Status body, or an unknown reason) is read the client-go way.
  return !CodeForReason(e.reason).has_value() && e.http_status == http_status;
}

}  // namespace

std::string_view ReasonForHttpStatus(int http_status) {
  for (const auto& hr : kHttpReasons) {
    if (hr.http_status == http_status) return hr.reason;
  }
  return "";
}

StatusCode StatusCodeForReason(std::string_view reason, int http_status) {
  if (auto code = CodeForReason(reason)) return *code;
  return CodeForHttpStatus(http_status);
}

bool ApiError::IsNotFound() const { return ReasonIs(*this, "NotFound", 404); }
bool ApiError::IsAlreadyExists() const { return reason == "AlreadyExists"; }
bool ApiError::IsConflict() const { return ReasonIs(*this, "Conflict", 409); }
bool ApiError::IsInvalid() const { return ReasonIs(*this, "Invalid", 422); }
bool ApiError::IsGone() const { return reason == "Expired" || ReasonIs(*this, "Gone", 410); }
bool ApiError::IsTooManyRequests() const {
  return reason == "TooManyRequests" || http_status == 429;
}
bool ApiError::IsUnauthorized() const { return reason == "Unauthorized" || http_status == 401; }
bool ApiError::IsForbidden() const { return reason == "Forbidden" || http_status == 403; }

bool ApiError::IsRetryable() const {
  if (local) return false;
  return code == StatusCode::kResourceExhausted || code == StatusCode::kUnavailable ||
         code == StatusCode::kDeadlineExceeded;
}

std::string ApiError::ToString() const {
  std::string out;
  if (local) {
    out = std::string(StatusCodeName(code)) + " (not sent): ";
  } else if (http_status == 0) {
    out = std::string(StatusCodeName(code)) + " (no response): ";
  } else {
    out = (reason.empty() ? std::string("HTTP") : reason) + " (" + std::to_string(http_status) +
          "): ";
  }
  out += message;
  if (retry_after) out += " (retry after " + std::to_string(retry_after->count()) + "ms)";
  return out;
}

ApiError ApiErrorFromStatusObject(const Json& status, int http_status_fallback) {
  ApiError e;
  e.http_status = http_status_fallback;
  if (!status.is_object()) {
    e.code = StatusCodeForReason("", e.http_status);
    e.message = "not a Status object: " + Snippet(DumpJson(status));
    return e;
  }
  const Json* code = FindPath(status, "code");
  // Only an HTTP status (three digits) fills in; a larger number would not fit an int.
  if (code != nullptr && code->is_number_integer() && code->get<int64_t>() > 0 &&
      code->get<int64_t>() <= 999) {
    e.http_status = code->get<int>();
  }
  e.reason = GetString(status, "reason");
  e.message = GetString(status, "message");
  if (const Json* details = FindPath(status, "details"); details && details->is_object()) {
    e.kind = GetString(*details, "kind");
    e.name = GetString(*details, "name");
    if (const Json* causes = FindPath(*details, "causes"); causes && causes->is_array()) {
      for (const auto& c : *causes) {
        if (!c.is_object()) continue;
        e.causes.push_back(
            {GetString(c, "reason"), GetString(c, "field"), GetString(c, "message")});
      }
    }
    const Json* retry = FindPath(*details, "retryAfterSeconds");
    if (retry != nullptr && retry->is_number_integer() && retry->get<int64_t>() >= 0) {
      e.retry_after = RetryAfter(retry->get<int64_t>());
    }
  }
  e.code = StatusCodeForReason(e.reason, e.http_status);
  if (e.message.empty()) {
    e.message = "the server reported " + (e.reason.empty() ? std::string("an error") : e.reason) +
                " without a message";
  }
  return e;
}

ApiError ApiErrorFromResponse(int http_status, std::string_view body, const net::Headers& headers) {
  ApiError e;
  auto parsed = ParseJson(body);
  if (parsed.ok() && parsed->is_object() && GetString(*parsed, "kind") == "Status") {
    e = ApiErrorFromStatusObject(*parsed, http_status);
    // The HTTP status is what arrived; the body's `code` only fills in when it is missing.
    e.http_status = http_status;
    e.code = StatusCodeForReason(e.reason, http_status);
  } else {
    e.http_status = http_status;
    e.reason = std::string(ReasonForHttpStatus(http_status));
    e.code = StatusCodeForReason(e.reason, http_status);
    std::string snippet = Snippet(body);
    e.message = "the server responded with HTTP " + std::to_string(http_status) +
                (snippet.empty() ? " and an empty body" : " and a non-Status body: " + snippet);
  }
  if (headers.Has("Retry-After")) {
    if (auto seconds = ParseSeconds(headers.Get("Retry-After"))) {
      e.retry_after = RetryAfter(*seconds);
    }
  }
  return e;
}

ApiError ApiErrorFromTransport(const Status& status) {
  ApiError e;
  e.http_status = 0;
  if (status.ok()) {
    e.code = StatusCode::kInternal;
    e.message = "the transport returned neither a response nor an error";
    return e;
  }
  e.code = status.code();
  e.message = status.message();
  return e;
}

ApiError LocalApiError(StatusCode code, std::string message) {
  ApiError e;
  e.code = code;
  e.local = true;
  e.message = std::move(message);
  return e;
}

}  // namespace steward::kube
