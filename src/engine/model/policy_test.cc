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

// The policy with the config's other defaults.
Status Check(const SpecPolicy& policy, const ProjectSpec& spec) {
  EngineConfig config;
  config.policy = policy;
  return CheckSpecPolicy(config, spec);
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
  Status s = Check(SpecPolicy{}, Spec(c.spec));
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
    // Pod Security admission compares capability names as written: CAP_CHOWN is not CHOWN.
    {"CapPrefixedBaseline", R"("containerSecurityContext":{"capabilities":{"add":["CAP_CHOWN"]}})",
     "spec.containerSecurityContext.capabilities.add[0]", "allowPrivileged"},
    {"UnmaskedProc", R"("containerSecurityContext":{"procMount":"Unmasked"})",
     "spec.containerSecurityContext.procMount", "allowPrivileged"},
    {"UnknownProcMount", R"("containerSecurityContext":{"procMount":"Host"})",
     "spec.containerSecurityContext.procMount", "allowPrivileged"},
    {"HostProcess", R"("containerSecurityContext":{"windowsOptions":{"hostProcess":true}})",
     "spec.containerSecurityContext.windowsOptions.hostProcess", "allowPrivileged"},
    {"PodHostProcess", R"("podSecurityContext":{"windowsOptions":{"hostProcess":true}})",
     "spec.podSecurityContext.windowsOptions.hostProcess", "allowPrivileged"},
    {"PodSeLinuxSpcT", R"("podSecurityContext":{"seLinuxOptions":{"type":"spc_t"}})",
     "spec.podSecurityContext.seLinuxOptions.type", "allowPrivileged"},
    {"ContainerSeLinuxSpcT", R"("containerSecurityContext":{"seLinuxOptions":{"type":"spc_t"}})",
     "spec.containerSecurityContext.seLinuxOptions.type", "allowPrivileged"},
    {"PodSeLinuxUser", R"("podSecurityContext":{"seLinuxOptions":{"user":"system_u"}})",
     "spec.podSecurityContext.seLinuxOptions.user", "allowPrivileged"},
    {"PodSeLinuxRole",
     R"("podSecurityContext":{"seLinuxOptions":{"type":"container_t","role":"system_r"}})",
     "spec.podSecurityContext.seLinuxOptions.role", "allowPrivileged"},
    {"ContainerSeLinuxUser",
     R"("containerSecurityContext":{"seLinuxOptions":{"user":"unconfined_u"}})",
     "spec.containerSecurityContext.seLinuxOptions.user", "allowPrivileged"},
    {"ContainerSeLinuxRole", R"("containerSecurityContext":{"seLinuxOptions":{"role":"object_r"}})",
     "spec.containerSecurityContext.seLinuxOptions.role", "allowPrivileged"},
    {"PodSeccompUnconfined", R"("podSecurityContext":{"seccompProfile":{"type":"Unconfined"}})",
     "spec.podSecurityContext.seccompProfile.type", "allowPrivileged"},
    {"ContainerSeccompUnconfined",
     R"("containerSecurityContext":{"seccompProfile":{"type":"Unconfined"}})",
     "spec.containerSecurityContext.seccompProfile.type", "allowPrivileged"},
    {"PodAppArmorUnconfined", R"("podSecurityContext":{"appArmorProfile":{"type":"Unconfined"}})",
     "spec.podSecurityContext.appArmorProfile.type", "allowPrivileged"},
    {"ContainerAppArmorUnconfined",
     R"("containerSecurityContext":{"appArmorProfile":{"type":"Unconfined"}})",
     "spec.containerSecurityContext.appArmorProfile.type", "allowPrivileged"},
    {"SeccompWithoutType", R"("podSecurityContext":{"seccompProfile":{"localhostProfile":"x"}})",
     "spec.podSecurityContext.seccompProfile.type", "allowPrivileged"},
    {"UnsafeSysctl", R"("podSecurityContext":{"sysctls":[{"name":"kernel.msgmax","value":"1"}]})",
     "spec.podSecurityContext.sysctls[0].name", "allowPrivileged"},
    {"UnsafeSysctlAfterSafe", R"("podSecurityContext":{"sysctls":[
         {"name":"net.ipv4.tcp_syncookies","value":"1"},{"name":"vm.swappiness","value":"1"}]})",
     "spec.podSecurityContext.sysctls[1].name", "allowPrivileged"},
    {"LivenessProbeHost",
     R"("probes":{"livenessProbe":{"httpGet":{"host":"169.254.169.254","port":80}}})",
     "spec.probes.livenessProbe.httpGet.host", "allowPrivileged"},
    {"ReadinessProbeHost",
     R"("probes":{"readinessProbe":{"tcpSocket":{"host":"10.0.0.1","port":22}}})",
     "spec.probes.readinessProbe.tcpSocket.host", "allowPrivileged"},
    {"StartupProbeHost", R"("probes":{"startupProbe":{"httpGet":{"host":"node","port":10250}}})",
     "spec.probes.startupProbe.httpGet.host", "allowPrivileged"},
    {"AppArmorAnnotation",
     R"("annotations":{"container.apparmor.security.beta.kubernetes.io/node-red":"unconfined"})",
     R"(spec.annotations["container.apparmor.security.beta.kubernetes.io/node-red"])",
     "allowPrivileged"},
    {"SeccompPodAnnotation",
     R"("annotations":{"seccomp.security.alpha.kubernetes.io/pod":"unconfined"})",
     R"(spec.annotations["seccomp.security.alpha.kubernetes.io/pod"])", "allowPrivileged"},
    {"SeccompContainerAnnotation",
     R"("annotations":{"container.seccomp.security.alpha.kubernetes.io/node-red":"unconfined"})",
     R"(spec.annotations["container.seccomp.security.alpha.kubernetes.io/node-red"])",
     "allowPrivileged"},
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
    EXPECT_TRUE(Check(SpecPolicy{}, Spec(rest)).ok()) << rest;
  }
}

// What the baseline level allows of each control it restricts, at pod and container level.
TEST(SpecPolicyTest, DefaultPolicyAcceptsWhatTheBaselineAllows) {
  for (const std::string& rest : {
           // Every SELinux type the baseline allows, and a level (MCS label) of one's own.
           std::string(R"("podSecurityContext":{"seLinuxOptions":{"type":"container_t",
               "level":"s0:c123,c456"}},
               "containerSecurityContext":{"seLinuxOptions":{"type":"container_init_t"}})"),
           std::string(R"("podSecurityContext":{"seLinuxOptions":{"type":"container_kvm_t"}},
               "containerSecurityContext":{"seLinuxOptions":{"type":"container_engine_t"}})"),
           std::string(R"("podSecurityContext":{"seLinuxOptions":{"level":"s0"}},
               "containerSecurityContext":{"seLinuxOptions":{}})"),
           // Host process explicitly off; the masked /proc; confined profiles.
           std::string(R"("podSecurityContext":{"windowsOptions":{"hostProcess":false},
               "appArmorProfile":{"type":"RuntimeDefault"}},
               "containerSecurityContext":{"windowsOptions":{"hostProcess":false},
               "procMount":"Default","seccompProfile":{"type":"Localhost",
               "localhostProfile":"nr.json"},"appArmorProfile":{"type":"Localhost",
               "localhostProfile":"nr"}})"),
           // Every safe sysctl of Kubernetes 1.36.
           std::string(R"("podSecurityContext":{"sysctls":[
               {"name":"kernel.shm_rmid_forced","value":"1"},
               {"name":"net.ipv4.ip_local_port_range","value":"1024 65000"},
               {"name":"net.ipv4.tcp_syncookies","value":"1"},
               {"name":"net.ipv4.ping_group_range","value":"0 1000"},
               {"name":"net.ipv4.ip_unprivileged_port_start","value":"80"},
               {"name":"net.ipv4.ip_local_reserved_ports","value":"8080"},
               {"name":"net.ipv4.tcp_keepalive_time","value":"60"},
               {"name":"net.ipv4.tcp_fin_timeout","value":"30"},
               {"name":"net.ipv4.tcp_keepalive_intvl","value":"10"},
               {"name":"net.ipv4.tcp_keepalive_probes","value":"3"},
               {"name":"net.ipv4.tcp_rmem","value":"4096 87380 6291456"},
               {"name":"net.ipv4.tcp_wmem","value":"4096 16384 4194304"}]})"),
           // Every baseline capability, as written.
           std::string(R"("containerSecurityContext":{"capabilities":{"add":["AUDIT_WRITE",
               "CHOWN","DAC_OVERRIDE","FOWNER","FSETID","KILL","MKNOD","NET_BIND_SERVICE",
               "SETFCAP","SETGID","SETPCAP","SETUID","SYS_CHROOT"]}})"),
           // Probes on the pod itself; the annotations' confined profiles.
           std::string(R"("probes":{"livenessProbe":{"httpGet":{"path":"/","port":1880}},
               "readinessProbe":{"tcpSocket":{"port":1880,"host":""}}})"),
           std::string(R"("annotations":{
               "container.apparmor.security.beta.kubernetes.io/node-red":"runtime/default",
               "container.seccomp.security.alpha.kubernetes.io/node-red":"localhost/nr.json",
               "seccomp.security.alpha.kubernetes.io/pod":"runtime/default"})"),
       }) {
    Status s = Check(SpecPolicy{}, Spec(rest));
    EXPECT_TRUE(s.ok()) << rest << ": " << s.ToString();
  }
}

TEST(SpecPolicyTest, OperatorCanAllowPrivilegedAndRoot) {
  const ProjectSpec spec = Spec(
      R"("podSecurityContext":{"runAsUser":0,"seLinuxOptions":{"type":"spc_t"}},
         "containerSecurityContext":{"privileged":true,"capabilities":{"add":["SYS_ADMIN"]}})");
  SpecPolicy privileged_only;
  privileged_only.allow_privileged = true;
  EXPECT_TRUE(IsInvalid(Check(privileged_only, spec), "spec.podSecurityContext.runAsUser",
                        "allowRunAsRoot"));
  SpecPolicy root_only;
  root_only.allow_run_as_root = true;
  EXPECT_TRUE(IsInvalid(Check(root_only, spec), "spec.podSecurityContext.seLinuxOptions.type",
                        "allowPrivileged"));
  SpecPolicy both;
  both.allow_privileged = true;
  both.allow_run_as_root = true;
  EXPECT_TRUE(Check(both, spec).ok());
}

TEST(SpecPolicyTest, AnnotationPrefixesRestrictBothAnnotationMaps) {
  SpecPolicy policy;
  policy.annotation_prefixes = std::vector<std::string>{"example.com/", "team."};
  EXPECT_TRUE(Check(policy, Spec(R"("annotations":{"example.com/a":"1","team.x/b":"2"},
      "ingress":{"annotations":{"example.com/c":"3"}})"))
                  .ok());
  EXPECT_TRUE(IsInvalid(Check(policy, Spec(R"("annotations":{"other.io/a":"1"})")),
                        R"(spec.annotations["other.io/a"])", "allowedAnnotationPrefixes"));
  EXPECT_TRUE(
      IsInvalid(Check(policy, Spec(R"("ingress":{"annotations":{
                          "nginx.ingress.kubernetes.io/configuration-snippet":"x"}})")),
                R"(spec.ingress.annotations["nginx.ingress.kubernetes.io/configuration-snippet"])",
                "allowedAnnotationPrefixes"));
  policy.annotation_prefixes = std::vector<std::string>{};
  EXPECT_TRUE(IsInvalid(Check(policy, Spec(R"("annotations":{"a":"1"})")),
                        R"(spec.annotations["a"])", "allowedAnnotationPrefixes"));
  EXPECT_TRUE(Check(policy, Spec("")).ok());
}

// ---- level: restricted ----

// A configuration at the restricted level, with defaults that pass it: runAsNonRoot and the
// seccomp profile at pod level, the container's own rules in its context.
EngineConfig Restricted() {
  auto c = ParseEngineConfig(J(R"({"policy":{"level":"restricted"},
      "podSecurityContext":{"runAsNonRoot":true,"runAsUser":1000,"fsGroup":1000,
                            "seccompProfile":{"type":"RuntimeDefault"}},
      "containerSecurityContext":{"allowPrivilegeEscalation":false,
                                  "capabilities":{"drop":["ALL"]}}})"));
  EXPECT_TRUE(c.ok()) << c.error().ToString();
  return c.ok() ? *c : EngineConfig{};
}

class RestrictedPolicyTest : public ::testing::TestWithParam<Refusal> {};

TEST_P(RestrictedPolicyTest, RefusesNamingFieldAndLevel) {
  const Refusal& c = GetParam();
  Status s = CheckSpecPolicy(Restricted(), Spec(c.spec));
  EXPECT_TRUE(IsInvalid(s, c.field, "engine.policy." + c.key)) << c.spec;
}

const Refusal kRestrictedRefusals[] = {
    {"NoPrivilegeEscalationSetting",
     R"("containerSecurityContext":{"capabilities":{"drop":["ALL"]}})",
     "spec.containerSecurityContext.allowPrivilegeEscalation", "level: restricted"},
    {"NoDropAll", R"("containerSecurityContext":{"allowPrivilegeEscalation":false})",
     "spec.containerSecurityContext.capabilities.drop", "level: restricted"},
    {"AddsBaselineCapability", R"("containerSecurityContext":{"allowPrivilegeEscalation":false,
         "capabilities":{"drop":["ALL"],"add":["NET_BIND_SERVICE","CHOWN"]}})",
     "spec.containerSecurityContext.capabilities.add[1]", "level: restricted"},
    // The spec's pod context replaces the default, which had runAsNonRoot and the profile.
    {"PodWithoutRunAsNonRoot",
     R"("podSecurityContext":{"runAsUser":1000,"seccompProfile":{"type":"RuntimeDefault"}})",
     "spec.podSecurityContext.runAsNonRoot", "level: restricted"},
    {"PodWithoutSeccomp", R"("podSecurityContext":{"runAsNonRoot":true})",
     "spec.podSecurityContext.seccompProfile.type", "level: restricted"},
    {"OpenShiftEmptyContexts", R"("podSecurityContext":{},"containerSecurityContext":{})",
     "spec.containerSecurityContext.allowPrivilegeEscalation", "level: restricted"},
    // The baseline still applies, under its own key.
    {"BaselineFirst", R"("podSecurityContext":{"seLinuxOptions":{"type":"spc_t"}})",
     "spec.podSecurityContext.seLinuxOptions.type", "allowPrivileged: false"},
};

INSTANTIATE_TEST_SUITE_P(Rules, RestrictedPolicyTest, ::testing::ValuesIn(kRestrictedRefusals),
                         [](const ::testing::TestParamInfo<Refusal>& i) {
                           return std::string(i.param.name);
                         });

TEST(SpecPolicyTest, RestrictedAcceptsWhatItAllows) {
  const EngineConfig config = Restricted();
  for (const std::string& rest : {
           // Nothing set: the operator's defaults, checked when the config was read.
           std::string(""),
           // Both rules a pod or its container may meet, met by the container.
           std::string(R"("podSecurityContext":{"fsGroup":1000},
               "containerSecurityContext":{"allowPrivilegeEscalation":false,"runAsNonRoot":true,
               "seccompProfile":{"type":"Localhost","localhostProfile":"nr.json"},
               "capabilities":{"drop":["ALL"],"add":["NET_BIND_SERVICE"]}})"),
           std::string(R"("podSecurityContext":{"runAsNonRoot":true,"runAsUser":1001,
               "seccompProfile":{"type":"RuntimeDefault"}})"),
       }) {
    Status s = CheckSpecPolicy(config, Spec(rest));
    EXPECT_TRUE(s.ok()) << rest << ": " << s.ToString();
  }
  // The baseline level lets the same empty contexts through.
  EXPECT_TRUE(CheckSpecPolicy(EngineConfig{}, Spec(R"("podSecurityContext":{},
      "containerSecurityContext":{})"))
                  .ok());
}

TEST(SpecPolicyConfigTest, LevelIsBaselineOrRestrictedWithDefaultsThatPassIt) {
  auto defaults = ParseEngineConfig(J("{}"));
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->policy.level, PodSecurityLevel::kBaseline);
  EXPECT_EQ(Restricted().policy.level, PodSecurityLevel::kRestricted);
  EXPECT_TRUE(IsInvalid(ParseEngineConfig(J(R"({"policy":{"level":"privileged"}})")).status(),
                        "engine.policy.level", "must be one of"));
  EXPECT_TRUE(IsInvalid(
      ParseEngineConfig(J(R"({"policy":{"level":"restricted","allowPrivileged":true}})")).status(),
      "engine.policy.level", "allowPrivileged: false"));
  EXPECT_TRUE(IsInvalid(
      ParseEngineConfig(J(R"({"policy":{"level":"restricted","allowRunAsRoot":true}})")).status(),
      "engine.policy.level", "allowRunAsRoot: false"));
  // FlowFuse's defaults (this config's) do not pass the restricted level: said at start.
  EXPECT_TRUE(IsInvalid(ParseEngineConfig(J(R"({"policy":{"level":"restricted"}})")).status(),
                        "engine.podSecurityContext.runAsNonRoot",
                        "engine.policy.level: restricted"));
  EXPECT_TRUE(IsInvalid(ParseEngineConfig(J(R"({"policy":{"level":"restricted"},
      "podSecurityContext":{"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"}},
      "containerSecurityContext":{"allowPrivilegeEscalation":false,"privileged":true,
                                  "capabilities":{"drop":["ALL"]}}})"))
                            .status(),
                        "engine.containerSecurityContext.privileged", "level: restricted"));
}

}  // namespace
}  // namespace steward::engine
