#include <gtest/gtest.h>

#include "engine/model/project.h"
#include "engine/model/test_util.h"

namespace steward::engine {
namespace {

using testing::IsInvalid;
using testing::J;

ProjectStatus Sample() {
  ProjectStatus s;
  s.phase = Phase::kProvisioning;
  s.reason = "WaitingForEndpoints";
  s.message = "Service p1 has no ready endpoints";
  s.observed_generation = 7;
  s.url = "https://p1.example.com/";
  s.conditions = {{"Secret", true, "Ready", ""},
                  {"Deployment", true, "Ready", "1/1 available"},
                  {"Service", false, "Waiting", "no ready endpoints"}};
  s.since_ms = 1700000000123;
  return s;
}

TEST(ProjectStatusTest, ToJsonHasTheDocumentedShape) {
  EXPECT_EQ(ToJson(Sample()), J(R"({
    "phase": "Provisioning", "reason": "WaitingForEndpoints",
    "message": "Service p1 has no ready endpoints", "observedGeneration": 7,
    "url": "https://p1.example.com/",
    "conditions": [
      {"resource": "Secret", "ready": true, "reason": "Ready", "message": ""},
      {"resource": "Deployment", "ready": true, "reason": "Ready", "message": "1/1 available"},
      {"resource": "Service", "ready": false, "reason": "Waiting", "message": "no ready endpoints"}
    ],
    "since": 1700000000123})"));
}

TEST(ProjectStatusTest, RoundTrips) {
  auto back = ParseProjectStatus(ToJson(Sample()));
  ASSERT_TRUE(back.ok()) << back.error().ToString();
  EXPECT_EQ(*back, Sample());

  ProjectStatus empty;
  auto back_empty = ParseProjectStatus(ToJson(empty));
  ASSERT_TRUE(back_empty.ok()) << back_empty.error().ToString();
  EXPECT_EQ(*back_empty, empty);
  EXPECT_EQ(ToJson(empty)["conditions"], Json::array());
}

TEST(ProjectStatusTest, EveryPhaseRoundTrips) {
  for (Phase p :
       {Phase::kPending, Phase::kProvisioning, Phase::kRunning, Phase::kUpdating, Phase::kDegraded,
        Phase::kSuspending, Phase::kSuspended, Phase::kDeleting, Phase::kFailed}) {
    ProjectStatus s;
    s.phase = p;
    auto back = ParseProjectStatus(ToJson(s));
    ASSERT_TRUE(back.ok()) << back.error().ToString();
    EXPECT_EQ(back->phase, p);
  }
}

TEST(ProjectStatusTest, AbsentFieldsAreZeroAndUnknownOnesIgnored) {
  auto r = ParseProjectStatus(J(R"({"phase":"Running","newField":{"x":1},
                                    "conditions":[{"resource":"Ingress","extra":1}]})"));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->phase, Phase::kRunning);
  EXPECT_EQ(r->observed_generation, 0);
  EXPECT_EQ(r->since_ms, 0);
  ASSERT_EQ(r->conditions.size(), 1u);
  EXPECT_EQ(r->conditions[0], (ResourceCondition{"Ingress", false, "", ""}));
}

TEST(ProjectStatusTest, BadInputNamesTheField) {
  EXPECT_TRUE(IsInvalid(ParseProjectStatus(J("[]")), "status", "must be an object"));
  EXPECT_TRUE(IsInvalid(ParseProjectStatus(J("{}")), "status.phase", "is required"));
  EXPECT_TRUE(IsInvalid(ParseProjectStatus(J(R"({"phase":"running"})")), "status.phase",
                        "unknown phase \"running\""));
  EXPECT_TRUE(
      IsInvalid(ParseProjectStatus(J(R"({"phase":1})")), "status.phase", "must be a string"));
  EXPECT_TRUE(IsInvalid(ParseProjectStatus(J(R"({"phase":"Running","observedGeneration":"3"})")),
                        "status.observedGeneration", "must be an integer, got string"));
  EXPECT_TRUE(IsInvalid(ParseProjectStatus(J(R"({"phase":"Running","observedGeneration":-1})")),
                        "status.observedGeneration", "between 0 and"));
  EXPECT_TRUE(IsInvalid(ParseProjectStatus(J(R"({"phase":"Running","since":1.5})")), "status.since",
                        "must be an integer"));
  EXPECT_TRUE(IsInvalid(ParseProjectStatus(J(R"({"phase":"Running","url":false})")), "status.url",
                        "must be a string"));
  EXPECT_TRUE(IsInvalid(ParseProjectStatus(J(R"({"phase":"Running","conditions":{}})")),
                        "status.conditions", "must be an array"));
  EXPECT_TRUE(IsInvalid(ParseProjectStatus(J(R"({"phase":"Running","conditions":[{},1]})")),
                        "status.conditions[1]", "must be an object"));
  EXPECT_TRUE(
      IsInvalid(ParseProjectStatus(J(R"({"phase":"Running","conditions":[{"ready":"yes"}]})")),
                "status.conditions[0].ready", "must be a boolean"));
}

}  // namespace
}  // namespace steward::engine
