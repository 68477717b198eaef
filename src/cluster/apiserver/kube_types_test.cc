#include "cluster/apiserver/kube_types.h"

#include <gtest/gtest.h>

#include "cluster/apiserver/openapi_schemas.h"
#include "cluster/model/resource_types.h"

namespace steward::cluster::kube {
namespace {

TEST(KubeTypesTest, EveryServedKindHasAMessage) {
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

TEST(KubeTypesTest, FieldsCarryNumbersPointernessAndMaps) {
  const Message* spec = FindMessage("apps.DeploymentSpec");
  ASSERT_NE(spec, nullptr);
  const Field* replicas = spec->ByJsonName("replicas");
  ASSERT_NE(replicas, nullptr);
  EXPECT_EQ(replicas->number, 1);
  EXPECT_EQ(replicas->kind, ValueKind::kInt32);
  EXPECT_TRUE(replicas->pointer);  // *int32: 0 is meaningful
  const Field* paused = spec->ByJsonName("paused");
  ASSERT_NE(paused, nullptr);
  EXPECT_FALSE(paused->pointer);
  const Field* strategy = spec->ByNumber(4);
  ASSERT_NE(strategy, nullptr);
  EXPECT_EQ(strategy->name, "strategy");
  EXPECT_EQ(strategy->message, FindMessage("apps.DeploymentStrategy"));

  const Field* data = FindMessage("core.ConfigMap")->ByJsonName("data");
  ASSERT_NE(data, nullptr);
  EXPECT_TRUE(data->map);
  EXPECT_FALSE(data->repeated);
  EXPECT_EQ(data->kind, ValueKind::kString);
  const Field* limits = FindMessage("core.ResourceRequirements")->ByJsonName("limits");
  ASSERT_NE(limits, nullptr);
  EXPECT_TRUE(limits->map);
  EXPECT_EQ(limits->kind, ValueKind::kQuantity);
  const Field* containers = FindMessage("core.PodSpec")->ByJsonName("containers");
  ASSERT_NE(containers, nullptr);
  EXPECT_TRUE(containers->repeated);
  EXPECT_EQ(containers->message, FindMessage("core.Container"));
}

TEST(KubeTypesTest, InlineFieldsAreSeenThroughByJsonName) {
  // Volume embeds VolumeSource, Probe embeds ProbeHandler, ConfigMapKeySelector embeds
  // LocalObjectReference: their fields appear in the parent's JSON object.
  const Message* volume = FindMessage("core.Volume");
  ASSERT_NE(volume, nullptr);
  const Field* empty_dir = volume->ByJsonName("emptyDir");
  ASSERT_NE(empty_dir, nullptr);
  EXPECT_EQ(empty_dir->message, FindMessage("core.EmptyDirVolumeSource"));
  EXPECT_EQ(volume->ByJsonName("volumeSource"), nullptr);
  EXPECT_NE(FindMessage("core.Probe")->ByJsonName("httpGet"), nullptr);
  EXPECT_NE(FindMessage("core.ConfigMapKeySelector")->ByJsonName("name"), nullptr);
  EXPECT_NE(FindMessage("networking.IngressRule")->ByJsonName("http"), nullptr);
  EXPECT_EQ(FindMessage("core.Volume")->ByJsonName("emptydir"), nullptr);
}

// The hand-written OpenAPI schemas (openapi_schemas.cc) may leave fields out, but every field
// they publish must exist in Kubernetes: a typo there would mislead kubectl explain and apply.
TEST(KubeTypesTest, OpenApiSchemasOnlyPublishRealFields) {
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
}  // namespace steward::cluster::kube
