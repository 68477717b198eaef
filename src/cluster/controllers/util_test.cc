#include "cluster/controllers/util.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "cluster/controllers/controller_queue.h"

namespace steward::cluster::controllers {
namespace {

using namespace std::chrono_literals;

TEST(ScaledValueTest, IntsAndPercents) {
  EXPECT_EQ(ScaledValue(Json(3), 10, true), 3);
  EXPECT_EQ(ScaledValue(Json("25%"), 1, true), 1);   // surge rounds up
  EXPECT_EQ(ScaledValue(Json("25%"), 1, false), 0);  // unavailable rounds down
  EXPECT_EQ(ScaledValue(Json("25%"), 10, true), 3);
  EXPECT_EQ(ScaledValue(Json("25%"), 10, false), 2);
  EXPECT_EQ(ScaledValue(Json("100%"), 4, false), 4);
  EXPECT_EQ(ScaledValue(Json("7"), 4, false), 7);
  EXPECT_EQ(ScaledValue(Json("x%"), 4, false), 0);
  EXPECT_EQ(ScaledValue(Json(), 4, false), 0);
}

TEST(PodTemplateHashTest, StableSafeAndShort) {
  Json tmpl = {{"metadata", {{"labels", {{"app", "web"}}}}},
               {"spec", {{"containers", Json::array({{{"name", "c"}, {"image", "nginx"}}})}}}};
  std::string h = ComputePodTemplateHash(tmpl, 0);
  EXPECT_EQ(h, ComputePodTemplateHash(tmpl, 0));
  EXPECT_LE(h.size(), 10u);
  EXPECT_FALSE(h.empty());
  for (char c : h) EXPECT_NE(std::string("bcdfghjklmnpqrstvwxz2456789").find(c), std::string::npos);
  // The label itself does not change the hash; the template and collision count do.
  Json labelled = tmpl;
  labelled["metadata"]["labels"]["pod-template-hash"] = h;
  EXPECT_EQ(ComputePodTemplateHash(labelled, 0), h);
  EXPECT_TRUE(EqualIgnoreHash(labelled, tmpl));
  Json other = tmpl;
  other["spec"]["containers"][0]["image"] = "nginx:2";
  EXPECT_NE(ComputePodTemplateHash(other, 0), h);
  EXPECT_FALSE(EqualIgnoreHash(other, tmpl));
  EXPECT_NE(ComputePodTemplateHash(tmpl, 1), h);
}

TEST(SafeEncodeTest, MapsDigitsLikeKubernetes) {
  // rand.SafeEncodeString("0123456789") in apimachinery.
  EXPECT_EQ(SafeEncodeString("0123456789"), "456789bcdf");
}

TEST(ResolveKindTest, IgnoresVersion) {
  ASSERT_NE(ResolveKind("apps/v1", "Deployment"), nullptr);
  EXPECT_EQ(ResolveKind("apps/v1beta2", "ReplicaSet")->GroupResource(), "replicasets.apps");
  EXPECT_EQ(ResolveKind("v1", "Pod")->GroupResource(), "pods");
  EXPECT_EQ(ResolveKind("example.com/v1", "Widget"), nullptr);
}

TEST(FinalizerTest, RemoveKeepsOthersAndDropsEmptyList) {
  Json obj = {{"metadata", {{"finalizers", {"a", "b"}}}}};
  EXPECT_TRUE(RemoveFinalizer(obj, "a"));
  EXPECT_EQ(obj["metadata"]["finalizers"], Json({"b"}));
  EXPECT_FALSE(RemoveFinalizer(obj, "a"));
  EXPECT_TRUE(RemoveFinalizer(obj, "b"));
  EXPECT_FALSE(obj["metadata"].contains("finalizers"));
}

TEST(PodAvailableTest, MinReadySeconds) {
  SystemTime now = std::chrono::system_clock::now();
  Json pod = {{"status",
               {{"conditions", Json::array({{{"type", "Ready"},
                                             {"status", "True"},
                                             {"lastTransitionTime", Rfc3339(now - 5s)}}})}}}};
  EXPECT_TRUE(IsPodAvailable(pod, 0, now));
  EXPECT_TRUE(IsPodAvailable(pod, 3, now));
  EXPECT_FALSE(IsPodAvailable(pod, 10, now));
  pod["status"]["conditions"][0]["status"] = "False";
  EXPECT_FALSE(IsPodAvailable(pod, 0, now));
}

TEST(WorkQueueTest, DeduplicatesReadyItems) {
  Scheduler scheduler;
  ControllerQueue q(scheduler);
  q.Add({Work::kPod, "a"});
  q.Add({Work::kPod, "a"});
  q.Add({Work::kPod, "b"});
  q.Add({Work::kDeployment, "a"});
  EXPECT_EQ(q.ReadySize(), 3u);
  EXPECT_EQ(q.TryPop()->key, "a");
  q.Add({Work::kPod, "a"});  // re-added once popped
  EXPECT_EQ(q.ReadySize(), 3u);
  scheduler.Stop();
}

TEST(WorkQueueTest, DelayedItemKeepsEarliestTimeAndAddWins) {
  Scheduler scheduler;
  ControllerQueue q(scheduler);
  q.AddAfter({Work::kPod, "a"}, 1h);
  q.AddAfter({Work::kPod, "a"}, 2h);  // later: ignored
  EXPECT_EQ(q.DelayedSize(), 1u);
  q.AddAfter({Work::kPod, "a"}, 20ms);  // earlier: replaces
  EXPECT_EQ(q.DelayedSize(), 1u);
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(q.Wait());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 20ms);
  auto item = q.TryPop();
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->key, "a");
  EXPECT_EQ(q.DelayedSize(), 0u);

  q.AddAfter({Work::kPod, "b"}, 1h);
  q.Add({Work::kPod, "b"});  // now: the delayed entry goes
  EXPECT_EQ(q.DelayedSize(), 0u);
  EXPECT_EQ(q.TryPop()->key, "b");
  scheduler.Stop();
}

TEST(WorkQueueTest, KickAndShutdownWakeWaiters) {
  Scheduler scheduler;
  ControllerQueue q(scheduler);
  std::thread t([&] { q.Kick(); });
  EXPECT_TRUE(q.Wait());
  t.join();
  std::thread s([&] { q.Shutdown(); });
  EXPECT_FALSE(q.Wait());
  s.join();
  q.Add({Work::kPod, "x"});  // ignored after shutdown
  EXPECT_FALSE(q.TryPop().has_value());
  scheduler.Stop();
}

TEST(WorkQueueTest, RateLimitedBacksOffAndForgetResets) {
  Scheduler scheduler;
  ControllerQueue q(scheduler);
  WorkItem item{Work::kGcAttempt, "k"};
  auto start = std::chrono::steady_clock::now();
  q.AddRateLimited(item);  // 5 ms
  ASSERT_TRUE(q.Wait());
  ASSERT_TRUE(q.TryPop().has_value());
  q.AddRateLimited(item);  // 10 ms
  ASSERT_TRUE(q.Wait());
  ASSERT_TRUE(q.TryPop().has_value());
  EXPECT_GE(std::chrono::steady_clock::now() - start, 15ms);
  q.Forget(item);
  q.AddRateLimited(item);
  EXPECT_EQ(q.DelayedSize(), 1u);
  scheduler.Stop();
}

}  // namespace
}  // namespace steward::cluster::controllers
