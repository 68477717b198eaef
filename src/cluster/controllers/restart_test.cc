// A control plane restart: work pending when the controllers stopped (a crash, SIGKILL) must be
// picked up from the objects alone by the controllers that start next, as real controllers do
// from their initial list.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "cluster/controllers/test_cluster.h"

namespace steward::cluster::testing {
namespace {

class RestartTest : public ClusterTest {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/restart_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    db_ = dir_ + "/cluster.db";
  }
  void TearDown() override {
    ClusterTest::TearDown();
    manager_.reset();
    api_.reset();
    storage_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  bool DeploymentReady(const std::string& name, int replicas) {
    auto d = Get("deployments.apps", "test", name);
    return d && I(*d, "status.availableReplicas") == replicas &&
           I(*d, "status.replicas") == replicas;
  }
  bool AllGone() {
    return !Get("deployments.apps", "test", "web").has_value() &&
           List("replicasets.apps", "test").empty() && List("pods", "test").empty();
  }

  std::string dir_;
  std::string db_;
};

// The brief's reproduction: the deployment is deleted with Foreground and the control plane is
// killed before any controller saw the deletion.
TEST_F(RestartTest, ForegroundDeletionIssuedWhileDownCompletesAfterRestart) {
  StartCluster(InstantProfile(), db_);
  MustCreate("deployments.apps", "test", DeploymentObj("web", "nginx", 2));
  ASSERT_TRUE(WaitFor([&] { return DeploymentReady("web", 2); }));
  StopControllers();
  DeleteOptions opts;
  opts.propagation_policy = "Foreground";
  ASSERT_TRUE(api_->Delete(Type("deployments.apps"), "test", "web", opts).ok());
  RestartCluster(db_);
  ASSERT_TRUE(WaitFor([&] { return AllGone(); }));
}

// Killed half-way: the ReplicaSet is already deleting (Foreground) and its pods terminating.
TEST_F(RestartTest, ForegroundDeletionInProgressCompletesAfterRestart) {
  Profile p = InstantProfile();
  p.pod_termination = Fixed(60'000);  // the first control plane never finishes a pod
  StartCluster(p, db_);
  MustCreate("deployments.apps", "test", DeploymentObj("web", "nginx", 2));
  ASSERT_TRUE(WaitFor([&] { return DeploymentReady("web", 2); }));
  DeleteOptions opts;
  opts.propagation_policy = "Foreground";
  ASSERT_TRUE(api_->Delete(Type("deployments.apps"), "test", "web", opts).ok());
  ASSERT_TRUE(WaitFor([&] {
    auto pods = List("pods", "test");
    auto rss = List("replicasets.apps", "test");
    if (pods.size() != 2 || rss.size() != 1) return false;
    for (const auto& pod : pods) {
      if (S(pod, "metadata.deletionTimestamp").empty() || PodReady(pod)) return false;
    }
    return !S(rss[0], "metadata.deletionTimestamp").empty();
  }));
  Profile fast = InstantProfile();
  fast.pod_termination = Fixed(100);
  RestartCluster(db_, fast);
  ASSERT_TRUE(WaitFor([&] { return AllGone(); }));
}

// A pod the kubelet had started to terminate (Killing done, grace period running).
TEST_F(RestartTest, TerminatingPodAtRestartIsRemoved) {
  Profile p = InstantProfile();
  p.pod_termination = Fixed(60'000);
  StartCluster(p, db_);
  MustCreate("pods", "test", PodObj("solo", "nginx"));
  ASSERT_TRUE(WaitFor([&] { return PodReady(*Get("pods", "test", "solo")); }));
  ASSERT_TRUE(api_->Delete(Type("pods"), "test", "solo").ok());
  ASSERT_TRUE(WaitFor([&] {
    auto pod = Get("pods", "test", "solo");
    return pod && !PodReady(*pod);
  }));
  Profile fast = InstantProfile();
  fast.pod_termination = Fixed(100);
  RestartCluster(db_, fast);
  ASSERT_TRUE(WaitFor([&] { return !Get("pods", "test", "solo").has_value(); }));
}

// A pod deleted (gracefully) while no controller ran.
TEST_F(RestartTest, PodDeletedWhileDownIsRemovedAfterRestart) {
  StartCluster(InstantProfile(), db_);
  MustCreate("pods", "test", PodObj("solo", "nginx"));
  ASSERT_TRUE(WaitFor([&] { return PodReady(*Get("pods", "test", "solo")); }));
  StopControllers();
  ASSERT_TRUE(api_->Delete(Type("pods"), "test", "solo").ok());
  RestartCluster(db_);
  ASSERT_TRUE(WaitFor([&] { return !Get("pods", "test", "solo").has_value(); }));
}

TEST_F(RestartTest, CleanupFinalizersPendingAtRestartComplete) {
  Profile slow = InstantProfile();
  slow.service_finalizer = Fixed(60'000);
  slow.ingress_finalizer = Fixed(60'000);
  slow.pvc_finalizer = Fixed(60'000);
  StartCluster(slow, db_);
  MustCreate("services", "test", ServiceObj("web", "web"));
  MustCreate("ingresses.networking.k8s.io", "test", IngressObj("web"));
  MustCreate("persistentvolumeclaims", "test", PvcObj("data"));
  // A claim in use by a pod that is deleted together with it.
  MustCreate("persistentvolumeclaims", "test", PvcObj("used"));
  Json pod = PodObj("user", "nginx");
  pod["spec"]["volumes"] =
      Json::array({{{"name", "d"}, {"persistentVolumeClaim", {{"claimName", "used"}}}}});
  MustCreate("pods", "test", pod);
  ASSERT_TRUE(WaitFor([&] {
    auto data = Get("persistentvolumeclaims", "test", "data");
    return PodReady(*Get("pods", "test", "user")) && S(*data, "status.phase") == "Bound";
  }));
  for (const auto& [gr, name] :
       std::vector<std::pair<std::string, std::string>>{{"services", "web"},
                                                        {"ingresses.networking.k8s.io", "web"},
                                                        {"persistentvolumeclaims", "data"},
                                                        {"persistentvolumeclaims", "used"},
                                                        {"pods", "user"}}) {
    auto del = api_->Delete(Type(gr), "test", name);
    ASSERT_TRUE(del.ok()) << gr << " " << del.error().message;
    EXPECT_FALSE(S(*del, "metadata.deletionTimestamp").empty()) << gr << "/" << name;
  }
  RestartCluster(db_);
  ASSERT_TRUE(WaitFor([&] {
    return !Get("services", "test", "web").has_value() &&
           !Get("ingresses.networking.k8s.io", "test", "web").has_value() &&
           List("persistentvolumeclaims", "test").empty() && List("pods", "test").empty();
  }));
}

// Work that was only ever asked for while no controller ran: scaling, binding, load balancer
// status, endpoints, namespace deletion.
TEST_F(RestartTest, WorkRequestedWhileDownIsDoneAfterRestart) {
  StartCluster(InstantProfile(), db_);
  MustCreate("deployments.apps", "test", DeploymentObj("web", "nginx", 1));
  ASSERT_TRUE(WaitFor([&] { return DeploymentReady("web", 1); }));
  MustCreate("namespaces", "",
             Json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "proj"}}}});
  MustCreate("configmaps", "proj", Json{{"metadata", {{"name", "cfg"}}}, {"data", {{"a", "b"}}}});
  StopControllers();
  MustModify("deployments.apps", "test", "web", [](Json& d) { d["spec"]["replicas"] = 3; });
  MustCreate("services", "test", ServiceObj("web", "web"));
  MustCreate("ingresses.networking.k8s.io", "test", IngressObj("web"));
  MustCreate("persistentvolumeclaims", "test", PvcObj("data"));
  ASSERT_TRUE(api_->Delete(Type("namespaces"), "", "proj").ok());
  RestartCluster(db_);
  ASSERT_TRUE(WaitFor([&] {
    auto ing = Get("ingresses.networking.k8s.io", "test", "web");
    auto pvc = Get("persistentvolumeclaims", "test", "data");
    auto ep = Get("endpoints", "test", "web");
    const Json* lb = ing ? FindPath(*ing, "status.loadBalancer.ingress") : nullptr;
    return DeploymentReady("web", 3) && lb != nullptr && lb->is_array() && !lb->empty() && pvc &&
           S(*pvc, "status.phase") == "Bound" && ep && ep->contains("subsets") &&
           (*ep)["subsets"][0]["addresses"].size() == 3 &&
           !Get("namespaces", "", "proj").has_value();
  }));
}

}  // namespace
}  // namespace steward::cluster::testing
