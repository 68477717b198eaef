// ApiError: typing of Status bodies, bare HTTP statuses, Retry-After and transport failures.
#include "kube/client/api_error.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace steward::kube {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string StatusBody(int code, std::string_view reason, std::string_view message = "msg") {
  return DumpJson(Json{{"kind", "Status"},
                       {"apiVersion", "v1"},
                       {"metadata", Json::object()},
                       {"status", "Failure"},
                       {"message", message},
                       {"reason", reason},
                       {"code", code}});
}

struct ReasonCase {
  int http;
  const char* reason;
  StatusCode code;
};

TEST(ApiErrorTest, EveryStatusReasonMapsToItsCode) {
  const ReasonCase cases[] = {
      {404, "NotFound", StatusCode::kNotFound},
      {409, "AlreadyExists", StatusCode::kAlreadyExists},
      {409, "Conflict", StatusCode::kAborted},
      {422, "Invalid", StatusCode::kInvalidArgument},
      {400, "BadRequest", StatusCode::kInvalidArgument},
      {413, "RequestEntityTooLarge", StatusCode::kInvalidArgument},
      {410, "Expired", StatusCode::kOutOfRange},
      {410, "Gone", StatusCode::kOutOfRange},
      {429, "TooManyRequests", StatusCode::kResourceExhausted},
      {401, "Unauthorized", StatusCode::kUnauthenticated},
      {403, "Forbidden", StatusCode::kPermissionDenied},
      {405, "MethodNotAllowed", StatusCode::kUnimplemented},
      {406, "NotAcceptable", StatusCode::kUnimplemented},
      {415, "UnsupportedMediaType", StatusCode::kUnimplemented},
      {504, "Timeout", StatusCode::kDeadlineExceeded},
      {500, "ServerTimeout", StatusCode::kDeadlineExceeded},
      {500, "InternalError", StatusCode::kUnavailable},
      {503, "ServiceUnavailable", StatusCode::kUnavailable},
  };
  for (const auto& c : cases) {
    ApiError e = ApiErrorFromResponse(c.http, StatusBody(c.http, c.reason), {});
    EXPECT_EQ(e.code, c.code) << c.reason;
    EXPECT_EQ(e.reason, c.reason);
    EXPECT_EQ(e.http_status, c.http);
    EXPECT_EQ(e.message, "msg");
    EXPECT_FALSE(e.IsTransport());
  }
}

TEST(ApiErrorTest, EmptyOrUnknownReasonFallsBackToTheHttpStatus) {
  const std::pair<int, StatusCode> cases[] = {
      {404, StatusCode::kNotFound},          {409, StatusCode::kAborted},
      {410, StatusCode::kOutOfRange},        {422, StatusCode::kInvalidArgument},
      {429, StatusCode::kResourceExhausted}, {500, StatusCode::kUnavailable},
      {502, StatusCode::kUnavailable},       {503, StatusCode::kUnavailable},
      {504, StatusCode::kDeadlineExceeded},  {418, StatusCode::kInvalidArgument},
      {401, StatusCode::kUnauthenticated},   {403, StatusCode::kPermissionDenied},
  };
  for (const auto& [http, code] : cases) {
    EXPECT_EQ(ApiErrorFromResponse(http, StatusBody(http, ""), {}).code, code) << http;
    EXPECT_EQ(ApiErrorFromResponse(http, StatusBody(http, "SomethingNew"), {}).code, code) << http;
  }
  EXPECT_EQ(StatusCodeForReason("", 302), StatusCode::kInternal);
}

TEST(ApiErrorTest, PredicatesFollowTheReasonThenTheCode) {
  EXPECT_TRUE(ApiErrorFromResponse(404, StatusBody(404, "NotFound"), {}).IsNotFound());
  EXPECT_TRUE(ApiErrorFromResponse(404, StatusBody(404, ""), {}).IsNotFound());
  EXPECT_TRUE(ApiErrorFromResponse(404, "<html>nope</html>", {}).IsNotFound());
  ApiError exists = ApiErrorFromResponse(409, StatusBody(409, "AlreadyExists"), {});
  EXPECT_TRUE(exists.IsAlreadyExists());
  EXPECT_FALSE(exists.IsConflict());
  ApiError conflict = ApiErrorFromResponse(409, StatusBody(409, "Conflict"), {});
  EXPECT_TRUE(conflict.IsConflict());
  EXPECT_FALSE(conflict.IsAlreadyExists());
  EXPECT_TRUE(ApiErrorFromResponse(409, StatusBody(409, ""), {}).IsConflict());
  EXPECT_TRUE(ApiErrorFromResponse(422, StatusBody(422, "Invalid"), {}).IsInvalid());
  EXPECT_TRUE(ApiErrorFromResponse(410, StatusBody(410, "Expired"), {}).IsGone());
  EXPECT_TRUE(ApiErrorFromResponse(410, StatusBody(410, "Gone"), {}).IsGone());
  EXPECT_TRUE(ApiErrorFromResponse(410, "", {}).IsGone());
  EXPECT_TRUE(
      ApiErrorFromResponse(429, StatusBody(429, "TooManyRequests"), {}).IsTooManyRequests());
  EXPECT_TRUE(ApiErrorFromResponse(401, StatusBody(401, "Unauthorized"), {}).IsUnauthorized());
  EXPECT_TRUE(ApiErrorFromResponse(403, StatusBody(403, "Forbidden"), {}).IsForbidden());
  // A known reason is not overridden by the code.
  EXPECT_FALSE(ApiErrorFromResponse(404, StatusBody(404, "Gone"), {}).IsNotFound());
  EXPECT_FALSE(conflict.IsNotFound());
}

TEST(ApiErrorTest, RetryableAreThrottlingServerErrorsAndTransportFailures) {
  EXPECT_TRUE(ApiErrorFromResponse(429, StatusBody(429, "TooManyRequests"), {}).IsRetryable());
  EXPECT_TRUE(ApiErrorFromResponse(503, "", {}).IsRetryable());
  EXPECT_TRUE(ApiErrorFromResponse(500, StatusBody(500, "InternalError"), {}).IsRetryable());
  EXPECT_TRUE(ApiErrorFromResponse(504, StatusBody(504, "Timeout"), {}).IsRetryable());
  EXPECT_TRUE(ApiErrorFromTransport(Unavailable("connect refused")).IsRetryable());
  EXPECT_FALSE(ApiErrorFromTransport(Cancelled("cancelled")).IsRetryable());
  EXPECT_FALSE(ApiErrorFromResponse(409, StatusBody(409, "Conflict"), {}).IsRetryable());
  EXPECT_FALSE(ApiErrorFromResponse(404, StatusBody(404, "NotFound"), {}).IsRetryable());
  EXPECT_FALSE(ApiErrorFromResponse(422, StatusBody(422, "Invalid"), {}).IsRetryable());
}

TEST(ApiErrorTest, DetailsAndCausesAreKept) {
  Json status = {{"kind", "Status"},
                 {"status", "Failure"},
                 {"reason", "Invalid"},
                 {"code", 422},
                 {"message", "Deployment.apps \"web\" is invalid: spec.replicas: bad"},
                 {"details",
                  {{"name", "web"},
                   {"group", "apps"},
                   {"kind", "Deployment"},
                   {"causes",
                    {{{"reason", "FieldValueInvalid"},
                      {"message", "Invalid value: -1"},
                      {"field", "spec.replicas"}},
                     {{"reason", "FieldValueRequired"}, {"message", "Required value"}}}}}}};
  ApiError e = ApiErrorFromResponse(422, DumpJson(status), {});
  EXPECT_EQ(e.name, "web");
  EXPECT_EQ(e.kind, "Deployment");
  ASSERT_EQ(e.causes.size(), 2u);
  EXPECT_EQ(e.causes[0].type, "FieldValueInvalid");
  EXPECT_EQ(e.causes[0].field, "spec.replicas");
  EXPECT_EQ(e.causes[0].message, "Invalid value: -1");
  EXPECT_EQ(e.causes[1].type, "FieldValueRequired");
  EXPECT_EQ(e.causes[1].field, "");
  EXPECT_FALSE(e.retry_after.has_value());
}

TEST(ApiErrorTest, RetryAfterFromTheHeaderOrTheDetails) {
  Json status = {{"kind", "Status"},
                 {"reason", "TooManyRequests"},
                 {"code", 429},
                 {"message", "slow down"},
                 {"details", {{"retryAfterSeconds", 7}}}};
  ApiError from_details = ApiErrorFromResponse(429, DumpJson(status), {});
  ASSERT_TRUE(from_details.retry_after.has_value());
  EXPECT_EQ(*from_details.retry_after, Millis(7000));
  net::Headers headers;
  headers.Add("retry-after", "3");
  ApiError from_header = ApiErrorFromResponse(429, DumpJson(status), headers);
  EXPECT_EQ(*from_header.retry_after, Millis(3000));
  ApiError html = ApiErrorFromResponse(503, "<html>busy</html>", headers);
  EXPECT_EQ(*html.retry_after, Millis(3000));
  // A malformed header is ignored rather than guessed at.
  net::Headers bad;
  bad.Add("Retry-After", "soon");
  EXPECT_FALSE(ApiErrorFromResponse(503, "", bad).retry_after.has_value());
  EXPECT_EQ(*ApiErrorFromResponse(429, DumpJson(status), bad).retry_after, Millis(7000));
}

// Found by fuzz/kube_status_fuzzer (corpus entry huge_numbers): seconds * 1000 overflowed
// int64 (undefined behaviour) and a `code` beyond int range became a negative HTTP status.
TEST(ApiErrorTest, HugeRetryAfterAndCodeAreBoundedNotOverflowed) {
  const std::string body =
      R"({"kind":"Status","code":2147483648,"reason":"","details":{"retryAfterSeconds":)"
      R"(9223372036854775807}})";
  ApiError from_details = ApiErrorFromStatusObject(*ParseJson(body));
  EXPECT_EQ(from_details.http_status, 0);
  EXPECT_EQ(from_details.code, StatusCode::kInternal);
  ASSERT_TRUE(from_details.retry_after.has_value());
  EXPECT_EQ(*from_details.retry_after, Millis(24 * 3600 * 1000));

  ApiError from_response = ApiErrorFromResponse(410, body, {});
  EXPECT_EQ(from_response.http_status, 410);
  EXPECT_EQ(from_response.code, StatusCode::kOutOfRange);
  EXPECT_EQ(*from_response.retry_after, Millis(24 * 3600 * 1000));

  net::Headers headers;
  headers.Add("Retry-After", "9223372036854775807");
  ApiError from_header = ApiErrorFromResponse(503, "", headers);
  ASSERT_TRUE(from_header.retry_after.has_value());
  EXPECT_EQ(*from_header.retry_after, Millis(24 * 3600 * 1000));
  // Within the cap nothing changes.
  headers = {};
  headers.Add("Retry-After", "86399");
  EXPECT_EQ(*ApiErrorFromResponse(503, "", headers).retry_after, Millis(86399000));
}

TEST(ApiErrorTest, NonStatusBodyGivesTheHttpReasonAndTheStartOfTheBody) {
  std::string html =
      "<html>\n<head><title>502 Bad Gateway</title></head>\n" + std::string(1000, 'x') + "</html>";
  ApiError e = ApiErrorFromResponse(502, html, {});
  EXPECT_EQ(e.http_status, 502);
  EXPECT_EQ(e.code, StatusCode::kUnavailable);
  EXPECT_THAT(e.message, HasSubstr("HTTP 502"));
  EXPECT_THAT(e.message, HasSubstr("<html> <head><title>502 Bad Gateway</title></head>"));
  EXPECT_LT(e.message.size(), 320u);
  EXPECT_THAT(e.message, Not(HasSubstr("\n")));
  ApiError not_found = ApiErrorFromResponse(404, "", {});
  EXPECT_EQ(not_found.reason, "NotFound");
  EXPECT_THAT(not_found.message, HasSubstr("empty body"));
  // JSON that is not a Status is not mistaken for one.
  ApiError json = ApiErrorFromResponse(409, R"({"kind":"ConfigMap","reason":"NotFound"})", {});
  EXPECT_EQ(json.reason, "Conflict");
  EXPECT_TRUE(json.IsConflict());
}

TEST(ApiErrorTest, StatusObjectFromAWatchErrorEvent) {
  Json status = {{"kind", "Status"},
                 {"status", "Failure"},
                 {"reason", "Expired"},
                 {"code", 410},
                 {"message", "too old resource version: 1 (5)"}};
  ApiError e = ApiErrorFromStatusObject(status);
  EXPECT_EQ(e.http_status, 410);
  EXPECT_TRUE(e.IsGone());
  EXPECT_EQ(e.code, StatusCode::kOutOfRange);
  ApiError without_code = ApiErrorFromStatusObject(Json{{"message", "m"}}, 500);
  EXPECT_EQ(without_code.http_status, 500);
  EXPECT_EQ(without_code.code, StatusCode::kUnavailable);
  ApiError not_object = ApiErrorFromStatusObject(Json("boom"), 0);
  EXPECT_EQ(not_object.code, StatusCode::kInternal);
  EXPECT_THAT(not_object.message, HasSubstr("not a Status object"));
}

TEST(ApiErrorTest, TransportFailuresKeepTheirCodeWithoutHttpStatus) {
  ApiError e = ApiErrorFromTransport(Status(StatusCode::kDeadlineExceeded, "read timed out"));
  EXPECT_EQ(e.http_status, 0);
  EXPECT_TRUE(e.IsTransport());
  EXPECT_EQ(e.code, StatusCode::kDeadlineExceeded);
  EXPECT_EQ(e.message, "read timed out");
  EXPECT_FALSE(e.IsNotFound());
  EXPECT_THAT(e.ToString(), HasSubstr("no response"));
  ApiError local = LocalApiError(StatusCode::kInvalidArgument, "bad");
  EXPECT_FALSE(local.IsTransport());
  EXPECT_FALSE(local.IsRetryable());
  EXPECT_THAT(local.ToString(), HasSubstr("not sent"));
}

TEST(ApiErrorTest, ToStringAndToStatusNameReasonCodeAndMessage) {
  net::Headers headers;
  headers.Add("Retry-After", "2");
  ApiError e = ApiErrorFromResponse(
      409, StatusBody(409, "Conflict", "Operation cannot be fulfilled on deployments.apps \"a\""),
      headers);
  EXPECT_EQ(e.ToString(),
            "Conflict (409): Operation cannot be fulfilled on deployments.apps \"a\" (retry after "
            "2000ms)");
  Status s = e.ToStatus();
  EXPECT_EQ(s.code(), StatusCode::kAborted);
  EXPECT_THAT(s.message(), HasSubstr("deployments.apps"));
}

}  // namespace
}  // namespace steward::kube
