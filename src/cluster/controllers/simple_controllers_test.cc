#include <gtest/gtest.h>

#include "cluster/controllers/test_cluster.h"

namespace steward::cluster::testing {
namespace {

class SimpleControllersTest : public ClusterTest {};

TEST_F(SimpleControllersTest, DefaultIngressClassExists) {
  StartCluster();
  auto ic = Get("ingressclasses.networking.k8s.io", "", "steward");
  ASSERT_TRUE(ic.has_value());
  EXPECT_EQ((*ic)["spec"]["controller"], "steward.io/ingress-controller");
  EXPECT_EQ((*ic)["metadata"]["annotations"]["ingressclass.kubernetes.io/is-default-class"],
            "true");
}

TEST_F(SimpleControllersTest, IngressGetsAddressAfterDelay) {
  Profile p = InstantProfile();
  p.load_balancer = Fixed(200);
  p.load_balancer_ip = "192.0.2.7";
  StartCluster(p);
  auto start = std::chrono::steady_clock::now();
  MustCreate("ingresses.networking.k8s.io", "test", IngressObj("web"));
  ASSERT_TRUE(WaitFor([&] {
    auto ing = Get("ingresses.networking.k8s.io", "test", "web");
    const Json* lb = FindPath(*ing, "status.loadBalancer.ingress");
    return lb != nullptr && lb->is_array() && !lb->empty();
  }));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
  auto ing = *Get("ingresses.networking.k8s.io", "test", "web");
  EXPECT_EQ(ing["status"]["loadBalancer"]["ingress"], Json::array({{{"ip", "192.0.2.7"}}}));
}

TEST_F(SimpleControllersTest, ServiceAndIngressFinalizersRemovedAfterDelay) {
  Profile p = InstantProfile();
  p.service_finalizer = Fixed(300);
  p.ingress_finalizer = Fixed(300);
  StartCluster(p);
  MustCreate("services", "test", ServiceObj("web", "web"));
  MustCreate("ingresses.networking.k8s.io", "test", IngressObj("web"));
  auto start = std::chrono::steady_clock::now();
  auto svc = api_->Delete(Type("services"), "test", "web");
  auto ing = api_->Delete(Type("ingresses.networking.k8s.io"), "test", "web");
  ASSERT_TRUE(svc.ok() && ing.ok());
  EXPECT_FALSE(S(*svc, "metadata.deletionTimestamp").empty());
  EXPECT_FALSE(S(*ing, "metadata.deletionTimestamp").empty());
  ASSERT_TRUE(WaitFor([&] {
    return !Get("services", "test", "web").has_value() &&
           !Get("ingresses.networking.k8s.io", "test", "web").has_value();
  }));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(300));
}

TEST_F(SimpleControllersTest, PvcBindsAndIsProtectedWhileMounted) {
  Profile p = InstantProfile();
  p.pvc_binding = Fixed(100);
  StartCluster(p);
  Json pvc = MustCreate("persistentvolumeclaims", "test", PvcObj("data"));
  ASSERT_TRUE(WaitFor([&] {
    return S(*Get("persistentvolumeclaims", "test", "data"), "status.phase") == "Bound";
  }));
  auto bound = *Get("persistentvolumeclaims", "test", "data");
  EXPECT_EQ(S(bound, "spec.volumeName"), "pvc-" + S(pvc, "metadata.uid"));
  EXPECT_EQ(bound["status"]["capacity"]["storage"], "1Gi");
  EXPECT_EQ(bound["status"]["accessModes"], Json::array({"ReadWriteOnce"}));

  Json pod = PodObj("user", "nginx");
  pod["spec"]["volumes"] =
      Json::array({{{"name", "d"}, {"persistentVolumeClaim", {{"claimName", "data"}}}}});
  MustCreate("pods", "test", pod);
  ASSERT_TRUE(WaitFor([&] { return PodReady(*Get("pods", "test", "user")); }));
  ASSERT_TRUE(api_->Delete(Type("persistentvolumeclaims"), "test", "data").ok());
  // Every controller is instant: whatever it was going to do, it has done once these settle.
  ASSERT_FALSE(WaitFor([&] { return !Get("persistentvolumeclaims", "test", "data"); }, 300ms));
  auto held = Get("persistentvolumeclaims", "test", "data");
  ASSERT_TRUE(held.has_value());
  EXPECT_FALSE(S(*held, "metadata.deletionTimestamp").empty());
  ASSERT_TRUE(api_->Delete(Type("pods"), "test", "user").ok());
  ASSERT_TRUE(WaitFor([&] { return !Get("persistentvolumeclaims", "test", "data"); }));
}

TEST_F(SimpleControllersTest, NamespaceDeletionRemovesEverything) {
  Profile p = InstantProfile();
  p.pod_termination = Fixed(200);
  StartCluster(p);
  MustCreate("namespaces", "",
             Json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "proj"}}}});
  MustCreate("deployments.apps", "proj", DeploymentObj("web", "nginx", 2));
  MustCreate("services", "proj", ServiceObj("web", "web"));
  MustCreate("persistentvolumeclaims", "proj", PvcObj("data"));
  MustCreate("configmaps", "proj", Json{{"metadata", {{"name", "cfg"}}}, {"data", {{"a", "b"}}}});
  ASSERT_TRUE(WaitFor([&] {
    auto d = Get("deployments.apps", "proj", "web");
    return d && I(*d, "status.availableReplicas") == 2 &&
           !List("endpointslices.discovery.k8s.io", "proj").empty();
  }));
  auto del = api_->Delete(Type("namespaces"), "", "proj");
  ASSERT_TRUE(del.ok());
  ASSERT_TRUE(WaitFor([&] {
    auto ns = Get("namespaces", "", "proj");
    return ns && CondIs(*ns, "NamespaceContentRemaining", "True", "SomeResourcesRemain");
  }));
  EXPECT_EQ(S(*Get("namespaces", "", "proj"), "status.phase"), "Terminating");
  ASSERT_TRUE(WaitFor([&] { return !Get("namespaces", "", "proj").has_value(); }));
  for (const auto& rt : AllResourceTypes()) {
    if (!rt.namespaced) continue;
    EXPECT_TRUE(storage_->List(rt.GroupResource(), "proj").items.empty()) << rt.GroupResource();
  }
}

}  // namespace
}  // namespace steward::cluster::testing
