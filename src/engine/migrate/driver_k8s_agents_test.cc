// MQTT schema agents in `steward migrate --from driver-k8s`: planning against the objects
// driver-k8s renders (tests/e2e/testdata/driver_k8s_*agent*.json, made by running the driver's
// own createMQTTTopicAgent), and the hand-over through the engine (relabel, Intents::PutAgent
// with the planned id, markers cleared) with every uid, the driver's Deployment selector and the
// token kept; a bare Pod of an older driver replaced by Steward's Deployment without a gap; an
// agent that was not running put stopped.
#include <gmock/gmock.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/ascii.h"
#include "common/base64.h"
#include "common/json_access.h"
#include "engine/migrate/driver_k8s.h"
#include "engine/reconciler/engine_test_support.h"

namespace steward::engine::testing {
namespace {

using migrate::AgentPlan;
using test_support::Eventually;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kToken = "ffbt_Zq9-driver-issued-token";
constexpr const char* kAgent = "mqtt-schema-agent-tmx7a-bk9qz";
constexpr const char* kTeamAgent = "mqtt-schema-agent-tmx7a-team-broker";

// A testdata file with its placeholders filled in.
Json DriverObjects(const std::string& file, const std::string& team = "TmX7a") {
  std::ifstream in(std::string(STEWARD_SOURCE_DIR) + "/tests/e2e/testdata/" + file);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const std::map<std::string, std::string> values = {{"TEAM", team},
                                                     {"TEAM_LC", AsciiLower(team)},
                                                     {"BROKER", "Bk9Qz"},
                                                     {"BROKER_LC", "bk9qz"},
                                                     {"TOKEN", kToken}};
  for (const auto& [k, v] : values) {
    const std::string needle = "@" + k + "@";
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at)) {
      text.replace(at, needle.size(), v);
      at += v.size();
    }
  }
  auto j = ParseJson(text);
  EXPECT_TRUE(j.ok()) << file;
  return j.ok() ? (*j)["items"] : Json::array();
}

// The array at `key` of `obj`, or an empty one.
const Json& ArrayAt(const Json& obj, std::string_view key) {
  static const Json kEmpty = Json::array();
  const Json& v = MemberOrNull(obj, key);
  return v.is_array() ? v : kEmpty;
}

const kube::ResourceType& TypeOfKind(const std::string& kind) {
  if (kind == "Deployment") return kube::ResourceType::Deployment();
  if (kind == "Pod") return kube::ResourceType::Pod();
  return kube::ResourceType::Service();
}

class MigrateAgentTest : public EngineFixture {
 protected:
  // Creates the objects as the driver's client does (no fieldValidation: the stray
  // enableServiceLinks beside the pod spec is dropped).
  void Create(const Json& items) {
    for (const Json& item : items) {
      auto created = client_->Create(TypeOfKind(GetString(item, "kind")), kNs, item,
                                     {.field_validation = "Ignore"});
      ASSERT_TRUE(created.ok()) << created.error().ToString();
    }
  }
  std::string Uid(std::string_view group_resource, const std::string& name) {
    auto o = Get(group_resource, name);
    return o ? StringAtPath(*o, "metadata.uid") : "(gone)";
  }
  // The agent's pods that are serving (Running and Ready, not terminating).
  std::vector<Json> ReadyPods(const std::string& selector) {
    std::vector<Json> out;
    for (Json& p : ListLabelled("pods", selector)) {
      bool ready = false;
      for (const Json& c : ArrayAt(MemberOrNull(p, "status"), "conditions")) {
        ready |= GetString(c, "type") == "Ready" && GetString(c, "status") == "True";
      }
      if (ready && PathOrNull(p, "metadata.deletionTimestamp").is_null()) {
        out.push_back(std::move(p));
      }
    }
    return out;
  }
  // The value FORGE_TEAM_TOKEN resolves to in a pod: plain, or through its secretKeyRef.
  std::string PodToken(const Json& pod) {
    for (const Json& e : ArrayAt(PathOrNull(pod, "spec.containers")[0], "env")) {
      if (GetString(e, "name") != "FORGE_TEAM_TOKEN") continue;
      if (e.contains("value")) return GetString(e, "value");
      const Json& ref = PathOrNull(e, "valueFrom.secretKeyRef");
      auto secret = Get("secrets", GetString(ref, "name"));
      if (!secret) return "(no Secret " + GetString(ref, "name") + ")";
      auto v = Base64Decode(StringAtPath(*secret, "data." + GetString(ref, "key")));
      return v ? *v : "(not base64)";
    }
    return "(absent)";
  }
  // Samples, until stopped, that the agent's Service has a ready endpoint and that every ready
  // endpoint's pod holds the driver's token.
  class Sampler {
   public:
    explicit Sampler(MigrateAgentTest* t, std::string service)
        : t_(t), service_(std::move(service)) {
      thread_ = std::thread([this] {
        while (!stop_.load()) Sample();
      });
    }
    ~Sampler() { Stop(); }
    void Stop() {
      stop_ = true;
      if (thread_.joinable()) thread_.join();
    }
    int ok() const { return ok_.load(); }
    int bad() const { return bad_.load(); }
    const std::string& first_bad() const { return first_bad_; }  // after Stop

   private:
    void Sample() {
      int ready = 0;
      std::string why;
      for (const Json& slice : t_->ListLabelled("endpointslices.discovery.k8s.io",
                                                "kubernetes.io/service-name=" + service_)) {
        for (const Json& e : ArrayAt(slice, "endpoints")) {
          if (PathOrNull(e, "conditions.ready") == false) continue;
          ++ready;
          auto pod = t_->Get("pods", StringAtPath(e, "targetRef.name"));
          if (!pod) continue;  // deleted since the slice was written
          if (const std::string token = t_->PodToken(*pod); token != kToken) {
            why = "pod " + StringAtPath(e, "targetRef.name") + " holds " + token;
          }
        }
      }
      if (ready == 0) why = "no ready endpoint";
      if (why.empty()) {
        ++ok_;
      } else if (bad_++ == 0) {
        first_bad_ = why;
      }
    }
    MigrateAgentTest* t_;
    std::string service_;
    std::atomic<bool> stop_{false};
    std::atomic<int> ok_{0}, bad_{0};
    std::string first_bad_;  // written by the sampling thread only
    std::thread thread_;
  };
  // The agent's Service has a ready endpoint (before sampling starts).
  bool EndpointReady() {
    return Eventually(
        [&] {
          for (const Json& slice :
               ListLabelled("endpointslices.discovery.k8s.io",
                            "kubernetes.io/service-name=" + std::string(kAgent))) {
            for (const Json& e : ArrayAt(slice, "endpoints")) {
              if (PathOrNull(e, "conditions.ready") == true) return true;
            }
          }
          return false;
        },
        seconds(20));
  }
  bool WaitSamples(const Sampler& s, int more) {
    const int at = s.ok();
    return Eventually([&] { return s.ok() >= at + more || s.bad() > 0; }, seconds(10)) &&
           s.bad() == 0;
  }
  void ExpectNeverFailed(const std::string& id) {
    auto history = store_->ListHistory(id, 0, 1000);
    ASSERT_TRUE(history.ok());
    for (const auto& h : *history) EXPECT_NE(h.summary, "Failed") << h.detail_json;
  }
  AgentPlan PlanOne() {
    auto plan = migrate::BuildPlan(*client_, kNs, DefaultOptions().config);
    EXPECT_TRUE(plan.ok()) << plan.error().ToString();
    if (!plan.ok() || plan->agents.size() != 1) {
      ADD_FAILURE() << "agents planned: " << (plan.ok() ? plan->agents.size() : 0);
      return AgentPlan{};
    }
    EXPECT_TRUE(plan->instances.empty());
    const std::string shown = DumpJson(migrate::PlanJson(*plan)) + migrate::PlanText(*plan);
    EXPECT_THAT(shown, Not(HasSubstr(kToken)));
    return plan->agents[0];
  }
};

TEST_F(MigrateAgentTest, TheDriversAgentIsPlannedForAdoptionWithItsTokenNeverShown) {
  StartCluster();
  Create(DriverObjects("driver_k8s_agent.json"));
  const AgentPlan a = PlanOne();
  ASSERT_EQ(a.action, AgentPlan::Action::kMigrate) << a.error;
  EXPECT_EQ(a.name, kAgent);
  EXPECT_EQ(a.team, "TmX7a");
  EXPECT_EQ(a.broker, "Bk9Qz");
  EXPECT_TRUE(ValidateProjectId(a.id).ok()) << a.id;
  EXPECT_EQ(PlanOne().id, a.id);  // derived from the Deployment's uid: the same every run
  EXPECT_EQ(a.spec,
            (Json{{"team", "TmX7a"}, {"broker", "Bk9Qz"}, {"credentials", {{"token", kToken}}}}));
  EXPECT_EQ(a.public_spec["credentials"]["keys"], Json::array({"FORGE_TEAM_TOKEN"}));
  EXPECT_TRUE(a.start);
  EXPECT_FALSE(a.bare_pod.has_value());
  ASSERT_EQ(a.objects.size(), 2u);
  EXPECT_EQ(a.objects[0].kind, "Deployment");
  EXPECT_EQ(a.objects[0].uid, Uid("deployments.apps", kAgent));
  EXPECT_EQ(a.objects[1].kind, "Service");
  EXPECT_EQ(a.objects[1].uid, Uid("services", kAgent));
  EXPECT_TRUE(a.objects[0].relabel && a.objects[1].relabel);
  const std::string fingerprint = a.public_spec["credentials"]["fingerprint"];
  EXPECT_THAT(a.create, ElementsAre("Secret " + SuppliedSecretName(a.id, fingerprint)));
  // What Steward renders differently from the driver's templates, with the default config: its
  // labels and pod annotations, its surge-only strategy, the token by reference, the Service's
  // named targetPort and selector (everything else, the rest of the env too, is the driver's).
  const std::string d = "Deployment " + std::string(kAgent) + ": ";
  const std::string svc = "Service " + std::string(kAgent) + ": ";
  EXPECT_THAT(
      a.differs,
      ElementsAre(d + "metadata.labels.app.kubernetes.io/instance",
                  d + "metadata.labels.app.kubernetes.io/name",
                  d + "spec.strategy.rollingUpdate.maxSurge",
                  d + "spec.strategy.rollingUpdate.maxUnavailable",
                  d + "spec.template.metadata.annotations",
                  d + "spec.template.metadata.labels.app.kubernetes.io/instance",
                  d + "spec.template.metadata.labels.app.kubernetes.io/managed-by",
                  d + "spec.template.metadata.labels.app.kubernetes.io/name",
                  d + "spec.template.metadata.labels.steward.io/project",
                  d + "spec.template.spec.containers[mqtt-schema-agent].env[FORGE_TEAM_"
                      "TOKEN].valueFrom",
                  svc + "metadata.labels.app.kubernetes.io/instance",
                  svc + "metadata.labels.app.kubernetes.io/name",
                  svc + "spec.ports[web].targetPort", svc + "spec.selector.steward.io/project"));
  EXPECT_EQ(a.rollout, "rolling");
}

TEST_F(MigrateAgentTest, TheTeamBrokersAgentDiffersOnlyInHowItHoldsTheToken) {
  StartCluster();
  Create(DriverObjects("driver_k8s_team_broker_agent.json"));
  const AgentPlan a = PlanOne();
  ASSERT_EQ(a.action, AgentPlan::Action::kMigrate) << a.error;
  EXPECT_EQ(a.name, kTeamAgent);
  EXPECT_EQ(a.broker, "team-broker");
  // FORGE_TIMEOUT=24, TZ, FORGE_URL, FORGE_BROKER_ID, FORGE_TEAM_ID: as Steward renders them.
  for (const std::string& d : a.differs) {
    if (d.find(".env[") != std::string::npos) {
      EXPECT_THAT(d, HasSubstr(".env[FORGE_TEAM_TOKEN]."));
    }
  }
  EXPECT_EQ(a.rollout, "rolling");
}

TEST_F(MigrateAgentTest, AnOlderDriversBarePodIsPlannedForReplacement) {
  StartCluster();
  Create(DriverObjects("driver_k8s_agent_pod.json"));
  const AgentPlan a = PlanOne();
  ASSERT_EQ(a.action, AgentPlan::Action::kMigrate) << a.error;
  EXPECT_EQ(a.name, kAgent);
  ASSERT_TRUE(a.bare_pod.has_value());
  EXPECT_EQ(a.bare_pod->uid, Uid("pods", kAgent));
  ASSERT_EQ(a.objects.size(), 1u);
  EXPECT_EQ(a.objects[0].kind, "Service");
  EXPECT_EQ(a.objects[0].uid, Uid("services", kAgent));
  EXPECT_EQ(a.spec["credentials"]["token"], kToken);
  ASSERT_EQ(a.create.size(), 2u);
  EXPECT_EQ(a.create[1], "Deployment " + std::string(kAgent));
  EXPECT_EQ(a.rollout, "replace");
  EXPECT_TRUE(a.start);
  auto plan = migrate::BuildPlan(*client_, kNs, DefaultOptions().config);
  ASSERT_TRUE(plan.ok());
  EXPECT_THAT(migrate::PlanText(*plan),
              HasSubstr("replace  Pod " + std::string(kAgent) +
                        " (driver-k8s before v2.31.0): deleted once Steward reports the agent "
                        "Running"));
}

// Each variant under a team of its own, so that all are planned at once.
TEST_F(MigrateAgentTest, AgentsThatCannotBeMappedAreErrorsAndAStoppedOneIsPutStopped) {
  StartCluster();
  std::map<std::string, std::string> want;  // agent name → error (or "stopped")
  auto variant = [&](const std::string& team, const std::string& expect,
                     const std::function<void(Json & dep, Json & svc)>& change) {
    Json items = DriverObjects("driver_k8s_agent.json", team);
    change(items[0], items[1]);
    want[GetString(items[0]["metadata"], "name")] = expect;
    Create(items);
  };
  auto env = [](Json& dep) -> Json& {
    return dep["spec"]["template"]["spec"]["containers"][0]["env"];
  };
  variant("TmRef", "env[FORGE_TEAM_TOKEN]: not a plain value (valueFrom)", [&](Json& dep, Json&) {
    env(dep)[1] = {{"name", "FORGE_TEAM_TOKEN"},
                   {"valueFrom", {{"secretKeyRef", {{"name", "s"}, {"key", "k"}}}}}};
  });
  variant("TmNoTok", "env[FORGE_TEAM_TOKEN]: missing",
          [&](Json& dep, Json&) { env(dep).erase(1); });
  variant("TmLbl", "label team (Other) is not",
          [&](Json& dep, Json&) { dep["metadata"]["labels"]["team"] = "Other"; });
  variant("TmName", "not the name Steward gives the agent", [&](Json& dep, Json& svc) {
    dep["metadata"]["name"] = "mqtt-schema-agent-renamed";
    svc["metadata"]["name"] = "mqtt-schema-agent-renamed";
  });
  variant("TmOwn", "labelled steward.io/project=p-other", [&](Json& dep, Json& svc) {
    dep["metadata"]["labels"]["steward.io/project"] = "p-one";
    svc["metadata"]["labels"] = {{"steward.io/project", "p-other"}};
  });
  variant("TmSel", "spec.selector does not select the pods Steward renders", [&](Json& dep, Json&) {
    dep["spec"]["selector"]["matchLabels"]["tier"] = "agent";
    dep["spec"]["template"]["metadata"]["labels"]["tier"] = "agent";
  });
  variant("TmStop", "stopped", [&](Json& dep, Json&) { dep["spec"]["replicas"] = 0; });

  auto plan = migrate::BuildPlan(*client_, kNs, DefaultOptions().config);
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  ASSERT_EQ(plan->agents.size(), want.size());
  for (const AgentPlan& a : plan->agents) {
    ASSERT_TRUE(want.contains(a.name)) << a.name;
    const std::string& expect = want[a.name];
    if (expect == "stopped") {
      EXPECT_EQ(a.action, AgentPlan::Action::kMigrate) << a.error;
      EXPECT_FALSE(a.start);
      EXPECT_EQ(a.stopped, "Deployment " + a.name + " has spec.replicas 0");
      EXPECT_EQ(a.rollout, "remove");
    } else {
      EXPECT_EQ(a.action, AgentPlan::Action::kError) << a.name;
      EXPECT_THAT(a.error, HasSubstr(expect)) << a.name;
    }
  }
  const std::string shown = DumpJson(migrate::PlanJson(*plan)) + migrate::PlanText(*plan);
  EXPECT_THAT(shown, Not(HasSubstr(kToken)));
  EXPECT_THAT(migrate::PlanText(*plan),
              HasSubstr("start    no (Deployment mqtt-schema-agent-tmstop-bk9qz has spec.replicas "
                        "0): put stopped"));
}

TEST_F(MigrateAgentTest, TheDriversAgentIsAdoptedWithItsUidsSelectorAndTokenWithoutAGap) {
  StartCluster();
  EngineOptions options = DefaultOptions();
  options.config.remove_orphans = true;
  StartEngine(options);
  Create(DriverObjects("driver_k8s_agent.json"));
  ASSERT_TRUE(Eventually([&] { return ReadyPods("name=" + std::string(kAgent)).size() == 1; },
                         seconds(20)));
  const std::string driver_pod =
      StringAtPath(ReadyPods("name=" + std::string(kAgent))[0], "metadata.name");
  const std::string dep_uid = Uid("deployments.apps", kAgent);
  const std::string svc_uid = Uid("services", kAgent);
  ASSERT_TRUE(EndpointReady());
  Sampler sampler(this, kAgent);
  ASSERT_TRUE(WaitSamples(sampler, 5)) << sampler.first_bad();

  const AgentPlan a = PlanOne();
  ASSERT_EQ(a.action, AgentPlan::Action::kMigrate) << a.error;
  ASSERT_TRUE(migrate::Relabel(*client_, kNs, a).ok());
  // Labelled for a record the store does not have yet: kept by orphan removal (the marker).
  ASSERT_TRUE(Eventually(
      [&] {
        int seen = 0;
        for (const Orphan& o : engine_->stats().orphans) seen += o.name == kAgent ? 1 : 0;
        return seen >= 2;
      },
      seconds(10)));
  auto put = engine_->intents().PutAgent(a.name, a.spec, a.id, a.start);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  EXPECT_EQ(put->record.id, a.id);
  ASSERT_TRUE(migrate::ClearMarkers(*client_, kNs, a).ok());
  ASSERT_TRUE(WaitPhase(a.id, "Running", put->record.generation)) << Record(a.id).status_json;
  ASSERT_TRUE(WaitSamples(sampler, 5)) << sampler.first_bad();
  sampler.Stop();
  EXPECT_EQ(sampler.bad(), 0) << sampler.first_bad();

  EXPECT_TRUE(migrate::CheckAdopted(*client_, kNs, a).ok());
  EXPECT_EQ(Uid("deployments.apps", kAgent), dep_uid);
  EXPECT_EQ(Uid("services", kAgent), svc_uid);
  auto dep = Get("deployments.apps", kAgent);
  ASSERT_TRUE(dep);
  // The driver's selector stays (immutable); Steward's pods carry its label too.
  EXPECT_EQ((*dep)["spec"]["selector"], (Json{{"matchLabels", {{"name", kAgent}}}}));
  EXPECT_THAT(DumpJson(*dep), Not(HasSubstr(kToken)));
  auto svc = Get("services", kAgent);
  ASSERT_TRUE(svc);
  EXPECT_EQ((*svc)["spec"]["selector"], (Json{{"steward.io/project", a.id}}));
  EXPECT_EQ(Annotation(*svc, "steward.io/migrating"), "");
  const std::vector<Json> pods = ReadyPods("steward.io/project=" + a.id);
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_NE(StringAtPath(pods[0], "metadata.name"), driver_pod);  // rolled once
  EXPECT_EQ(PodToken(pods[0]), kToken);                           // no rotation
  ExpectNeverFailed(a.id);

  const AgentPlan again = PlanOne();
  EXPECT_EQ(again.action, AgentPlan::Action::kManaged);
  EXPECT_EQ(again.id, a.id);
}

TEST_F(MigrateAgentTest, AnOlderDriversBarePodIsReplacedByStewardsDeploymentWithoutAGap) {
  StartCluster();
  StartEngine();
  Create(DriverObjects("driver_k8s_agent_pod.json"));
  ASSERT_TRUE(Eventually([&] { return ReadyPods("name=" + std::string(kAgent)).size() == 1; },
                         seconds(20)));
  const std::string svc_uid = Uid("services", kAgent);
  ASSERT_TRUE(EndpointReady());
  Sampler sampler(this, kAgent);
  ASSERT_TRUE(WaitSamples(sampler, 5)) << sampler.first_bad();

  const AgentPlan a = PlanOne();
  ASSERT_EQ(a.action, AgentPlan::Action::kMigrate) << a.error;
  ASSERT_TRUE(a.bare_pod.has_value());
  ASSERT_TRUE(migrate::Relabel(*client_, kNs, a).ok());
  // The bare Pod is not relabelled: Steward's Service must never select it.
  EXPECT_EQ(LabelOf(*Get("pods", kAgent), "steward.io/project"), "");
  auto put = engine_->intents().PutAgent(a.name, a.spec, a.id, a.start);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  ASSERT_TRUE(migrate::ClearMarkers(*client_, kNs, a).ok());
  ASSERT_TRUE(WaitPhase(a.id, "Running", put->record.generation)) << Record(a.id).status_json;
  // Running beside the driver's Pod, which is still there until the migration deletes it.
  EXPECT_EQ(Uid("pods", kAgent), a.bare_pod->uid);
  ASSERT_TRUE(migrate::CheckAdopted(*client_, kNs, a).ok());
  EXPECT_EQ(Uid("services", kAgent), svc_uid);
  auto deleted = migrate::DeleteBarePod(*client_, kNs, a);
  ASSERT_TRUE(deleted.ok()) << deleted.error().ToString();
  ASSERT_TRUE(Eventually(
      [&] {
        auto gone = migrate::BarePodGone(*client_, kNs, a);
        return gone.ok() && *gone;
      },
      seconds(20)));
  ASSERT_TRUE(WaitSamples(sampler, 5)) << sampler.first_bad();
  sampler.Stop();
  EXPECT_EQ(sampler.bad(), 0) << sampler.first_bad();
  EXPECT_EQ(Record(a.id).phase, "Running");
  const std::vector<Json> pods = ReadyPods("steward.io/project=" + a.id);
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(PodToken(pods[0]), kToken);
  ExpectNeverFailed(a.id);
  // Deleting again is a no-op; the plan is now "managed".
  auto again = migrate::DeleteBarePod(*client_, kNs, a);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(*again);
  EXPECT_EQ(PlanOne().action, AgentPlan::Action::kManaged);
}

// A driver's agent scaled to zero is put stopped: Steward's stopped agent has no Deployment or
// Service, so they go; the token's Secret stays, and a start runs the agent with that token.
TEST_F(MigrateAgentTest, AnAgentThatWasNotRunningIsPutStoppedAndStartsWithItsToken) {
  StartCluster();
  StartEngine();
  Json items = DriverObjects("driver_k8s_agent.json");
  items[0]["spec"]["replicas"] = 0;
  Create(items);
  const AgentPlan a = PlanOne();
  ASSERT_EQ(a.action, AgentPlan::Action::kMigrate) << a.error;
  ASSERT_FALSE(a.start);
  ASSERT_TRUE(migrate::Relabel(*client_, kNs, a).ok());
  auto put = engine_->intents().PutAgent(a.name, a.spec, a.id, a.start);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  ASSERT_TRUE(migrate::ClearMarkers(*client_, kNs, a).ok());
  ASSERT_TRUE(WaitPhase(a.id, "Suspended", put->record.generation)) << Record(a.id).status_json;
  EXPECT_FALSE(Get("deployments.apps", kAgent).has_value());
  EXPECT_FALSE(Get("services", kAgent).has_value());
  EXPECT_EQ(ListLabelled("secrets", "steward.io/project=" + a.id).size(), 1u);
  auto started = engine_->intents().Start(kAgent, store::RecordKind::kAgent);
  ASSERT_TRUE(started.ok()) << started.error().ToString();
  ASSERT_TRUE(WaitPhase(a.id, "Running", started->generation)) << Record(a.id).status_json;
  const std::vector<Json> pods = ReadyPods("steward.io/project=" + a.id);
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(PodToken(pods[0]), kToken);
}

}  // namespace
}  // namespace steward::engine::testing
