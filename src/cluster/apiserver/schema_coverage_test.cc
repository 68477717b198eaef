// The shared type table (kube/schema/kube_types.h) against what the embedded cluster serves.
#include <gtest/gtest.h>

#include "cluster/apiserver/openapi_schemas.h"
#include "cluster/model/resource_types.h"
#include "kube/schema/kube_types.h"

namespace steward::cluster {
namespace {

using kube::schema::FindMessage;
using kube::schema::Message;
using kube::schema::MessageForKind;

TEST(SchemaCoverageTest, EveryServedKindHasAMessage) {
  for (const ResourceType& rt : AllResourceTypes()) {
    const Message* m = MessageForKind(rt.ApiVersion(), rt.kind);
    ASSERT_NE(m, nullptr) << rt.kind;
    EXPECT_NE(m->ByJsonName("metadata"), nullptr) << rt.kind;
  }
  EXPECT_NE(MessageForKind("autoscaling/v1", "Scale"), nullptr);
  EXPECT_NE(MessageForKind("meta.k8s.io/v1", "DeleteOptions"), nullptr);
  EXPECT_EQ(MessageForKind("apps/v1beta1", "Deployment"), nullptr);
  EXPECT_EQ(MessageForKind("v1", "Node"), nullptr);
}

// The hand-written OpenAPI schemas (openapi_schemas.cc) may leave fields out, but every field
// they publish must exist in Kubernetes: a typo there would mislead kubectl explain and apply.
TEST(SchemaCoverageTest, OpenApiSchemasOnlyPublishRealFields) {
  const Json& defs = OpenApiDefinitions(OpenApiFlavor::kV3);
  int checked = 0;
  for (const auto& [name, def] : defs.items()) {
    std::string table_name;
    for (const auto& [prefix, package] : std::vector<std::pair<std::string, std::string>>{
             {"io.k8s.api.core.v1.", "core."},
             {"io.k8s.api.apps.v1.", "apps."},
             {"io.k8s.api.networking.v1.", "networking."},
             {"io.k8s.api.discovery.v1.", "discovery."},
             {"io.k8s.api.coordination.v1.", "coordination."},
             {"io.k8s.api.autoscaling.v1.", "autoscaling."},
             {"io.k8s.apimachinery.pkg.apis.meta.v1.", "meta."}}) {
      if (name.rfind(prefix, 0) == 0) table_name = package + name.substr(prefix.size());
    }
    const Message* m = FindMessage(table_name);
    if (m == nullptr || !def.contains("properties")) continue;
    bool is_kind = def.contains("x-kubernetes-group-version-kind");
    for (const auto& [property, schema] : def["properties"].items()) {
      if (is_kind && (property == "apiVersion" || property == "kind")) continue;
      EXPECT_NE(m->ByJsonName(property), nullptr) << name << "." << property;
      ++checked;
    }
  }
  EXPECT_GT(checked, 500);
}

}  // namespace
}  // namespace steward::cluster
