// ResourceType: API versions, request paths and the named kinds.
#include "kube/client/resource.h"

#include <gtest/gtest.h>

namespace steward::kube {
namespace {

TEST(ResourceTypeTest, CoreGroupPaths) {
  const auto& cm = ResourceType::ConfigMap();
  EXPECT_EQ(cm.ApiVersion(), "v1");
  EXPECT_EQ(cm.GroupResource(), "configmaps");
  EXPECT_EQ(cm.Path("default"), "/api/v1/namespaces/default/configmaps");
  EXPECT_EQ(cm.Path("default", "cm"), "/api/v1/namespaces/default/configmaps/cm");
  EXPECT_EQ(cm.Path(""), "/api/v1/configmaps");  // all namespaces
  EXPECT_EQ(ResourceType::Pod().Path("ns", "p", "status"), "/api/v1/namespaces/ns/pods/p/status");
}

TEST(ResourceTypeTest, NamedGroupPaths) {
  const auto& d = ResourceType::Deployment();
  EXPECT_EQ(d.ApiVersion(), "apps/v1");
  EXPECT_EQ(d.GroupResource(), "deployments.apps");
  EXPECT_EQ(d.Path("a", "web", "scale"), "/apis/apps/v1/namespaces/a/deployments/web/scale");
  EXPECT_EQ(ResourceType::Ingress().Path("x"), "/apis/networking.k8s.io/v1/namespaces/x/ingresses");
  EXPECT_EQ(ResourceType::EndpointSlice().Path(""), "/apis/discovery.k8s.io/v1/endpointslices");
  EXPECT_EQ(ResourceType::Ingress().GroupResource(), "ingresses.networking.k8s.io");
}

TEST(ResourceTypeTest, ClusterScopedKindsIgnoreTheNamespace) {
  const auto& ns = ResourceType::Namespace();
  EXPECT_FALSE(ns.namespaced);
  EXPECT_EQ(ns.Path("ignored", "team-a"), "/api/v1/namespaces/team-a");
  EXPECT_EQ(ns.Path("", "team-a", "status"), "/api/v1/namespaces/team-a/status");
  ResourceType cluster_role{"rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole",
                            false};
  EXPECT_EQ(cluster_role.Path("default", "admin"),
            "/apis/rbac.authorization.k8s.io/v1/clusterroles/admin");
}

TEST(ResourceTypeTest, SegmentsArePercentEncoded) {
  const auto& cm = ResourceType::ConfigMap();
  EXPECT_EQ(cm.Path("a b", "x/y?z#%"), "/api/v1/namespaces/a%20b/configmaps/x%2Fy%3Fz%23%25");
  // Unreserved characters stay as they are.
  EXPECT_EQ(cm.Path("ns-1", "a.b_c~d"), "/api/v1/namespaces/ns-1/configmaps/a.b_c~d");
}

TEST(ResourceTypeTest, NamedKindsHaveTheirApiCoordinates) {
  struct Case {
    const ResourceType& type;
    const char* api_version;
    const char* resource;
    const char* kind;
    bool namespaced;
  };
  const Case cases[] = {
      {ResourceType::Namespace(), "v1", "namespaces", "Namespace", false},
      {ResourceType::Secret(), "v1", "secrets", "Secret", true},
      {ResourceType::ConfigMap(), "v1", "configmaps", "ConfigMap", true},
      {ResourceType::PersistentVolumeClaim(), "v1", "persistentvolumeclaims",
       "PersistentVolumeClaim", true},
      {ResourceType::Service(), "v1", "services", "Service", true},
      {ResourceType::Pod(), "v1", "pods", "Pod", true},
      {ResourceType::Event(), "v1", "events", "Event", true},
      {ResourceType::Deployment(), "apps/v1", "deployments", "Deployment", true},
      {ResourceType::ReplicaSet(), "apps/v1", "replicasets", "ReplicaSet", true},
      {ResourceType::Ingress(), "networking.k8s.io/v1", "ingresses", "Ingress", true},
      {ResourceType::EndpointSlice(), "discovery.k8s.io/v1", "endpointslices", "EndpointSlice",
       true},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(c.type.ApiVersion(), c.api_version) << c.kind;
    EXPECT_EQ(c.type.resource, c.resource);
    EXPECT_EQ(c.type.kind, c.kind);
    EXPECT_EQ(c.type.namespaced, c.namespaced) << c.kind;
  }
  EXPECT_EQ(ResourceType::Pod(), ResourceType::Pod());
  EXPECT_FALSE(ResourceType::Pod() == ResourceType::Service());
}

}  // namespace
}  // namespace steward::kube
