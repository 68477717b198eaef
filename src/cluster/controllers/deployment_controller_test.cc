#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "cluster/controllers/test_cluster.h"

namespace steward::cluster::testing {
namespace {

using ::testing::SizeIs;

class DeploymentTest : public ClusterTest {
 protected:
  std::vector<Json> ReplicaSets() { return List("replicasets.apps", "test"); }
  // Pods of `app` that are not terminating.
  std::vector<Json> LivePods(const std::string& app) {
    std::vector<Json> out;
    for (auto& p : List("pods", "test", "app=" + app)) {
      if (S(p, "metadata.deletionTimestamp").empty()) out.push_back(p);
    }
    return out;
  }
  bool Complete(const std::string& name, int replicas) {
    auto d = Get("deployments.apps", "test", name);
    if (!d) return false;
    return I(*d, "status.observedGeneration") == I(*d, "metadata.generation") &&
           I(*d, "status.replicas") == replicas && I(*d, "status.updatedReplicas") == replicas &&
           I(*d, "status.availableReplicas") == replicas &&
           I(*d, "status.readyReplicas") == replicas &&
           CondIs(*d, "Progressing", "True", "NewReplicaSetAvailable") &&
           CondIs(*d, "Available", "True", "MinimumReplicasAvailable");
  }
  std::vector<Json> EventsFor(const std::string& uid) {
    std::vector<Json> out;
    for (auto& e : List("events", "test")) {
      if (S(e, "involvedObject.uid") == uid) out.push_back(e);
    }
    return out;
  }
  static bool HasReason(const std::vector<Json>& events, const std::string& reason) {
    for (const auto& e : events) {
      if (e.value("reason", "") == reason) return true;
    }
    return false;
  }
};

TEST_F(DeploymentTest, BecomesAvailableWithTruthfulStatus) {
  StartCluster();
  Json d = MustCreate("deployments.apps", "test", DeploymentObj("web", "nginx:1.25", 2));
  ASSERT_TRUE(WaitFor([&] { return Complete("web", 2); }));

  auto dep = *Get("deployments.apps", "test", "web");
  EXPECT_EQ(dep["metadata"]["annotations"]["deployment.kubernetes.io/revision"], "1");
  EXPECT_EQ(I(dep, "status.unavailableReplicas"), 0);
  const Json* progressing = Condition(dep, "Progressing");
  ASSERT_NE(progressing, nullptr);
  EXPECT_EQ((*progressing)["message"].get<std::string>().find("ReplicaSet \"web-"), 0u);
  EXPECT_FALSE((*progressing)["lastUpdateTime"].get<std::string>().empty());
  EXPECT_FALSE((*progressing)["lastTransitionTime"].get<std::string>().empty());

  auto rss = ReplicaSets();
  ASSERT_THAT(rss, SizeIs(1));
  const Json& rs = rss[0];
  std::string hash = rs["metadata"]["labels"]["pod-template-hash"];
  EXPECT_FALSE(hash.empty());
  EXPECT_LE(hash.size(), 10u);
  EXPECT_EQ(S(rs, "metadata.name"), "web-" + hash);
  EXPECT_EQ(rs["spec"]["selector"]["matchLabels"]["pod-template-hash"], hash);
  EXPECT_EQ(rs["spec"]["template"]["metadata"]["labels"]["pod-template-hash"], hash);
  EXPECT_EQ(rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"], "1");
  EXPECT_EQ(rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"], "2");
  EXPECT_EQ(rs["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"], "3");
  const Json& ref = rs["metadata"]["ownerReferences"][0];
  EXPECT_EQ(ref["kind"], "Deployment");
  EXPECT_EQ(ref["uid"], d["metadata"]["uid"]);
  EXPECT_EQ(ref["controller"], true);
  EXPECT_EQ(ref["blockOwnerDeletion"], true);
  EXPECT_EQ(I(rs, "status.replicas"), 2);
  EXPECT_EQ(I(rs, "status.readyReplicas"), 2);
  EXPECT_EQ(I(rs, "status.availableReplicas"), 2);
  EXPECT_EQ(I(rs, "status.fullyLabeledReplicas"), 2);
  EXPECT_EQ(I(rs, "status.observedGeneration"), I(rs, "metadata.generation"));

  auto pods = LivePods("web");
  ASSERT_THAT(pods, SizeIs(2));
  std::set<std::string> ips;
  for (const auto& p : pods) {
    std::string name = S(p, "metadata.name");
    EXPECT_EQ(name.size(), S(rs, "metadata.name").size() + 6) << name;
    EXPECT_EQ(name.rfind(S(rs, "metadata.name") + "-", 0), 0u);
    EXPECT_EQ(S(p, "spec.nodeName"), "steward-node");
    EXPECT_EQ(S(p, "status.phase"), "Running");
    EXPECT_EQ(S(p, "status.hostIP"), "10.0.0.10");
    EXPECT_EQ(S(p, "status.podIP").rfind("10.244.", 0), 0u);
    ips.insert(S(p, "status.podIP"));
    EXPECT_TRUE(PodReady(p));
    EXPECT_TRUE(CondIs(p, "ContainersReady", "True"));
    EXPECT_TRUE(CondIs(p, "PodScheduled", "True"));
    EXPECT_TRUE(CondIs(p, "Initialized", "True"));
    EXPECT_EQ(p["status"]["containerStatuses"][0]["ready"], true);
    EXPECT_FALSE(S(p["status"]["containerStatuses"][0], "state.running.startedAt").empty());
    EXPECT_EQ(p["metadata"]["ownerReferences"][0]["uid"], rs["metadata"]["uid"]);
    EXPECT_EQ(p["metadata"]["labels"]["pod-template-hash"], hash);
  }
  EXPECT_EQ(ips.size(), 2u);

  auto dep_events = EventsFor(S(d, "metadata.uid"));
  ASSERT_TRUE(HasReason(dep_events, "ScalingReplicaSet"));
  for (const auto& e : dep_events) {
    if (e["reason"] == "ScalingReplicaSet") {
      EXPECT_EQ(e["message"], "Scaled up replica set web-" + hash + " from 0 to 2");
      EXPECT_EQ(e["source"]["component"], "deployment-controller");
      EXPECT_EQ(e["involvedObject"]["kind"], "Deployment");
      EXPECT_EQ(e["type"], "Normal");
      EXPECT_EQ(e["count"], 1);
    }
  }
  EXPECT_TRUE(HasReason(EventsFor(S(rs, "metadata.uid")), "SuccessfulCreate"));
  auto pod_events = EventsFor(S(pods[0], "metadata.uid"));
  for (const char* reason : {"Scheduled", "Pulling", "Pulled", "Created", "Started"}) {
    EXPECT_TRUE(HasReason(pod_events, reason)) << reason;
  }
}

TEST_F(DeploymentTest, TemplateChangeRollsToNewReplicaSet) {
  Profile p = InstantProfile();
  p.pod_ready = {std::chrono::milliseconds(100), std::chrono::milliseconds(0)};
  StartCluster(p);
  MustCreate("deployments.apps", "test", DeploymentObj("web", "nginx:1.25", 1));
  ASSERT_TRUE(WaitFor([&] { return Complete("web", 1); }));
  std::string old_rs = S(ReplicaSets()[0], "metadata.name");
  std::string old_pod = S(LivePods("web")[0], "metadata.name");

  auto watcher = WatchFromNow("pods");
  Json updated = MustModify("deployments.apps", "test", "web", [](Json& o) {
    o["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26";
  });
  EXPECT_EQ(I(updated, "metadata.generation"), 2);
  ASSERT_TRUE(WaitFor([&] {
    return Complete("web", 1) && !Get("pods", "test", old_pod).has_value() &&
           I(*Get("deployments.apps", "test", "web"), "status.observedGeneration") == 2;
  }));

  // The new ReplicaSet is revision 2; the old one is kept at 0 replicas.
  auto rss = ReplicaSets();
  ASSERT_THAT(rss, SizeIs(2));
  for (const auto& rs : rss) {
    if (S(rs, "metadata.name") == old_rs) {
      EXPECT_EQ(I(rs, "spec.replicas"), 0);
      EXPECT_EQ(rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"], "1");
    } else {
      EXPECT_EQ(I(rs, "spec.replicas"), 1);
      EXPECT_EQ(rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"], "2");
      EXPECT_EQ(rs["spec"]["template"]["spec"]["containers"][0]["image"], "nginx:1.26");
    }
  }
  auto dep = *Get("deployments.apps", "test", "web");
  EXPECT_EQ(dep["metadata"]["annotations"]["deployment.kubernetes.io/revision"], "2");

  // maxSurge 25% rounds up to 1, maxUnavailable 25% down to 0: the old pod is deleted only
  // once the new pod is ready.
  bool new_ready = false, old_deleted = false;
  for (const auto& ev : watcher->Drain()) {
    Json pod = ev.object.Parse();
    if (ev.object.name == old_pod) {
      if (!S(pod, "metadata.deletionTimestamp").empty() && !old_deleted) {
        old_deleted = true;
        EXPECT_TRUE(new_ready) << "old pod deleted before the new one was ready";
      }
    } else if (PodReady(pod)) {
      new_ready = true;
    }
  }
  EXPECT_TRUE(old_deleted);
}

TEST_F(DeploymentTest, ScalesUpAndDown) {
  StartCluster();
  MustCreate("deployments.apps", "test", DeploymentObj("web", "nginx", 1));
  ASSERT_TRUE(WaitFor([&] { return Complete("web", 1); }));
  MustModify("deployments.apps", "test", "web", [](Json& o) { o["spec"]["replicas"] = 4; });
  ASSERT_TRUE(WaitFor([&] { return Complete("web", 4) && LivePods("web").size() == 4; }));
  ASSERT_THAT(ReplicaSets(), SizeIs(1));
  EXPECT_EQ(
      ReplicaSets()[0]["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"],
      "4");
  MustModify("deployments.apps", "test", "web", [](Json& o) { o["spec"]["replicas"] = 1; });
  ASSERT_TRUE(
      WaitFor([&] { return Complete("web", 1) && List("pods", "test", "app=web").size() == 1; }));
  ASSERT_THAT(ReplicaSets(), SizeIs(1));
  EXPECT_TRUE(HasReason(EventsFor(S(ReplicaSets()[0], "metadata.uid")), "SuccessfulDelete"));
  bool scaled_down = false;
  auto d = *Get("deployments.apps", "test", "web");
  for (const auto& e : EventsFor(S(d, "metadata.uid"))) {
    if (e.value("message", "").find("Scaled down replica set") == 0) scaled_down = true;
  }
  EXPECT_TRUE(scaled_down);
}

TEST_F(DeploymentTest, FailingImageExceedsProgressDeadline) {
  Profile p = InstantProfile();
  p.progress_deadline_scale = 0.002;  // 600 s -> 1.2 s
  StartCluster(p);
  MustCreate("deployments.apps", "test", DeploymentObj("bad", "registry.invalid/app:1", 1));
  ASSERT_TRUE(WaitFor([&] {
    auto d = Get("deployments.apps", "test", "bad");
    return d && CondIs(*d, "Progressing", "False", "ProgressDeadlineExceeded");
  }));
  auto d = *Get("deployments.apps", "test", "bad");
  EXPECT_TRUE(CondIs(d, "Available", "False", "MinimumReplicasUnavailable"));
  EXPECT_EQ(I(d, "status.availableReplicas"), 0);
  EXPECT_EQ(I(d, "status.unavailableReplicas"), 1);
  EXPECT_EQ(Condition(d, "Progressing")->value("message", "").find("has timed out progressing."),
            Condition(d, "Progressing")->value("message", "").size() -
                std::string("has timed out progressing.").size());
  auto pods = LivePods("bad");
  ASSERT_THAT(pods, SizeIs(1));
  EXPECT_EQ(S(pods[0], "status.phase"), "Pending");
  EXPECT_FALSE(PodReady(pods[0]));
  EXPECT_EQ(S(pods[0]["status"]["containerStatuses"][0], "state.waiting.reason"),
            "ImagePullBackOff");
  bool failed_pull = false;
  for (const auto& e : EventsFor(S(pods[0], "metadata.uid"))) {
    if (e["reason"] == "Failed" && e["type"] == "Warning") failed_pull = true;
  }
  EXPECT_TRUE(failed_pull);
}

TEST_F(DeploymentTest, RecreateStopsOldPodsBeforeStartingNew) {
  Profile p = InstantProfile();
  p.pod_termination = {std::chrono::milliseconds(200), std::chrono::milliseconds(0)};
  StartCluster(p);
  Json obj = DeploymentObj("web", "nginx:1", 2);
  obj["spec"]["strategy"] = {{"type", "Recreate"}};
  MustCreate("deployments.apps", "test", obj);
  ASSERT_TRUE(WaitFor([&] { return Complete("web", 2); }));
  std::string old_rs = S(ReplicaSets()[0], "metadata.name");
  std::set<std::string> initial_pods;
  for (const auto& pod : List("pods", "test")) initial_pods.insert(S(pod, "metadata.name"));
  ASSERT_EQ(initial_pods.size(), 2u);

  auto watcher = WatchFromNow();
  MustModify("deployments.apps", "test", "web",
             [](Json& o) { o["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"; });
  ASSERT_TRUE(WaitFor([&] {
    return Complete("web", 2) &&
           I(*Get("deployments.apps", "test", "web"), "status.observedGeneration") == 2;
  }));
  std::set<std::string> old_pods_alive = initial_pods;
  bool new_pod_seen = false;
  for (const auto& ev : watcher->Drain()) {
    if (ev.object.group_resource != "pods") continue;
    Json pod = ev.object.Parse();
    std::string owner = pod["metadata"]["ownerReferences"][0].value("name", "");
    if (owner == old_rs) {
      if (ev.type == WatchEventType::kDeleted) {
        old_pods_alive.erase(ev.object.name);
      } else {
        old_pods_alive.insert(ev.object.name);
      }
    } else if (ev.type == WatchEventType::kAdded) {
      new_pod_seen = true;
      EXPECT_TRUE(old_pods_alive.empty()) << "new pod created while old pods exist";
    }
  }
  EXPECT_TRUE(new_pod_seen);
}

TEST_F(DeploymentTest, PausedDeploymentDoesNotRoll) {
  StartCluster();
  MustCreate("deployments.apps", "test", DeploymentObj("web", "nginx:1", 1));
  ASSERT_TRUE(WaitFor([&] { return Complete("web", 1); }));
  MustModify("deployments.apps", "test", "web", [](Json& o) {
    o["spec"]["paused"] = true;
    o["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2";
  });
  ASSERT_TRUE(WaitFor([&] {
    auto d = Get("deployments.apps", "test", "web");
    return CondIs(*d, "Progressing", "Unknown", "DeploymentPaused") &&
           I(*d, "status.observedGeneration") == 2;
  }));
  EXPECT_THAT(ReplicaSets(), SizeIs(1));
  MustModify("deployments.apps", "test", "web", [](Json& o) { o["spec"]["paused"] = false; });
  ASSERT_TRUE(WaitFor([&] {
    return ReplicaSets().size() == 2 && Complete("web", 1) &&
           I(*Get("deployments.apps", "test", "web"), "status.observedGeneration") == 3;
  }));
}

TEST_F(DeploymentTest, RevisionHistoryLimitCleansOldReplicaSets) {
  StartCluster();
  Json obj = DeploymentObj("web", "nginx:1", 1);
  obj["spec"]["revisionHistoryLimit"] = 1;
  MustCreate("deployments.apps", "test", obj);
  ASSERT_TRUE(WaitFor([&] { return Complete("web", 1); }));
  for (int v = 2; v <= 4; ++v) {
    MustModify("deployments.apps", "test", "web", [&](Json& o) {
      o["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:" + std::to_string(v);
    });
    ASSERT_TRUE(WaitFor([&] {
      auto d = Get("deployments.apps", "test", "web");
      return I(*d, "status.observedGeneration") == v && Complete("web", 1);
    }));
  }
  ASSERT_TRUE(WaitFor([&] { return ReplicaSets().size() == 2; }));
  std::set<std::string> revisions;
  for (const auto& rs : ReplicaSets()) {
    revisions.insert(rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]);
  }
  EXPECT_EQ(revisions, (std::set<std::string>{"3", "4"}));
}

TEST_F(DeploymentTest, SetProfileAppliesToNewWork) {
  StartCluster();
  Profile slow = InstantProfile();
  slow.pod_ready = {std::chrono::milliseconds(300), std::chrono::milliseconds(0)};
  manager_->SetProfile(slow);
  auto start = std::chrono::steady_clock::now();
  MustCreate("deployments.apps", "test", DeploymentObj("web", "nginx", 1));
  ASSERT_TRUE(WaitFor([&] { return Complete("web", 1); }));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(300));
  EXPECT_GT(manager_->processed(), 0u);
}

}  // namespace
}  // namespace steward::cluster::testing
