// The oracle must catch what it claims to catch: each test builds the cluster state a broken
// Steward would leave (objects rendered exactly as the engine renders them, then altered) and
// checks the verdict and what the report shows.
#include "torture/oracle.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster/embedded_cluster.h"
#include "engine/manifests/manifests.h"
#include "engine/reconciler/engine_test_support.h"
#include "kube/test_support/embedded.h"
#include "test_support/eventually.h"

namespace steward::torture {
namespace {

using kube::ResourceType;
using test_support::Eventually;
using ::testing::HasSubstr;

constexpr char kNs[] = "default";
constexpr char kImage[] = "nodered/node-red:4.0";

class OracleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster::EmbeddedCluster::Options o;
    o.profile = engine::testing::QuickProfile();
    auto c = cluster::EmbeddedCluster::Start(o);
    ASSERT_TRUE(c.ok()) << c.error().ToString();
    cluster_ = std::move(*c);
    kube_ = kube::test_support::ClientFor(*cluster_);
    oracle_ = std::make_unique<Oracle>(kube_,
                                       Oracle::Options{kNs, "127.0.0.1", cluster_->ingress_port()});
  }

  // The objects the engine renders for project `name` (id "p-<name>").
  engine::Manifests Render(const std::string& name, const std::string& image,
                           int64_t restart_epoch = 0, const std::string& custom_hostname = "") {
    engine::ProjectSpec spec;
    spec.team = "t";
    spec.stack.image = image;
    spec.custom_hostname = custom_hostname;
    engine::RenderInput in;
    in.id = "p-" + name;
    in.name = name;
    in.config = &config_;
    in.resolved = engine::Resolve(config_, name, spec);
    in.restart_epoch = restart_epoch;
    in.credential = {"c-1", "token-" + name};
    return engine::Render(in);
  }

  void Create(const ResourceType& type, const Json& object) {
    auto r = kube_->Create(type, kNs, object);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }

  // Creates Secret, Deployment, Service and Ingress, and waits until the cluster shows them
  // ready (the Deployment available, an endpoint ready, the Ingress addressed).
  void Provision(const engine::Manifests& m) {
    Create(ResourceType::Secret(), m.secret.value());
    Create(ResourceType::Deployment(), m.deployment);
    Create(ResourceType::Service(), m.service);
    Create(ResourceType::Ingress(), m.ingress);
    ASSERT_TRUE(Eventually([&] {
      Claim c = ClaimFor(m, "Running", kImage);
      return oracle_->CheckRunning(c).verdict == Verdict::kHolds;
    }));
  }

  Claim ClaimFor(const engine::Manifests& m, const std::string& phase, const std::string& image,
                 int64_t restart_epoch = 0) {
    Claim c;
    c.name = m.names.deployment;
    c.id = "p-" + c.name;
    c.generation = 1;
    c.phase = phase;
    c.image = image;
    c.restart_epoch = restart_epoch;
    c.url = "http://" + c.name + ".localhost";
    return c;
  }

  engine::EngineConfig config_;
  std::unique_ptr<cluster::EmbeddedCluster> cluster_;
  std::shared_ptr<kube::Client> kube_;
  std::unique_ptr<Oracle> oracle_;
};

TEST_F(OracleTest, RunningHoldsOnlyWhenEveryObjectIsReadyAndTheIngressReachesAPod) {
  auto m = Render("alpha", kImage);
  Provision(m);
  EXPECT_EQ(oracle_->CheckRunning(ClaimFor(m, "Running", kImage)).verdict, Verdict::kHolds);

  // A claim about another image or restart epoch than the Deployment runs is false.
  auto other_image = oracle_->CheckRunning(ClaimFor(m, "Running", "nodered/node-red:3.1"));
  EXPECT_EQ(other_image.verdict, Verdict::kViolated);
  EXPECT_THAT(other_image.showed, HasSubstr("image nodered/node-red:4.0"));
  auto other_epoch = oracle_->CheckRunning(ClaimFor(m, "Running", kImage, 2));
  EXPECT_EQ(other_epoch.verdict, Verdict::kViolated);
  EXPECT_THAT(other_epoch.showed, HasSubstr("restart epoch"));

  // The URL host must route to this project's pods: a host no Ingress serves is a 404.
  Claim wrong_url = ClaimFor(m, "Running", kImage);
  wrong_url.url = "http://nobody.localhost";
  auto routed = oracle_->CheckRunning(wrong_url);
  EXPECT_EQ(routed.verdict, Verdict::kViolated);
  EXPECT_THAT(routed.showed, HasSubstr("404"));
}

TEST_F(OracleTest, RunningWithACustomHostnameNeedsTheSecondIngressRoutingToThePods) {
  auto m = Render("zeta", kImage, 0, "zeta.example.localhost");
  ASSERT_TRUE(m.custom_ingress.has_value());
  Provision(m);
  Claim claim = ClaimFor(m, "Running", kImage);
  claim.custom_hostname = "zeta.example.localhost";
  auto missing = oracle_->CheckRunning(claim);
  EXPECT_EQ(missing.verdict, Verdict::kViolated);
  EXPECT_THAT(missing.showed, HasSubstr("Ingress zeta-custom: 404"));

  Create(ResourceType::Ingress(), *m.custom_ingress);
  EXPECT_TRUE(Eventually([&] { return oracle_->CheckRunning(claim).verdict == Verdict::kHolds; }));
  // A custom host no Ingress serves is not reached.
  claim.custom_hostname = "other.example.localhost";
  auto wrong = oracle_->CheckRunning(claim);
  EXPECT_EQ(wrong.verdict, Verdict::kViolated);
  EXPECT_THAT(wrong.showed, HasSubstr("other.example.localhost"));
}

TEST_F(OracleTest, RunningIsViolatedWhileTheRolloutIsUnfinishedOrAnObjectIsMissing) {
  // Nothing exists yet.
  auto m = Render("beta", kImage);
  auto none = oracle_->CheckRunning(ClaimFor(m, "Running", kImage));
  EXPECT_EQ(none.verdict, Verdict::kViolated);
  EXPECT_THAT(none.showed, HasSubstr("Deployment beta: 404"));

  // The Deployment exists but no pod is ready yet: checked before the cluster could make one.
  Create(ResourceType::Secret(), m.secret.value());
  Create(ResourceType::Deployment(), m.deployment);
  auto early = oracle_->CheckRunning(ClaimFor(m, "Running", kImage));
  EXPECT_EQ(early.verdict, Verdict::kViolated);
  EXPECT_THAT(early.showed, HasSubstr("Deployment beta"));

  // Deployment ready, but no Service: the claim is still false.
  ASSERT_TRUE(Eventually([&] {
    auto r = oracle_->CheckRunning(ClaimFor(m, "Running", kImage));
    return r.showed.find("Service beta: 404") != std::string::npos;
  }));
  Create(ResourceType::Service(), m.service);
  ASSERT_TRUE(Eventually([&] {
    auto r = oracle_->CheckRunning(ClaimFor(m, "Running", kImage));
    return r.showed.find("Ingress beta: 404") != std::string::npos;
  }));
  Create(ResourceType::Ingress(), m.ingress);
  EXPECT_TRUE(Eventually([&] {
    return oracle_->CheckRunning(ClaimFor(m, "Running", kImage)).verdict == Verdict::kHolds;
  }));
}

TEST_F(OracleTest, SuspendedIsViolatedWhileAnythingButSecretAndPvcExistsTerminatingIncluded) {
  auto m = Render("gamma", kImage);
  Provision(m);
  auto all = oracle_->CheckSuspended(ClaimFor(m, "Suspended", kImage));
  EXPECT_EQ(all.verdict, Verdict::kViolated);
  EXPECT_THAT(all.showed, HasSubstr("Deployment gamma"));
  EXPECT_THAT(all.showed, HasSubstr("Service gamma"));
  EXPECT_THAT(all.showed, HasSubstr("Ingress gamma"));

  // Deleting the Service: it keeps its load-balancer finalizer for a while, and terminating
  // counts as existing.
  ASSERT_TRUE(kube_->Delete(ResourceType::Ingress(), kNs, "gamma").ok());
  ASSERT_TRUE(kube_->Delete(ResourceType::Deployment(), kNs, "gamma").ok());
  ASSERT_TRUE(kube_->Delete(ResourceType::Service(), kNs, "gamma").ok());
  auto svc = kube_->Get(ResourceType::Service(), kNs, "gamma");
  if (svc.ok()) {
    auto terminating = oracle_->CheckSuspended(ClaimFor(m, "Suspended", kImage));
    EXPECT_EQ(terminating.verdict, Verdict::kViolated);
    EXPECT_THAT(terminating.showed, HasSubstr("(terminating)"));
  }
  EXPECT_TRUE(Eventually([&] {
    return oracle_->CheckSuspended(ClaimFor(m, "Suspended", kImage)).verdict == Verdict::kHolds;
  }));
  // The Secret stays through a suspension, and the check allows it.
  EXPECT_TRUE(kube_->Get(ResourceType::Secret(), kNs, m.names.secret).ok());
}

TEST_F(OracleTest, ASuspendedProjectWithAPodLeftIsViolated) {
  auto m = Render("theta", kImage);
  Json pod = {
      {"metadata", {{"name", "theta-left"}, {"labels", {{engine::kProjectLabel, "p-theta"}}}}},
      {"spec", {{"containers", Json::array({{{"name", "c"}, {"image", kImage}}})}}}};
  Create(ResourceType::Pod(), pod);
  auto left = oracle_->CheckSuspended(ClaimFor(m, "Suspended", kImage));
  EXPECT_EQ(left.verdict, Verdict::kViolated);
  EXPECT_THAT(left.showed, HasSubstr("Pod theta-left"));
  ASSERT_TRUE(kube_->Delete(ResourceType::Pod(), kNs, "theta-left").ok());
  EXPECT_TRUE(Eventually([&] {
    return oracle_->CheckSuspended(ClaimFor(m, "Suspended", kImage)).verdict == Verdict::kHolds;
  }));
}

// An MQTT schema agent's objects as the engine renders them, its token's Secret beside them.
class OracleAgentTest : public OracleTest {
 protected:
  static constexpr char kName[] = "mqtt-schema-agent-t1-b1";
  static constexpr char kId[] = "a-1";

  engine::AgentManifests RenderAgent(const std::string& fingerprint, int64_t restart_epoch = 0) {
    engine::AgentSpec spec;
    spec.team = "t1";
    spec.broker = "b1";
    spec.credentials = engine::CredentialsRef{fingerprint, {"FORGE_TEAM_TOKEN"}};
    return engine::RenderAgent(kId, kName, &config_, spec, restart_epoch);
  }

  void ProvisionAgent(const engine::AgentManifests& m) {
    Json secret = {{"metadata", {{"name", m.secret}, {"labels", {{engine::kProjectLabel, kId}}}}},
                   {"stringData", {{"FORGE_TEAM_TOKEN", "ffbt_x"}}}};
    Create(ResourceType::Secret(), secret);
    Create(ResourceType::Deployment(), m.deployment);
    Create(ResourceType::Service(), m.service);
  }

  static Claim AgentClaim(const std::string& phase, const std::string& fingerprint,
                          int64_t restart_epoch = 0) {
    Claim c;
    c.agent = true;
    c.name = kName;
    c.id = kId;
    c.generation = 1;
    c.phase = phase;
    c.fingerprint = fingerprint;
    c.restart_epoch = restart_epoch;
    return c;
  }
};

TEST_F(OracleAgentTest, RunningHoldsOnlyWhenItsPodHoldsTheClaimedTokenAndAnswersItsOwnApi) {
  // Nothing yet: the claim is false, and so is one without a fingerprint.
  auto none = oracle_->CheckRunning(AgentClaim("Running", "f1"));
  EXPECT_EQ(none.verdict, Verdict::kViolated);
  EXPECT_THAT(none.showed, HasSubstr("Deployment mqtt-schema-agent-t1-b1: 404"));
  EXPECT_EQ(oracle_->CheckRunning(AgentClaim("Running", "")).verdict, Verdict::kViolated);

  ProvisionAgent(RenderAgent("f1"));
  ASSERT_TRUE(Eventually([&] {
    return oracle_->CheckRunning(AgentClaim("Running", "f1")).verdict == Verdict::kHolds;
  })) << oracle_->CheckRunning(AgentClaim("Running", "f1")).showed;
  // Another token's fingerprint, or another restart epoch, than the pods run: false.
  auto other_token = oracle_->CheckRunning(AgentClaim("Running", "f2"));
  EXPECT_EQ(other_token.verdict, Verdict::kViolated);
  EXPECT_THAT(other_token.showed, HasSubstr("credential"));
  auto other_epoch = oracle_->CheckRunning(AgentClaim("Running", "f1", 3));
  EXPECT_EQ(other_epoch.verdict, Verdict::kViolated);
  EXPECT_THAT(other_epoch.showed, HasSubstr("restart epoch"));
  // An agent is Running without any Ingress: none was made, and none is asked for.
  EXPECT_FALSE(kube_->Get(ResourceType::Ingress(), kNs, kName).ok());

  // Suspended is false while any of it is there.
  auto running = oracle_->CheckSuspended(AgentClaim("Suspended", "f1"));
  EXPECT_EQ(running.verdict, Verdict::kViolated);
  EXPECT_THAT(running.showed, HasSubstr("Deployment mqtt-schema-agent-t1-b1"));
  EXPECT_THAT(running.showed, HasSubstr("Pod mqtt-schema-agent-t1-b1"));
}

TEST_F(OracleAgentTest, ARunningClaimIsFalseWhenTheServiceSelectsNoReadyPod) {
  auto m = RenderAgent("f1");
  ProvisionAgent(m);
  ASSERT_TRUE(Eventually([&] {
    return oracle_->CheckRunning(AgentClaim("Running", "f1")).verdict == Verdict::kHolds;
  }));
  ASSERT_TRUE(kube_->Delete(ResourceType::Service(), kNs, kName).ok());
  EXPECT_TRUE(Eventually([&] {
    auto r = oracle_->CheckRunning(AgentClaim("Running", "f1"));
    return r.verdict == Verdict::kViolated &&
           (r.showed.find("Service mqtt-schema-agent-t1-b1") != std::string::npos);
  }));
  ASSERT_TRUE(kube_->Delete(ResourceType::Deployment(), kNs, kName).ok());
  EXPECT_TRUE(Eventually([&] {
    return oracle_->CheckSuspended(AgentClaim("Suspended", "f1")).verdict == Verdict::kHolds;
  }));
}

TEST_F(OracleTest, ScanFindsLabelledObjectsAndTheSecretToken) {
  auto m = Render("delta", kImage);
  Create(ResourceType::Secret(), m.secret.value());
  Create(ResourceType::Service(), m.service);
  Json unlabelled = {{"metadata", {{"name", "someone-else"}}},
                     {"spec", {{"ports", Json::array({{{"port", 80}}})}}}};
  Create(ResourceType::Service(), unlabelled);

  auto scan = oracle_->ScanLabelled();
  ASSERT_EQ(scan.verdict, Verdict::kHolds) << scan.error;
  std::vector<std::string> seen;
  for (const auto& o : scan.objects) seen.push_back(o.kind + "/" + o.name + "/" + o.project_id);
  EXPECT_THAT(seen, ::testing::UnorderedElementsAre("Secret/delta-credentials/p-delta",
                                                    "Service/delta/p-delta"));

  EXPECT_EQ(oracle_->SecretToken("delta", "p-delta"), std::optional<std::string>("token-delta"));
  // Another project's id (a re-created project) or no Secret at all: no token.
  EXPECT_EQ(oracle_->SecretToken("delta", "p-other"), std::optional<std::string>(""));
  EXPECT_EQ(oracle_->SecretToken("nobody", "p-nobody"), std::optional<std::string>(""));
}

TEST_F(OracleTest, AnUnreachableClusterIsInconclusiveNotAVerdict) {
  auto m = Render("eps", kImage);
  cluster_->Stop();
  EXPECT_EQ(oracle_->CheckSuspended(ClaimFor(m, "Suspended", kImage)).verdict,
            Verdict::kInconclusive);
  EXPECT_EQ(oracle_->CheckRunning(ClaimFor(m, "Running", kImage)).verdict, Verdict::kInconclusive);
  EXPECT_EQ(oracle_->ScanLabelled().verdict, Verdict::kInconclusive);
  EXPECT_EQ(oracle_->SecretToken("eps", "p-eps"), std::nullopt);
}

TEST(OracleDuplicatesTest, OneOfEachKindAndTwoIngressesPerProject) {
  std::vector<LabelledObject> ok = {{"Deployment", "a", "u1", "p-a", false},
                                    {"Ingress", "a", "u2", "p-a", false},
                                    {"Ingress", "a-custom", "u3", "p-a", false},
                                    {"Deployment", "b", "u4", "p-b", false}};
  EXPECT_TRUE(Oracle::Duplicates(ok).empty());
  ok.push_back({"Deployment", "a-copy", "u5", "p-a", false});
  ok.push_back({"Ingress", "a-extra", "u6", "p-a", false});
  auto d = Oracle::Duplicates(ok);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0], "project p-a has 2 Deployment objects: a a-copy");
  EXPECT_EQ(d[1], "project p-a has 3 Ingress objects: a a-custom a-extra");
}

TEST(OracleDuplicatesTest, OneDeploymentOnEachOfTwoClustersIsTwo) {
  std::vector<LabelledObject> objects = {{"Deployment", "a", "u1", "p-a", false, "c0"},
                                         {"Deployment", "b", "u1", "p-b", false, "c1"}};
  EXPECT_TRUE(Oracle::Duplicates(objects).empty());
  objects.push_back({"Deployment", "a", "u1", "p-a", false, "c1"});  // one uid on each
  auto d = Oracle::Duplicates(objects);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0], "project p-a has 2 Deployment objects: c0/a c1/a");
  // Being moved from c0 to c1: one on each is allowed, two on one still is not.
  EXPECT_TRUE(Oracle::Duplicates(objects, {"p-a"}).empty());
  objects.push_back({"Deployment", "a2", "u2", "p-a", false, "c1"});
  d = Oracle::Duplicates(objects, {"p-a"});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0], "project p-a has 2 Deployment objects: c1/a c1/a2");
}

TEST(OracleDuplicatesTest, SuppliedCredentialSecretsAreCountedApart) {
  const std::string supplied(kSuppliedSecret);
  std::vector<LabelledObject> objects = {{"Secret", "a-credentials", "u1", "p-a", false},
                                         {supplied, "p-a-credentials-1", "u2", "p-a", false},
                                         {supplied, "p-a-credentials-2", "u3", "p-a", false}};
  EXPECT_TRUE(Oracle::Duplicates(objects).empty());
  objects.push_back({"Secret", "a-credentials-copy", "u4", "p-a", false});
  EXPECT_EQ(Oracle::Duplicates(objects).size(), 1u);  // Steward's own Secret: still one
}

TEST(ClaimTest, AnAgentRecordIsAnAgentClaimWithItsTokensFingerprint) {
  Json a = {{"kind", "agent"},
            {"name", "mqtt-schema-agent-t-b"},
            {"id", "a-1"},
            {"generation", 2},
            {"restartEpoch", 1},
            {"spec", {{"team", "t"}, {"broker", "b"}, {"credentials", {{"fingerprint", "ab12"}}}}},
            {"status", {{"phase", "Running"}, {"observedGeneration", 2}}}};
  auto c = Claim::FromProject(a);
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(c->agent);
  EXPECT_EQ(c->fingerprint, "ab12");
  EXPECT_EQ(c->restart_epoch, 1);
  EXPECT_THAT(c->Describe(), HasSubstr("agent Running at generation 2"));
  a["kind"] = "project";
  EXPECT_FALSE(Claim::FromProject(a)->agent);
}

TEST(ClaimTest, OnlyAPhaseReachedAtTheCurrentGenerationIsAClaim) {
  Json p = {{"id", "p-1"},
            {"name", "a"},
            {"generation", 3},
            {"restartEpoch", 2},
            {"spec", {{"stack", {{"image", "img:1"}}}, {"customHostname", "a.example.com"}}},
            {"status",
             {{"phase", "Running"},
              {"observedGeneration", 3},
              {"url", "http://a.localhost"},
              {"since", 1764470000000}}}};
  auto c = Claim::FromProject(p);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->id, "p-1");
  EXPECT_EQ(c->cluster, "");
  EXPECT_EQ(c->since_ms, 1764470000000);
  p["cluster"] = "east";  // placed: the claim is checked on that cluster
  EXPECT_EQ(Claim::FromProject(p)->cluster, "east");
  EXPECT_THAT(Claim::FromProject(p)->Describe(), HasSubstr(", cluster east)"));
  EXPECT_EQ(c->generation, 3);
  EXPECT_EQ(c->image, "img:1");
  EXPECT_EQ(c->restart_epoch, 2);
  EXPECT_EQ(c->custom_hostname, "a.example.com");
  EXPECT_EQ(c->Describe(), "Running at generation 3 (id p-1, image img:1, restart epoch 2)");

  Json stale = p;
  stale["status"]["observedGeneration"] = 2;  // Running, but for an older generation
  EXPECT_FALSE(Claim::FromProject(stale).has_value());
  Json updating = p;
  updating["status"]["phase"] = "Updating";
  EXPECT_FALSE(Claim::FromProject(updating).has_value());
  Json suspended = p;
  suspended["status"]["phase"] = "Suspended";
  EXPECT_EQ(Claim::FromProject(suspended)->phase, "Suspended");
  EXPECT_FALSE(Claim::FromProject(Json::array()).has_value());
}

TEST(ClaimTest, APhaseShownForAGenerationNotReachedIsAStaleClaim) {
  Json p = {{"name", "a"},
            {"generation", 4},
            {"desiredState", "suspended"},
            {"status", {{"phase", "Running"}, {"observedGeneration", 3}}}};
  EXPECT_EQ(StaleClaim(p),
            "Running for generation 4 (desired suspended) while observedGeneration is 3");
  p["status"]["phase"] = "Suspending";
  EXPECT_EQ(StaleClaim(p), "");
  // Suspended stays true while the project is to stay suspended; not once it is to run.
  p["status"]["phase"] = "Suspended";
  EXPECT_EQ(StaleClaim(p), "");
  p["desiredState"] = "running";
  EXPECT_NE(StaleClaim(p), "");
  p["status"]["observedGeneration"] = 4;
  EXPECT_EQ(StaleClaim(p), "");
  EXPECT_EQ(StaleClaim(Json::array()), "");
}

}  // namespace
}  // namespace steward::torture
