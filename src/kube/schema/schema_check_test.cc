#include "kube/schema/schema_check.h"

#include <gtest/gtest.h>

namespace steward::kube::schema {
namespace {

Json J(std::string_view text) { return Json::parse(text); }

std::string Check(std::string_view type, std::string_view json) {
  auto m = CheckValue(*FindMessage(type), J(json), "x");
  return m ? m->path + ": " + m->what : "";
}

TEST(SchemaCheckTest, FitsWhatTheGoTypeDecodes) {
  EXPECT_EQ(Check("core.PodSecurityContext",
                  R"({"runAsUser":1000,"fsGroup":null,"supplementalGroups":[1,2],
                      "sysctls":[{"name":"a","value":"b"}],"seccompProfile":{"type":"RuntimeDefault"}})"),
            "");
  // Inline fields (Probe embeds ProbeHandler), IntOrString as number or string, maps.
  EXPECT_EQ(Check("core.Probe", R"({"httpGet":{"port":"web"},"tcpSocket":{"port":1}})"), "");
  EXPECT_EQ(Check("core.ResourceRequirements", R"({"limits":{"cpu":"1","memory":1024}})"), "");
}

TEST(SchemaCheckTest, NamesTheFirstUnknownFieldOrWrongType) {
  EXPECT_EQ(Check("core.PodSecurityContext", R"({"a":1})"), "x.a: unknown field");
  EXPECT_EQ(Check("core.PodSecurityContext", R"({"seccompProfile":{"tpye":"x"}})"),
            "x.seccompProfile.tpye: unknown field");
  EXPECT_EQ(Check("core.PodSecurityContext", R"({"supplementalGroups":[1,"2"]})"),
            "x.supplementalGroups[1]: must be an integer (int64), got string");
  EXPECT_EQ(Check("core.PodSecurityContext", R"({"runAsUser":1.0})"),
            "x.runAsUser: must be an integer (int64), got number");
  EXPECT_EQ(Check("core.PodSecurityContext", R"({"runAsNonRoot":1})"),
            "x.runAsNonRoot: must be a boolean, got integer");
  EXPECT_EQ(Check("core.PodSecurityContext", R"({"sysctls":{"name":"a"}})"),
            "x.sysctls: must be an array, got object");
  EXPECT_EQ(Check("core.PodSecurityContext", R"({"seLinuxOptions":"s0"})"),
            "x.seLinuxOptions: must be an object, got string");
  EXPECT_EQ(Check("core.Probe", R"({"tcpSocket":{"port":[1]}})"),
            "x.tcpSocket.port: must be an integer or a string, got array");
  EXPECT_EQ(Check("core.Probe", R"({"periodSeconds":2147483648})"),
            "x.periodSeconds: is out of range for int32");
  EXPECT_EQ(
      Check("core.ResourceRequirements", R"({"limits":{"cpu":true}})"),
      R"(x.limits["cpu"]: must be a quantity (a string such as "100m" or a number), got boolean)");
  EXPECT_EQ(Check("core.PodSecurityContext", R"({"run as":1})"), R"(x["run as"]: unknown field)");
  EXPECT_EQ(Check("core.PodSecurityContext", "[]"), "x: must be an object, got array");
}

TEST(SchemaCheckTest, ArraysOfMessages) {
  const Message& t = *FindMessage("core.Toleration");
  EXPECT_FALSE(CheckArray(t, J(R"([{"key":"a","tolerationSeconds":5}])"), "t").has_value());
  auto m = CheckArray(t, J(R"([{"key":"a"},{"value":1}])"), "t");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->path, "t[1].value");
  EXPECT_EQ(m->what, "must be a string, got integer");
  m = CheckArray(t, J(R"({"key":"a"})"), "t");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->what, "must be an array, got object");
}

}  // namespace
}  // namespace steward::kube::schema
