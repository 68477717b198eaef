#include <gtest/gtest.h>

#include "cluster/controllers/test_cluster.h"

namespace steward::cluster::testing {
namespace {

// Many projects in one namespace, as a hosting platform runs them: every Deployment becomes
// available and every Service gets exactly its own pod as endpoint. Guards the per-namespace
// indexes (a pod event must not scan every service of the namespace to stay fast).
TEST_F(ClusterTest, ManyProjectsInOneNamespaceConverge) {
  StartCluster();
  constexpr int kProjects = 300;
  for (int i = 0; i < kProjects; ++i) {
    std::string name = "p" + std::to_string(i);
    Json d = DeploymentObj(name, "nodered/node-red:3", 1);
    d["spec"]["template"]["metadata"]["labels"]["tier"] = "editor";  // shared by all
    MustCreate("deployments.apps", "test", d);
    Json svc = ServiceObj(name, name);
    svc["spec"]["selector"]["tier"] = "editor";
    MustCreate("services", "test", svc);
  }
  auto ready_count = [&] {
    int n = 0;
    for (const auto& d : List("deployments.apps", "test")) {
      if (I(d, "status.availableReplicas") == 1 &&
          CondIs(d, "Progressing", "True", "NewReplicaSetAvailable")) {
        ++n;
      }
    }
    return n;
  };
  ASSERT_TRUE(WaitFor([&] { return ready_count() == kProjects; }, 120s)) << ready_count();
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const auto& ep : List("endpoints", "test")) {
          const Json* subsets = FindPath(ep, "subsets");
          if (subsets == nullptr || (*subsets)[0]["addresses"].size() != 1) return false;
        }
        return List("endpoints", "test").size() == kProjects;
      },
      60s));
  for (const auto& ep : List("endpoints", "test")) {
    std::string pod = S(ep["subsets"][0]["addresses"][0], "targetRef.name");
    EXPECT_EQ(pod.rfind(S(ep, "metadata.name") + "-", 0), 0u) << pod;
  }
}

}  // namespace
}  // namespace steward::cluster::testing
