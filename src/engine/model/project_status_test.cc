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

// The adoption fingerprint is the engine's bookkeeping: stored and read back, never shown.
TEST(ProjectStatusTest, TheFingerprintIsStoredButNotShown) {
  ProjectStatus s = Sample();
  s.fingerprint = "ab12";
  EXPECT_FALSE(ToJson(s).contains("fingerprint"));
  EXPECT_EQ(ToJson(s), ToJson(Sample()));
  const Json stored = ToStoredJson(s);
  EXPECT_EQ(stored["fingerprint"], "ab12");
  auto back = ParseProjectStatus(stored);
  ASSERT_TRUE(back.ok()) << back.error().ToString();
  EXPECT_EQ(*back, s);
  EXPECT_FALSE(ToStoredJson(Sample()).contains("fingerprint"));
  Json wrong = stored;
  wrong["fingerprint"] = 7;
  auto bad = ParseProjectStatus(wrong);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("status.fingerprint"), std::string::npos);
}

TEST(ProjectStatusTest, EveryPhaseRoundTrips) {
  for (Phase p :
       {Phase::kPending, Phase::kProvisioning, Phase::kRunning, Phase::kUpdating, Phase::kDegraded,
        Phase::kSuspending, Phase::kSuspended, Phase::kDeleting, Phase::kFailed, Phase::kUnknown}) {
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

// Issue 13, finding 15: what a reader is shown between an accepted intent and the engine's status.
ProjectStatus Observed(Phase phase, int64_t generation) {
  ProjectStatus s;
  s.phase = phase;
  s.reason = std::string(ToString(phase));
  s.observed_generation = generation;
  s.url = "http://a.localhost";
  s.conditions = {{"Deployment", true, "Ready", "1/1"}};
  return s;
}

TEST(ProjectStatusTest, AStoredStatusThatCannotBeReadCountsAsNone) {
  EXPECT_EQ(ParseStoredStatus(DumpJson(ToJson(Sample()))), Sample());
  EXPECT_EQ(ParseStoredStatus(""), std::nullopt);
  EXPECT_EQ(ParseStoredStatus("{not json"), std::nullopt);
  EXPECT_EQ(ParseStoredStatus(R"({"phase":"Sideways"})"), std::nullopt);
  EXPECT_EQ(ParseStoredStatus("[]"), std::nullopt);
}

TEST(PresentStatusTest, AStatusForTheCurrentGenerationIsShownAsItIs) {
  const ProjectStatus running = Observed(Phase::kRunning, 3);
  EXPECT_EQ(PresentStatus(running, Intent::kRun, 3), running);
  EXPECT_EQ(PresentStatus(running, Intent::kSuspend, 2), running);
}

TEST(PresentStatusTest, AnUnknownStatusStaysUnknownWhateverIntentWaits) {
  ProjectStatus unknown = Observed(Phase::kUnknown, 3);
  unknown.reason = "ClusterUnreachable";
  unknown.message = "cluster west has not answered for 40 s; last observed: Running";
  unknown.last_phase = "Running";
  unknown.last_phase_since_ms = 1700000000000;
  for (Intent intent : {Intent::kRun, Intent::kSuspend, Intent::kDelete}) {
    const ProjectStatus shown = PresentStatus(unknown, intent, 4);
    EXPECT_EQ(shown.phase, Phase::kUnknown);
    EXPECT_EQ(shown.reason, "ClusterUnreachable");
    EXPECT_EQ(shown.last_phase, "Running");
    EXPECT_EQ(shown.observed_generation, 3);
    EXPECT_EQ(shown.message, "generation 4 accepted; it waits for the cluster to answer (" +
                                 unknown.message + ")");
  }
  // Shown and read back with what was last observed; absent for other phases.
  Json j = ToJson(unknown);
  EXPECT_EQ(j["lastPhase"], "Running");
  EXPECT_EQ(j["lastPhaseSince"], 1700000000000);
  EXPECT_EQ(*ParseProjectStatus(j), unknown);
  EXPECT_FALSE(ToJson(Observed(Phase::kRunning, 3)).contains("lastPhase"));
}

TEST(PresentStatusTest, AnOlderGenerationNeverPassesForTheCurrentOne) {
  struct Case {
    Phase was;
    Intent intent;
    Phase shown;
  };
  const Case cases[] = {
      {Phase::kRunning, Intent::kRun, Phase::kUpdating},
      {Phase::kDegraded, Intent::kRun, Phase::kUpdating},
      {Phase::kUpdating, Intent::kRun, Phase::kUpdating},
      {Phase::kFailed, Intent::kRun, Phase::kProvisioning},
      {Phase::kSuspended, Intent::kRun, Phase::kProvisioning},
      {Phase::kSuspending, Intent::kRun, Phase::kProvisioning},
      {Phase::kRunning, Intent::kSuspend, Phase::kSuspending},
      {Phase::kFailed, Intent::kSuspend, Phase::kSuspending},
      {Phase::kRunning, Intent::kDelete, Phase::kDeleting},
      {Phase::kSuspended, Intent::kDelete, Phase::kDeleting},
  };
  for (const Case& c : cases) {
    const ProjectStatus shown = PresentStatus(Observed(c.was, 3), c.intent, 4);
    EXPECT_EQ(shown.phase, c.shown) << ToString(c.was);
    EXPECT_EQ(shown.reason, "Accepted");
    EXPECT_EQ(shown.message,
              "generation 4 accepted; waiting for the engine (last observed at "
              "generation 3: " +
                  std::string(ToString(c.was)) + ", " + std::string(ToString(c.was)) + ")");
    // What was observed is kept.
    EXPECT_EQ(shown.observed_generation, 3);
    EXPECT_EQ(shown.url, "http://a.localhost");
    EXPECT_EQ(shown.conditions.size(), 1u);
  }
  // Suspended stays Suspended while the project is to stay suspended (a spec change).
  EXPECT_EQ(PresentStatus(Observed(Phase::kSuspended, 3), Intent::kSuspend, 4),
            Observed(Phase::kSuspended, 3));
  // No status at all.
  const ProjectStatus none = PresentStatus(std::nullopt, Intent::kRun, 1);
  EXPECT_EQ(none.phase, Phase::kPending);
  EXPECT_EQ(none.reason, "Accepted");
}

}  // namespace
}  // namespace steward::engine
