#include <gtest/gtest.h>

#include "cluster/controllers/test_cluster.h"

namespace steward::cluster::testing {
namespace {

class GarbageCollectorTest : public ClusterTest {
 protected:
  bool DeploymentReady(const std::string& name, int replicas) {
    auto d = Get("deployments.apps", "test", name);
    return d && I(*d, "status.availableReplicas") == replicas &&
           CondIs(*d, "Progressing", "True", "NewReplicaSetAvailable");
  }
  Json ConfigMap(const std::string& name, Json owners) {
    return Json{{"apiVersion", "v1"},
                {"kind", "ConfigMap"},
                {"metadata", {{"name", name}, {"ownerReferences", std::move(owners)}}},
                {"data", {{"k", "v"}}}};
  }
  static Json RefTo(const Json& owner, const std::string& api_version, const std::string& kind,
                    bool block = false) {
    return Json{{"apiVersion", api_version},
                {"kind", kind},
                {"name", S(owner, "metadata.name")},
                {"uid", S(owner, "metadata.uid")},
                {"blockOwnerDeletion", block}};
  }
};

TEST_F(GarbageCollectorTest, BackgroundDeletesDependentsAfterOwnerIsGone) {
  Profile p = InstantProfile();
  p.garbage_collection = {std::chrono::milliseconds(200), std::chrono::milliseconds(0)};
  StartCluster(p);
  MustCreate("deployments.apps", "test", DeploymentObj("web", "nginx", 2));
  ASSERT_TRUE(WaitFor([&] { return DeploymentReady("web", 2); }));
  auto start = std::chrono::steady_clock::now();
  DeleteOptions opts;
  opts.propagation_policy = "Background";
  auto del = api_->Delete(Type("deployments.apps"), "test", "web", opts);
  ASSERT_TRUE(del.ok());
  EXPECT_FALSE(Get("deployments.apps", "test", "web").has_value());
  ASSERT_TRUE(WaitFor(
      [&] { return List("replicasets.apps", "test").empty() && List("pods", "test").empty(); }));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(400));
}

TEST_F(GarbageCollectorTest, ForegroundWaitsForBlockingDependents) {
  Profile p = InstantProfile();
  p.pod_termination = {std::chrono::milliseconds(300), std::chrono::milliseconds(0)};
  StartCluster(p);
  MustCreate("deployments.apps", "test", DeploymentObj("web", "nginx", 2));
  ASSERT_TRUE(WaitFor([&] { return DeploymentReady("web", 2); }));
  auto watcher = WatchFromNow();
  DeleteOptions opts;
  opts.propagation_policy = "Foreground";
  auto del = api_->Delete(Type("deployments.apps"), "test", "web", opts);
  ASSERT_TRUE(del.ok());
  ASSERT_FALSE(S(*del, "metadata.deletionTimestamp").empty());
  ASSERT_TRUE(WaitFor([&] { return !Get("deployments.apps", "test", "web").has_value(); }));
  EXPECT_TRUE(List("replicasets.apps", "test").empty());
  EXPECT_TRUE(List("pods", "test").empty());
  // Removal order: every pod, then the ReplicaSet, then the Deployment.
  int pods_removed = 0;
  bool rs_removed = false, deployment_removed = false;
  for (const auto& ev : watcher->Drain()) {
    if (ev.type != WatchEventType::kDeleted) continue;
    const std::string& gr = ev.object.group_resource;
    if (gr == "pods") {
      ++pods_removed;
      EXPECT_FALSE(rs_removed);
    } else if (gr == "replicasets.apps") {
      rs_removed = true;
      EXPECT_EQ(pods_removed, 2);
      EXPECT_FALSE(deployment_removed);
    } else if (gr == "deployments.apps") {
      deployment_removed = true;
      EXPECT_TRUE(rs_removed);
    }
  }
  EXPECT_TRUE(deployment_removed);
}

TEST_F(GarbageCollectorTest, OrphanKeepsDependentsAndDropsReferences) {
  StartCluster();
  MustCreate("deployments.apps", "test", DeploymentObj("web", "nginx", 1));
  ASSERT_TRUE(WaitFor([&] { return DeploymentReady("web", 1); }));
  DeleteOptions opts;
  opts.propagation_policy = "Orphan";
  ASSERT_TRUE(api_->Delete(Type("deployments.apps"), "test", "web", opts).ok());
  ASSERT_TRUE(WaitFor([&] { return !Get("deployments.apps", "test", "web").has_value(); }));
  auto rss = List("replicasets.apps", "test");
  ASSERT_EQ(rss.size(), 1u);
  EXPECT_FALSE(rss[0]["metadata"].contains("ownerReferences"));
  EXPECT_EQ(List("pods", "test").size(), 1u);
}

TEST_F(GarbageCollectorTest, DanglingReferencesAndMultipleOwners) {
  StartCluster();
  Json owner = MustCreate("configmaps", "test", ConfigMap("owner", Json::array()));
  Json ghost = {{"metadata", {{"name", "ghost"}, {"uid", "00000000-dead-4000-8000-000000000000"}}}};
  MustCreate("configmaps", "test",
             ConfigMap("orphaned", Json::array({RefTo(ghost, "v1", "ConfigMap")})));
  MustCreate("configmaps", "test",
             ConfigMap("shared", Json::array({RefTo(ghost, "v1", "ConfigMap"),
                                              RefTo(owner, "v1", "ConfigMap")})));
  MustCreate("configmaps", "test",
             ConfigMap("foreign", Json::array({RefTo(ghost, "example.com/v1", "Widget")})));
  ASSERT_TRUE(WaitFor([&] {
    auto shared = Get("configmaps", "test", "shared");
    return !Get("configmaps", "test", "orphaned").has_value() && shared &&
           (*shared)["metadata"]["ownerReferences"].size() == 1;
  }));
  EXPECT_EQ(Get("configmaps", "test", "shared")->at("metadata").at("ownerReferences")[0]["uid"],
            owner["metadata"]["uid"]);
  EXPECT_TRUE(Get("configmaps", "test", "foreign").has_value());  // unknown kinds are left
  // Deleting the remaining owner takes the dependent with it.
  ASSERT_TRUE(api_->Delete(Type("configmaps"), "test", "owner").ok());
  ASSERT_TRUE(WaitFor([&] { return !Get("configmaps", "test", "shared").has_value(); }));
}

TEST_F(GarbageCollectorTest, RecreatedOwnerWithSameNameDoesNotAdoptDependents) {
  StartCluster();
  Json owner = MustCreate("configmaps", "test", ConfigMap("owner", Json::array()));
  MustCreate("configmaps", "test",
             ConfigMap("dep", Json::array({RefTo(owner, "v1", "ConfigMap")})));
  ASSERT_TRUE(api_->Delete(Type("configmaps"), "test", "owner").ok());
  MustCreate("configmaps", "test", ConfigMap("owner", Json::array()));  // new uid
  ASSERT_TRUE(WaitFor([&] { return !Get("configmaps", "test", "dep").has_value(); }));
}

}  // namespace
}  // namespace steward::cluster::testing
