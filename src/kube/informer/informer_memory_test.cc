// The cache's memory for 10,000 Deployments stays within twice the objects' JSON size.
#include <gtest/gtest.h>
#include <malloc.h>

#include "kube/informer/fake_lister_watcher.h"
#include "kube/informer/informer.h"

namespace steward::kube {
namespace {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// A Deployment as the API server returns it (about 2 KB of JSON).
Json Deployment(int i) {
  std::string name = "project-" + std::to_string(i);
  Json labels = {{"app", name},
                 {"steward.io/project", name},
                 {"steward.io/team", "t" + std::to_string(i % 50)}};
  Json container = {
      {"name", "node-red"},
      {"image", "nodered/node-red:4.0.2"},
      {"ports", Json::array({{{"containerPort", 1880}, {"name", "http"}, {"protocol", "TCP"}}})},
      {"env", Json::array({{{"name", "PROJECT"}, {"value", name}},
                           {{"name", "NODE_OPTIONS"}, {"value", "--max_old_space_size=256"}}})},
      {"resources",
       {{"limits", {{"cpu", "500m"}, {"memory", "512Mi"}}},
        {"requests", {{"cpu", "100m"}, {"memory", "256Mi"}}}}},
      {"readinessProbe",
       {{"httpGet", {{"path", "/"}, {"port", 1880}, {"scheme", "HTTP"}}},
        {"periodSeconds", 10},
        {"timeoutSeconds", 1}}},
      {"terminationMessagePath", "/dev/termination-log"},
      {"imagePullPolicy", "IfNotPresent"}};
  Json spec = {{"replicas", 1},
               {"revisionHistoryLimit", 10},
               {"progressDeadlineSeconds", 600},
               {"selector", {{"matchLabels", {{"app", name}}}}},
               {"strategy", {{"type", "Recreate"}}},
               {"template",
                {{"metadata", {{"labels", labels}}},
                 {"spec",
                  {{"containers", Json::array({container})},
                   {"restartPolicy", "Always"},
                   {"terminationGracePeriodSeconds", 30},
                   {"dnsPolicy", "ClusterFirst"},
                   {"schedulerName", "default-scheduler"}}}}}};
  Json condition = {{"type", "Available"},
                    {"status", "True"},
                    {"reason", "MinimumReplicasAvailable"},
                    {"message", "Deployment has minimum availability."},
                    {"lastUpdateTime", "2026-01-01T00:00:00Z"},
                    {"lastTransitionTime", "2026-01-01T00:00:00Z"}};
  Json status = {{"observedGeneration", 1}, {"replicas", 1},
                 {"updatedReplicas", 1},    {"readyReplicas", 1},
                 {"availableReplicas", 1},  {"conditions", Json::array({condition})}};
  return Json{{"apiVersion", "apps/v1"},
              {"kind", "Deployment"},
              {"metadata",
               {{"name", name},
                {"namespace", "steward-" + std::to_string(i % 20)},
                {"uid", "5f0c6a1e-3d5b-4b8e-9a77-" + std::to_string(100000000000 + i)},
                {"generation", 1},
                {"creationTimestamp", "2026-01-01T00:00:00Z"},
                {"labels", labels},
                {"annotations", {{"deployment.kubernetes.io/revision", "1"}}}}},
              {"spec", spec},
              {"status", status}};
}

size_t HeapInUse() {
  struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}

TEST(InformerMemoryTest, TenThousandDeploymentsTakeAtMostTwiceTheirJsonSize) {
  if (kSanitized) GTEST_SKIP() << "sanitizer allocators do not report through mallinfo2";
  auto api = std::make_shared<testing::FakeApi>();
  for (int i = 0; i < 10000; ++i) api->CreateObject(Deployment(i));
  size_t before = HeapInUse();
  InformerOptions options;
  options.name = "deployments";
  options.label_indexes = {"steward.io/project", "steward.io/team"};
  {
    Informer informer(std::make_unique<testing::FakeListerWatcher>(api), options);
    informer.Start();
    ASSERT_TRUE(informer.WaitForSync(std::chrono::seconds(30)));
    api->ExpireContinueTokens();  // the fake's list snapshot is not the informer's memory
    size_t json_bytes = 0;
    for (const auto& object : informer.List()) json_bytes += object->json().size();
    size_t used = HeapInUse() - before;
    double ratio = static_cast<double>(used) / static_cast<double>(json_bytes);
    RecordProperty("cache_bytes", std::to_string(used));
    RecordProperty("json_bytes", std::to_string(json_bytes));
    std::printf("informer cache: %zu bytes for %zu bytes of JSON (%.2fx)\n", used, json_bytes,
                ratio);
    EXPECT_EQ(informer.size(), 10000u);
    EXPECT_GT(json_bytes, 10000u * 1500);  // the objects are realistic in size
    EXPECT_LE(ratio, 2.0);
    EXPECT_EQ(informer.ByLabel("steward.io/team", "t7").size(), 200u);
  }
}

}  // namespace
}  // namespace steward::kube
