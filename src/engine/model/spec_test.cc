#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "engine/model/project.h"
#include "engine/model/test_util.h"

namespace steward::engine {
namespace {

using testing::IsInvalid;
using testing::IsInvalidValue;
using testing::J;

constexpr char kDigest[] =
    "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

// Every field set, each to a non-default value.
Json FullSpec() {
  return J(R"({
    "team": "Team_01-a",
    "stack": {"image": "registry.example.com:5000/flowfuse/node-red:4.0.2-18", "cpu": 50,
              "memory": 512, "env": {"MY_VAR": "1", "_X": ""}},
    "customHostname": "nodered.example.com",
    "storage": {"size": "10Gi", "storageClass": "fast-ssd", "accessMode": "ReadWriteMany"},
    "replicas": 3,
    "labels": {"tier": "gold", "example.com/owner": "a.b_c-d", "empty": ""},
    "annotations": {"example.com/note": "any text at all: {}", "plain": ""},
    "ingress": {"className": "nginx",
                "annotations": {"nginx.ingress.kubernetes.io/proxy-body-size": "10m"}},
    "nodeSelector": {"kubernetes.io/os": "linux"},
    "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "nr",
                     "effect": "NoSchedule"}],
    "probes": {"livenessProbe": {"httpGet": {"path": "/", "port": 1880}, "periodSeconds": 5},
               "readinessProbe": {"tcpSocket": {"port": 1880}},
               "startupProbe": {"exec": {"command": ["true"]}}},
    "podSecurityContext": {"runAsUser": 2000},
    "containerSecurityContext": {"readOnlyRootFilesystem": true},
    "imagePullSecrets": ["regcred", "other.cred"],
    "privateCA": "corp-ca"
  })");
}

TEST(ParseProjectSpecTest, FullSpecParsesEveryField) {
  auto r = ParseProjectSpec(FullSpec());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  const ProjectSpec& s = *r;
  EXPECT_EQ(s.team, "Team_01-a");
  EXPECT_EQ(s.stack.image, "registry.example.com:5000/flowfuse/node-red:4.0.2-18");
  EXPECT_EQ(s.stack.cpu, 50);
  EXPECT_EQ(s.stack.memory_mb, 512);
  EXPECT_EQ(s.stack.env, (StringMap{{"MY_VAR", "1"}, {"_X", ""}}));
  EXPECT_EQ(s.custom_hostname, "nodered.example.com");
  ASSERT_TRUE(s.storage.has_value());
  EXPECT_EQ(*s.storage, (StorageSpec{"10Gi", "fast-ssd", "ReadWriteMany"}));
  EXPECT_EQ(s.replicas, 3);
  EXPECT_EQ(s.labels.at("example.com/owner"), "a.b_c-d");
  EXPECT_EQ(s.labels.at("empty"), "");
  EXPECT_EQ(s.annotations.at("example.com/note"), "any text at all: {}");
  EXPECT_EQ(s.ingress_class, "nginx");
  EXPECT_EQ(s.ingress_annotations.at("nginx.ingress.kubernetes.io/proxy-body-size"), "10m");
  EXPECT_EQ(s.node_selector, (StringMap{{"kubernetes.io/os", "linux"}}));
  ASSERT_TRUE(s.tolerations.has_value());
  EXPECT_EQ((*s.tolerations)[0]["key"], "dedicated");
  ASSERT_TRUE(s.liveness_probe && s.readiness_probe && s.startup_probe);
  EXPECT_EQ((*s.liveness_probe)["periodSeconds"], 5);
  EXPECT_EQ((*s.readiness_probe)["tcpSocket"]["port"], 1880);
  EXPECT_EQ(*s.pod_security_context, J(R"({"runAsUser":2000})"));
  EXPECT_EQ(*s.container_security_context, J(R"({"readOnlyRootFilesystem":true})"));
  EXPECT_EQ(s.image_pull_secrets, (std::vector<std::string>{"regcred", "other.cred"}));
  EXPECT_EQ(s.private_ca, "corp-ca");
}

TEST(ParseProjectSpecTest, MinimalSpecHasDefaults) {
  auto r = ParseProjectSpec(J(R"({"team":"t"})"));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  ProjectSpec want;
  want.team = "t";
  EXPECT_EQ(*r, want);
  EXPECT_EQ(r->replicas, 1);
  EXPECT_FALSE(r->storage.has_value());
  EXPECT_FALSE(r->ingress_class.has_value());
  EXPECT_FALSE(r->tolerations.has_value());
}

TEST(ParseProjectSpecTest, NullFieldsCountAsAbsent) {
  auto r = ParseProjectSpec(J(R"({"team":"t","stack":null,"labels":null,"storage":null,
                                  "tolerations":null,"privateCA":null,"probes":null,
                                  "ingress":{"className":null}})"));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_FALSE(r->storage.has_value());
  EXPECT_FALSE(r->private_ca.has_value());
  EXPECT_FALSE(r->ingress_class.has_value());
  EXPECT_EQ(ToJson(*r), J(R"({"team":"t"})"));
}

TEST(ParseProjectSpecTest, StorageAccessModeDefaultsToReadWriteOnce) {
  auto r = ParseProjectSpec(J(R"({"team":"t","storage":{"size":"1Gi"}})"));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(*r->storage, (StorageSpec{"1Gi", "", "ReadWriteOnce"}));
}

TEST(ParseProjectSpecTest, ErrorsUseTheGivenPathPrefix) {
  EXPECT_TRUE(IsInvalid(ParseProjectSpec(J(R"({"team":"t","stack":{"foo":1}})"), "body.spec"),
                        "body.spec.stack.foo", "unknown field"));
  EXPECT_TRUE(IsInvalid(ParseProjectSpec(J(R"({"team":"t","stack":{"foo":1}})"), ""), "stack.foo",
                        "unknown field"));
}

// Found by fuzz/api_request_fuzzer: an unknown key that is not an identifier was joined into the
// path as is ("spec.stac{: unknown field", "spec.x: y: unknown field"), so the API's error
// "field" came out empty or wrong, and a huge key was echoed whole.
TEST(ParseProjectSpecTest, UnknownFieldsThatAreNotIdentifiersAreQuoted) {
  EXPECT_EQ(ParseProjectSpec(J(R"({"team":"t","stac{":{"cpu":1}})")).error(),
            InvalidArgument(R"(spec["stac{"]: unknown field)"));
  EXPECT_EQ(ParseProjectSpec(J(R"({"team":"t","stack":{"x: y":1}})")).error(),
            InvalidArgument(R"(spec.stack["x: y"]: unknown field)"));
  EXPECT_EQ(ParseProjectSpec(J(R"({"team":"t","1x":1})")).error(),
            InvalidArgument(R"(spec["1x"]: unknown field)"));
  Json long_key = J(R"({"team":"t"})");
  long_key[std::string(10000, 'k') + "."] = 1;
  auto r = ParseProjectSpec(long_key);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message(), "spec[\"" + std::string(80, 'k') + "...\"]: unknown field");
  // Identifiers keep the dotted form.
  EXPECT_EQ(ParseProjectSpec(J(R"({"team":"t","Foo_2":1})")).error(),
            InvalidArgument("spec.Foo_2: unknown field"));
}

TEST(ParseProjectSpecTest, UnknownNestedFieldMessageIsExact) {
  auto r = ParseProjectSpec(J(R"({"team":"t","stack":{"image":"nr","foo":1}})"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), InvalidArgument("spec.stack.foo: unknown field"));
}

TEST(ParseProjectSpecTest, AcceptsPlausibleImageReferences) {
  for (const std::string& image : std::vector<std::string>{
           "nr", "flowfuse/node-red", "flowfuse/node-red:4.0.2-18", "localhost/nr",
           "localhost:5000/a/b/c:latest", "Registry.Example.com/team/nr", "a.b/c__d/e-f--g.h:_t",
           std::string("flowfuse/node-red@") + kDigest, std::string("reg.io/nr:1.0@") + kDigest}) {
    Json j = {{"team", "t"}, {"stack", {{"image", image}}}};
    auto r = ParseProjectSpec(j);
    EXPECT_TRUE(r.ok()) << image << ": " << r.error().ToString();
  }
}

TEST(ParseProjectSpecTest, AcceptsKubernetesQuantities) {
  for (const char* q : {"1Gi", "500Mi", "10G", "1.5Gi", "0.5", ".5Ki", "1.", "+1Gi", "1e3", "1E3",
                        "1E", "2e+2", "129e-1", "100k", "1m", "3Ei", "1024"}) {
    Json j = {{"team", "t"}, {"storage", {{"size", q}}}};
    auto r = ParseProjectSpec(j);
    EXPECT_TRUE(r.ok()) << q << ": " << r.error().ToString();
  }
}

TEST(ParseProjectSpecTest, AcceptsValidLabelKeysAndValues) {
  for (const char* key : {"a", "A.b_c-D", "example.com/x", "a.b.c/Name_1", "k8s.io/z"}) {
    Json j = {{"team", "t"}, {"labels", {{key, "Value.1_x-Y"}}}};
    auto r = ParseProjectSpec(j);
    EXPECT_TRUE(r.ok()) << key << ": " << r.error().ToString();
  }
  // A 253-character prefix of four labels, a 63-character name and a 63-character value.
  std::string prefix = std::string(63, 'a') + "." + std::string(63, 'b') + "." +
                       std::string(63, 'c') + "." + std::string(61, 'd');
  ASSERT_EQ(prefix.size(), 253u);
  Json max = {{"team", "t"},
              {"labels", {{prefix + "/" + std::string(63, 'n'), std::string(63, 'v')}}}};
  auto r = ParseProjectSpec(max);
  EXPECT_TRUE(r.ok()) << r.error().ToString();
}

TEST(ParseProjectSpecTest, AcceptsAnnotationsUpToTheSizeLimit) {
  // Key "k" (1 byte) + value = exactly 256 KiB.
  Json j = {{"team", "t"}, {"annotations", {{"k", std::string(256 * 1024 - 1, 'x')}}}};
  auto r = ParseProjectSpec(j);
  EXPECT_TRUE(r.ok()) << r.error().ToString();
}

TEST(ParseProjectSpecTest, NodeSelectorMayUseAnyValidKey) {
  auto r = ParseProjectSpec(J(R"({"team":"t","nodeSelector":{"app.kubernetes.io/part-of":"x"}})"));
  EXPECT_TRUE(r.ok()) << r.error().ToString();
}

TEST(ParseProjectSpecTest, EmptyClassNameAndPrivateCaMeanExplicitlyNone) {
  auto r = ParseProjectSpec(
      J(R"({"team":"t","ingress":{"className":""},"privateCA":"","imagePullSecrets":[],
             "tolerations":[]})"));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->ingress_class, "");
  EXPECT_EQ(r->private_ca, "");
  EXPECT_EQ(r->image_pull_secrets, std::vector<std::string>{});
  EXPECT_EQ(r->tolerations, Json::array());
}

// One row per rule: the spec, the field the error must name, and a part of the reason.
struct BadSpec {
  const char* name;
  std::string json;
  std::string field;
  std::string part;
};

std::ostream& operator<<(std::ostream& os, const BadSpec& c) { return os << c.name; }

class BadSpecTest : public ::testing::TestWithParam<BadSpec> {};

TEST_P(BadSpecTest, IsRefusedNamingTheField) {
  const BadSpec& c = GetParam();
  auto r = ParseProjectSpec(J(c.json));
  EXPECT_TRUE(IsInvalid(r, c.field, c.part)) << c.json;
}

std::string Team(const std::string& rest) { return R"({"team":"t",)" + rest + "}"; }
std::string Long(char c, size_t n) { return std::string(n, c); }

const BadSpec kBadSpecs[] = {
    {"NotAnObject", "[]", "spec", "must be an object, got array"},
    {"UnknownTopField", Team(R"("foo":1)"), "spec.foo", "unknown field"},
    {"UnknownStackField", Team(R"("stack":{"foo":1})"), "spec.stack.foo", "unknown field"},
    {"TeamMissing", "{}", "spec.team", "is required"},
    {"TeamEmpty", R"({"team":""})", "spec.team", "1 to 63"},
    {"TeamTooLong", R"({"team":")" + Long('a', 64) + R"("})", "spec.team", "1 to 63"},
    {"TeamBadChar", R"({"team":"a.b"})", "spec.team", "letters, digits"},
    {"TeamNotString", R"({"team":5})", "spec.team", "must be a string, got integer"},
    {"StackNotObject", Team(R"("stack":"x")"), "spec.stack", "must be an object, got string"},
    {"ImageEmpty", Team(R"("stack":{"image":""})"), "spec.stack.image", "must not be empty"},
    {"ImageWhitespace", Team(R"("stack":{"image":"node red"})"), "spec.stack.image", "whitespace"},
    {"ImageTooLong", Team(R"("stack":{"image":")" + Long('a', 256) + R"("})"), "spec.stack.image",
     "at most 255"},
    {"ImageUppercasePath", Team(R"("stack":{"image":"flowfuse/Node-red"})"), "spec.stack.image",
     "lowercase"},
    {"ImageDoubleSlash", Team(R"("stack":{"image":"a//b"})"), "spec.stack.image", "repository"},
    {"ImageEmptyTag", Team(R"("stack":{"image":"nr:"})"), "spec.stack.image", "tag"},
    {"ImageBadTag", Team(R"("stack":{"image":"nr:-x"})"), "spec.stack.image", "tag"},
    {"ImageBadDigest", Team(R"("stack":{"image":"nr@sha256:abc"})"), "spec.stack.image", "digest"},
    {"ImageBadRegistryPort", Team(R"("stack":{"image":"reg.io:x/nr"})"), "spec.stack.image",
     "registry"},
    {"ImageNotString", Team(R"("stack":{"image":1})"), "spec.stack.image", "must be a string"},
    {"CpuZero", Team(R"("stack":{"cpu":0})"), "spec.stack.cpu", "between 1 and 1000 (got 0)"},
    {"CpuTooHigh", Team(R"("stack":{"cpu":1001})"), "spec.stack.cpu", "between 1 and 1000"},
    {"CpuFraction", Team(R"("stack":{"cpu":1.5})"), "spec.stack.cpu", "must be an integer"},
    {"CpuWholeFloat", Team(R"("stack":{"cpu":2.0})"), "spec.stack.cpu", "must be an integer"},
    {"CpuString", Team(R"("stack":{"cpu":"10"})"), "spec.stack.cpu",
     "must be an integer, got string"},
    {"MemoryTooLow", Team(R"("stack":{"memory":0})"), "spec.stack.memory",
     "between 1 and 1048576 (got 0)"},
    {"MemoryTooHigh", Team(R"("stack":{"memory":1048577})"), "spec.stack.memory",
     "between 1 and 1048576"},
    {"MemoryHuge", Team(R"("stack":{"memory":18446744073709551615})"), "spec.stack.memory",
     "between 1 and 1048576"},
    {"MemoryNegative", Team(R"("stack":{"memory":-256})"), "spec.stack.memory", "between"},
    {"EnvNotObject", Team(R"("stack":{"env":["A=1"]})"), "spec.stack.env",
     "must be an object, got array"},
    {"EnvValueNotString", Team(R"("stack":{"env":{"A":1}})"), "spec.stack.env[\"A\"]",
     "must be a string, got integer"},
    {"EnvNameDigitFirst", Team(R"("stack":{"env":{"1A":"x"}})"), "spec.stack.env[\"1A\"]",
     "[A-Za-z_][A-Za-z0-9_]*"},
    {"EnvNameDash", Team(R"("stack":{"env":{"A-B":"x"}})"), "spec.stack.env[\"A-B\"]", "[A-Za-z_]"},
    {"EnvNameEmpty", Team(R"("stack":{"env":{"":"x"}})"), "spec.stack.env[\"\"]", "[A-Za-z_]"},
    {"EnvForgePrefix", Team(R"("stack":{"env":{"FORGE_URL":"x"}})"),
     "spec.stack.env[\"FORGE_URL\"]", "FORGE_* variables are reserved"},
    {"EnvTz", Team(R"("stack":{"env":{"TZ":"UTC"}})"), "spec.stack.env[\"TZ\"]", "set by Steward"},
    {"EnvBaseUrl", Team(R"("stack":{"env":{"BASE_URL":"x"}})"), "spec.stack.env[\"BASE_URL\"]",
     "set by Steward"},
    {"EnvExtraCa", Team(R"("stack":{"env":{"NODE_EXTRA_CA_CERTS":"x"}})"),
     "spec.stack.env[\"NODE_EXTRA_CA_CERTS\"]", "set by Steward"},
    {"HostnameUppercase", Team(R"("customHostname":"NR.example.com")"), "spec.customHostname",
     "must be lowercase"},
    {"HostnameNoDot", Team(R"("customHostname":"nodered")"), "spec.customHostname",
     "must contain a dot"},
    {"HostnameLeadingDash", Team(R"("customHostname":"-a.example.com")"), "spec.customHostname",
     "RFC 1123"},
    {"HostnameUnderscore", Team(R"("customHostname":"a_b.example.com")"), "spec.customHostname",
     "RFC 1123"},
    {"HostnameEmptyLabel", Team(R"("customHostname":"a..example.com")"), "spec.customHostname",
     "RFC 1123"},
    {"HostnameWildcard", Team(R"("customHostname":"*.example.com")"), "spec.customHostname",
     "RFC 1123"},
    {"HostnameLabelTooLong", Team(R"("customHostname":")" + Long('a', 64) + R"(.com")"),
     "spec.customHostname", "RFC 1123"},
    {"HostnameNotString", Team(R"("customHostname":true)"), "spec.customHostname",
     "must be a string, got boolean"},
    {"StorageNotObject", Team(R"("storage":"1Gi")"), "spec.storage", "must be an object"},
    {"StorageSizeMissing", Team(R"("storage":{"storageClass":"x"})"), "spec.storage.size",
     "is required"},
    {"StorageUnknownField", Team(R"("storage":{"size":"1Gi","enabled":true})"),
     "spec.storage.enabled", "unknown field"},
    {"SizeBadSuffix", Team(R"("storage":{"size":"1GB"})"), "spec.storage.size",
     "not a Kubernetes quantity"},
    {"SizeNoNumber", Team(R"("storage":{"size":"Gi"})"), "spec.storage.size",
     "not a Kubernetes quantity"},
    {"SizeTwoPoints", Team(R"("storage":{"size":"1.2.3Gi"})"), "spec.storage.size",
     "not a Kubernetes quantity"},
    {"SizeSpace", Team(R"("storage":{"size":"1 Gi"})"), "spec.storage.size",
     "not a Kubernetes quantity"},
    {"SizeBareExponent", Team(R"("storage":{"size":"1e"})"), "spec.storage.size",
     "not a Kubernetes quantity"},
    {"SizeLowercaseKi", Team(R"("storage":{"size":"1ki"})"), "spec.storage.size",
     "not a Kubernetes quantity"},
    {"SizeNegative", Team(R"("storage":{"size":"-1Gi"})"), "spec.storage.size", "must be positive"},
    {"SizeZero", Team(R"("storage":{"size":"0Gi"})"), "spec.storage.size", "greater than zero"},
    {"SizeEmpty", Team(R"("storage":{"size":""})"), "spec.storage.size", "must not be empty"},
    {"SizeNumber", Team(R"("storage":{"size":1})"), "spec.storage.size", "must be a string"},
    {"AccessModeUnknown", Team(R"("storage":{"size":"1Gi","accessMode":"ReadOnlyMany"})"),
     "spec.storage.accessMode", "ReadWriteOnce, ReadWriteMany, ReadWriteOncePod"},
    {"StorageClassBad", Team(R"("storage":{"size":"1Gi","storageClass":"Fast_SSD"})"),
     "spec.storage.storageClass", "DNS-1123 subdomain"},
    {"ReplicasZero", Team(R"("replicas":0)"), "spec.replicas", "between 1 and 10 (got 0)"},
    {"ReplicasTooMany", Team(R"("replicas":11)"), "spec.replicas", "between 1 and 10"},
    {"ReplicasString", Team(R"("replicas":"2")"), "spec.replicas",
     "must be an integer, got string"},
    {"ReplicasFloat", Team(R"("replicas":2.5)"), "spec.replicas", "must be an integer, got 2.5"},
    {"LabelsNotObject", Team(R"("labels":[])"), "spec.labels", "must be an object"},
    {"LabelValueNotString", Team(R"("labels":{"a":1})"), "spec.labels[\"a\"]", "must be a string"},
    {"LabelKeySpace", Team(R"("labels":{"bad key":"x"})"), "spec.labels[\"bad key\"]",
     "key name part"},
    {"LabelKeyEmpty", Team(R"("labels":{"":"x"})"), "spec.labels[\"\"]", "must not be empty"},
    {"LabelKeyBadPrefix", Team(R"("labels":{"Example.com/x":"y"})"),
     "spec.labels[\"Example.com/x\"]", "prefix"},
    {"LabelKeyEmptyPrefix", Team(R"("labels":{"/x":"y"})"), "spec.labels[\"/x\"]", "prefix"},
    {"LabelKeyEmptyName", Team(R"("labels":{"example.com/":"y"})"), "spec.labels[\"example.com/\"]",
     "1 to 63"},
    {"LabelKeyTwoSlashes", Team(R"("labels":{"a/b/c":"y"})"), "spec.labels[\"a/b/c\"]",
     "key name part"},
    {"LabelKeyNameTooLong", Team(R"("labels":{")" + Long('k', 64) + R"(":"y"})"),
     "spec.labels[\"" + Long('k', 64) + "\"]", "1 to 63"},
    {"LabelKeyLeadingDot", Team(R"("labels":{".a":"y"})"), "spec.labels[\".a\"]", "start and end"},
    {"LabelValueTooLong", Team(R"("labels":{"a":")" + Long('v', 64) + R"("})"),
     "spec.labels[\"a\"]", "at most 63"},
    {"LabelValueLeadingDash", Team(R"("labels":{"a":"-v"})"), "spec.labels[\"a\"]",
     "start and end"},
    {"LabelValueSpace", Team(R"("labels":{"a":"v w"})"), "spec.labels[\"a\"]",
     "label value must consist"},
    {"LabelReservedSteward", Team(R"("labels":{"steward.io/project":"x"})"),
     "spec.labels[\"steward.io/project\"]", "steward.io/ prefix is reserved"},
    {"LabelReservedAppK8s", Team(R"("labels":{"app.kubernetes.io/name":"x"})"),
     "spec.labels[\"app.kubernetes.io/name\"]", "app.kubernetes.io/ prefix is reserved"},
    {"AnnotationReserved", Team(R"("annotations":{"steward.io/spec-hash":"x"})"),
     "spec.annotations[\"steward.io/spec-hash\"]", "reserved"},
    {"AnnotationBadKey", Team(R"("annotations":{"a b":"x"})"), "spec.annotations[\"a b\"]",
     "key name part"},
    {"AnnotationValueNotString", Team(R"("annotations":{"a":true})"), "spec.annotations[\"a\"]",
     "must be a string, got boolean"},
    {"AnnotationsTooLarge",
     Team(R"("annotations":{"a":")" + Long('x', 200 * 1024) + R"(","b":")" + Long('y', 56 * 1024) +
          R"("})"),
     "spec.annotations", "256 KiB"},
    {"IngressNotObject", Team(R"("ingress":"nginx")"), "spec.ingress", "must be an object"},
    {"IngressUnknownField", Team(R"("ingress":{"class":"nginx"})"), "spec.ingress.class",
     "unknown field"},
    {"IngressClassBad", Team(R"("ingress":{"className":"Nginx"})"), "spec.ingress.className",
     "DNS-1123 subdomain"},
    {"IngressAnnotationReserved", Team(R"("ingress":{"annotations":{"steward.io/x":"y"}})"),
     "spec.ingress.annotations[\"steward.io/x\"]", "reserved"},
    {"IngressAnnotationNotString", Team(R"("ingress":{"annotations":{"a":1}})"),
     "spec.ingress.annotations[\"a\"]", "must be a string"},
    {"NodeSelectorBadValue", Team(R"("nodeSelector":{"a":"b c"})"), "spec.nodeSelector[\"a\"]",
     "label value"},
    {"NodeSelectorBadKey", Team(R"("nodeSelector":{"a b":"c"})"), "spec.nodeSelector[\"a b\"]",
     "key name part"},
    {"TolerationsNotArray", Team(R"("tolerations":{"key":"x"})"), "spec.tolerations",
     "must be an array of objects, got object"},
    {"TolerationNotObject", Team(R"("tolerations":[{"key":"x"},"y"])"), "spec.tolerations[1]",
     "must be an object, got string"},
    {"ProbesNotObject", Team(R"("probes":[])"), "spec.probes", "must be an object"},
    {"ProbesUnknownField", Team(R"("probes":{"liveness":{}})"), "spec.probes.liveness",
     "unknown field"},
    {"ProbeNotObject", Team(R"("probes":{"livenessProbe":"x"})"), "spec.probes.livenessProbe",
     "must be an object, got string"},
    {"ProbeNoHandler", Team(R"("probes":{"readinessProbe":{"periodSeconds":5}})"),
     "spec.probes.readinessProbe", "exactly one of httpGet, tcpSocket, exec, grpc (has 0)"},
    {"ProbeTwoHandlers",
     Team(R"("probes":{"startupProbe":{"httpGet":{"port":1},"tcpSocket":{"port":1}}})"),
     "spec.probes.startupProbe", "(has 2)"},
    {"ProbeHandlerNotObject", Team(R"("probes":{"livenessProbe":{"grpc":1880}})"),
     "spec.probes.livenessProbe.grpc", "must be an object"},
    {"PodSecurityContextNotObject", Team(R"("podSecurityContext":[])"), "spec.podSecurityContext",
     "must be an object, got array"},
    {"ContainerSecurityContextNotObject", Team(R"("containerSecurityContext":"x")"),
     "spec.containerSecurityContext", "must be an object, got string"},
    // Kubernetes objects passed through are checked against the Go types (kube/schema): a field
    // the cluster would prune, or a value it could not decode, is refused here.
    {"PodSecurityContextUnknownField", Team(R"("podSecurityContext":{"a":1})"),
     "spec.podSecurityContext.a", "unknown field"},
    {"ContainerSecurityContextUnknownField", Team(R"("containerSecurityContext":{"bogus":true})"),
     "spec.containerSecurityContext.bogus", "unknown field"},
    {"PodSecurityContextNestedUnknown",
     Team(R"("podSecurityContext":{"seccompProfile":{"type":"RuntimeDefault","kind":"x"}})"),
     "spec.podSecurityContext.seccompProfile.kind", "unknown field"},
    {"PodSecurityContextWrongType", Team(R"("podSecurityContext":{"runAsUser":"1000"})"),
     "spec.podSecurityContext.runAsUser", "must be an integer (int64), got string"},
    {"PodSecurityContextFloat", Team(R"("podSecurityContext":{"fsGroup":1.5})"),
     "spec.podSecurityContext.fsGroup", "must be an integer (int64), got number"},
    {"ContainerSecurityContextWrongBool",
     Team(R"("containerSecurityContext":{"readOnlyRootFilesystem":"yes"})"),
     "spec.containerSecurityContext.readOnlyRootFilesystem", "must be a boolean, got string"},
    {"ContainerCapabilitiesNotArray",
     Team(R"("containerSecurityContext":{"capabilities":{"drop":"ALL"}})"),
     "spec.containerSecurityContext.capabilities.drop", "must be an array, got string"},
    {"PodSecurityContextSysctlUnknown",
     Team(R"("podSecurityContext":{"sysctls":[{"name":"a","value":"1","x":2}]})"),
     "spec.podSecurityContext.sysctls[0].x", "unknown field"},
    {"PodSecurityContextOddKey", Team(R"("podSecurityContext":{"a.b":1})"),
     R"(spec.podSecurityContext["a.b"])", "unknown field"},
    {"TolerationUnknownField",
     Team(R"("tolerations":[{"key":"x"},{"key":"y","efect":"NoSchedule"}])"),
     "spec.tolerations[1].efect", "unknown field"},
    {"TolerationSecondsString", Team(R"("tolerations":[{"key":"x","tolerationSeconds":"60"}])"),
     "spec.tolerations[0].tolerationSeconds", "must be an integer (int64), got string"},
    {"ProbeUnknownField",
     Team(R"("probes":{"livenessProbe":{"httpGet":{"port":1880},"periodSecond":5}})"),
     "spec.probes.livenessProbe.periodSecond", "unknown field"},
    {"ProbeHandlerUnknownField",
     Team(R"("probes":{"readinessProbe":{"httpGet":{"port":1880,"paht":"/"}}})"),
     "spec.probes.readinessProbe.httpGet.paht", "unknown field"},
    {"ProbePortWrongType", Team(R"("probes":{"readinessProbe":{"tcpSocket":{"port":true}}})"),
     "spec.probes.readinessProbe.tcpSocket.port", "must be an integer or a string, got boolean"},
    {"ProbeInt32OutOfRange",
     Team(R"("probes":{"readinessProbe":{"tcpSocket":{"port":1},"periodSeconds":4294967296}})"),
     "spec.probes.readinessProbe.periodSeconds", "out of range for int32"},
    {"PullSecretsNotArray", Team(R"("imagePullSecrets":"regcred")"), "spec.imagePullSecrets",
     "must be an array"},
    {"PullSecretNotString", Team(R"("imagePullSecrets":[{"name":"x"}])"),
     "spec.imagePullSecrets[0]", "must be a string, got object"},
    {"PullSecretBadName", Team(R"("imagePullSecrets":["ok","Bad"])"), "spec.imagePullSecrets[1]",
     "DNS-1123 subdomain"},
    {"PrivateCaBad", Team(R"("privateCA":"Corp_CA")"), "spec.privateCA", "DNS-1123 subdomain"},
    {"PrivateCaNotString", Team(R"("privateCA":1)"), "spec.privateCA", "must be a string"},
};

INSTANTIATE_TEST_SUITE_P(Rules, BadSpecTest, ::testing::ValuesIn(kBadSpecs),
                         [](const ::testing::TestParamInfo<BadSpec>& i) {
                           return std::string(i.param.name);
                         });

// Every field of the Go types is accepted, inline ones (Probe's handler) included, and null
// means absent.
TEST(SpecSchemaTest, RealKubernetesFieldsPass) {
  auto r = ParseProjectSpec(J(R"({"team":"t",
      "podSecurityContext":{"runAsUser":1000,"runAsGroup":1000,"fsGroup":1000,"runAsNonRoot":true,
          "fsGroupChangePolicy":"OnRootMismatch","supplementalGroups":[4,5],
          "seccompProfile":{"type":"RuntimeDefault"},"sysctls":[{"name":"a","value":"1"}],
          "seLinuxOptions":{"level":"s0:c1"},"windowsOptions":null},
      "containerSecurityContext":{"allowPrivilegeEscalation":false,"readOnlyRootFilesystem":true,
          "capabilities":{"drop":["ALL"],"add":["NET_BIND_SERVICE"]},"runAsUser":1000},
      "tolerations":[{"key":"k","operator":"Exists","effect":"NoExecute","tolerationSeconds":30}],
      "probes":{"livenessProbe":{"httpGet":{"path":"/","port":"web","scheme":"HTTP",
          "httpHeaders":[{"name":"X","value":"y"}]},"initialDelaySeconds":5,"periodSeconds":10,
          "timeoutSeconds":2,"failureThreshold":3,"terminationGracePeriodSeconds":30},
          "startupProbe":{"grpc":{"port":1880,"service":"s"}}}})"));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
}

TEST(SpecToJsonTest, MinimalSpecIsJustTheTeam) {
  ProjectSpec s;
  s.team = "t";
  EXPECT_EQ(ToJson(s), J(R"({"team":"t"})"));
}

TEST(SpecToJsonTest, DefaultsAndEmptiesAreOmitted) {
  auto r = ParseProjectSpec(J(R"({"team":"t","replicas":1,"stack":{"env":{}},"labels":{},
                                  "storage":{"size":"1Gi","accessMode":"ReadWriteOnce",
                                             "storageClass":""},
                                  "probes":{},"ingress":{"annotations":{}}})"));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(ToJson(*r), J(R"({"team":"t","storage":{"size":"1Gi"}})"));
}

TEST(SpecToJsonTest, SetButEmptyOptionalsAreKept) {
  auto r = ParseProjectSpec(
      J(R"({"team":"t","ingress":{"className":""},"privateCA":"","imagePullSecrets":[],
             "tolerations":[],"podSecurityContext":{}})"));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  Json j = ToJson(*r);
  EXPECT_EQ(j, J(R"({"team":"t","ingress":{"className":""},"privateCA":"",
                     "imagePullSecrets":[],"tolerations":[],"podSecurityContext":{}})"));
  auto back = ParseProjectSpec(j);
  ASSERT_TRUE(back.ok()) << back.error().ToString();
  EXPECT_EQ(*back, *r);
}

TEST(SpecToJsonTest, FullSpecRoundTripsAndIsStable) {
  auto r = ParseProjectSpec(FullSpec());
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  Json j = ToJson(*r);
  EXPECT_EQ(j, FullSpec());  // every field of FullSpec is non-default, so nothing is dropped
  auto back = ParseProjectSpec(j);
  ASSERT_TRUE(back.ok()) << back.error().ToString();
  EXPECT_EQ(*back, *r);
  EXPECT_EQ(DumpJson(ToJson(*back)), DumpJson(j));
}

TEST(SpecToJsonTest, CanonicalTextIsSortedByKey) {
  auto r = ParseProjectSpec(J(R"({"team":"t","replicas":2,"customHostname":"a.example.com"})"));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(DumpJson(ToJson(*r)), R"({"customHostname":"a.example.com","replicas":2,"team":"t"})");
}

TEST(SpecEqualityTest, DiffersOnAnyField) {
  auto a = ParseProjectSpec(FullSpec());
  ASSERT_TRUE(a.ok());
  ProjectSpec b = *a;
  EXPECT_EQ(*a, b);
  b.tolerations->push_back(Json::object());
  EXPECT_NE(*a, b);
  b = *a;
  b.storage->access_mode = "ReadWriteOnce";
  EXPECT_NE(*a, b);
  b = *a;
  b.stack.env["NEW"] = "1";
  EXPECT_NE(*a, b);
}

TEST(SpecTest, AKeptUrlIsSchemeHostAndPortOnly) {
  for (const char* ok :
       {"http://shop.example.com", "https://shop.example.com:8443/", "https://a.b"}) {
    Json j = {{"team", "t"}, {"url", ok}};
    auto spec = ParseProjectSpec(j);
    ASSERT_TRUE(spec.ok()) << ok << ": " << spec.error().ToString();
    EXPECT_EQ(ToJson(*spec)["url"], ok);
  }
  for (const char* bad :
       {"ftp://a.b", "https://a.b/path", "https://u@a.b", "https://a.b?q", "https://A.b",
        "https://a.b:0", "https://a.b:70000", "https://a.b:", "https://nodot", "https://"}) {
    Json j = {{"team", "t"}, {"url", bad}};
    EXPECT_TRUE(IsInvalid(ParseProjectSpec(j), "spec.url")) << bad;
  }
  EngineConfig config;
  config.domain = "example.com";
  ProjectSpec spec;
  spec.team = "t";
  spec.url = "https://kept.example.com:8443";
  ResolvedSpec r = Resolve(config, "renamed", spec);
  EXPECT_EQ(r.host, "kept.example.com");
  EXPECT_EQ(r.url, "https://kept.example.com:8443/");
  EXPECT_EQ(ProjectHostnames(config, "renamed", spec)[0], "kept.example.com");
  spec.url = "https://example.com";
  EXPECT_TRUE(IsInvalidValue(CheckCustomHostnamePolicy(config, "renamed", spec), "spec.url",
                             "platform's own"));
}

TEST(SpecTest, LicenseTypeIsEeOrNothing) {
  EXPECT_TRUE(ParseProjectSpec(Json{{"team", "t"}, {"licenseType", "ee"}}).ok());
  EXPECT_TRUE(
      IsInvalid(ParseProjectSpec(Json{{"team", "t"}, {"licenseType", "pro"}}), "spec.licenseType"));
}

TEST(SpecTest, StoredJsonNeverTakesCredentialValues) {
  Json j = {{"team", "t"},
            {"credentials", {{"clientId", "a"}, {"clientSecret", "b"}, {"token", "c"}}}};
  EXPECT_TRUE(IsInvalid(ParseProjectSpec(j), "spec.credentials", "never stored"));
  CredentialsInput input;
  auto spec = ParseProjectSpec(j, "spec", &input);
  ASSERT_TRUE(spec.ok()) << spec.error().ToString();
  EXPECT_EQ(input.mode, CredentialsInput::Mode::kSupplied);
  ASSERT_TRUE(spec->credentials.has_value());
  // The stored form parses back to the same reference, and shows no value.
  auto back = ParseProjectSpec(ToJson(*spec));
  ASSERT_TRUE(back.ok()) << back.error().ToString();
  EXPECT_EQ(back->credentials, spec->credentials);
  EXPECT_EQ(DumpJson(ToJson(*spec)).find("\"c\""), std::string::npos);
}

TEST(StackPropertiesTest, SchemaAndDefaultsAsTheDriverAnswersThem) {
  Json schema = StackPropertySchema();
  for (const char* key : {"cpu", "memory", "container"}) {
    ASSERT_TRUE(schema.contains(key)) << key;
    for (const char* field : {"label", "validate", "invalidMessage", "description"}) {
      EXPECT_TRUE(schema[key][field].is_string()) << key << "." << field;
    }
  }
  // The placement property only with several clusters: FlowFuse's editor requires a value for
  // every property.
  EXPECT_FALSE(schema.contains("placement"));
  const std::regex placement(StackPropertySchema(true)["placement"]["validate"].get<std::string>());
  for (const char* good : {"auto", "cluster=east", "region=eu", "region=eu,tier=prod"}) {
    EXPECT_TRUE(std::regex_match(good, placement)) << good;
  }
  for (const char* bad : {"", "cluster=", "cluster=East", "eu", "region=eu,", "region="}) {
    EXPECT_FALSE(std::regex_match(bad, placement)) << bad;
  }
  EXPECT_EQ(DefaultStackProperties(EngineConfig{}.default_stack),
            (Json{{"cpu", 10}, {"memory", 256}, {"container", "flowfuse/node-red"}}));
}

}  // namespace
}  // namespace steward::engine
