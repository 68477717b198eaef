#include <gtest/gtest.h>

#include <string>

#include "engine/model/project.h"
#include "engine/model/test_util.h"

namespace steward::engine {
namespace {

using testing::IsInvalid;
using testing::J;

ProjectSpec Spec(const std::string& rest) {
  auto r = ParseProjectSpec(J(R"({"team":"t")" + (rest.empty() ? "" : "," + rest) + "}"));
  EXPECT_TRUE(r.ok()) << r.error().ToString();
  return r.ok() ? *r : ProjectSpec{};
}

struct Refusal {
  const char* name;
  std::string spec;
  std::string field;
  std::string key;  // the policy key the message must name
};

std::ostream& operator<<(std::ostream& os, const Refusal& r) { return os << r.name; }

class DefaultPolicyTest : public ::testing::TestWithParam<Refusal> {};

TEST_P(DefaultPolicyTest, RefusesNamingFieldAndKey) {
  const Refusal& c = GetParam();
  Status s = CheckSpecPolicy(SpecPolicy{}, Spec(c.spec));
  EXPECT_TRUE(IsInvalid(s, c.field, "engine.policy." + c.key + ": false")) << c.spec;
}

const Refusal kRefusals[] = {
    {"Privileged", R"("containerSecurityContext":{"privileged":true})",
     "spec.containerSecurityContext.privileged", "allowPrivileged"},
    {"PrivilegeEscalation", R"("containerSecurityContext":{"allowPrivilegeEscalation":true})",
     "spec.containerSecurityContext.allowPrivilegeEscalation", "allowPrivileged"},
    {"SysAdmin", R"("containerSecurityContext":{"capabilities":{"add":["CHOWN","SYS_ADMIN"]}})",
     "spec.containerSecurityContext.capabilities.add[1]", "allowPrivileged"},
    {"CapPrefixed", R"("containerSecurityContext":{"capabilities":{"add":["CAP_NET_ADMIN"]}})",
     "spec.containerSecurityContext.capabilities.add[0]", "allowPrivileged"},
    {"UnmaskedProc", R"("containerSecurityContext":{"procMount":"Unmasked"})",
     "spec.containerSecurityContext.procMount", "allowPrivileged"},
    {"HostProcess", R"("containerSecurityContext":{"windowsOptions":{"hostProcess":true}})",
     "spec.containerSecurityContext.windowsOptions.hostProcess", "allowPrivileged"},
    {"PodSeccompUnconfined", R"("podSecurityContext":{"seccompProfile":{"type":"Unconfined"}})",
     "spec.podSecurityContext.seccompProfile.type", "allowPrivileged"},
    {"ContainerAppArmorUnconfined",
     R"("containerSecurityContext":{"appArmorProfile":{"type":"Unconfined"}})",
     "spec.containerSecurityContext.appArmorProfile.type", "allowPrivileged"},
    {"PodRoot", R"("podSecurityContext":{"runAsUser":0})", "spec.podSecurityContext.runAsUser",
     "allowRunAsRoot"},
    {"ContainerRoot", R"("containerSecurityContext":{"runAsUser":0})",
     "spec.containerSecurityContext.runAsUser", "allowRunAsRoot"},
    {"PodRunAsNonRootFalse", R"("podSecurityContext":{"runAsNonRoot":false})",
     "spec.podSecurityContext.runAsNonRoot", "allowRunAsRoot"},
    {"ContainerRunAsNonRootFalse", R"("containerSecurityContext":{"runAsNonRoot":false})",
     "spec.containerSecurityContext.runAsNonRoot", "allowRunAsRoot"},
};

INSTANTIATE_TEST_SUITE_P(Rules, DefaultPolicyTest, ::testing::ValuesIn(kRefusals),
                         [](const ::testing::TestParamInfo<Refusal>& i) {
                           return std::string(i.param.name);
                         });

// FlowFuse's driver-k8s defaults (templates.js) and its OpenShift variant (empty contexts), plus
// what hardened specs usually set, pass the default policy.
TEST(SpecPolicyTest, DefaultPolicyAcceptsFlowFuseAndHardenedSpecs) {
  for (const std::string& rest : {
           std::string(R"("podSecurityContext":{"runAsUser":1000,"runAsGroup":1000,"fsGroup":1000},
               "containerSecurityContext":{"allowPrivilegeEscalation":false})"),
           std::string(R"("podSecurityContext":{},"containerSecurityContext":{})"),
           std::string(R"("podSecurityContext":{"runAsNonRoot":true,"runAsUser":1001,
               "seccompProfile":{"type":"RuntimeDefault"}},
               "containerSecurityContext":{"privileged":false,"readOnlyRootFilesystem":true,
               "capabilities":{"drop":["ALL"],"add":["NET_BIND_SERVICE"]}})"),
           std::string(
               R"("annotations":{"example.com/a":"1"},"ingress":{"annotations":{"x/y":"z"}})"),
           std::string(""),
       }) {
    EXPECT_TRUE(CheckSpecPolicy(SpecPolicy{}, Spec(rest)).ok()) << rest;
  }
}

TEST(SpecPolicyTest, OperatorCanAllowPrivilegedAndRoot) {
  const ProjectSpec spec = Spec(
      R"("podSecurityContext":{"runAsUser":0},
         "containerSecurityContext":{"privileged":true,"capabilities":{"add":["SYS_ADMIN"]}})");
  SpecPolicy privileged_only;
  privileged_only.allow_privileged = true;
  EXPECT_TRUE(IsInvalid(CheckSpecPolicy(privileged_only, spec), "spec.podSecurityContext.runAsUser",
                        "allowRunAsRoot"));
  SpecPolicy root_only;
  root_only.allow_run_as_root = true;
  EXPECT_TRUE(IsInvalid(CheckSpecPolicy(root_only, spec),
                        "spec.containerSecurityContext.privileged", "allowPrivileged"));
  SpecPolicy both;
  both.allow_privileged = true;
  both.allow_run_as_root = true;
  EXPECT_TRUE(CheckSpecPolicy(both, spec).ok());
}

TEST(SpecPolicyTest, AnnotationPrefixesRestrictBothAnnotationMaps) {
  SpecPolicy policy;
  policy.annotation_prefixes = std::vector<std::string>{"example.com/", "team."};
  EXPECT_TRUE(CheckSpecPolicy(policy, Spec(R"("annotations":{"example.com/a":"1","team.x/b":"2"},
      "ingress":{"annotations":{"example.com/c":"3"}})"))
                  .ok());
  EXPECT_TRUE(IsInvalid(CheckSpecPolicy(policy, Spec(R"("annotations":{"other.io/a":"1"})")),
                        R"(spec.annotations["other.io/a"])", "allowedAnnotationPrefixes"));
  EXPECT_TRUE(
      IsInvalid(CheckSpecPolicy(policy, Spec(R"("ingress":{"annotations":{
                          "nginx.ingress.kubernetes.io/configuration-snippet":"x"}})")),
                R"(spec.ingress.annotations["nginx.ingress.kubernetes.io/configuration-snippet"])",
                "allowedAnnotationPrefixes"));
  policy.annotation_prefixes = std::vector<std::string>{};
  EXPECT_TRUE(IsInvalid(CheckSpecPolicy(policy, Spec(R"("annotations":{"a":"1"})")),
                        R"(spec.annotations["a"])", "allowedAnnotationPrefixes"));
  EXPECT_TRUE(CheckSpecPolicy(policy, Spec("")).ok());
}

}  // namespace
}  // namespace steward::engine
