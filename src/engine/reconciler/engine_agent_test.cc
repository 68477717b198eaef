// MQTT schema agents through the whole engine against the embedded cluster (issue 15 §3): the
// objects FlowFuse's driver makes for one, with the platform's token only in a Secret; start,
// stop (everything gone), drift repair, adoption at restart without a write, delete.
#include <gmock/gmock.h>

#include "common/base64.h"
#include "common/json_access.h"
#include "engine/reconciler/engine_test_support.h"

namespace steward::engine::testing {
namespace {

using test_support::Eventually;
using ::testing::HasSubstr;

constexpr const char* kAgent = "mqtt-schema-agent-tm1-brk7";

class AgentTest : public EngineFixture {
 protected:
  static Json AgentSpecJson(const std::string& token = "") {
    Json spec = {{"team", "TM1"}, {"broker", "BRK7"}};
    if (!token.empty()) spec["credentials"] = {{"token", token}};
    return spec;
  }
  std::string StartAgent(const std::string& token) {
    auto put = engine_->intents().PutAgent(kAgent, AgentSpecJson(token), "", /*start=*/true);
    EXPECT_TRUE(put.ok()) << put.error().ToString();
    return put.ok() ? put->record.id : "";
  }
};

TEST_F(AgentTest, AnAgentRunsWithTheDriversObjectsAndItsTokenOnlyInASecret) {
  StartCluster();
  OpenStore();
  RecordSnapshotsAtPhases();
  StartEngine();
  const std::string id = StartAgent("ffbt_one");
  ASSERT_FALSE(id.empty());
  ASSERT_TRUE(WaitPhase(id, "Running", 1)) << Record(id).status_json;
  EXPECT_EQ(Record(id).kind, store::RecordKind::kAgent);

  auto dep = Get("deployments.apps", kAgent);
  ASSERT_TRUE(dep.has_value());
  const Json& labels = (*dep)["spec"]["template"]["metadata"]["labels"];
  EXPECT_EQ(labels["name"], kAgent);
  EXPECT_EQ(labels["team"], "TM1");
  EXPECT_EQ(labels["broker"], "BRK7");
  EXPECT_EQ(labels["mqttSchemaAgent"], "true");
  const Json& container = (*dep)["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(container["name"], "mqtt-schema-agent");
  EXPECT_EQ(container["image"], "flowfuse/mqtt-schema-agent");
  EXPECT_EQ(container["ports"][0]["containerPort"], 3500);
  std::string secret;
  for (const Json& e : container["env"]) {
    EXPECT_NE(e.value("value", ""), "ffbt_one") << "the token is never plain env";
    if (e["name"] == "FORGE_TEAM_TOKEN") secret = e["valueFrom"]["secretKeyRef"]["name"];
    if (e["name"] == "FORGE_TEAM_ID") {
      EXPECT_EQ(e["value"], "TM1");
    }
    if (e["name"] == "FORGE_BROKER_ID") {
      EXPECT_EQ(e["value"], "BRK7");
    }
  }
  ASSERT_FALSE(secret.empty());
  auto stored = Get("secrets", secret);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(*Base64Decode(GetString((*stored)["data"], "FORGE_TEAM_TOKEN")), "ffbt_one");
  auto svc = Get("services", kAgent);
  ASSERT_TRUE(svc.has_value());
  EXPECT_EQ((*svc)["spec"]["ports"][0]["port"], 3500);
  // No Ingress, no claim, no Steward-generated credentials for an agent.
  EXPECT_TRUE(ListLabelled("ingresses.networking.k8s.io", "steward.io/project=" + id).empty());
  EXPECT_TRUE(ListLabelled("persistentvolumeclaims", "steward.io/project=" + id).empty());
  EXPECT_TRUE(Creds(id).empty());
  // The token is in no record or history line.
  EXPECT_EQ(Record(id).spec_json.find("ffbt_one"), std::string::npos);
  auto history = store_->ListHistory(id, 0, 100);
  ASSERT_TRUE(history.ok());
  for (const auto& h : *history) EXPECT_EQ(h.detail_json.find("ffbt_one"), std::string::npos);
  // Running means the Deployment and the Service's endpoints were ready.
  for (const auto& s : Snapshots()) {
    if (s.id == id && s.phase == "Running") {
      EXPECT_TRUE(s.at.deployment_ready && s.at.endpoints_ready) << s.at.describe;
    }
  }
}

TEST_F(AgentTest, StopTakesEverythingAwayAndStartBringsItBackWithTheSameToken) {
  StartCluster();
  OpenStore();
  StartEngine();
  const std::string id = StartAgent("ffbt_one");
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  auto stopped = engine_->intents().Suspend(kAgent, store::RecordKind::kAgent);
  ASSERT_TRUE(stopped.ok()) << stopped.error().ToString();
  ASSERT_TRUE(WaitPhase(id, "Suspended", stopped->generation));
  EXPECT_FALSE(Get("deployments.apps", kAgent).has_value());
  EXPECT_FALSE(Get("services", kAgent).has_value());
  EXPECT_TRUE(ListLabelled("pods", "steward.io/project=" + id).empty());
  // The message names what an agent has (no Ingress).
  EXPECT_EQ(StatusOf(id).message, "Deployment, Service and pod are gone");
  // The token's Secret stays for the next start (a put without credentials keeps it).
  EXPECT_EQ(ListLabelled("secrets", "steward.io/project=" + id).size(), 1u);
  auto again = engine_->intents().PutAgent(kAgent, AgentSpecJson(), "", /*start=*/true);
  ASSERT_TRUE(again.ok()) << again.error().ToString();
  ASSERT_TRUE(WaitPhase(id, "Running", again->record.generation));

  auto deleted = engine_->intents().Delete(kAgent, store::RecordKind::kAgent);
  ASSERT_TRUE(deleted.ok());
  ASSERT_TRUE(WaitPurged(id));
  EXPECT_TRUE(ListLabelled("secrets", "steward.io/project=" + id).empty());
  EXPECT_FALSE(Get("deployments.apps", kAgent).has_value());
}

TEST_F(AgentTest, ANewTokenRollsThePodAndTheOldTokensSecretGoes) {
  StartCluster();
  OpenStore();
  RecordDetailedSnapshotsAtPhases();
  StartEngine();
  const std::string id = StartAgent("ffbt_one");
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  const auto first = ListLabelled("secrets", "steward.io/project=" + id);
  ASSERT_EQ(first.size(), 1u);
  const std::string old_secret = GetString(first[0]["metadata"], "name");
  auto put = engine_->intents().PutAgent(kAgent, AgentSpecJson("ffbt_two"), "", true);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  ASSERT_EQ(put->record.generation, 2);
  ASSERT_TRUE(WaitPhase(id, "Running", 2)) << Record(id).status_json;
  // Only the new token's Secret is left, and the pod reads the token from it.
  ASSERT_TRUE(Eventually([&] {
    auto left = ListLabelled("secrets", "steward.io/project=" + id);
    return left.size() == 1 && GetString(left[0]["metadata"], "name") != old_secret;
  }));
  const auto secret = ListLabelled("secrets", "steward.io/project=" + id)[0];
  EXPECT_EQ(*Base64Decode(GetString(secret["data"], "FORGE_TEAM_TOKEN")), "ffbt_two");
  for (const Json& pod : ListLabelled("pods", "steward.io/project=" + id)) {
    if (pod["metadata"].contains("deletionTimestamp")) continue;
    EXPECT_EQ(
        AnnotationOf(pod, "steward.io/credential-id"),
        std::string(kSuppliedCredentialPrefix) +
            ParseJson(Record(id).spec_json)->at("credentials")["fingerprint"].get<std::string>());
  }
  // A ready pod served all along: no phase between the two Running ones said the agent was down
  // for lack of a pod (the rollout is a surge, old pod last).
  for (const auto& s : Snapshots()) {
    if (s.id == id && s.generation == 2) {
      EXPECT_TRUE(s.at.endpoints_ready) << s.phase << " " << s.at.describe;
    }
  }
}

// The whole lifecycle with the hostile profile's faults (429/500/503, resets, cut watches,
// compactions): every intent ends where it was asked to, and each Running was true when said.
TEST_F(AgentTest, UnderHostileFaultsEveryIntentEndsWhereItWasAskedAndRunningIsTrue) {
  StartCluster(QuickHostileProfile());
  OpenStore();
  RecordSnapshotsAtPhases();
  StartEngine();
  const std::string id = StartAgent("ffbt_one");
  ASSERT_FALSE(id.empty());
  ASSERT_TRUE(WaitPhase(id, "Running", 1, seconds(60))) << Record(id).status_json;
  auto rotated = engine_->intents().PutAgent(kAgent, AgentSpecJson("ffbt_two"), "", true);
  ASSERT_TRUE(rotated.ok()) << rotated.error().ToString();
  ASSERT_TRUE(WaitPhase(id, "Running", 2, seconds(60))) << Record(id).status_json;
  auto stopped = engine_->intents().Suspend(kAgent, store::RecordKind::kAgent);
  ASSERT_TRUE(stopped.ok());
  ASSERT_TRUE(WaitPhase(id, "Suspended", stopped->generation, seconds(60)));
  EXPECT_FALSE(Get("deployments.apps", kAgent).has_value());
  EXPECT_FALSE(Get("services", kAgent).has_value());
  auto started = engine_->intents().Start(kAgent, store::RecordKind::kAgent);
  ASSERT_TRUE(started.ok());
  ASSERT_TRUE(WaitPhase(id, "Running", started->generation, seconds(60)));
  auto deleted = engine_->intents().Delete(kAgent, store::RecordKind::kAgent);
  ASSERT_TRUE(deleted.ok());
  ASSERT_TRUE(WaitPurged(id, seconds(60)));
  EXPECT_TRUE(ListLabelled("secrets", "steward.io/project=" + id).empty());
  for (const auto& s : Snapshots()) {
    if (s.id != id) continue;
    EXPECT_NE(s.phase, "Failed") << s.at.describe;
    if (s.phase == "Running") {
      EXPECT_TRUE(s.at.deployment_ready && s.at.endpoints_ready) << s.at.describe;
    }
    if (s.phase == "Suspended") {
      EXPECT_FALSE(s.at.deployment || s.at.service || s.at.pods > 0) << s.at.describe;
    }
  }
}

TEST_F(AgentTest, AServiceDeletedBehindStewardsBackIsPutBack) {
  StartCluster();
  OpenStore();
  StartEngine();
  const std::string id = StartAgent("ffbt_one");
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  const std::string uid = GetString((*Get("services", kAgent))["metadata"], "uid");
  ASSERT_TRUE(cluster_->api().Delete(Kind("services"), kNs, kAgent, {}).ok());
  ASSERT_TRUE(Eventually(
      [&] {
        auto svc = Get("services", kAgent);
        return svc && GetString((*svc)["metadata"], "uid") != uid && Record(id).phase == "Running";
      },
      seconds(20)))
      << Record(id).status_json;
}

TEST_F(AgentTest, ARestartAdoptsARunningAgentWithoutAWrite) {
  StartCluster();
  OpenStore();
  StartEngine();
  const std::string id = StartAgent("ffbt_one");
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  engine_.reset();
  const uint64_t writes = ClusterWrites();
  StartEngine();
  ASSERT_TRUE(Eventually([&] { return engine_->stats().reconciles >= 1; }));
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  ASSERT_TRUE(Eventually([&] { return engine_->stats().queue_depth == 0; }));
  EXPECT_EQ(ClusterWrites(), writes);
  EXPECT_EQ(engine_->stats().writes, 0u);
}

// `steward migrate` labels the driver's objects with the id before the put: a given id is the
// new agent's; another id for the name is refused before anything is written.
TEST_F(AgentTest, AGivenIdIsTheNewAgentsAndAnotherIdForItsNameIsRefused) {
  StartCluster();
  OpenStore();
  StartEngine();
  Intents& intents = engine_->intents();
  const std::string id = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
  auto bad = intents.PutAgent(kAgent, AgentSpecJson("ffbt_one"), "Not An Id", true);
  EXPECT_EQ(bad.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.error().message(), HasSubstr("id"));
  auto put = intents.PutAgent(kAgent, AgentSpecJson("ffbt_one"), id, true);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  EXPECT_TRUE(put->created);
  EXPECT_EQ(put->record.id, id);
  ASSERT_TRUE(WaitPhase(id, "Running", 1));
  EXPECT_EQ(ListLabelled("deployments.apps", "steward.io/project=" + id).size(), 1u);
  auto same = intents.PutAgent(kAgent, AgentSpecJson(), id, true);
  ASSERT_TRUE(same.ok()) << same.error().ToString();
  EXPECT_FALSE(same->changed);
  auto other = intents.PutAgent(kAgent, AgentSpecJson("ffbt_two"),
                                "1a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", true);
  EXPECT_EQ(other.error().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(other.error().message(), HasSubstr(id));
  EXPECT_EQ(Record(id).generation, 1);
  // The refused token was not written anywhere.
  EXPECT_EQ(ListLabelled("secrets", "steward.io/project=" + id).size(), 1u);
  EXPECT_TRUE(
      ListLabelled("secrets", "steward.io/project=1a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d").empty());
}

TEST_F(AgentTest, NamesAndKindsAreKeptApart) {
  StartCluster();
  OpenStore();
  StartEngine();
  Intents& intents = engine_->intents();
  // The name must be the one FlowFuse gives the agent.
  auto wrong = intents.PutAgent("mqtt-schema-agent-x-y", AgentSpecJson("t"), "", true);
  EXPECT_EQ(wrong.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong.error().message(), HasSubstr(kAgent));
  // The first put carries the token.
  auto tokenless = intents.PutAgent(kAgent, AgentSpecJson(), "", true);
  EXPECT_EQ(tokenless.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(tokenless.error().message(), HasSubstr("spec.credentials.token"));
  // A project's routes do not see an agent, and the other way round.
  const std::string id = StartAgent("ffbt_one");
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(intents.Suspend(kAgent).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(intents.Find(kAgent).error().code(), StatusCode::kNotFound);
  EXPECT_EQ(intents.Put(kAgent, Spec(), "", true).error().code(), StatusCode::kAlreadyExists);
  ASSERT_TRUE(intents.Put("alpha", Spec(), "", false).ok());
  EXPECT_EQ(intents.Start("alpha", store::RecordKind::kAgent).error().code(),
            StatusCode::kNotFound);
  // An agent's token is the platform's: no rotation by Steward.
  EXPECT_EQ(intents.Rotate(kAgent, store::RecordKind::kAgent).error().code(),
            StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace steward::engine::testing
