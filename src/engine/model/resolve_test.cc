#include <gtest/gtest.h>

#include "engine/model/project.h"
#include "engine/model/test_util.h"

namespace steward::engine {
namespace {

using testing::J;

ProjectSpec Minimal() {
  ProjectSpec s;
  s.team = "t";
  return s;
}

EngineConfig Configured() {
  EngineConfig c;
  c.domain = "nr.example.com";
  c.url_scheme = "https";
  c.default_stack = {"reg.io/nr:4", 20, 384, {{"A", "config"}, {"B", "config"}}};
  c.labels = {{"tier", "config"}, {"cost", "config"}};
  c.ingress_class = "nginx";
  c.ingress_annotations = {{"x/a", "config"}, {"x/b", "config"}};
  c.node_selector = {{"pool", "config"}};
  c.tolerations = J(R"([{"key":"config"}])");
  c.liveness_probe = J(R"({"tcpSocket":{"port":1880}})");
  c.image_pull_secrets = {"config-cred"};
  c.private_ca = "config-ca";
  return c;
}

TEST(ResolveTest, EmptySpecTakesEveryDefaultFromTheConfig) {
  EngineConfig c = Configured();
  ResolvedSpec r = Resolve(c, "p1", Minimal());
  const ProjectSpec& s = r.spec;
  EXPECT_EQ(s.team, "t");
  EXPECT_EQ(s.stack, c.default_stack);
  EXPECT_EQ(s.replicas, 1);
  EXPECT_EQ(s.labels, c.labels);
  EXPECT_EQ(s.ingress_class, "nginx");
  EXPECT_EQ(s.ingress_annotations, c.ingress_annotations);
  EXPECT_EQ(s.node_selector, c.node_selector);
  EXPECT_EQ(s.tolerations, c.tolerations);
  EXPECT_EQ(s.liveness_probe, c.liveness_probe);
  EXPECT_EQ(s.readiness_probe, std::nullopt);  // neither sets one
  EXPECT_EQ(s.startup_probe, std::nullopt);
  EXPECT_EQ(s.pod_security_context, c.pod_security_context);
  EXPECT_EQ(s.container_security_context, c.container_security_context);
  EXPECT_EQ(s.image_pull_secrets, c.image_pull_secrets);
  EXPECT_EQ(s.private_ca, "config-ca");
  EXPECT_EQ(s.custom_hostname, "");
  EXPECT_EQ(r.storage, std::nullopt);
  EXPECT_EQ(s.storage, std::nullopt);
  EXPECT_EQ(r.host, "p1.nr.example.com");
  EXPECT_EQ(r.url, "https://p1.nr.example.com/");
}

TEST(ResolveTest, DefaultConfigSetsEveryOptionalExceptProbes) {
  ResolvedSpec r = Resolve(EngineConfig{}, "p1", Minimal());
  EXPECT_EQ(r.spec.stack, (Stack{"flowfuse/node-red", 10, 256, {}}));
  EXPECT_EQ(r.spec.ingress_class, "");  // set: the cluster's default class
  EXPECT_EQ(r.spec.tolerations, Json::array());
  EXPECT_EQ(r.spec.image_pull_secrets, std::vector<std::string>{});
  EXPECT_EQ(r.spec.private_ca, "");
  EXPECT_EQ(r.spec.pod_security_context,
            J(R"({"runAsUser":1000,"runAsGroup":1000,"fsGroup":1000})"));
  EXPECT_EQ(r.spec.container_security_context, J(R"({"allowPrivilegeEscalation":false})"));
  EXPECT_FALSE(r.spec.liveness_probe || r.spec.readiness_probe || r.spec.startup_probe);
  EXPECT_EQ(r.url, "http://p1.localhost/");
}

TEST(ResolveTest, SpecValuesWinOverTheConfig) {
  auto parsed = ParseProjectSpec(J(R"({
    "team": "t",
    "stack": {"image": "mine/nr", "cpu": 100, "memory": 1024, "env": {"B": "spec", "C": "spec"}},
    "customHostname": "nr.customer.com",
    "replicas": 2,
    "labels": {"tier": "spec"},
    "annotations": {"note": "x"},
    "ingress": {"className": "traefik", "annotations": {"x/b": "spec", "x/c": "spec"}},
    "nodeSelector": {"zone": "spec"},
    "tolerations": [],
    "probes": {"livenessProbe": {"httpGet": {"port": 1880}},
               "readinessProbe": {"exec": {"command": ["true"]}}},
    "podSecurityContext": {},
    "containerSecurityContext": {"privileged": false},
    "imagePullSecrets": ["spec-cred"],
    "privateCA": ""
  })"));
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  ResolvedSpec r = Resolve(Configured(), "p2", *parsed);
  const ProjectSpec& s = r.spec;
  EXPECT_EQ(s.stack,
            (Stack{"mine/nr", 100, 1024, {{"A", "config"}, {"B", "spec"}, {"C", "spec"}}}));
  EXPECT_EQ(s.custom_hostname, "nr.customer.com");
  EXPECT_EQ(s.replicas, 2);
  EXPECT_EQ(s.labels, (StringMap{{"tier", "spec"}, {"cost", "config"}}));
  EXPECT_EQ(s.annotations, (StringMap{{"note", "x"}}));
  EXPECT_EQ(s.ingress_class, "traefik");
  EXPECT_EQ(s.ingress_annotations,
            (StringMap{{"x/a", "config"}, {"x/b", "spec"}, {"x/c", "spec"}}));
  EXPECT_EQ(s.node_selector, (StringMap{{"zone", "spec"}}));  // replaced, not merged
  EXPECT_EQ(s.tolerations, Json::array());                    // explicitly none
  EXPECT_EQ(s.liveness_probe, J(R"({"httpGet":{"port":1880}})"));
  EXPECT_EQ(s.readiness_probe, J(R"({"exec":{"command":["true"]}})"));
  EXPECT_EQ(s.pod_security_context, Json::object());
  EXPECT_EQ(s.container_security_context, J(R"({"privileged":false})"));
  EXPECT_EQ(s.image_pull_secrets, std::vector<std::string>{"spec-cred"});
  EXPECT_EQ(s.private_ca, "");             // explicitly no CA despite the config's
  EXPECT_EQ(r.host, "p2.nr.example.com");  // the custom hostname does not change the host
}

TEST(ResolveTest, PartialStackFillsOnlyWhatIsMissing) {
  ProjectSpec spec = Minimal();
  spec.stack.memory_mb = 2048;
  ResolvedSpec r = Resolve(Configured(), "p", spec);
  EXPECT_EQ(r.spec.stack.image, "reg.io/nr:4");
  EXPECT_EQ(r.spec.stack.cpu, 20);
  EXPECT_EQ(r.spec.stack.memory_mb, 2048);
}

TEST(ResolveTest, StorageComesFromTheSpecOrTheEnabledDefault) {
  EngineConfig c = Configured();
  c.storage.spec = {"2Gi", "efs", "ReadWriteMany"};

  EXPECT_EQ(Resolve(c, "p", Minimal()).storage, std::nullopt);  // default disabled

  c.storage.enabled = true;
  ResolvedSpec from_config = Resolve(c, "p", Minimal());
  EXPECT_EQ(from_config.storage, c.storage.spec);
  EXPECT_EQ(from_config.spec.storage, c.storage.spec);

  ProjectSpec spec = Minimal();
  spec.storage = StorageSpec{"10Gi", "", "ReadWriteOnce"};
  ResolvedSpec from_spec = Resolve(c, "p", spec);
  EXPECT_EQ(from_spec.storage, spec.storage);
  c.storage.enabled = false;
  EXPECT_EQ(Resolve(c, "p", spec).storage, spec.storage);  // the spec's even when disabled
}

TEST(ResolveTest, UrlCarriesThePortOnlyWhenSet) {
  EngineConfig c;
  c.domain = "example.com";
  c.url_port = 8080;
  EXPECT_EQ(Resolve(c, "nr", Minimal()).url, "http://nr.example.com:8080/");
  c.url_scheme = "https";
  c.url_port = 0;
  EXPECT_EQ(Resolve(c, "nr", Minimal()).url, "https://nr.example.com/");
}

TEST(ResolveTest, ResolvingTwiceChangesNothing) {
  EngineConfig c = Configured();
  c.storage.enabled = true;
  ResolvedSpec once = Resolve(c, "p", Minimal());
  ResolvedSpec twice = Resolve(c, "p", once.spec);
  EXPECT_EQ(twice.spec, once.spec);
  EXPECT_EQ(twice.storage, once.storage);
  EXPECT_EQ(twice.url, once.url);
}

}  // namespace
}  // namespace steward::engine
