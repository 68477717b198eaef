// Unit tests of the API's value parsing and error mapping.
#include <gtest/gtest.h>

#include "api/api_internal.h"
#include "common/fields.h"

namespace steward::api {
namespace {

// The answer's field is the status's, never read back out of the message (issue 14).
TEST(FromStatusTest, FieldComesFromTheStatusNotItsText) {
  EXPECT_EQ(FromStatus(InvalidField("spec.labels[\"a.b/c\"]", "bad value")).field,
            "spec.labels[\"a.b/c\"]");
  EXPECT_EQ(FromStatus(InvalidField("spec.tolerations[2].key", "bad")).field,
            "spec.tolerations[2].key");
  // Text shaped like a path names no field unless the status carries it.
  EXPECT_EQ(FromStatus(InvalidArgument("spec.stack.memory: must be between 128 and 65536")).field,
            "");
  auto e = FromStatus(InvalidField("", "the body must be a JSON object"));
  EXPECT_EQ(e.field, "");
  EXPECT_EQ(e.message, "the body must be a JSON object");
}

TEST(OperationBodiesTest, NoFieldsAndTokenNameTheField) {
  EXPECT_TRUE(NoFields(Json::object()).ok());
  Status s = NoFields(Json{{"now", true}});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.field(), "now");
  EXPECT_EQ(NoFields(Json{{"a b", 1}}).field(), "[\"a b\"]");
  EXPECT_EQ(*TokenOf(Json{{"token", "t-1"}}), "t-1");
  EXPECT_EQ(TokenOf(Json::object()).error().field(), "token");
  EXPECT_EQ(TokenOf(Json{{"token", ""}}).error().field(), "token");
  EXPECT_EQ(TokenOf(Json{{"token", 5}}).error().field(), "token");
  EXPECT_EQ(TokenOf(Json{{"token", "t"}, {"extra", 1}}).error().field(), "extra");
}

TEST(FromStatusTest, Codes) {
  auto e = FromStatus(InvalidField("spec.team", "is required"));
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.reason, "InvalidArgument");
  EXPECT_EQ(e.field, "spec.team");
  EXPECT_EQ(FromStatus(NotFound("x")).status, 404);
  EXPECT_EQ(FromStatus(FailedPrecondition("x")).reason, "Conflict");
  EXPECT_EQ(FromStatus(AlreadyExists("x")).status, 409);
  EXPECT_EQ(FromStatus(Unavailable("x")).status, 503);
  EXPECT_EQ(FromStatus(Aborted("x")).status, 409);  // moved under the request: send it again
  EXPECT_EQ(FromStatus(Internal("boom")).reason, "Internal");
  EXPECT_EQ(ErrorJson(MakeError(404, "NotFound", "m")),
            (Json{{"error", {{"code", 404}, {"reason", "NotFound"}, {"message", "m"}}}}));
}

TEST(ContinueTokenTest, RoundTripsAndRefusesGarbage) {
  std::string t = EncodeContinue("p-3f2a9c0d");
  EXPECT_EQ(t.find_first_of("+/="), std::string::npos);
  EXPECT_EQ(DecodeContinue(t), "p-3f2a9c0d");
  EXPECT_EQ(DecodeContinue("garbage"), std::nullopt);
  EXPECT_EQ(DecodeContinue(""), std::nullopt);
  EXPECT_EQ(DecodeContinue(EncodeContinue("Not An Id")), std::nullopt);
}

TEST(FormatTimeMsTest, Rfc3339WithMillis) {
  EXPECT_EQ(FormatTimeMs(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatTimeMs(1764475203123), "2025-11-30T04:00:03.123Z");
}

TEST(ProjectJsonTest, DefaultsAndDone) {
  store::ProjectRecord r;
  r.id = "p1";
  r.name = "alpha";
  r.team = "t";
  r.spec_json = R"({"team":"t"})";
  r.desired = store::DesiredState::kRunning;
  r.generation = 2;
  Json j = ProjectJson(r);
  EXPECT_EQ(j["status"]["phase"], "Pending");
  EXPECT_EQ(j["status"]["reason"], "Accepted");
  EXPECT_EQ(j["status"]["observedGeneration"], 0);
  EXPECT_EQ(j["desiredState"], "running");
  // The record's cluster, shown beside the stored spec (which never holds it).
  EXPECT_EQ(j["spec"], (Json{{"team", "t"}, {"cluster", "default"}}));
  EXPECT_EQ(j["cluster"], "default");
  EXPECT_EQ(j["status"]["cluster"], "default");
  r.cluster = "east";
  EXPECT_EQ(ProjectJson(r)["spec"]["cluster"], "east");
  EXPECT_FALSE(IsDone(r, 2));
  r.phase = "Running";
  r.observed_generation = 1;
  EXPECT_FALSE(IsDone(r, 2));
  r.observed_generation = 2;
  EXPECT_TRUE(IsDone(r, 2));
  r.desired = store::DesiredState::kSuspended;
  EXPECT_FALSE(IsDone(r, 2));
  r.phase = "Failed";
  EXPECT_TRUE(IsDone(r, 2));
  r.desired = store::DesiredState::kDeleted;
  r.phase = "Deleting";
  EXPECT_FALSE(IsDone(r, 2));
}

}  // namespace
}  // namespace steward::api
