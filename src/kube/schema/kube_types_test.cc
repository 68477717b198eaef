#include "kube/schema/kube_types.h"

#include <gtest/gtest.h>

namespace steward::kube::schema {
namespace {

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

}  // namespace
}  // namespace steward::kube::schema
