#include "cluster/controllers/kubelet.h"

#include <gtest/gtest.h>

#include "cluster/controllers/test_cluster.h"

namespace steward::cluster::testing {
namespace {

using controllers::Kubelet;

class KubeletTest : public ClusterTest {};

TEST_F(KubeletTest, PodGoesThroughScheduledStartedReadyWithDelays) {
  Profile p = InstantProfile();
  p.pod_scheduling = Fixed(100);
  p.pod_start = Fixed(100);
  p.pod_ready = Fixed(100);
  StartCluster(p);
  auto watcher = WatchFromNow("pods");
  auto start = std::chrono::steady_clock::now();
  MustCreate("pods", "test", PodObj("solo", "nginx"));
  ASSERT_TRUE(WaitFor([&] {
    auto pod = Get("pods", "test", "solo");
    return pod && PodReady(*pod);
  }));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(300));

  // Every intermediate state was written, in order.
  std::vector<Kubelet::Stage> stages;
  bool saw_creating = false, saw_running_unready = false;
  for (const auto& ev : watcher->Drain()) {
    Json pod = ev.object.Parse();
    Kubelet::Stage s = Kubelet::StageOf(pod);
    if (stages.empty() || stages.back() != s) stages.push_back(s);
    const Json* cs = FindPath(pod, "status.containerStatuses");
    if (cs != nullptr && S((*cs)[0], "state.waiting.reason") == "ContainerCreating") {
      saw_creating = true;
      EXPECT_EQ(S(pod, "status.phase"), "Pending");
      EXPECT_EQ(S(pod, "spec.nodeName"), "steward-node");
      EXPECT_TRUE(CondIs(pod, "PodScheduled", "True"));
      EXPECT_TRUE(CondIs(pod, "Ready", "False", "ContainersNotReady"));
    }
    if (S(pod, "status.phase") == "Running" && !PodReady(pod)) {
      saw_running_unready = true;
      EXPECT_FALSE(S(pod, "status.podIP").empty());
      EXPECT_TRUE(CondIs(pod, "Initialized", "True"));
      EXPECT_TRUE(CondIs(pod, "ContainersReady", "False"));
      EXPECT_EQ((*cs)[0]["started"], true);
      EXPECT_EQ((*cs)[0]["ready"], false);
    }
  }
  EXPECT_TRUE(saw_creating);
  EXPECT_TRUE(saw_running_unready);
  ASSERT_GE(stages.size(), 4u);
  EXPECT_EQ(stages.front(), Kubelet::Stage::kUnscheduled);
  EXPECT_EQ(stages.back(), Kubelet::Stage::kReady);
}

TEST_F(KubeletTest, DeletionMarksNotReadyThenRemovesAfterTerminationDelay) {
  Profile p = InstantProfile();
  p.pod_termination = Fixed(400);
  StartCluster(p);
  MustCreate("pods", "test", PodObj("solo", "nginx"));
  ASSERT_TRUE(WaitFor([&] { return PodReady(*Get("pods", "test", "solo")); }));
  std::string uid = S(*Get("pods", "test", "solo"), "metadata.uid");

  auto start = std::chrono::steady_clock::now();
  auto del = api_->Delete(Type("pods"), "test", "solo");
  ASSERT_TRUE(del.ok());
  ASSERT_FALSE(S(*del, "metadata.deletionTimestamp").empty());  // graceful: still there
  ASSERT_TRUE(WaitFor([&] {
    auto pod = Get("pods", "test", "solo");
    return pod && CondIs(*pod, "Ready", "False");
  }));
  auto terminating = Get("pods", "test", "solo");
  ASSERT_TRUE(terminating.has_value());
  EXPECT_EQ((*terminating)["status"]["containerStatuses"][0]["ready"], false);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(400));

  ASSERT_TRUE(WaitFor([&] { return !Get("pods", "test", "solo").has_value(); }));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(400));
  bool killing = false;
  for (const auto& e : List("events", "test")) {
    if (S(e, "involvedObject.uid") == uid && e["reason"] == "Killing") {
      killing = true;
      EXPECT_EQ(e["message"], "Stopping container main");
      EXPECT_EQ(e["involvedObject"]["fieldPath"], "spec.containers{main}");
      EXPECT_EQ(e["source"]["component"], "kubelet");
      EXPECT_EQ(e["source"]["host"], "steward-node");
    }
  }
  EXPECT_TRUE(killing);
}

TEST_F(KubeletTest, GracePeriodCapsTerminationDelay) {
  Profile p = InstantProfile();
  p.pod_termination = Fixed(60000);
  StartCluster(p);
  Json pod = PodObj("quick", "nginx");
  pod["spec"]["terminationGracePeriodSeconds"] = 1;
  MustCreate("pods", "test", pod);
  ASSERT_TRUE(WaitFor([&] { return PodReady(*Get("pods", "test", "quick")); }));
  ASSERT_TRUE(api_->Delete(Type("pods"), "test", "quick").ok());
  ASSERT_TRUE(WaitFor([&] { return !Get("pods", "test", "quick").has_value(); }, 5s));
}

TEST_F(KubeletTest, FailingImageStaysPendingInBackOff) {
  StartCluster();
  MustCreate("pods", "test", PodObj("bad", "nginx:fail"));
  ASSERT_TRUE(WaitFor([&] {
    auto pod = Get("pods", "test", "bad");
    const Json* cs = FindPath(*pod, "status.containerStatuses");
    if (cs == nullptr || S((*cs)[0], "state.waiting.reason") != "ImagePullBackOff") return false;
    for (const auto& e : List("events", "test")) {
      if (e["reason"] == "BackOff") return true;  // recorded right after the status write
    }
    return false;
  }));
  auto pod = *Get("pods", "test", "bad");
  EXPECT_EQ(S(pod, "status.phase"), "Pending");
  EXPECT_FALSE(PodReady(pod));
  EXPECT_EQ(S(pod["status"]["containerStatuses"][0], "state.waiting.message"),
            "Back-off pulling image \"nginx:fail\"");
  std::vector<std::string> reasons;
  for (const auto& e : List("events", "test")) {
    if (S(e, "involvedObject.name") == "bad") reasons.push_back(e["reason"]);
  }
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "BackOff"), reasons.end());
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "Failed"), reasons.end());
  EXPECT_EQ(std::find(reasons.begin(), reasons.end(), "Started"), reasons.end());
}

TEST_F(KubeletTest, PodIpsAreUnique) {
  StartCluster();
  for (int i = 0; i < 20; ++i) MustCreate("pods", "test", PodObj("p" + std::to_string(i), "x"));
  ASSERT_TRUE(WaitFor([&] {
    for (const auto& p : List("pods", "test")) {
      if (!PodReady(p)) return false;
    }
    return true;
  }));
  std::set<std::string> ips;
  for (const auto& p : List("pods", "test")) ips.insert(S(p, "status.podIP"));
  EXPECT_EQ(ips.size(), 20u);
}

TEST_F(KubeletTest, EventsNameTheirInvolvedObject) {
  StartCluster();
  MustCreate("pods", "test", PodObj("solo", "nginx"));
  ASSERT_TRUE(WaitFor([&] { return PodReady(*Get("pods", "test", "solo")); }));
  // Every Event written names its involved object fully.
  for (const auto& e : List("events", "test")) {
    for (const char* f : {"kind", "namespace", "name", "uid", "apiVersion"}) {
      EXPECT_FALSE(S(e, std::string("involvedObject.") + f).empty()) << f;
    }
    EXPECT_FALSE(S(e, "firstTimestamp").empty());
    EXPECT_FALSE(S(e, "lastTimestamp").empty());
    EXPECT_GE(I(e, "count"), 1);
    EXPECT_FALSE(S(e, "reportingComponent").empty());
  }
}

}  // namespace
}  // namespace steward::cluster::testing
