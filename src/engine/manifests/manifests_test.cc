// Manifests: unit tests on every rendered object's important fields, the spec hash and the
// live/desired comparison; then an integration test that creates every object in the embedded
// cluster, reads it back through server defaulting, and waits for the readiness rules to hold.
#include "engine/manifests/manifests.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "cluster/embedded_cluster.h"
#include "cluster/profile/profile.h"
#include "common/base64.h"
#include "engine/model/shard.h"
#include "engine/readiness/readiness.h"
#include "kube/client/client.h"
#include "kube/test_support/embedded.h"
#include "test_support/eventually.h"

namespace steward::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kToken[] = "tok-9f8e7d6c5b4a-very-secret";

EngineConfig TestConfig() {
  EngineConfig c;
  c.namespace_name = "projects";
  c.domain = "example.com";
  c.url_scheme = "https";
  c.forge_url = "https://forge.example.com";
  c.labels = {{"tier", "nodered"}};
  c.time_zone = "UTC";
  c.progress_deadline_seconds = 300;
  return c;
}

RenderInput TestInput(const EngineConfig* config) {
  RenderInput in;
  in.id = "p1a2b3";
  in.name = "hello";
  in.config = config;
  ProjectSpec& spec = in.resolved.spec;
  spec.team = "team-7";
  spec.stack.image = "flowfuse/node-red:4.0";
  spec.stack.cpu = 10;
  spec.stack.memory_mb = 256;
  spec.stack.env = {{"ZED", "z"}, {"ALPHA", "a"}};
  spec.replicas = 1;
  spec.labels = {{"customer", "acme"}};
  spec.annotations = {{"example.com/owner", "ops"}};
  in.resolved.host = "hello.example.com";
  in.resolved.url = "https://hello.example.com/";
  in.restart_epoch = 7;
  in.credential = {"client-1", kToken};
  return in;
}

std::vector<Json> AllObjects(const Manifests& m) {
  std::vector<Json> all = {m.deployment, m.service, m.ingress};
  if (m.secret) all.push_back(*m.secret);
  if (m.pvc) all.push_back(*m.pvc);
  if (m.custom_ingress) all.push_back(*m.custom_ingress);
  return all;
}

const Json& PodSpec(const Json& deployment) { return deployment["spec"]["template"]["spec"]; }
const Json& Container(const Json& deployment) { return PodSpec(deployment)["containers"][0]; }

std::vector<std::string> EnvNames(const Json& deployment) {
  std::vector<std::string> names;
  for (const auto& e : Container(deployment)["env"]) names.push_back(e["name"]);
  return names;
}

const Json* Env(const Json& deployment, std::string_view name) {
  for (const auto& e : Container(deployment)["env"]) {
    if (e["name"] == name) return &e;
  }
  return nullptr;
}

// ---- names ----------------------------------------------------------------------------------

TEST(NamesForTest, EveryName) {
  ObjectNames n = NamesFor("p1a2b3", "hello");
  EXPECT_EQ(n.secret, "hello-credentials");
  EXPECT_EQ(n.pvc, "p1a2b3-pvc");
  EXPECT_EQ(n.deployment, "hello");
  EXPECT_EQ(n.service, "hello");
  EXPECT_EQ(n.ingress, "hello");
  EXPECT_EQ(n.custom_ingress, "hello-custom");
}

TEST(NamesForTest, ServiceOfANameStartingWithADigitGetsThePrefix) {
  ObjectNames n = NamesFor("p1", "9lives");
  EXPECT_EQ(n.service, "srv-9lives");
  EXPECT_EQ(n.deployment, "9lives");
  EXPECT_EQ(n.ingress, "9lives");
  EXPECT_EQ(NamesFor("p1", "a9").service, "a9");
}

TEST(RenderTest, IngressPointsAtThePrefixedService) {
  EngineConfig config = TestConfig();
  RenderInput in = TestInput(&config);
  in.name = "0day";
  Manifests m = Render(in);
  EXPECT_EQ(m.service["metadata"]["name"], "srv-0day");
  EXPECT_EQ(m.ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"],
            "srv-0day");
  EXPECT_EQ(m.deployment["metadata"]["name"], "0day");
}

// ---- metadata on everything -------------------------------------------------------------------

TEST(RenderTest, EveryObjectHasNamespaceLabelsAnnotationsAndItsHash) {
  EngineConfig config = TestConfig();
  RenderInput in = TestInput(&config);
  in.resolved.storage = StorageSpec{"2Gi", "", "ReadWriteMany"};
  in.resolved.spec.custom_hostname = "nr.customer.org";
  Manifests m = Render(in);
  std::vector<Json> all = AllObjects(m);
  ASSERT_EQ(all.size(), 6u);
  for (const Json& obj : all) {
    SCOPED_TRACE(obj["kind"].get<std::string>());
    EXPECT_TRUE(obj["apiVersion"].is_string());
    EXPECT_EQ(obj["metadata"]["namespace"], "projects");
    const Json& labels = obj["metadata"]["labels"];
    EXPECT_EQ(labels["steward.io/project"], "p1a2b3");
    EXPECT_EQ(labels["app.kubernetes.io/managed-by"], "steward");
    EXPECT_EQ(labels["app.kubernetes.io/name"], "node-red");
    EXPECT_EQ(labels["app.kubernetes.io/instance"], "hello");
    EXPECT_EQ(labels["tier"], "nodered");
    EXPECT_EQ(labels["customer"], "acme");
    const Json& annotations = obj["metadata"]["annotations"];
    EXPECT_EQ(annotations["example.com/owner"], "ops");
    ASSERT_TRUE(annotations["steward.io/spec-hash"].is_string());
    EXPECT_EQ(annotations["steward.io/spec-hash"], SpecHash(obj));
    EXPECT_EQ(annotations["steward.io/spec-hash"].get<std::string>().size(), 64u);
    EXPECT_FALSE(obj["metadata"].contains("ownerReferences"));
  }
  const Json& pod_labels = m.deployment["spec"]["template"]["metadata"]["labels"];
  EXPECT_EQ(pod_labels, m.deployment["metadata"]["labels"]);
  ASSERT_TRUE(m.secret);
  EXPECT_EQ(m.secret->at("kind"), "Secret");
  EXPECT_EQ(m.pvc->at("kind"), "PersistentVolumeClaim");
  EXPECT_EQ(m.deployment["apiVersion"], "apps/v1");
  EXPECT_EQ(m.service["kind"], "Service");
  EXPECT_EQ(m.ingress["apiVersion"], "networking.k8s.io/v1");
}

TEST(RenderTest, ShardedModeLabelsEveryObjectAndThePodTemplateWithTheShard) {
  EngineConfig config = TestConfig();
  RenderInput in = TestInput(&config);
  in.resolved.storage = StorageSpec{"2Gi", "", "ReadWriteMany"};
  in.resolved.spec.custom_hostname = "nr.customer.org";
  const Manifests unsharded = Render(in);
  config.shards = 64;
  const Manifests m = Render(in);
  const std::string shard = std::to_string(ShardOf("p1a2b3", 64));
  std::vector<Json> all = AllObjects(m);
  ASSERT_EQ(all.size(), 6u);
  all.push_back(m.deployment["spec"]["template"]);
  all.push_back(RenderSuppliedSecret("p1a2b3", "hello", &config, SuppliedCredentials{}, 1, ""));
  AgentManifests agent = RenderAgent("p1a2b3", "agent-1", &config, AgentSpec{"t", "b", {}}, 0);
  all.push_back(agent.deployment);
  all.push_back(agent.deployment["spec"]["template"]);
  all.push_back(agent.service);
  for (const Json& obj : all) {
    SCOPED_TRACE(obj.dump().substr(0, 80));
    EXPECT_EQ(obj["metadata"]["labels"]["steward.io/shard"], shard);
  }
  // Selectors do not change (a Deployment's is immutable): only labels are added.
  EXPECT_EQ(m.deployment["spec"]["selector"], unsharded.deployment["spec"]["selector"]);
  for (const Json& obj : AllObjects(unsharded)) {
    EXPECT_FALSE(obj["metadata"]["labels"].contains("steward.io/shard"));
  }
}

TEST(RenderTest, StewardLabelsCannotBeOverriddenByUserLabels) {
  EngineConfig config = TestConfig();
  config.labels["app.kubernetes.io/managed-by"] = "helm";
  RenderInput in = TestInput(&config);
  in.resolved.spec.labels["steward.io/project"] = "someone-else";
  Manifests m = Render(in);
  EXPECT_EQ(m.deployment["metadata"]["labels"]["steward.io/project"], "p1a2b3");
  EXPECT_EQ(m.deployment["metadata"]["labels"]["app.kubernetes.io/managed-by"], "steward");
  EXPECT_EQ(m.deployment["spec"]["template"]["metadata"]["labels"]["steward.io/project"], "p1a2b3");
}

TEST(RenderTest, NullConfigRendersWithDefaults) {
  RenderInput in = TestInput(nullptr);
  in.resolved.spec.stack = {};
  Manifests m = Render(in);
  EXPECT_EQ(m.deployment["metadata"]["namespace"], "steward");
  EXPECT_EQ(Container(m.deployment)["image"], "flowfuse/node-red");
  EXPECT_EQ(Container(m.deployment)["resources"]["requests"]["cpu"], "100m");
}

// ---- Secret and PVC -----------------------------------------------------------------------------

TEST(RenderTest, SecretHoldsTheCredentialBase64) {
  EngineConfig config = TestConfig();
  Manifests m = Render(TestInput(&config));
  ASSERT_TRUE(m.secret);
  const Json& secret = *m.secret;
  EXPECT_EQ(secret["metadata"]["name"], "hello-credentials");
  EXPECT_EQ(secret["type"], "Opaque");
  ASSERT_EQ(secret["data"].size(), 2u);
  EXPECT_EQ(Base64Decode(secret["data"]["FORGE_CLIENT_ID"].get<std::string>()), "client-1");
  EXPECT_EQ(Base64Decode(secret["data"]["FORGE_PROJECT_TOKEN"].get<std::string>()), kToken);
}

TEST(RenderTest, NoPvcWithoutStorage) {
  EngineConfig config = TestConfig();
  Manifests m = Render(TestInput(&config));
  EXPECT_FALSE(m.pvc.has_value());
  EXPECT_FALSE(PodSpec(m.deployment).contains("volumes"));
  EXPECT_FALSE(Container(m.deployment).contains("volumeMounts"));
}

TEST(RenderTest, PvcFromStorageSpec) {
  EngineConfig config = TestConfig();
  RenderInput in = TestInput(&config);
  in.resolved.storage = StorageSpec{"5Gi", "", "ReadWriteMany"};
  Manifests m = Render(in);
  ASSERT_TRUE(m.pvc.has_value());
  const Json& pvc = *m.pvc;
  EXPECT_EQ(pvc["metadata"]["name"], "p1a2b3-pvc");
  EXPECT_EQ(pvc["spec"]["accessModes"], Json::array({"ReadWriteMany"}));
  EXPECT_EQ(pvc["spec"]["resources"]["requests"]["storage"], "5Gi");
  EXPECT_FALSE(pvc["spec"].contains("storageClassName"));

  in.resolved.storage->storage_class = "efs";
  EXPECT_EQ(Render(in).pvc->at("spec")["storageClassName"], "efs");

  const Json& pod = PodSpec(m.deployment);
  EXPECT_EQ(pod["volumes"],
            Json::parse(
                R"([{"name":"persistence","persistentVolumeClaim":{"claimName":"p1a2b3-pvc"}}])"));
  EXPECT_EQ(Container(m.deployment)["volumeMounts"],
            Json::parse(R"([{"name":"persistence","mountPath":"/data/storage"}])"));
}

// ---- Deployment -----------------------------------------------------------------------------

TEST(RenderTest, DeploymentShape) {
  EngineConfig config = TestConfig();
  RenderInput in = TestInput(&config);
  in.resolved.spec.replicas = 3;
  Manifests m = Render(in);
  const Json& spec = m.deployment["spec"];
  EXPECT_EQ(m.deployment["metadata"]["name"], "hello");
  EXPECT_EQ(spec["replicas"], 3);
  EXPECT_EQ(spec["selector"], Json::parse(R"({"matchLabels":{"steward.io/project":"p1a2b3"}})"));
  EXPECT_EQ(spec["revisionHistoryLimit"], 3);
  EXPECT_EQ(spec["progressDeadlineSeconds"], 300);
  EXPECT_EQ(
      spec["strategy"],
      Json::parse(R"({"type":"RollingUpdate","rollingUpdate":{"maxSurge":1,"maxUnavailable":0}})"));
  const Json& tmpl_annotations = spec["template"]["metadata"]["annotations"];
  EXPECT_EQ(tmpl_annotations["steward.io/restart-epoch"], "7");
  EXPECT_EQ(tmpl_annotations["steward.io/credential-id"], "client-1");
  EXPECT_EQ(tmpl_annotations["example.com/owner"], "ops");
  EXPECT_FALSE(tmpl_annotations.contains("steward.io/spec-hash"));
}

TEST(RenderTest, RecreateWhenThePvcCanBeMountedByOnePodOnly) {
  EngineConfig config = TestConfig();
  RenderInput in = TestInput(&config);
  for (const char* mode : {"ReadWriteOnce", "ReadWriteOncePod"}) {
    in.resolved.storage = StorageSpec{"1Gi", "", mode};
    EXPECT_EQ(Render(in).deployment["spec"]["strategy"], Json::parse(R"({"type":"Recreate"})"))
        << mode;
  }
  in.resolved.storage = StorageSpec{"1Gi", "", "ReadWriteMany"};
  EXPECT_EQ(Render(in).deployment["spec"]["strategy"]["type"], "RollingUpdate");
}

TEST(RenderTest, PodSpecDefaultsFromConfig) {
  EngineConfig config = TestConfig();
  Manifests m = Render(TestInput(&config));
  const Json& pod = PodSpec(m.deployment);
  EXPECT_EQ(pod["enableServiceLinks"], false);
  EXPECT_FALSE(m.deployment["spec"]["template"].contains("enableServiceLinks"));
  EXPECT_EQ(pod["securityContext"],
            Json::parse(R"({"runAsUser":1000,"runAsGroup":1000,"fsGroup":1000})"));
  EXPECT_FALSE(pod.contains("serviceAccountName"));
  EXPECT_FALSE(pod.contains("nodeSelector"));
  EXPECT_FALSE(pod.contains("tolerations"));
  EXPECT_FALSE(pod.contains("imagePullSecrets"));
  EXPECT_EQ(pod["containers"].size(), 1u);
  const Json& c = Container(m.deployment);
  EXPECT_EQ(c["name"], "node-red");
  EXPECT_EQ(c["image"], "flowfuse/node-red:4.0");
  EXPECT_EQ(c["imagePullPolicy"], "Always");
  EXPECT_EQ(c["ports"], Json::parse(R"([{"name":"web","containerPort":1880,"protocol":"TCP"},
      {"name":"management","containerPort":2880,"protocol":"TCP"}])"));
  EXPECT_EQ(c["securityContext"], Json::parse(R"({"allowPrivilegeEscalation":false})"));
  EXPECT_FALSE(c.contains("livenessProbe"));
  EXPECT_FALSE(c.contains("readinessProbe"));
  EXPECT_FALSE(c.contains("startupProbe"));
}

TEST(RenderTest, PodSpecOptionsFromConfigAndSpec) {
  EngineConfig config = TestConfig();
  config.service_account = "nr-editor";
  config.node_selector = {{"pool", "default"}};
  config.tolerations = Json::parse(R"([{"key":"a","operator":"Exists"}])");
  config.image_pull_secrets = {"regcred"};
  config.readiness_probe = Json::parse(R"({"httpGet":{"path":"/flowforge/ready","port":2880}})");
  RenderInput in = TestInput(&config);
  Manifests from_config = Render(in);
  const Json& pod = PodSpec(from_config.deployment);
  EXPECT_EQ(pod["serviceAccountName"], "nr-editor");
  EXPECT_EQ(pod["nodeSelector"], Json::parse(R"({"pool":"default"})"));
  EXPECT_EQ(pod["tolerations"], config.tolerations);
  EXPECT_EQ(pod["imagePullSecrets"], Json::parse(R"([{"name":"regcred"}])"));
  EXPECT_EQ(Container(from_config.deployment)["readinessProbe"], *config.readiness_probe);

  ProjectSpec& spec = in.resolved.spec;
  spec.node_selector = {{"pool", "gpu"}};
  spec.tolerations = Json::parse(R"([{"key":"b","operator":"Exists"}])");
  spec.image_pull_secrets = std::vector<std::string>{"mine", "theirs"};
  spec.liveness_probe = Json::parse(R"({"tcpSocket":{"port":1880}})");
  spec.pod_security_context = Json::object();
  spec.container_security_context = Json::parse(R"({"runAsNonRoot":true})");
  Manifests from_spec = Render(in);
  const Json& pod2 = PodSpec(from_spec.deployment);
  EXPECT_EQ(pod2["nodeSelector"], Json::parse(R"({"pool":"gpu"})"));
  EXPECT_EQ(pod2["tolerations"], *spec.tolerations);
  EXPECT_EQ(pod2["imagePullSecrets"], Json::parse(R"([{"name":"mine"},{"name":"theirs"}])"));
  EXPECT_EQ(pod2["securityContext"], Json::object());
  const Json& c = Container(from_spec.deployment);
  EXPECT_EQ(c["livenessProbe"], *spec.liveness_probe);
  EXPECT_EQ(c["readinessProbe"], *config.readiness_probe);
  EXPECT_EQ(c["securityContext"], Json::parse(R"({"runAsNonRoot":true})"));
}

TEST(RenderTest, ResourcesAsFlowFuse) {
  EngineConfig config = TestConfig();
  Manifests m = Render(TestInput(&config));
  EXPECT_EQ(Container(m.deployment)["resources"],
            Json::parse(R"({"requests":{"cpu":"100m","memory":"256Mi"},
                            "limits":{"cpu":"100m","memory":"384Mi"}})"));
  EXPECT_EQ((*Env(m.deployment, "FORGE_MEMORY_LIMIT"))["value"], "256");
  EXPECT_EQ((*Env(m.deployment, "FORGE_CPU_LIMIT"))["value"], "10");
}

TEST(RenderTest, ResourcesInCanonicalQuantityForm) {
  EngineConfig config = TestConfig();
  RenderInput in = TestInput(&config);
  in.resolved.spec.stack.cpu = 100;
  in.resolved.spec.stack.memory_mb = 896;
  const Json r = Container(Render(in).deployment)["resources"];
  EXPECT_EQ(r["requests"]["cpu"], "1");
  EXPECT_EQ(r["limits"]["cpu"], "1");
  EXPECT_EQ(r["requests"]["memory"], "896Mi");
  EXPECT_EQ(r["limits"]["memory"], "1Gi");
  in.resolved.spec.stack.cpu = 250;
  in.resolved.spec.stack.memory_mb = 2048;
  const Json r2 = Container(Render(in).deployment)["resources"];
  EXPECT_EQ(r2["requests"]["cpu"], "2500m");
  EXPECT_EQ(r2["requests"]["memory"], "2Gi");
  EXPECT_EQ(r2["limits"]["memory"], "2176Mi");
}

TEST(RenderTest, UnsetStackFieldsFallBackToTheConfigDefaultStack) {
  EngineConfig config = TestConfig();
  config.default_stack = {"registry.local/nr:3", 50, 512, {}};
  RenderInput in = TestInput(&config);
  in.resolved.spec.stack.image = "";
  in.resolved.spec.stack.cpu = 0;
  in.resolved.spec.stack.memory_mb = 0;
  Manifests m = Render(in);
  EXPECT_EQ(Container(m.deployment)["image"], "registry.local/nr:3");
  EXPECT_EQ(Container(m.deployment)["resources"]["limits"]["cpu"], "500m");
  EXPECT_EQ(Container(m.deployment)["resources"]["limits"]["memory"], "640Mi");
}

TEST(RenderTest, EnvInStableOrderWithCredentialsFromTheSecret) {
  EngineConfig config = TestConfig();
  Manifests m = Render(TestInput(&config));
  EXPECT_THAT(
      EnvNames(m.deployment),
      ElementsAre("TZ", "FORGE_URL", "BASE_URL", "FORGE_TEAM_ID", "FORGE_PROJECT_ID",
                  "FORGE_CLIENT_ID", "FORGE_PROJECT_TOKEN", "FORGE_NR_NO_TCP_IN",
                  "FORGE_NR_NO_UDP_IN", "FORGE_MEMORY_LIMIT", "FORGE_CPU_LIMIT", "ALPHA", "ZED"));
  EXPECT_EQ((*Env(m.deployment, "TZ"))["value"], "UTC");
  EXPECT_EQ((*Env(m.deployment, "FORGE_URL"))["value"], "https://forge.example.com");
  EXPECT_EQ((*Env(m.deployment, "BASE_URL"))["value"], "https://hello.example.com");
  EXPECT_EQ((*Env(m.deployment, "FORGE_TEAM_ID"))["value"], "team-7");
  EXPECT_EQ((*Env(m.deployment, "FORGE_PROJECT_ID"))["value"], "p1a2b3");
  EXPECT_EQ((*Env(m.deployment, "FORGE_NR_NO_TCP_IN"))["value"], "true");
  EXPECT_EQ((*Env(m.deployment, "FORGE_NR_NO_UDP_IN"))["value"], "true");
  EXPECT_EQ(*Env(m.deployment, "FORGE_CLIENT_ID"),
            Json::parse(R"({"name":"FORGE_CLIENT_ID","valueFrom":{"secretKeyRef":
                {"name":"hello-credentials","key":"FORGE_CLIENT_ID"}}})"));
  EXPECT_EQ(*Env(m.deployment, "FORGE_PROJECT_TOKEN"),
            Json::parse(R"({"name":"FORGE_PROJECT_TOKEN","valueFrom":{"secretKeyRef":
                {"name":"hello-credentials","key":"FORGE_PROJECT_TOKEN"}}})"));
  EXPECT_EQ(Env(m.deployment, "NODE_EXTRA_CA_CERTS"), nullptr);
  // The token appears nowhere in the Deployment, the Service or the Ingress.
  for (const Json* obj : {&m.deployment, &m.service, &m.ingress}) {
    EXPECT_THAT(DumpJson(*obj), Not(HasSubstr(kToken)));
  }
}

TEST(RenderTest, SuppliedCredentialsComeFromTheirOwnSecretAndRollThePods) {
  EngineConfig config = TestConfig();
  config.log_passthrough = true;
  RenderInput in = TestInput(&config);
  SuppliedCredentials values;
  values.env = {{"FORGE_CLIENT_ID", "ffp_id"},
                {"FORGE_CLIENT_SECRET", "ffp_secret"},
                {"FORGE_PROJECT_TOKEN", "ffpt_token"},
                {"FORGE_NR_SECRET", "nr-key"}};
  in.resolved.spec.credentials = values.Ref();
  in.resolved.spec.license_type = "ee";
  Manifests m = Render(in);
  const std::string secret = "p1a2b3-credentials-" + values.Ref().fingerprint;
  EXPECT_EQ(SuppliedSecretName("p1a2b3", values.Ref().fingerprint), secret);
  for (const char* key :
       {"FORGE_CLIENT_ID", "FORGE_CLIENT_SECRET", "FORGE_PROJECT_TOKEN", "FORGE_NR_SECRET"}) {
    EXPECT_EQ(
        *Env(m.deployment, key),
        (Json{{"name", key}, {"valueFrom", {{"secretKeyRef", {{"name", secret}, {"key", key}}}}}}))
        << key;
  }
  EXPECT_EQ(Env(m.deployment, "FORGE_BROKER_URL"), nullptr);
  // No Secret of Steward's own credentials: the pod never reads it, so none is generated.
  EXPECT_FALSE(m.secret.has_value());
  EXPECT_EQ((*Env(m.deployment, "FORGE_LICENSE_TYPE"))["value"], "ee");
  EXPECT_EQ((*Env(m.deployment, "FORGE_LOG_PASSTHROUGH"))["value"], "true");
  EXPECT_EQ(m.deployment["spec"]["template"]["metadata"]["annotations"]["steward.io/credential-id"],
            "supplied-" + values.Ref().fingerprint);
  for (const char* value : {"ffp_secret", "ffpt_token", "nr-key"}) {
    EXPECT_THAT(DumpJson(m.deployment), Not(HasSubstr(value)));
  }
  // New values: another Secret, another pod template.
  SuppliedCredentials next = values;
  next.env["FORGE_PROJECT_TOKEN"] = "ffpt_next";
  in.resolved.spec.credentials = next.Ref();
  EXPECT_NE(Render(in).deployment["spec"]["template"], m.deployment["spec"]["template"]);

  const Json sealed = RenderSuppliedSecret("p1a2b3", "hello", &config, values, 1234, "feed1");
  EXPECT_EQ(sealed["metadata"]["annotations"]["steward.io/supplied-at"], "1234");
  EXPECT_EQ(sealed["metadata"]["annotations"]["steward.io/store"], "feed1");
  EXPECT_FALSE(
      RenderSuppliedSecret("p1a2b3", "hello", &config, values, 1234, "")["metadata"]["annotations"]
          .contains("steward.io/store"));
  EXPECT_EQ(sealed["metadata"]["name"], secret);
  EXPECT_EQ(sealed["immutable"], true);
  EXPECT_EQ(sealed["metadata"]["labels"]["steward.io/project"], "p1a2b3");
  EXPECT_EQ(sealed["metadata"]["labels"]["steward.io/credentials"], "supplied");
  EXPECT_EQ(Base64Decode(sealed["data"]["FORGE_CLIENT_SECRET"].get<std::string>()), "ffp_secret");
}

TEST(RenderTest, FlowFuseLabelsOnTheWorkloadAndTheVolume) {
  EngineConfig config = TestConfig();
  RenderInput in = TestInput(&config);
  in.resolved.storage = StorageSpec{"1Gi", "", "ReadWriteMany"};
  Manifests m = Render(in);
  for (const Json* labels : {&m.deployment["metadata"]["labels"],
                             &m.deployment["spec"]["template"]["metadata"]["labels"]}) {
    EXPECT_EQ((*labels)["nodered"], "true");
    EXPECT_EQ((*labels)["app"], "p1a2b3");
    EXPECT_EQ((*labels)["name"], "hello");
  }
  EXPECT_EQ(m.pvc->at("metadata")["labels"]["ff-project-id"], "p1a2b3");
  EXPECT_EQ(m.pvc->at("metadata")["labels"]["ff-project-name"], "hello");
  // The selector stays Steward's own (immutable on a Deployment).
  EXPECT_EQ(m.deployment["spec"]["selector"]["matchLabels"],
            (Json{{"steward.io/project", "p1a2b3"}}));
}

TEST(RenderTest, SchedulerNameFromTheConfig) {
  EngineConfig config = TestConfig();
  EXPECT_FALSE(
      Render(TestInput(&config)).deployment["spec"]["template"]["spec"].contains("schedulerName"));
  config.scheduler_name = "bin-packer";
  EXPECT_EQ(Render(TestInput(&config)).deployment["spec"]["template"]["spec"]["schedulerName"],
            "bin-packer");
}

// Kubernetes' IsDNS1123Subdomain (apimachinery validation): at most 253 characters of
// [a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)* — unlike RFC 1123 it sets no
// limit on a label's length, so "<63 characters>-credentials" is a valid Secret name.
bool KubeSubdomain(const std::string& s) {
  if (s.size() > 253) return false;
  std::string dotted = s;
  for (char& c : dotted) {
    if (c == '.') c = '\n';
  }
  std::istringstream parts(dotted);
  std::string label;
  int n = 0;
  while (std::getline(parts, label)) {
    ++n;
    if (label.empty() || label.front() == '-' || label.back() == '-') return false;
    for (char c : label) {
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
    }
  }
  return n > 0 && s.back() != '.';
}

TEST(NamesTest, EveryObjectNameFitsKubernetesLimitsForAnyFlowFuseName) {
  for (const std::string& name :
       {std::string("a"), std::string(63, 'z'), "9" + std::string(62, 'x'), std::string("x-"),
        std::string("1-"), "a" + std::string(61, '-') + "b", std::string("shop-custom")}) {
    const ObjectNames n = NamesFor("0123abcd-0000-4000-8000-000000000000", name);
    EXPECT_TRUE(IsDns1123Label(n.deployment)) << name << " -> " << n.deployment;
    EXPECT_TRUE(IsDns1123Label(n.service) && n.service[0] >= 'a') << name << " -> " << n.service;
    EXPECT_TRUE(IsDns1123Label(n.ingress)) << name;
    for (const std::string* s : {&n.secret, &n.custom_ingress, &n.tls, &n.custom_tls, &n.pvc}) {
      EXPECT_TRUE(KubeSubdomain(*s)) << name << " -> " << *s;
    }
  }
  // As FlowFuse's driver names them, where the name allows.
  const ObjectNames d = NamesFor("id1", "7up");
  EXPECT_EQ(d.deployment, "7up");
  EXPECT_EQ(d.service, "srv-7up");
  EXPECT_EQ(d.ingress, "7up");
  EXPECT_EQ(d.custom_ingress, "7up-custom");
  EXPECT_EQ(d.tls, "7up");
  EXPECT_EQ(d.custom_tls, "7up-custom");
  EXPECT_EQ(d.pvc, "id1-pvc");
}

TEST(RenderTest, StackEnvCannotShadowACredentialWithAPlainValue) {
  EngineConfig config = TestConfig();
  RenderInput in = TestInput(&config);
  in.resolved.spec.stack.env["FORGE_PROJECT_TOKEN"] = "plain-leak";
  in.resolved.spec.stack.env["TZ"] = "Mars/Olympus";
  Manifests m = Render(in);
  int tokens = 0;
  for (const auto& name : EnvNames(m.deployment)) tokens += name == "FORGE_PROJECT_TOKEN";
  EXPECT_EQ(tokens, 1);
  EXPECT_THAT(DumpJson(m.deployment), Not(HasSubstr("plain-leak")));
  EXPECT_EQ((*Env(m.deployment, "TZ"))["value"], "UTC");
}

TEST(RenderTest, PrivateCaMountsTheConfigMapAndSetsTheBundlePath) {
  EngineConfig config = TestConfig();
  config.private_ca = "corp-ca";
  RenderInput in = TestInput(&config);
  in.resolved.storage = StorageSpec{"1Gi", "", "ReadWriteOnce"};
  Manifests m = Render(in);
  const Json& pod = PodSpec(m.deployment);
  EXPECT_EQ(pod["volumes"][1], Json::parse(R"({"name":"cacert","configMap":{"name":"corp-ca"}})"));
  EXPECT_EQ(Container(m.deployment)["volumeMounts"][1],
            Json::parse(R"({"name":"cacert","mountPath":"/usr/local/ssl-certs","readOnly":true})"));
  EXPECT_EQ(EnvNames(m.deployment)[11], "NODE_EXTRA_CA_CERTS");
  EXPECT_EQ((*Env(m.deployment, "NODE_EXTRA_CA_CERTS"))["value"], "/usr/local/ssl-certs/chain.pem");

  in.resolved.spec.private_ca = "team-ca";  // the spec's wins
  EXPECT_EQ(PodSpec(Render(in).deployment)["volumes"][1]["configMap"]["name"], "team-ca");
}

TEST(RenderTest, BaseUrlKeepsAPortAndDropsTheTrailingSlash) {
  EngineConfig config = TestConfig();
  RenderInput in = TestInput(&config);
  in.resolved.url = "http://hello.localhost:8080/";
  EXPECT_EQ((*Env(Render(in).deployment, "BASE_URL"))["value"], "http://hello.localhost:8080");
}

// ---- Service and Ingresses ------------------------------------------------------------------

TEST(RenderTest, ServiceShape) {
  EngineConfig config = TestConfig();
  config.service_type = "NodePort";
  Manifests m = Render(TestInput(&config));
  EXPECT_EQ(m.service["metadata"]["name"], "hello");
  EXPECT_EQ(m.service["spec"], Json::parse(R"({
      "type":"NodePort",
      "selector":{"steward.io/project":"p1a2b3"},
      "ports":[{"name":"web","port":1880,"targetPort":"web","protocol":"TCP"},
               {"name":"management","port":2880,"targetPort":"management","protocol":"TCP"}]})"));
}

TEST(RenderTest, IngressWithoutTls) {
  EngineConfig config = TestConfig();
  Manifests m = Render(TestInput(&config));
  EXPECT_EQ(m.ingress["metadata"]["name"], "hello");
  EXPECT_EQ(m.ingress["spec"], Json::parse(R"({"rules":[{"host":"hello.example.com","http":{
      "paths":[{"path":"/","pathType":"Prefix",
                "backend":{"service":{"name":"hello","port":{"number":1880}}}}]}}]})"));
  EXPECT_FALSE(m.custom_ingress.has_value());
}

TEST(RenderTest, IngressClassAndAnnotationsFromConfigAndSpec) {
  EngineConfig config = TestConfig();
  config.ingress_class = "nginx";
  config.ingress_annotations = {{"nginx.ingress.kubernetes.io/proxy-body-size", "10m"},
                                {"example.com/shared", "config"}};
  RenderInput in = TestInput(&config);
  in.resolved.spec.ingress_annotations = {{"example.com/shared", "spec"}};
  Manifests m = Render(in);
  EXPECT_EQ(m.ingress["spec"]["ingressClassName"], "nginx");
  const Json& a = m.ingress["metadata"]["annotations"];
  EXPECT_EQ(a["nginx.ingress.kubernetes.io/proxy-body-size"], "10m");
  EXPECT_EQ(a["example.com/shared"], "spec");
  EXPECT_EQ(a["example.com/owner"], "ops");
  EXPECT_FALSE(m.ingress["spec"].contains("tls"));
  // Ingress annotations stay on the Ingress.
  EXPECT_FALSE(m.service["metadata"]["annotations"].contains("example.com/shared"));

  in.resolved.spec.ingress_class = "traefik";
  EXPECT_EQ(Render(in).ingress["spec"]["ingressClassName"], "traefik");
}

TEST(RenderTest, IssuerAddsAnnotationAndTls) {
  EngineConfig config = TestConfig();
  config.cert_manager_issuer = "letsencrypt";
  Manifests m = Render(TestInput(&config));
  EXPECT_EQ(m.ingress["metadata"]["annotations"]["cert-manager.io/cluster-issuer"], "letsencrypt");
  EXPECT_EQ(m.ingress["spec"]["tls"],
            Json::parse(R"([{"hosts":["hello.example.com"],"secretName":"hello"}])"));
}

TEST(RenderTest, WithAnIssuerCertManagerKeysFromElsewhereAreDropped) {
  EngineConfig config = TestConfig();
  config.cert_manager_issuer = "letsencrypt";
  config.ingress_annotations = {{"cert-manager.io/issuer", "from-config"},
                                {"example.com/kept", "1"}};
  RenderInput in = TestInput(&config);
  in.resolved.spec.ingress_annotations = {{"cert-manager.io/duration", "24h"}};
  const Json a = Render(in).ingress["metadata"]["annotations"];
  EXPECT_EQ(a["cert-manager.io/cluster-issuer"], "letsencrypt");
  EXPECT_FALSE(a.contains("cert-manager.io/issuer")) << a.dump();
  EXPECT_FALSE(a.contains("cert-manager.io/duration")) << a.dump();
  EXPECT_EQ(a["example.com/kept"], "1");
  // Without an issuer they are the operator's way of asking for TLS, and stay.
  config.cert_manager_issuer = "";
  const Json b = Render(in).ingress["metadata"]["annotations"];
  EXPECT_EQ(b["cert-manager.io/duration"], "24h");
  EXPECT_EQ(b["cert-manager.io/issuer"], "from-config");
}

TEST(RenderTest, AnnotationTemplatesAreFilledAsFlowFusesDriverFillsThem) {
  EngineConfig config = TestConfig();
  config.url_scheme = "https";
  config.url_port = 8443;
  config.ingress_annotations = {
      {"example.com/all",
       "{{serviceName}} {{ instanceURL }} {{instanceHost}} {{instanceProtocol}}"},
      {"example.com/unknown", "{{other}} and {{ serviceName"}};
  config.custom_hostname.ingress_annotations = {{"example.com/custom", "{{instanceURL}}"}};
  RenderInput in = TestInput(&config);
  in.name = "1st";
  in.resolved = Resolve(config, in.name, in.resolved.spec);
  in.resolved.spec.custom_hostname = "nr.customer.org";
  Manifests m = Render(in);
  const Json& a = m.ingress["metadata"]["annotations"];
  EXPECT_EQ(a["example.com/all"],
            "srv-1st https://1st.example.com:8443/ 1st.example.com:8443 https:");
  EXPECT_EQ(a["example.com/unknown"], "{{other}} and {{ serviceName");
  EXPECT_EQ(m.custom_ingress->at("metadata")["annotations"]["example.com/custom"],
            "https://nr.customer.org:8443/");
}

TEST(RenderTest, CertManagerAnnotationWithoutIssuerAddsTls) {
  EngineConfig config = TestConfig();
  RenderInput in = TestInput(&config);
  in.resolved.spec.ingress_annotations = {{"cert-manager.io/issuer", "team-issuer"}};
  Manifests m = Render(in);
  EXPECT_EQ(m.ingress["metadata"]["annotations"]["cert-manager.io/issuer"], "team-issuer");
  EXPECT_FALSE(m.ingress["metadata"]["annotations"].contains("cert-manager.io/cluster-issuer"));
  EXPECT_EQ(m.ingress["spec"]["tls"][0]["secretName"], "hello");
  // A key that merely contains the prefix elsewhere does not count.
  in.resolved.spec.ingress_annotations = {{"example.com/cert-manager.io", "x"}};
  EXPECT_FALSE(Render(in).ingress["spec"].contains("tls"));
}

TEST(RenderTest, CustomHostnameIngress) {
  EngineConfig config = TestConfig();
  config.ingress_class = "nginx";
  config.ingress_annotations = {{"example.com/main-only", "1"}};
  config.cert_manager_issuer = "main-issuer";
  config.custom_hostname.ingress_class = "public";
  config.custom_hostname.ingress_annotations = {{"example.com/custom", "yes"}};
  RenderInput in = TestInput(&config);
  in.resolved.spec.custom_hostname = "nr.customer.org";
  Manifests m = Render(in);
  ASSERT_TRUE(m.custom_ingress.has_value());
  const Json& ci = *m.custom_ingress;
  EXPECT_EQ(ci["metadata"]["name"], "hello-custom");
  EXPECT_EQ(ci["spec"]["ingressClassName"], "public");
  EXPECT_EQ(ci["spec"]["rules"][0]["host"], "nr.customer.org");
  EXPECT_EQ(ci["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"], "hello");
  EXPECT_EQ(ci["metadata"]["annotations"]["example.com/custom"], "yes");
  EXPECT_FALSE(ci["metadata"]["annotations"].contains("example.com/main-only"));
  // The main issuer does not apply to the custom hostname (a FlowFuse bug this fixes).
  EXPECT_FALSE(ci["metadata"]["annotations"].contains("cert-manager.io/cluster-issuer"));
  EXPECT_FALSE(ci["spec"].contains("tls"));

  config.custom_hostname.cert_manager_issuer = "custom-issuer";
  Manifests with_tls = Render(in);
  EXPECT_EQ(
      with_tls.custom_ingress->at("metadata")["annotations"]["cert-manager.io/cluster-issuer"],
      "custom-issuer");
  EXPECT_EQ(with_tls.custom_ingress->at("spec")["tls"],
            Json::parse(R"([{"hosts":["nr.customer.org"],"secretName":"hello-custom"}])"));
  EXPECT_EQ(with_tls.ingress["spec"]["tls"][0]["secretName"], "hello");
}

// ---- SpecHash -------------------------------------------------------------------------------

std::string DeploymentHash(const RenderInput& in) {
  return Render(in).deployment["metadata"]["annotations"]["steward.io/spec-hash"];
}

TEST(SpecHashTest, StableAcrossRenders) {
  EngineConfig config = TestConfig();
  RenderInput in = TestInput(&config);
  in.resolved.storage = StorageSpec{"1Gi", "", "ReadWriteOnce"};
  in.resolved.spec.custom_hostname = "nr.customer.org";
  Manifests a = Render(in);
  Manifests b = Render(in);
  std::vector<Json> all_a = AllObjects(a);
  std::vector<Json> all_b = AllObjects(b);
  ASSERT_EQ(all_a.size(), all_b.size());
  for (size_t i = 0; i < all_a.size(); ++i) EXPECT_EQ(DumpJson(all_a[i]), DumpJson(all_b[i]));
  // Hashing the sealed object gives the hash it carries (the annotation is left out).
  EXPECT_EQ(SpecHash(a.deployment),
            a.deployment["metadata"]["annotations"]["steward.io/spec-hash"]);
}

TEST(SpecHashTest, ChangesWithEveryRolloutInput) {
  EngineConfig config = TestConfig();
  const RenderInput base = TestInput(&config);
  const std::string h = DeploymentHash(base);
  {
    RenderInput in = base;
    in.resolved.spec.stack.image = "flowfuse/node-red:4.1";
    EXPECT_NE(DeploymentHash(in), h) << "image";
  }
  {
    RenderInput in = base;
    in.resolved.spec.stack.env["ALPHA"] = "b";
    EXPECT_NE(DeploymentHash(in), h) << "env";
  }
  {
    RenderInput in = base;
    in.resolved.spec.replicas = 2;
    EXPECT_NE(DeploymentHash(in), h) << "replicas";
  }
  {
    RenderInput in = base;
    in.restart_epoch = 8;
    EXPECT_NE(DeploymentHash(in), h) << "restart epoch";
  }
  {
    RenderInput in = base;
    in.credential.id = "client-2";
    EXPECT_NE(DeploymentHash(in), h) << "credential id";
  }
  {
    RenderInput in = base;
    in.resolved.spec.labels["customer"] = "other";
    EXPECT_NE(DeploymentHash(in), h) << "labels";
  }
  {
    RenderInput in = base;
    in.resolved.spec.annotations["example.com/owner"] = "dev";
    EXPECT_NE(DeploymentHash(in), h) << "annotations";
  }
  const std::string secret_hash =
      Render(base).secret.value()["metadata"]["annotations"]["steward.io/spec-hash"];
  RenderInput rotated = base;
  rotated.credential.token = "tok-new";
  EXPECT_NE(Render(rotated).secret.value()["metadata"]["annotations"]["steward.io/spec-hash"],
            secret_hash);
}

TEST(SpecHashTest, IgnoresStatusAndServerMetadata) {
  EngineConfig config = TestConfig();
  Json d = Render(TestInput(&config)).deployment;
  const std::string h = SpecHash(d);
  Json live = d;
  live["metadata"]["uid"] = "0b1c";
  live["metadata"]["resourceVersion"] = "812";
  live["metadata"]["generation"] = 4;
  live["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z";
  live["metadata"]["managedFields"] = Json::array({{{"manager", "kubectl"}}});
  live["metadata"]["namespace"] = "elsewhere";
  live["status"] = {{"replicas", 1}, {"observedGeneration", 4}};
  live["metadata"]["annotations"]["steward.io/spec-hash"] = "stale";
  EXPECT_EQ(SpecHash(live), h);
  // Absent and empty label/annotation maps hash alike.
  Json bare = {{"kind", "X"}, {"metadata", {{"name", "a"}}}};
  Json empty = {{"kind", "X"},
                {"metadata", {{"name", "a"}, {"labels", Json::object()}, {"annotations", {}}}}};
  EXPECT_EQ(SpecHash(bare), SpecHash(empty));
  // But a spec field or the name does change it.
  live["spec"]["paused"] = true;
  EXPECT_NE(SpecHash(live), h);
  Json renamed = d;
  renamed["metadata"]["name"] = "other";
  EXPECT_NE(SpecHash(renamed), h);
}

TEST(SpecHashTest, KnownValue) {
  // Pins the canonical form: sorted keys, compact, metadata reduced.
  Json obj = {
      {"kind", "ConfigMap"}, {"metadata", {{"name", "a"}, {"uid", "u"}}}, {"data", {{"k", "v"}}}};
  // sha256 of {"data":{"k":"v"},"kind":"ConfigMap","metadata":{"name":"a"}}
  EXPECT_EQ(SpecHash(obj), "04e7c3cd5749fdb69e87b66257626d490d653b3d7bc714ffd0919185e22c2618");
}

// ---- LiveMatchesDesired ---------------------------------------------------------------------

Json LiveDeployment(const Json& desired) {
  Json live = desired;
  live["metadata"]["uid"] = "u-1";
  live["metadata"]["resourceVersion"] = "77";
  live["metadata"]["generation"] = 1;
  live["metadata"]["annotations"]["deployment.kubernetes.io/revision"] = "1";
  live["spec"]["template"]["spec"]["restartPolicy"] = "Always";
  live["spec"]["template"]["spec"]["dnsPolicy"] = "ClusterFirst";
  Json& c = live["spec"]["template"]["spec"]["containers"][0];
  c["terminationMessagePath"] = "/dev/termination-log";
  c["env"][0]["extra"] = "server-added";
  live["status"] = {{"replicas", 1}};
  return live;
}

TEST(LiveMatchesDesiredTest, ServerAddedFieldsAreIgnored) {
  EngineConfig config = TestConfig();
  Json desired = Render(TestInput(&config)).deployment;
  EXPECT_TRUE(LiveMatchesDesired(desired, desired));
  EXPECT_TRUE(LiveMatchesDesired(desired, LiveDeployment(desired)));
}

TEST(LiveMatchesDesiredTest, ChangedValueIsDrift) {
  EngineConfig config = TestConfig();
  Json desired = Render(TestInput(&config)).deployment;
  Json live = LiveDeployment(desired);
  live["spec"]["replicas"] = 2;
  EXPECT_FALSE(LiveMatchesDesired(desired, live));
  live = LiveDeployment(desired);
  live["spec"]["template"]["spec"]["containers"][0]["image"] = "evil:latest";
  EXPECT_FALSE(LiveMatchesDesired(desired, live));
  live = LiveDeployment(desired);
  live["metadata"]["labels"]["steward.io/project"] = "x";
  EXPECT_FALSE(LiveMatchesDesired(desired, live));
  live = LiveDeployment(desired);
  live["metadata"]["annotations"].erase("steward.io/spec-hash");
  EXPECT_FALSE(LiveMatchesDesired(desired, live));
  live = LiveDeployment(desired);
  live["spec"].erase("selector");
  EXPECT_FALSE(LiveMatchesDesired(desired, live));
  live = LiveDeployment(desired);
  live["spec"]["replicas"] = "1";  // type matters
  EXPECT_FALSE(LiveMatchesDesired(desired, live));
}

TEST(LiveMatchesDesiredTest, ArrayLengthMustMatch) {
  EngineConfig config = TestConfig();
  Json desired = Render(TestInput(&config)).deployment;
  Json live = LiveDeployment(desired);
  live["spec"]["template"]["spec"]["containers"][0]["env"].push_back(
      {{"name", "INJECTED"}, {"value", "1"}});
  EXPECT_FALSE(LiveMatchesDesired(desired, live));
  live = LiveDeployment(desired);
  live["spec"]["template"]["spec"]["containers"].push_back({{"name", "sidecar"}});
  EXPECT_FALSE(LiveMatchesDesired(desired, live));
  live = LiveDeployment(desired);
  live["spec"]["template"]["spec"]["containers"][0]["env"].erase(0);
  EXPECT_FALSE(LiveMatchesDesired(desired, live));
}

TEST(LiveMatchesDesiredTest, OtherMetadataAndStatusAreIgnored) {
  Json desired = {{"kind", "Service"},
                  {"metadata", {{"name", "a"}, {"namespace", "ns"}, {"labels", {{"x", "1"}}}}},
                  {"spec", {{"type", "ClusterIP"}}}};
  Json live = desired;
  live["metadata"]["namespace"] = "other";  // only labels and annotations are compared
  live["metadata"]["labels"]["added-by-someone"] = "y";
  live["spec"]["clusterIP"] = "10.96.0.12";
  live["status"] = {{"loadBalancer", Json::object()}};
  EXPECT_TRUE(LiveMatchesDesired(desired, live));
}

TEST(LiveMatchesDesiredTest, OmittedZeroValuesMatch) {
  Json desired = {{"kind", "Deployment"},
                  {"metadata", {{"name", "a"}}},
                  {"spec",
                   {{"paused", false},
                    {"note", ""},
                    {"minReadySeconds", 0},
                    {"items", Json::array()},
                    {"opts", Json::object()}}}};
  Json live = {{"kind", "Deployment"}, {"metadata", {{"name", "a"}}}, {"spec", Json::object()}};
  EXPECT_TRUE(LiveMatchesDesired(desired, live));
  live["spec"]["paused"] = true;
  EXPECT_FALSE(LiveMatchesDesired(desired, live));
  // A non-zero desired value must be present.
  Json wants = {{"kind", "Deployment"}, {"spec", {{"replicas", 1}}}};
  EXPECT_FALSE(LiveMatchesDesired(wants, Json{{"kind", "Deployment"}, {"spec", Json::object()}}));
}

TEST(LiveMatchesDesiredTest, SecretDataIsComparedExactly) {
  EngineConfig config = TestConfig();
  Json desired = Render(TestInput(&config)).secret.value();
  Json live = desired;
  live["metadata"]["uid"] = "u";
  EXPECT_TRUE(LiveMatchesDesired(desired, live));
  live["data"]["EXTRA"] = Base64Encode("x");
  EXPECT_FALSE(LiveMatchesDesired(desired, live));
  live = desired;
  live["data"]["FORGE_PROJECT_TOKEN"] = Base64Encode("old-token");
  EXPECT_FALSE(LiveMatchesDesired(desired, live));
  live = desired;
  live.erase("data");
  EXPECT_FALSE(LiveMatchesDesired(desired, live));
}

TEST(LiveMatchesDesiredTest, NonObjectsNeverMatch) {
  Json desired = {{"kind", "Service"}};
  EXPECT_FALSE(LiveMatchesDesired(desired, Json()));
  EXPECT_FALSE(LiveMatchesDesired(desired, Json::array()));
  EXPECT_FALSE(LiveMatchesDesired(Json(), desired));
}

// ---- against the embedded cluster ----------------------------------------------------------

using kube::ResourceType;
using ::steward::test_support::Eventually;

class ManifestsClusterTest : public ::testing::Test {
 protected:
  void StartCluster(double progress_deadline_scale = 1.0) {
    auto profile = cluster::BuiltinProfile("instant");
    ASSERT_TRUE(profile.ok()) << profile.status().ToString();
    profile->progress_deadline_scale = progress_deadline_scale;
    cluster::EmbeddedCluster::Options options;
    options.profile = *profile;
    auto started = cluster::EmbeddedCluster::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    cluster_ = std::move(started).value();
    client_ = kube::test_support::ClientFor(*cluster_);
    auto ns = client_->Create(ResourceType::Namespace(), "",
                              Json{{"metadata", {{"name", config_.namespace_name}}}});
    ASSERT_TRUE(ns.ok()) << ns.error().ToString();
  }

  Json MustCreate(const ResourceType& type, const Json& object) {
    auto created = client_->Create(type, config_.namespace_name, object);
    EXPECT_TRUE(created.ok()) << object["kind"] << ": " << created.error().ToString();
    return created.ok() ? *created : Json();
  }

  Json MustGet(const ResourceType& type, const Json& object) {
    auto got =
        client_->Get(type, config_.namespace_name, object["metadata"]["name"].get<std::string>());
    EXPECT_TRUE(got.ok()) << object["kind"] << ": " << got.error().ToString();
    return got.ok() ? *got : Json();
  }

  std::vector<Json> ListBy(const ResourceType& type, const std::string& selector) {
    kube::ListOptions options;
    options.label_selector = selector;
    auto list = client_->List(type, config_.namespace_name, options);
    EXPECT_TRUE(list.ok()) << list.error().ToString();
    return list.ok() ? list->items : std::vector<Json>{};
  }

  EngineConfig config_ = [] {
    EngineConfig c = TestConfig();
    c.domain = "localhost";
    c.url_scheme = "http";
    c.private_ca = "corp-ca";
    c.cert_manager_issuer = "letsencrypt";
    c.custom_hostname.ingress_annotations = {{"example.com/custom", "yes"}};
    c.image_pull_secrets = {"regcred"};
    c.readiness_probe =
        Json::parse(R"({"httpGet":{"path":"/flowforge/ready","port":"management"}})");
    return c;
  }();
  std::unique_ptr<cluster::EmbeddedCluster> cluster_;
  std::shared_ptr<kube::Client> client_;
};

TEST_F(ManifestsClusterTest, EveryObjectIsAcceptedReadsBackMatchingAndBecomesReady) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  RenderInput in = TestInput(&config_);
  in.resolved.host = "hello.localhost";
  in.resolved.url = "http://hello.localhost/";
  in.resolved.storage = StorageSpec{"1Gi", "", "ReadWriteOnce"};
  in.resolved.spec.custom_hostname = "nr.customer.localhost";
  in.resolved.spec.replicas = 2;
  in.resolved.spec.tolerations = Json::parse(R"([{"key":"dedicated","operator":"Exists"}])");
  in.resolved.spec.node_selector = {{"kubernetes.io/os", "linux"}};
  Manifests m = Render(in);
  ASSERT_TRUE(m.pvc && m.custom_ingress);

  // The pod spec mounts this ConfigMap; create it first, as an operator would.
  MustCreate(ResourceType::ConfigMap(),
             Json{{"metadata", {{"name", "corp-ca"}}}, {"data", {{"chain.pem", "-----BEGIN"}}}});

  struct Item {
    const ResourceType& type;
    Json desired;
  };
  std::vector<Item> items = {
      {ResourceType::Secret(), *m.secret},        {ResourceType::PersistentVolumeClaim(), *m.pvc},
      {ResourceType::Deployment(), m.deployment}, {ResourceType::Service(), m.service},
      {ResourceType::Ingress(), m.ingress},       {ResourceType::Ingress(), *m.custom_ingress}};
  for (const Item& item : items) {
    SCOPED_TRACE(item.desired["kind"].get<std::string>() + " " +
                 item.desired["metadata"]["name"].get<std::string>());
    Json created = MustCreate(item.type, item.desired);
    ASSERT_FALSE(created.is_null());
    Json live = MustGet(item.type, item.desired);
    // The server did add fields (uid, defaults): the comparison has something to ignore.
    EXPECT_TRUE(live["metadata"].contains("uid"));
    EXPECT_NE(DumpJson(live), DumpJson(item.desired));
    EXPECT_TRUE(LiveMatchesDesired(item.desired, live)) << DumpJson(live);
    EXPECT_EQ(live["metadata"]["annotations"]["steward.io/spec-hash"], SpecHash(item.desired));
  }
  Json live_service = MustGet(ResourceType::Service(), m.service);
  EXPECT_TRUE(live_service["spec"].contains("clusterIP"));
  Json live_deployment = MustGet(ResourceType::Deployment(), m.deployment);
  EXPECT_TRUE(live_deployment["spec"]["template"]["spec"].contains("restartPolicy"));

  const std::string& ns = config_.namespace_name;
  Readiness deployment, service, ingress, custom, pvc;
  bool all_ready = Eventually(
      [&] {
        auto d = client_->Get(ResourceType::Deployment(), ns, m.names.deployment);
        auto s = client_->Get(ResourceType::Service(), ns, m.names.service);
        auto i = client_->Get(ResourceType::Ingress(), ns, m.names.ingress);
        auto ci = client_->Get(ResourceType::Ingress(), ns, m.names.custom_ingress);
        auto p = client_->Get(ResourceType::PersistentVolumeClaim(), ns, m.names.pvc);
        if (!d.ok() || !s.ok() || !i.ok() || !ci.ok() || !p.ok()) return false;
        deployment = DeploymentReadiness(*d);
        service = ServiceReadiness(*s, ListBy(ResourceType::EndpointSlice(),
                                              "kubernetes.io/service-name=" + m.names.service));
        ingress = IngressReadiness(*i, true);
        custom = IngressReadiness(*ci, true);
        pvc = PvcReadiness(*p);
        return deployment.ready() && service.ready() && ingress.ready() && custom.ready() &&
               pvc.ready();
      },
      std::chrono::seconds(20));
  EXPECT_TRUE(all_ready) << "deployment: " << deployment.message << "; service: " << service.message
                         << "; ingress: " << ingress.message << "; custom: " << custom.message
                         << "; pvc: " << pvc.message;
  EXPECT_FALSE(deployment.failed());
  EXPECT_EQ(service.message, "2 of 2 endpoints ready");

  // The pods got every object's labels and their credentials through the Secret: ask a pod
  // (through the Service proxy, on the management port) for the environment it started with.
  EXPECT_EQ(
      ListBy(ResourceType::Pod(), "steward.io/project=p1a2b3,app.kubernetes.io/instance=hello")
          .size(),
      2u);
  kube::TransportRequest request;
  request.method = "GET";
  request.target =
      "/api/v1/namespaces/" + ns + "/services/" + m.names.service + ":2880/proxy/flowforge/env";
  auto response = client_->transport().Do(request);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  ASSERT_EQ(response->status, 200) << response->body;
  auto env = ParseJson(response->body);
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_EQ((*env)["FORGE_PROJECT_TOKEN"], kToken);
  EXPECT_EQ((*env)["FORGE_CLIENT_ID"], "client-1");
  EXPECT_EQ((*env)["BASE_URL"], "http://hello.localhost");
  EXPECT_EQ((*env)["NODE_EXTRA_CA_CERTS"], "/usr/local/ssl-certs/chain.pem");
}

TEST_F(ManifestsClusterTest, FailingImageReportsProgressDeadlineAndPodDetail) {
  // 300 s × 0.01: the deadline passes after about 3 s.
  ASSERT_NO_FATAL_FAILURE(StartCluster(0.01));
  RenderInput in = TestInput(&config_);
  in.resolved.spec.stack.image = "registry.invalid/node-red:4";
  Manifests m = Render(in);
  MustCreate(ResourceType::Secret(), *m.secret);
  MustCreate(ResourceType::Deployment(), m.deployment);

  std::string detail;
  EXPECT_TRUE(Eventually(
      [&] {
        std::vector<Json> pods = ListBy(ResourceType::Pod(), "steward.io/project=p1a2b3");
        detail = PodFailureDetail(pods);
        return !detail.empty();
      },
      std::chrono::seconds(10)));
  EXPECT_THAT(detail, ::testing::AnyOf(::testing::StartsWith("ErrImagePull"),
                                       ::testing::StartsWith("ImagePullBackOff")));

  Readiness r;
  EXPECT_TRUE(Eventually(
      [&] {
        auto d = client_->Get(ResourceType::Deployment(), config_.namespace_name, "hello");
        if (!d.ok()) return false;
        r = DeploymentReadiness(*d);
        return r.failed();
      },
      std::chrono::seconds(20)))
      << r.reason << ": " << r.message;
  EXPECT_EQ(r.reason, "ProgressDeadlineExceeded");
  EXPECT_THAT(r.message, HasSubstr("progress"));
}

}  // namespace
}  // namespace steward::engine
