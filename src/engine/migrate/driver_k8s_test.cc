// The migration library and the engine together against the embedded cluster: driver-k8s
// objects (tests/e2e/testdata/driver_k8s_instance.json) planned, relabelled and handed to the
// engine through Intents::Put, with orphan removal on. Regression tests for the engine changes
// the migration needs: a live Deployment selector {app: <id>} is kept (it is immutable), and an
// object carrying steward.io/migrating is never removed as an orphan.
#include "engine/migrate/driver_k8s.h"

#include <gmock/gmock.h>

#include <fstream>
#include <sstream>

#include "common/json_access.h"
#include "engine/reconciler/engine_test_support.h"

namespace steward::engine::testing {
namespace {

using migrate::InstancePlan;
using test_support::Eventually;
using ::testing::HasSubstr;

constexpr const char* kId = "3f0c1a52-7d1e-4c8b-9a55-0c7f3e9d2b11";

std::string DriverObjects(const std::string& image) {
  std::ifstream in(std::string(STEWARD_SOURCE_DIR) +
                   "/tests/e2e/testdata/driver_k8s_instance.json");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const std::map<std::string, std::string> values = {{"ID", kId},
                                                     {"NAME", "alpha"},
                                                     {"SERVICE", "alpha"},
                                                     {"IMAGE", image},
                                                     {"DOMAIN", "localhost"},
                                                     {"TEAM", "teamA"},
                                                     {"CLIENT_ID", "ffp_a"},
                                                     {"CLIENT_SECRET", "sec-a"},
                                                     {"TOKEN", "ffpt_a"},
                                                     {"BROKER_PASSWORD", "bp-a"},
                                                     {"NR_SECRET", "nr-a"}};
  for (const auto& [k, v] : values) {
    const std::string needle = "@" + k + "@";
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at)) {
      text.replace(at, needle.size(), v);
      at += v.size();
    }
  }
  return text;
}

TEST(MigrateQuantities, DriverQuantitiesMapToStackValues) {
  EXPECT_EQ(migrate::CpuMillis("100m"), 100);
  EXPECT_EQ(migrate::CpuMillis("1"), 1000);
  EXPECT_EQ(migrate::CpuMillis("0.5"), 500);
  EXPECT_EQ(migrate::CpuMillis("x"), std::nullopt);
  EXPECT_EQ(migrate::MemoryMiB("256Mi"), 256);
  EXPECT_EQ(migrate::MemoryMiB("1Gi"), 1024);
  EXPECT_EQ(migrate::MemoryMiB("268435456"), 256);
  EXPECT_EQ(migrate::MemoryMiB("256M"), std::nullopt);
}

class MigrateEngineTest : public EngineFixture {
 protected:
  std::map<std::string, std::string> Uids() {
    std::map<std::string, std::string> uids;
    for (const auto& [kind, name] : std::vector<std::pair<std::string, std::string>>{
             {"deployments.apps", "alpha"},
             {"services", "alpha"},
             {"ingresses.networking.k8s.io", "alpha"},
             {"persistentvolumeclaims", std::string(kId) + "-pvc"}}) {
      auto o = Get(kind, name);
      uids[kind] = o ? GetString((*o)["metadata"], "uid") : "(gone)";
    }
    return uids;
  }
};

TEST_F(MigrateEngineTest, RelabelledObjectsSurviveOrphanRemovalAndAreAdoptedWithTheirSelector) {
  StartCluster();
  EngineOptions options = DefaultOptions();
  options.config.remove_orphans = true;
  options.config.require_ingress_address = false;
  StartEngine(options);
  auto list = ParseJson(DriverObjects("flowfuse/node-red:4.0"));
  ASSERT_TRUE(list.ok());
  for (const Json& item : (*list)["items"]) {
    const std::string kind = GetString(item, "kind");
    const kube::ResourceType& type = kind == "Deployment" ? kube::ResourceType::Deployment()
                                     : kind == "Service"  ? kube::ResourceType::Service()
                                     : kind == "Ingress"
                                         ? kube::ResourceType::Ingress()
                                         : kube::ResourceType::PersistentVolumeClaim();
    // driver-k8s sends no fieldValidation: its stray template.enableServiceLinks is dropped.
    auto created = client_->Create(type, kNs, item, {.field_validation = "Ignore"});
    ASSERT_TRUE(created.ok()) << created.error().ToString();
  }
  ASSERT_TRUE(Eventually(
      [&] {
        auto d = Get("deployments.apps", "alpha");
        return d && NumberAtPath(*d, "status.availableReplicas") == 1;
      },
      seconds(20)));
  const auto before = Uids();

  auto plan = migrate::BuildPlan(*client_, kNs, options.config);
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  ASSERT_EQ(plan->instances.size(), 1u);
  const InstancePlan& p = plan->instances[0];
  ASSERT_EQ(p.action, InstancePlan::Action::kMigrate) << p.error;
  EXPECT_EQ(p.rollout, "rolling");
  ASSERT_TRUE(migrate::Relabel(*client_, kNs, p).ok());

  // Labelled for a project the store does not know yet: an orphan, reported but not removed.
  ASSERT_TRUE(Eventually(
      [&] {
        for (const Orphan& o : engine_->stats().orphans) {
          if (o.kind == "Deployment" && o.name == "alpha") return true;
        }
        return false;
      },
      seconds(10)));
  // Every relabelled object has been looked at (and kept): all four are reported.
  ASSERT_TRUE(Eventually([&] { return engine_->stats().orphans.size() >= 4; }, seconds(10)));
  EXPECT_EQ(Uids(), before);

  auto put = engine_->intents().Put(p.name, p.spec, p.id, p.start);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  ASSERT_TRUE(migrate::ClearMarkers(*client_, kNs, p).ok());
  ASSERT_TRUE(WaitPhase(kId, "Running", put->record.generation));
  EXPECT_EQ(Uids(), before);
  auto dep = Get("deployments.apps", "alpha");
  ASSERT_TRUE(dep);
  EXPECT_EQ((*dep)["spec"]["selector"], (Json{{"matchLabels", {{"app", kId}}}}));
  EXPECT_EQ(StringAtPath(*dep, "spec.strategy.type"), "RollingUpdate");
  // Never Failed (no NameTaken, no refused selector update) on the way.
  auto history = store_->ListHistory(kId, 0, 1000);
  ASSERT_TRUE(history.ok());
  for (const auto& h : *history) EXPECT_NE(h.summary, "Failed") << h.detail_json;

  // Planned again: Steward's, nothing to do.
  auto again = migrate::BuildPlan(*client_, kNs, options.config);
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->instances.size(), 1u);
  EXPECT_EQ(again->instances[0].action, InstancePlan::Action::kManaged);
}

TEST_F(MigrateEngineTest, ASelectorThatDoesNotSelectStewardsPodsIsRefusedInThePlan) {
  StartCluster();
  auto list = ParseJson(DriverObjects("flowfuse/node-red:4.0"));
  ASSERT_TRUE(list.ok());
  Json dep = (*list)["items"][1];
  dep["spec"]["selector"]["matchLabels"] = {{"app", kId}, {"tier", "x"}};
  dep["spec"]["template"]["metadata"]["labels"]["tier"] = "x";
  ASSERT_TRUE(client_->Create(kube::ResourceType::Deployment(), kNs, dep).ok());
  auto plan = migrate::BuildPlan(*client_, kNs, EngineConfig{});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->instances.size(), 1u);
  EXPECT_EQ(plan->instances[0].action, InstancePlan::Action::kError);
  EXPECT_THAT(plan->instances[0].error, HasSubstr("spec.selector"));
}

}  // namespace
}  // namespace steward::engine::testing
