#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster/controllers/test_cluster.h"

namespace steward::cluster::testing {
namespace {

using ::testing::SizeIs;

class EndpointsTest : public ClusterTest {
 protected:
  std::vector<Json> Slices(const std::string& svc) {
    return List("endpointslices.discovery.k8s.io", "test", "kubernetes.io/service-name=" + svc);
  }
  // The endpoints of the service's slices.
  std::vector<Json> SliceEndpoints(const std::string& svc) {
    std::vector<Json> out;
    for (const auto& s : Slices(svc)) {
      if (!s.contains("endpoints") || !s["endpoints"].is_array()) continue;
      for (const auto& e : s["endpoints"]) out.push_back(e);
    }
    return out;
  }
  // The endpoint of `pod` in the service's slices (null when absent).
  Json EndpointFor(const std::string& svc, const std::string& pod) {
    for (const auto& e : SliceEndpoints(svc)) {
      if (S(e, "targetRef.name") == pod) return e;
    }
    return nullptr;
  }
};

TEST_F(EndpointsTest, ReadyPodsBecomeEndpoints) {
  StartCluster();
  Json svc = MustCreate("services", "test", ServiceObj("web", "web"));
  MustCreate("deployments.apps", "test", DeploymentObj("web", "nginx", 2));
  ASSERT_TRUE(WaitFor([&] {
    auto eps = SliceEndpoints("web");
    int ready = 0;
    for (const auto& e : eps) ready += e["conditions"]["ready"] == true ? 1 : 0;
    return ready == 2;
  }));
  auto slices = Slices("web");
  ASSERT_THAT(slices, SizeIs(1));
  const Json& slice = slices[0];
  EXPECT_EQ(S(slice, "metadata.name").rfind("web-", 0), 0u);
  EXPECT_EQ(S(slice, "metadata.name").size(), 9u);
  EXPECT_EQ(slice["addressType"], "IPv4");
  EXPECT_EQ(slice["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"],
            "endpointslice-controller.k8s.io");
  EXPECT_EQ(slice["metadata"]["labels"]["team"], "a");  // the service's labels are copied
  EXPECT_EQ(slice["metadata"]["ownerReferences"][0]["uid"], svc["metadata"]["uid"]);
  EXPECT_EQ(slice["metadata"]["ownerReferences"][0]["kind"], "Service");
  ASSERT_THAT(slice["ports"], SizeIs(1));
  EXPECT_EQ(slice["ports"][0]["port"], 8080);  // targetPort "http" resolved from the pod
  EXPECT_EQ(slice["ports"][0]["name"], "web");
  EXPECT_EQ(slice["ports"][0]["protocol"], "TCP");
  for (const auto& e : slice["endpoints"]) {
    EXPECT_EQ(e["conditions"]["serving"], true);
    EXPECT_EQ(e["conditions"]["terminating"], false);
    EXPECT_EQ(e["nodeName"], "steward-node");
    EXPECT_EQ(e["targetRef"]["kind"], "Pod");
    auto pod = Get("pods", "test", S(e, "targetRef.name"));
    ASSERT_TRUE(pod.has_value());
    EXPECT_EQ(e["addresses"][0], (*pod)["status"]["podIP"]);
    EXPECT_EQ(e["targetRef"]["uid"], (*pod)["metadata"]["uid"]);
  }

  ASSERT_TRUE(WaitFor([&] {
    auto ep = Get("endpoints", "test", "web");
    return ep && ep->contains("subsets") && (*ep)["subsets"][0]["addresses"].size() == 2;
  }));
  auto ep = *Get("endpoints", "test", "web");
  EXPECT_EQ(ep["subsets"][0]["ports"][0]["port"], 8080);
  EXPECT_EQ(ep["subsets"][0]["ports"][0]["name"], "web");
  EXPECT_FALSE(ep["subsets"][0].contains("notReadyAddresses"));
  EXPECT_EQ(ep["metadata"]["labels"]["team"], "a");
}

TEST_F(EndpointsTest, ConditionsFollowPodsThroughTermination) {
  Profile p = InstantProfile();
  p.pod_termination = {std::chrono::milliseconds(600), std::chrono::milliseconds(0)};
  p.pod_ready = {std::chrono::milliseconds(200), std::chrono::milliseconds(0)};
  StartCluster(p);
  MustCreate("services", "test", ServiceObj("web", "web"));
  MustCreate("pods", "test", PodObj("a", "nginx", {{"app", "web"}}));
  // Running but not ready yet: present, not ready, not serving.
  ASSERT_TRUE(WaitFor([&] {
    Json e = EndpointFor("web", "a");
    return !e.is_null() && e["conditions"]["ready"] == false;
  }));
  {
    Json e = EndpointFor("web", "a");
    EXPECT_EQ(e["conditions"]["serving"], false);
    EXPECT_EQ(e["conditions"]["terminating"], false);
  }
  ASSERT_TRUE(WaitFor([&] {
    auto ep = Get("endpoints", "test", "web");
    const Json* nr = ep ? FindPath(*ep, "subsets") : nullptr;
    return nr != nullptr && (*nr)[0].contains("notReadyAddresses") &&
           (*nr)[0]["notReadyAddresses"].size() == 1 && !(*nr)[0].contains("addresses");
  }));
  ASSERT_TRUE(WaitFor([&] {
    Json e = EndpointFor("web", "a");
    return !e.is_null() && e["conditions"]["ready"] == true;
  }));
  ASSERT_TRUE(api_->Delete(Type("pods"), "test", "a").ok());
  ASSERT_TRUE(WaitFor([&] {
    Json e = EndpointFor("web", "a");
    auto ep = Get("endpoints", "test", "web");
    return !e.is_null() && e["conditions"]["terminating"] == true && ep && !ep->contains("subsets");
  }));
  {
    Json e = EndpointFor("web", "a");
    EXPECT_EQ(e["conditions"]["ready"], false);
    // Still terminating; the Endpoints object (checked above) drops terminating pods.
    EXPECT_TRUE(Get("pods", "test", "a").has_value());
  }
  ASSERT_TRUE(WaitFor([&] { return SliceEndpoints("web").empty(); }));
  EXPECT_FALSE(Get("pods", "test", "a").has_value());
  // The placeholder slice stays.
  EXPECT_THAT(Slices("web"), SizeIs(1));
}

TEST_F(EndpointsTest, ServiceWithoutPodsHasPlaceholderAndGoesAway) {
  StartCluster();
  MustCreate("services", "test", ServiceObj("lonely", "nothing"));
  ASSERT_TRUE(WaitFor([&] {
    return Slices("lonely").size() == 1 && Get("endpoints", "test", "lonely").has_value();
  }));
  EXPECT_TRUE(SliceEndpoints("lonely").empty());
  EXPECT_FALSE(Get("endpoints", "test", "lonely")->contains("subsets"));
  ASSERT_TRUE(api_->Delete(Type("services"), "test", "lonely").ok());
  ASSERT_TRUE(WaitFor([&] {
    return !Get("services", "test", "lonely").has_value() &&
           !Get("endpoints", "test", "lonely").has_value() && Slices("lonely").empty();
  }));
}

TEST_F(EndpointsTest, LabelChangeMovesPodOutOfService) {
  StartCluster();
  MustCreate("services", "test", ServiceObj("web", "web"));
  MustCreate("pods", "test", PodObj("a", "nginx", {{"app", "web"}}));
  ASSERT_TRUE(WaitFor([&] { return SliceEndpoints("web").size() == 1; }));
  MustModify("pods", "test", "a", [](Json& o) { o["metadata"]["labels"]["app"] = "other"; });
  ASSERT_TRUE(WaitFor([&] { return SliceEndpoints("web").empty(); }));
}

TEST_F(EndpointsTest, NumericTargetPortAndSelectorlessService) {
  StartCluster();
  Json svc = ServiceObj("num", "web");
  svc["spec"]["ports"][0]["targetPort"] = 9090;
  MustCreate("services", "test", svc);
  Json manual = ServiceObj("manual", "web");
  manual["spec"].erase("selector");
  MustCreate("services", "test", manual);
  MustCreate("pods", "test", PodObj("a", "nginx", {{"app", "web"}}));
  ASSERT_TRUE(WaitFor([&] { return SliceEndpoints("num").size() == 1; }));
  EXPECT_EQ(Slices("num")[0]["ports"][0]["port"], 9090);
  EXPECT_TRUE(Slices("manual").empty());
  EXPECT_FALSE(Get("endpoints", "test", "manual").has_value());
}

}  // namespace
}  // namespace steward::cluster::testing
