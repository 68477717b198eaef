#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/yaml.h"
#include "engine/model/project.h"
#include "engine/model/test_util.h"

namespace steward::engine {
namespace {

using testing::IsInvalid;
using testing::J;

StatusOr<EngineConfig> FromYaml(std::string_view yaml) {
  auto j = ParseYaml(yaml);
  if (!j.ok()) return j.error();
  return ParseEngineConfig(*j);
}

TEST(ParseEngineConfigTest, EmptyOrNullSectionGivesDefaults) {
  auto empty = ParseEngineConfig(Json::object());
  ASSERT_TRUE(empty.ok()) << empty.error().ToString();
  EXPECT_EQ(*empty, EngineConfig{});
  auto null = ParseEngineConfig(Json());
  ASSERT_TRUE(null.ok()) << null.error().ToString();
  EXPECT_EQ(*null, EngineConfig{});
  // The defaults mirror FlowFuse's driver.
  EXPECT_EQ(null->namespace_name, "steward");
  EXPECT_EQ(null->default_stack, (Stack{"flowfuse/node-red", 10, 256, {}}));
  EXPECT_EQ(null->pod_security_context,
            J(R"({"runAsUser":1000,"runAsGroup":1000,"fsGroup":1000})"));
  EXPECT_EQ(null->service_type, "ClusterIP");
  EXPECT_FALSE(null->storage.enabled);
}

TEST(ParseEngineConfigTest, FullYamlParsesEveryField) {
  auto r = FromYaml(R"(
namespace: projects
domain: nr.example.com
urlScheme: https
urlPort: 8443
forgeUrl: https://forge.example.com/api
ingressClass: nginx
ingressAnnotations:
  nginx.ingress.kubernetes.io/proxy-body-size: 10m
certManagerIssuer: letsencrypt
customHostname:
  ingressClass: public
  ingressAnnotations: {example.com/a: b}
  certManagerIssuer: le-custom
serviceType: NodePort
defaultStack:
  image: flowfuse/node-red:4.0
  cpu: 25
  memory: 512
  env: {NODE_OPTIONS: "--max-old-space-size=400"}
storage:
  enabled: true
  size: 5Gi
  storageClass: efs
  accessMode: ReadWriteMany
labels: {costcentre: "42"}
nodeSelector: {kubernetes.io/arch: amd64}
tolerations:
  - {key: dedicated, operator: Exists, effect: NoSchedule}
probes:
  livenessProbe: {tcpSocket: {port: 1880}}
podSecurityContext: {}
containerSecurityContext: {runAsNonRoot: true}
imagePullSecrets: [regcred]
privateCA: corp-ca
serviceAccount: editor
timeZone: America/New_York
progressDeadlineSeconds: 300
requireIngressAddress: false
httpProbe: true
httpProbeAddress: ingress.local:8080
httpProbeTimeoutMs: 500
removeOrphans: true
workers: 16
)");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  const EngineConfig& c = *r;
  EXPECT_EQ(c.namespace_name, "projects");
  EXPECT_EQ(c.domain, "nr.example.com");
  EXPECT_EQ(c.url_scheme, "https");
  EXPECT_EQ(c.url_port, 8443);
  EXPECT_EQ(c.forge_url, "https://forge.example.com/api");
  EXPECT_EQ(c.ingress_class, "nginx");
  EXPECT_EQ(c.ingress_annotations.at("nginx.ingress.kubernetes.io/proxy-body-size"), "10m");
  EXPECT_EQ(c.cert_manager_issuer, "letsencrypt");
  EXPECT_EQ(c.custom_hostname,
            (CustomHostnameConfig{"public", {{"example.com/a", "b"}}, "le-custom"}));
  EXPECT_EQ(c.service_type, "NodePort");
  EXPECT_EQ(
      c.default_stack,
      (Stack{"flowfuse/node-red:4.0", 25, 512, {{"NODE_OPTIONS", "--max-old-space-size=400"}}}));
  EXPECT_TRUE(c.storage.enabled);
  EXPECT_EQ(c.storage.spec, (StorageSpec{"5Gi", "efs", "ReadWriteMany"}));
  EXPECT_EQ(c.labels, (StringMap{{"costcentre", "42"}}));
  EXPECT_EQ(c.node_selector, (StringMap{{"kubernetes.io/arch", "amd64"}}));
  EXPECT_EQ(c.tolerations, J(R"([{"key":"dedicated","operator":"Exists","effect":"NoSchedule"}])"));
  ASSERT_TRUE(c.liveness_probe.has_value());
  EXPECT_EQ((*c.liveness_probe)["tcpSocket"]["port"], 1880);
  EXPECT_FALSE(c.readiness_probe.has_value());
  EXPECT_FALSE(c.startup_probe.has_value());
  EXPECT_EQ(c.pod_security_context, Json::object());
  EXPECT_EQ(c.container_security_context, J(R"({"runAsNonRoot":true})"));
  EXPECT_EQ(c.image_pull_secrets, std::vector<std::string>{"regcred"});
  EXPECT_EQ(c.private_ca, "corp-ca");
  EXPECT_EQ(c.service_account, "editor");
  EXPECT_EQ(c.time_zone, "America/New_York");
  EXPECT_EQ(c.progress_deadline_seconds, 300);
  EXPECT_FALSE(c.require_ingress_address);
  EXPECT_TRUE(c.http_probe);
  EXPECT_EQ(c.http_probe_address, "ingress.local:8080");
  EXPECT_EQ(c.http_probe_timeout_ms, 500);
  EXPECT_TRUE(c.remove_orphans);
  EXPECT_EQ(c.workers, 16);
}

TEST(ParseEngineConfigTest, PartialSectionsKeepTheirOtherDefaults) {
  auto r = FromYaml("defaultStack: {memory: 1024}\nstorage: {enabled: true}\n");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->default_stack, (Stack{"flowfuse/node-red", 10, 1024, {}}));
  EXPECT_EQ(r->storage.spec, (StorageSpec{"1Gi", "", "ReadWriteOnce"}));
  EXPECT_TRUE(r->storage.enabled);
}

TEST(ParseEngineConfigTest, BlankYamlValuesCountAsAbsent) {
  auto r = FromYaml("labels:\ntolerations:\npodSecurityContext:\nworkers: 3\n");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->tolerations, Json::array());
  EXPECT_EQ(r->pod_security_context, EngineConfig{}.pod_security_context);
  EXPECT_EQ(r->workers, 3);
}

TEST(ParseEngineConfigTest, UnknownNestedFieldFromYamlIsNamed) {
  auto r = FromYaml("domain: example.com\ndefaultStack:\n  image: nr\n  cpus: 10\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), InvalidArgument("engine.defaultStack.cpus: unknown field"));
  // FlowFuse's options that Steward does not have are refused, not silently ignored.
  EXPECT_TRUE(IsInvalid(FromYaml("customHostname: {enabled: true}\n"),
                        "engine.customHostname.enabled", "unknown field"));
  EXPECT_TRUE(IsInvalid(FromYaml("storage: {storageClassEFSTag: x}\n"),
                        "engine.storage.storageClassEFSTag", "unknown field"));
  EXPECT_TRUE(
      IsInvalid(FromYaml("projectNamespace: x\n"), "engine.projectNamespace", "unknown field"));
}

TEST(ParseEngineConfigTest, QuotedYamlNumbersAreStrings) {
  EXPECT_TRUE(
      IsInvalid(FromYaml("workers: '8'\n"), "engine.workers", "must be an integer, got string"));
  EXPECT_TRUE(IsInvalid(FromYaml("workers: 1.5\n"), "engine.workers", "must be an integer"));
  EXPECT_TRUE(IsInvalid(FromYaml("httpProbe: 'true'\n"), "engine.httpProbe",
                        "must be a boolean, got string"));
}

TEST(ParseEngineConfigTest, MaxStartingDefaultsToNoLimit) {
  auto none = FromYaml("workers: 3\n");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->max_starting, 0);
  auto some = FromYaml("maxStarting: 150\n");
  ASSERT_TRUE(some.ok()) << some.error().ToString();
  EXPECT_EQ(some->max_starting, 150);
}

TEST(ParseEngineConfigTest, UsesTheGivenPath) {
  EXPECT_TRUE(IsInvalid(ParseEngineConfig(J(R"({"workers":0})"), "config.engine"),
                        "config.engine.workers", "between 1 and 256"));
}

struct BadConfig {
  const char* name;
  std::string json;
  std::string field;
  std::string part;
};

std::ostream& operator<<(std::ostream& os, const BadConfig& c) { return os << c.name; }

class BadConfigTest : public ::testing::TestWithParam<BadConfig> {};

TEST_P(BadConfigTest, IsRefusedNamingTheField) {
  const BadConfig& c = GetParam();
  EXPECT_TRUE(IsInvalid(ParseEngineConfig(J(c.json)), c.field, c.part)) << c.json;
}

const BadConfig kBadConfigs[] = {
    {"NotAnObject", "[1]", "engine", "must be an object, got array"},
    {"UnknownField", R"({"foo":1})", "engine.foo", "unknown field"},
    {"MaxStartingNegative", R"({"maxStarting":-1})", "engine.maxStarting", "between 0 and 100000"},
    {"MaxStartingHuge", R"({"maxStarting":100001})", "engine.maxStarting", "between 0 and 100000"},
    {"NamespaceUpper", R"({"namespace":"Steward"})", "engine.namespace", "DNS-1123 label"},
    {"NamespaceDotted", R"({"namespace":"a.b"})", "engine.namespace", "DNS-1123 label"},
    {"NamespaceEmpty", R"({"namespace":""})", "engine.namespace", "DNS-1123 label"},
    {"DomainUpper", R"({"domain":"Example.com"})", "engine.domain", "DNS-1123 subdomain"},
    {"DomainEmpty", R"({"domain":""})", "engine.domain", "DNS-1123 subdomain"},
    {"DomainNotString", R"({"domain":1})", "engine.domain", "must be a string"},
    {"UrlSchemeFtp", R"({"urlScheme":"ftp"})", "engine.urlScheme", "one of http, https"},
    {"UrlSchemeUpper", R"({"urlScheme":"HTTPS"})", "engine.urlScheme", "one of http, https"},
    {"UrlPortTooHigh", R"({"urlPort":65536})", "engine.urlPort", "between 0 and 65535"},
    {"UrlPortNegative", R"({"urlPort":-1})", "engine.urlPort", "between 0 and 65535"},
    {"ForgeUrlNoScheme", R"({"forgeUrl":"forge.example.com"})", "engine.forgeUrl",
     "http:// or https://"},
    {"ForgeUrlFtp", R"({"forgeUrl":"ftp://forge"})", "engine.forgeUrl", "http:// or https://"},
    {"ForgeUrlNoHost", R"({"forgeUrl":"http:///x"})", "engine.forgeUrl", "no host"},
    {"ForgeUrlSpace", R"({"forgeUrl":"http://a b"})", "engine.forgeUrl", "whitespace"},
    {"IngressClassBad", R"({"ingressClass":"Nginx"})", "engine.ingressClass", "DNS-1123"},
    {"IngressAnnotationsReserved", R"({"ingressAnnotations":{"steward.io/a":"b"}})",
     "engine.ingressAnnotations[\"steward.io/a\"]", "reserved"},
    {"IngressAnnotationsNotMap", R"({"ingressAnnotations":"a=b"})", "engine.ingressAnnotations",
     "must be an object"},
    {"IssuerBad", R"({"certManagerIssuer":"Lets Encrypt"})", "engine.certManagerIssuer",
     "DNS-1123"},
    {"CustomHostnameNotObject", R"({"customHostname":true})", "engine.customHostname",
     "must be an object, got boolean"},
    {"CustomHostnameClassBad", R"({"customHostname":{"ingressClass":"A"}})",
     "engine.customHostname.ingressClass", "DNS-1123"},
    {"CustomHostnameAnnotationBad", R"({"customHostname":{"ingressAnnotations":{"a b":"c"}}})",
     "engine.customHostname.ingressAnnotations[\"a b\"]", "key name part"},
    {"CustomHostnameIssuerBad", R"({"customHostname":{"certManagerIssuer":"_x"}})",
     "engine.customHostname.certManagerIssuer", "DNS-1123"},
    {"ServiceTypeLoadBalancer", R"({"serviceType":"LoadBalancer"})", "engine.serviceType",
     "one of ClusterIP, NodePort"},
    {"DefaultStackImageEmpty", R"({"defaultStack":{"image":""}})", "engine.defaultStack.image",
     "must not be empty"},
    {"DefaultStackCpuZero", R"({"defaultStack":{"cpu":0}})", "engine.defaultStack.cpu",
     "between 1 and 1000"},
    {"DefaultStackMemoryLow", R"({"defaultStack":{"memory":0}})", "engine.defaultStack.memory",
     "between 1 and 1048576"},
    {"DefaultStackEnvForge", R"({"defaultStack":{"env":{"FORGE_X":"1"}}})",
     "engine.defaultStack.env[\"FORGE_X\"]", "reserved"},
    {"StorageEnabledString", R"({"storage":{"enabled":"yes"}})", "engine.storage.enabled",
     "must be a boolean, got string"},
    {"StorageSizeBad", R"({"storage":{"size":"lots"}})", "engine.storage.size",
     "not a Kubernetes quantity"},
    {"StorageAccessModeBad", R"({"storage":{"accessMode":"RWX"}})", "engine.storage.accessMode",
     "ReadWriteOnce"},
    {"StorageClassBad", R"({"storage":{"storageClass":"EFS"}})", "engine.storage.storageClass",
     "DNS-1123"},
    {"LabelsReserved", R"({"labels":{"app.kubernetes.io/managed-by":"x"}})",
     "engine.labels[\"app.kubernetes.io/managed-by\"]", "reserved"},
    {"LabelsBadValue", R"({"labels":{"a":"b/c"}})", "engine.labels[\"a\"]", "label value"},
    {"NodeSelectorBadValue", R"({"nodeSelector":{"a":"-b"}})", "engine.nodeSelector[\"a\"]",
     "label value"},
    {"TolerationsNotArray", R"({"tolerations":"[]"})", "engine.tolerations",
     "must be an array of objects, got string"},
    {"TolerationNotObject", R"({"tolerations":[[]]})", "engine.tolerations[0]",
     "must be an object"},
    {"ProbesUnknown", R"({"probes":{"livenessProbe":{"exec":{}},"foo":{}}})", "engine.probes.foo",
     "unknown field"},
    {"ProbeNoHandler", R"({"probes":{"startupProbe":{}}})", "engine.probes.startupProbe",
     "exactly one of"},
    {"PodSecurityContextArray", R"({"podSecurityContext":[]})", "engine.podSecurityContext",
     "must be an object"},
    {"ContainerSecurityContextBool", R"({"containerSecurityContext":false})",
     "engine.containerSecurityContext", "must be an object"},
    {"PullSecretBad", R"({"imagePullSecrets":["Reg"]})", "engine.imagePullSecrets[0]", "DNS-1123"},
    {"PrivateCaBad", R"({"privateCA":"A"})", "engine.privateCA", "DNS-1123"},
    {"ServiceAccountBad", R"({"serviceAccount":"Editor"})", "engine.serviceAccount", "DNS-1123"},
    {"TimeZoneEmpty", R"({"timeZone":""})", "engine.timeZone", "IANA time zone"},
    {"TimeZoneSpace", R"({"timeZone":"Europe London"})", "engine.timeZone", "IANA time zone"},
    {"TimeZoneTraversal", R"({"timeZone":"../etc/passwd"})", "engine.timeZone", "IANA time zone"},
    {"DeadlineZero", R"({"progressDeadlineSeconds":0})", "engine.progressDeadlineSeconds",
     "between 1 and 86400"},
    {"DeadlineTooLong", R"({"progressDeadlineSeconds":86401})", "engine.progressDeadlineSeconds",
     "between 1 and 86400"},
    {"RequireIngressAddressNumber", R"({"requireIngressAddress":1})",
     "engine.requireIngressAddress", "must be a boolean, got integer"},
    {"HttpProbeString", R"({"httpProbe":"true"})", "engine.httpProbe", "must be a boolean"},
    {"ProbeAddressNoPort", R"({"httpProbeAddress":"ingress"})", "engine.httpProbeAddress",
     "host:port"},
    {"ProbeAddressNoHost", R"({"httpProbeAddress":":80"})", "engine.httpProbeAddress", "host:port"},
    {"ProbeAddressPortZero", R"({"httpProbeAddress":"h:0"})", "engine.httpProbeAddress",
     "between 1 and 65535"},
    {"ProbeAddressPortHigh", R"({"httpProbeAddress":"h:70000"})", "engine.httpProbeAddress",
     "between 1 and 65535"},
    {"ProbeAddressPortText", R"({"httpProbeAddress":"h:http"})", "engine.httpProbeAddress",
     "between 1 and 65535"},
    {"ProbeTimeoutZero", R"({"httpProbeTimeoutMs":0})", "engine.httpProbeTimeoutMs",
     "between 1 and 60000"},
    {"ProbeTimeoutHigh", R"({"httpProbeTimeoutMs":60001})", "engine.httpProbeTimeoutMs",
     "between 1 and 60000"},
    {"RemoveOrphansString", R"({"removeOrphans":"no"})", "engine.removeOrphans",
     "must be a boolean"},
    {"PodSecurityContextUnknown", R"({"podSecurityContext":{"runAsUsr":1000}})",
     "engine.podSecurityContext.runAsUsr", "unknown field"},
    {"ContainerSecurityContextWrongType",
     R"({"containerSecurityContext":{"allowPrivilegeEscalation":"false"}})",
     "engine.containerSecurityContext.allowPrivilegeEscalation", "must be a boolean"},
    {"TolerationUnknown", R"({"tolerations":[{"keys":"x"}]})", "engine.tolerations[0].keys",
     "unknown field"},
    {"ProbeUnknown", R"({"probes":{"livenessProbe":{"exec":{"cmd":["x"]}}}})",
     "engine.probes.livenessProbe.exec.cmd", "unknown field"},
    {"StepTimeoutZero", R"({"stepTimeoutSeconds":0})", "engine.stepTimeoutSeconds",
     "between 1 and 86400"},
    {"PolicyUnknown", R"({"policy":{"allowRoot":true}})", "engine.policy.allowRoot",
     "unknown field"},
    {"PolicyNotBool", R"({"policy":{"allowPrivileged":"yes"}})", "engine.policy.allowPrivileged",
     "must be a boolean"},
    {"PolicyPrefixesNotArray", R"({"policy":{"allowedAnnotationPrefixes":"a/"}})",
     "engine.policy.allowedAnnotationPrefixes", "must be an array of strings"},
    {"PolicyPrefixEmpty", R"({"policy":{"allowedAnnotationPrefixes":["a/",""]}})",
     "engine.policy.allowedAnnotationPrefixes[1]", "must not be empty"},
    {"WorkersZero", R"({"workers":0})", "engine.workers", "between 1 and 256 (got 0)"},
    {"WorkersTooMany", R"({"workers":257})", "engine.workers", "between 1 and 256"},
};

INSTANTIATE_TEST_SUITE_P(Rules, BadConfigTest, ::testing::ValuesIn(kBadConfigs),
                         [](const ::testing::TestParamInfo<BadConfig>& i) {
                           return std::string(i.param.name);
                         });

TEST(ParseEngineConfigTest, AcceptsBoundaryValues) {
  auto r = ParseEngineConfig(J(R"({"urlPort":65535,"workers":256,"progressDeadlineSeconds":86400,
                                   "httpProbeTimeoutMs":60000,"httpProbeAddress":"[::1]:65535",
                                   "timeZone":"Etc/GMT+5","forgeUrl":"http://user@forge:3000"})"));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->url_port, 65535);
  EXPECT_EQ(r->workers, 256);
  auto low = ParseEngineConfig(J(R"({"urlPort":0,"workers":1,"progressDeadlineSeconds":1,
                                     "httpProbeTimeoutMs":1})"));
  ASSERT_TRUE(low.ok()) << low.error().ToString();
  EXPECT_EQ(low->workers, 1);
}

TEST(ParseEngineConfigTest, CustomHostnameAllowedDomains) {
  auto c =
      ParseEngineConfig(*ParseJson(R"({"customHostname":{"allowedDomains":["a.com","b.org"]}})"));
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_EQ(c->custom_hostname.allowed_domains, (std::vector<std::string>{"a.com", "b.org"}));
  EXPECT_TRUE(IsInvalid(
      ParseEngineConfig(*ParseJson(R"({"customHostname":{"allowedDomains":["A_B"]}})")).status(),
      "engine.customHostname.allowedDomains[0]", "DNS-1123"));
}

TEST(ParseEngineConfigTest, PolicyAndStepTimeout) {
  auto defaults = ParseEngineConfig(Json());
  ASSERT_TRUE(defaults.ok());
  EXPECT_FALSE(defaults->policy.allow_privileged);
  EXPECT_FALSE(defaults->policy.allow_run_as_root);
  EXPECT_FALSE(defaults->policy.annotation_prefixes.has_value());
  EXPECT_EQ(defaults->step_timeout_seconds, 900);
  auto r = ParseEngineConfig(J(R"({"stepTimeoutSeconds":60,"policy":{"allowPrivileged":true,
      "allowRunAsRoot":true,"allowedAnnotationPrefixes":["example.com/"]}})"));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->step_timeout_seconds, 60);
  EXPECT_TRUE(r->policy.allow_privileged);
  EXPECT_TRUE(r->policy.allow_run_as_root);
  EXPECT_EQ(r->policy.annotation_prefixes, std::vector<std::string>{"example.com/"});
}

// The defaults FlowFuse's driver-k8s renders (templates.js) pass the stricter schema.
TEST(ParseEngineConfigTest, FlowFuseSecurityContextsPass) {
  auto r = ParseEngineConfig(J(R"({"podSecurityContext":{"runAsUser":1000,"runAsGroup":1000,
      "fsGroup":1000},"containerSecurityContext":{"allowPrivilegeEscalation":false}})"));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
}

}  // namespace
}  // namespace steward::engine
