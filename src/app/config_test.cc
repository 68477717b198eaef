#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "app/app.h"
#include "common/json.h"

namespace steward::app {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// The error a document gets; fails the test when it parses.
Status ErrorOf(const std::string& text) {
  auto c = ParseServeConfig(text);
  EXPECT_FALSE(c.ok()) << "parsed: " << text;
  return c.ok() ? Status::Ok() : c.error();
}

// kInvalidArgument whose message starts with "<path>: " and contains `what`.
void ExpectInvalid(const std::string& text, const std::string& path, const std::string& what) {
  Status st = ErrorOf(text);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_THAT(st.message(), StartsWith(path + ": ")) << text;
  EXPECT_EQ(st.field(), path) << text;  // the field as data, not only in the text
  EXPECT_THAT(st.message(), HasSubstr(what)) << text;
}

TEST(ServeConfigTest, EmptyDocumentGivesEveryDefault) {
  for (const char* text : {"", "{}", "# only a comment\n"}) {
    auto c = ParseServeConfig(text);
    ASSERT_TRUE(c.ok()) << text << ": " << c.error().ToString();
    const ServeConfig d;
    EXPECT_EQ(c->listen, "127.0.0.1:8080");
    EXPECT_EQ(c->data_dir, "steward-data");
    EXPECT_EQ(c->database, "");
    EXPECT_EQ(c->api_token_file, "");
    EXPECT_EQ(c->api_workers, 8);
    EXPECT_EQ(c->log_level, "info");
    EXPECT_EQ(c->cluster, ClusterSource::kKubeconfig);
    EXPECT_EQ(c->kubeconfig, "");
    EXPECT_EQ(c->context, "");
    EXPECT_EQ(c->embedded_profile, "realistic");
    EXPECT_EQ(c->embedded_listen, "127.0.0.1:0");
    EXPECT_EQ(c->ingress_listen, "127.0.0.1:0");
    EXPECT_EQ(c->seed, 1u);
    EXPECT_EQ(c->kubeconfig_out, "");
    EXPECT_EQ(c->audit_log, "");
    EXPECT_EQ(c->instance_access, InstanceAccess::kAuto);
    EXPECT_EQ(c->instance_timeout, milliseconds(5000));
    EXPECT_EQ(c->engine, engine::EngineConfig{});
    EXPECT_EQ(c->engine, d.engine);
  }
}

TEST(ServeConfigTest, EveryKeyIsRead) {
  auto c = ParseServeConfig(R"(
listen: "0.0.0.0:9090"
dataDir: /var/lib/steward
database: sqlite:/data/s.db
apiTokenFile: /etc/steward/token
apiWorkers: 3
logLevel: debug
kubernetes:
  source: embedded
  kubeconfig: /k/config
  context: dev
  embedded:
    profile: instant
    listen: "127.0.0.1:6443"
    ingressListen: "[::1]:8081"
    seed: 4294967297
    kubeconfigOut: /tmp/kc
    auditLog: /tmp/audit.log
instance:
  access: direct
  timeout: 1500ms
  maxFileBytes: 1048576
  restartPerPod: 90s
  resourcesPoll: 250ms
engine:
  namespace: projects
  domain: example.com
  workers: 4
)");
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_EQ(c->listen, "0.0.0.0:9090");
  EXPECT_EQ(c->data_dir, "/var/lib/steward");
  EXPECT_EQ(c->database, "sqlite:/data/s.db");
  EXPECT_EQ(c->api_token_file, "/etc/steward/token");
  EXPECT_EQ(c->api_workers, 3);
  EXPECT_EQ(c->log_level, "debug");
  EXPECT_EQ(c->cluster, ClusterSource::kEmbedded);
  EXPECT_EQ(c->kubeconfig, "/k/config");
  EXPECT_EQ(c->context, "dev");
  EXPECT_EQ(c->embedded_profile, "instant");
  EXPECT_EQ(c->embedded_listen, "127.0.0.1:6443");
  EXPECT_EQ(c->ingress_listen, "[::1]:8081");
  EXPECT_EQ(c->seed, 4294967297ull);
  EXPECT_EQ(c->kubeconfig_out, "/tmp/kc");
  EXPECT_EQ(c->audit_log, "/tmp/audit.log");
  EXPECT_EQ(c->instance_access, InstanceAccess::kDirect);
  EXPECT_EQ(c->instance_timeout, milliseconds(1500));
  EXPECT_EQ(c->instance_max_file_bytes, 1048576u);
  EXPECT_EQ(c->instance_restart_per_pod, milliseconds(90000));
  EXPECT_EQ(c->instance_resources_poll, milliseconds(250));
  EXPECT_EQ(c->engine.namespace_name, "projects");
  EXPECT_EQ(c->engine.domain, "example.com");
  EXPECT_EQ(c->engine.workers, 4);
}

TEST(ServeConfigTest, JsonIsAcceptedToo) {
  auto c = ParseServeConfig(
      R"({"listen": "127.0.0.1:0", "kubernetes": {"source": "in-cluster"},
          "instance": {"access": "proxy"}})");
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_EQ(c->listen, "127.0.0.1:0");
  EXPECT_EQ(c->cluster, ClusterSource::kInCluster);
  EXPECT_EQ(c->instance_access, InstanceAccess::kProxy);
}

TEST(ServeConfigTest, ProbeListenIsAnAddressOrAbsent) {
  EXPECT_EQ(ParseServeConfig("listen: 127.0.0.1:0")->probe_listen, "");
  EXPECT_EQ(ParseServeConfig("probeListen: 0.0.0.0:9102")->probe_listen, "0.0.0.0:9102");
  auto bad = ParseServeConfig("probeListen: nine");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.error().message().find("probeListen"), std::string::npos) << bad.error().message();
}

TEST(ServeConfigTest, EachSourceAndAccessValueMaps) {
  EXPECT_EQ(ParseServeConfig("kubernetes: {source: kubeconfig}")->cluster,
            ClusterSource::kKubeconfig);
  EXPECT_EQ(ParseServeConfig("kubernetes: {source: in-cluster}")->cluster,
            ClusterSource::kInCluster);
  EXPECT_EQ(ParseServeConfig("kubernetes: {source: embedded}")->cluster, ClusterSource::kEmbedded);
  EXPECT_EQ(ParseServeConfig("instance: {access: auto}")->instance_access, InstanceAccess::kAuto);
  EXPECT_EQ(ParseServeConfig("instance: {access: proxy}")->instance_access, InstanceAccess::kProxy);
}

TEST(ServeConfigTest, NullSectionsAndValuesKeepDefaults) {
  auto c = ParseServeConfig("kubernetes:\ninstance:\nengine:\nlisten:\n");
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_EQ(c->listen, "127.0.0.1:8080");
  EXPECT_EQ(c->cluster, ClusterSource::kKubeconfig);
  EXPECT_EQ(c->engine, engine::EngineConfig{});
}

TEST(ServeConfigTest, PostgresDatabaseAndItsPasswordFile) {
  EXPECT_TRUE(ParseServeConfig("database: postgresql://u@h/db").ok());
  auto c = ParseServeConfig(
      "database: postgres://u@h:5433/db?sslmode=verify-full\n"
      "databasePasswordFile: /etc/steward/db-password\n");
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_EQ(c->database, "postgres://u@h:5433/db?sslmode=verify-full");
  EXPECT_EQ(c->database_password_file, "/etc/steward/db-password");
  // The password never goes in the URL, and the refusal does not echo it.
  ExpectInvalid("database: postgres://u:s3cret@h/db", "database",
                "the URL must not hold a password: put the password in databasePasswordFile or "
                "PGPASSWORD");
  auto refused = ParseServeConfig("database: postgres://h/db?password=s3cret");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().ToString(), Not(HasSubstr("s3cret")));
  ExpectInvalid("database: postgres://h/db?colour=red", "database", "cannot parse the URL");
  ExpectInvalid("databasePasswordFile: /p", "databasePasswordFile",
                "only for a postgres:// database");
  ExpectInvalid("databasePasswordFile: 7", "databasePasswordFile", "must be a string");
}

TEST(ServeConfigTest, UnknownKeysAreNamedWithTheirPath) {
  ExpectInvalid("listn: x", "listn", "unknown key");
  ExpectInvalid("kubernetes: {profile: instant}", "kubernetes.profile", "unknown key");
  ExpectInvalid("kubernetes: {embedded: {port: 1}}", "kubernetes.embedded.port", "unknown key");
  ExpectInvalid("instance: {retries: 2}", "instance.retries", "unknown key");
  ExpectInvalid("instance: {maxFileBytes: 0}", "instance.maxFileBytes", "between");
  ExpectInvalid("instance: {resourcesPoll: 1ms}", "instance.resourcesPoll", "between 100ms");
  ExpectInvalid("instance: {restartPerPod: 2h}", "instance.restartPerPod", "between 1s");
  // The engine section names its own fields the same way.
  ExpectInvalid("engine: {namespacee: x}", "engine.namespacee", "unknown field");
}

TEST(ServeConfigTest, TlsFilesGoTogether) {
  auto both = ParseServeConfig("tls: {certFile: /etc/s/tls.crt, keyFile: /etc/s/tls.key}\n");
  ASSERT_TRUE(both.ok()) << both.error().ToString();
  EXPECT_EQ(both->tls_cert_file, "/etc/s/tls.crt");
  EXPECT_EQ(both->tls_key_file, "/etc/s/tls.key");
  auto cert_only = ParseServeConfig("tls: {certFile: /etc/s/tls.crt}\n");
  ASSERT_FALSE(cert_only.ok());
  EXPECT_EQ(cert_only.error().message(), "tls.keyFile: required with tls.certFile");
  auto key_only = ParseServeConfig("tls: {keyFile: /etc/s/tls.key}\n");
  ASSERT_FALSE(key_only.ok());
  EXPECT_EQ(key_only.error().message(), "tls.certFile: required with tls.keyFile");
  auto unknown = ParseServeConfig("tls: {caFile: x}\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.error().message(), HasSubstr("tls.caFile"));
}

TEST(ServeConfigTest, WrongTypesAreNamed) {
  ExpectInvalid("listen: 8080", "listen", "must be a string (got integer)");
  ExpectInvalid("dataDir: [a]", "dataDir", "must be a string (got array)");
  ExpectInvalid("database: true", "database", "must be a string (got boolean)");
  ExpectInvalid("apiTokenFile: {a: 1}", "apiTokenFile", "must be a string (got object)");
  ExpectInvalid("apiWorkers: \"4\"", "apiWorkers", "must be an integer (got string)");
  ExpectInvalid("apiWorkers: 2.5", "apiWorkers", "must be an integer (got number)");
  ExpectInvalid("logLevel: 3", "logLevel", "must be a string (got integer)");
  ExpectInvalid("kubernetes: 3", "kubernetes", "must be a mapping (got integer)");
  ExpectInvalid("kubernetes: {kubeconfig: 1}", "kubernetes.kubeconfig", "must be a string");
  ExpectInvalid("kubernetes: {context: [x]}", "kubernetes.context", "must be a string");
  ExpectInvalid("kubernetes: {embedded: true}", "kubernetes.embedded",
                "must be a mapping (got boolean)");
  ExpectInvalid("kubernetes: {embedded: {seed: \"7\"}}", "kubernetes.embedded.seed",
                "must be a non-negative integer (got string)");
  ExpectInvalid("kubernetes: {embedded: {seed: -1}}", "kubernetes.embedded.seed",
                "must be a non-negative integer (got -1)");
  ExpectInvalid("kubernetes: {embedded: {profile: 1}}", "kubernetes.embedded.profile",
                "must be a string");
  ExpectInvalid("kubernetes: {embedded: {kubeconfigOut: 1}}", "kubernetes.embedded.kubeconfigOut",
                "must be a string");
  ExpectInvalid("kubernetes: {embedded: {auditLog: [1]}}", "kubernetes.embedded.auditLog",
                "must be a string");
  ExpectInvalid("instance: [1]", "instance", "must be a mapping (got array)");
  ExpectInvalid("instance: {timeout: true}", "instance.timeout", "must be a duration");
  ExpectInvalid("engine: 5", "engine", "");
  ExpectInvalid("[1, 2]", "config", "must be a mapping (got array)");
}

TEST(ServeConfigTest, BadValuesAreNamed) {
  ExpectInvalid("dataDir: \"\"", "dataDir", "must not be empty");
  ExpectInvalid("apiWorkers: 0", "apiWorkers", "must be between 1 and 256 (got 0)");
  ExpectInvalid("apiWorkers: 257", "apiWorkers", "must be between 1 and 256 (got 257)");
  ExpectInvalid("logLevel: verbose", "logLevel", "must be one of trace, debug, info");
  ExpectInvalid("database: mysql://x", "database", "must be sqlite:PATH or postgres://");
  ExpectInvalid("database: \"sqlite:\"", "database", "must be sqlite:PATH");
  ExpectInvalid("kubernetes: {source: minikube}", "kubernetes.source",
                "must be one of kubeconfig, in-cluster, embedded (got \"minikube\")");
  ExpectInvalid("kubernetes: {source: in-cluster, kubeconfig: /x}", "kubernetes.kubeconfig",
                "not used with source: in-cluster");
  ExpectInvalid("kubernetes: {source: in-cluster, context: dev}", "kubernetes.context",
                "not used with source: in-cluster");
  ExpectInvalid("kubernetes: {embedded: {profile: \"\"}}", "kubernetes.embedded.profile",
                "must not be empty");
  ExpectInvalid("instance: {access: sideways}", "instance.access",
                "must be one of auto, direct, proxy");
}

TEST(ServeConfigTest, ListenAddressesAreChecked) {
  for (const char* bad :
       {"8080", ":8080", "host:", "host:port", "host:70000", "::1:80", "[::1:80", "host:123456"}) {
    ExpectInvalid(std::string("listen: \"") + bad + "\"", "listen", "expected HOST:PORT");
  }
  ExpectInvalid("kubernetes: {embedded: {listen: nohost}}", "kubernetes.embedded.listen",
                "expected HOST:PORT");
  ExpectInvalid("kubernetes: {embedded: {ingressListen: \"h:x\"}}",
                "kubernetes.embedded.ingressListen", "expected HOST:PORT");
  for (const char* good : {"127.0.0.1:0", "0.0.0.0:65535", "[::]:80", "localhost:8080"}) {
    auto c = ParseServeConfig(std::string("listen: \"") + good + "\"");
    ASSERT_TRUE(c.ok()) << good << ": " << c.error().ToString();
    EXPECT_EQ(c->listen, good);
  }
}

TEST(ServeConfigTest, Durations) {
  struct Case {
    const char* text;
    milliseconds want;
  } cases[] = {{"250ms", milliseconds(250)},
               {"5s", milliseconds(5000)},
               {"2m", milliseconds(120000)},
               {"7", milliseconds(7000)},
               {"1.5s", milliseconds(1500)}};
  for (const auto& c : cases) {
    auto config = ParseServeConfig(std::string("instance: {timeout: \"") + c.text + "\"}");
    ASSERT_TRUE(config.ok()) << c.text << ": " << config.error().ToString();
    EXPECT_EQ(config->instance_timeout, c.want) << c.text;
  }
  auto bare = ParseServeConfig("instance: {timeout: 3}");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->instance_timeout, milliseconds(3000));

  for (const char* bad : {"5 s", "5sec", "-5s", "s", "1.5.0s", "", "10d", "9999999999s"}) {
    ExpectInvalid(std::string("instance: {timeout: \"") + bad + "\"}", "instance.timeout",
                  "must be a duration");
  }
  ExpectInvalid("instance: {timeout: 0ms}", "instance.timeout", "must be between 1ms and 10m");
  ExpectInvalid("instance: {timeout: 11m}", "instance.timeout", "must be between 1ms and 10m");
  ExpectInvalid("instance: {timeout: -3}", "instance.timeout", "must be a non-negative duration");
}

TEST(ServeConfigTest, ApiHttpLimits) {
  auto d = ParseServeConfig("");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->api_max_connections, 512u);
  EXPECT_EQ(d->api_max_connections_per_client, 256u);
  EXPECT_EQ(d->api_read_header_timeout, milliseconds(10000));
  EXPECT_EQ(d->api_read_timeout, milliseconds(60000));
  EXPECT_EQ(d->api_watch_window_events, 10000u);
  EXPECT_EQ(d->api_watch_window_bytes, 16u << 20);
  EXPECT_EQ(d->api_credential_workers, 2);
  EXPECT_EQ(d->api_credential_queue, 64u);
  auto c = ParseServeConfig(
      "api:\n  maxConnections: 2000\n  maxConnectionsPerClient: 1500\n  readHeaderTimeout: 5s\n  "
      "readTimeout: 2m\n"
      "  watchWindowEvents: 0\n  watchWindowBytes: 1048576\n"
      "  credentialWorkers: 6\n  credentialQueue: 500\n");
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_EQ(c->api_max_connections, 2000u);
  EXPECT_EQ(c->api_max_connections_per_client, 1500u);
  EXPECT_FALSE(ParseServeConfig("api: {maxConnectionsPerClient: 0}").ok());
  EXPECT_EQ(c->api_credential_workers, 6);
  EXPECT_EQ(c->api_credential_queue, 500u);
  ExpectInvalid("api: {credentialWorkers: 0}", "api.credentialWorkers", "between");
  ExpectInvalid("api: {credentialQueue: 0}", "api.credentialQueue", "between");
  EXPECT_EQ(c->api_read_header_timeout, milliseconds(5000));
  EXPECT_EQ(c->api_read_timeout, milliseconds(120000));
  EXPECT_EQ(c->api_watch_window_events, 0u);
  EXPECT_EQ(c->api_watch_window_bytes, 1048576u);
  ExpectInvalid("api: {watchWindowEvents: -1}", "api.watchWindowEvents", "must be between 0 and");
  ExpectInvalid("api: {watchWindowEvents: 10000001}", "api.watchWindowEvents",
                "must be between 0 and");
  ExpectInvalid("api: {watchWindowBytes: 16MiB}", "api.watchWindowBytes", "must be an integer");
  ExpectInvalid("api: {maxConnections: 0}", "api.maxConnections", "must be between 1 and");
  ExpectInvalid("api: {maxConnections: \"many\"}", "api.maxConnections", "must be an integer");
  ExpectInvalid("api: {readHeaderTimeout: 0s}", "api.readHeaderTimeout",
                "must be between 1ms and 1h");
  ExpectInvalid("api: {readTimeout: 2h}", "api.readTimeout", "must be between 1ms and 1h");
  ExpectInvalid("api: {readTimeout: soon}", "api.readTimeout", "must be a duration");
  ExpectInvalid("api: {idleTimeout: 1s}", "api.idleTimeout", "unknown key");
  ExpectInvalid("api: 3", "api", "must be a mapping");
}

TEST(ServeConfigTest, EngineSectionErrorsAreNamedUnderEngine) {
  ExpectInvalid("engine: {namespace: Not_A_Label}", "engine.namespace", "");
  ExpectInvalid("engine: {workers: 0}", "engine.workers", "");
  ExpectInvalid("engine: {urlScheme: ftp}", "engine.urlScheme", "");
  ExpectInvalid("engine: {defaultStack: {memory: 0}}", "engine.defaultStack.memory", "");
}

TEST(ServeConfigTest, MalformedYamlIsInvalidArgument) {
  Status st = ErrorOf("listen: [unclosed\n");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("line")) << st.ToString();
}

// Regression (hardening finding 3): a key given twice was accepted, the last value winning.
TEST(ServeConfigTest, DuplicateKeysAreRefusedNamingTheirPath) {
  struct Case {
    std::string text, what;
  };
  for (const Case& c : {
           Case{"listen: 127.0.0.1:1\nlisten: 127.0.0.1:2\n", "duplicate key \"listen\" at line 2"},
           Case{"engine:\n  workers: 2\n  domain: a.org\n  workers: 3\n",
                "duplicate key \"engine.workers\" at line 4"},
           Case{R"({"engine":{"workers":2},"engine":{"workers":3}})", "duplicate key \"engine\""},
           Case{R"({"instance":{"access":"direct","access":"proxy"}})",
                "duplicate key \"instance.access\""},
       }) {
    Status st = ErrorOf(c.text);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
    EXPECT_THAT(st.message(), HasSubstr(c.what)) << c.text;
  }
}

// Regression (hardening finding 2): nesting is limited as everywhere (docs/api.md, "Input
// limits"), in YAML and JSON alike, however deep the text goes.
TEST(ServeConfigTest, NestingDeeperThanTheLimitIsRefusedNamingIt) {
  auto nested = [](int depth, bool json) {
    std::string inner = std::string(depth - 2, '[') + std::string(depth - 2, ']');
    return json ? "{\"engine\":{\"labels\":" + inner + "}}" : "engine: {labels: " + inner + "}\n";
  };
  for (bool json : {false, true}) {
    for (int depth : {kMaxNestingDepth + 1, 80000}) {
      Status st = ErrorOf(nested(depth, json));
      EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
      EXPECT_THAT(st.message(), HasSubstr("nested deeper than the limit of 256 levels"))
          << depth << (json ? " json" : " yaml");
    }
    // At the limit the document is read (and then refused for what it says).
    ExpectInvalid(nested(kMaxNestingDepth, json), "engine.labels", "");
  }
}

class LoadServeConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "config-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(LoadServeConfigTest, ReadsAFile) {
  const std::string path = dir_ + "/steward.yaml";
  std::ofstream(path) << "apiWorkers: 2\nengine:\n  domain: example.org\n";
  auto c = LoadServeConfig(path);
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_EQ(c->api_workers, 2);
  EXPECT_EQ(c->engine.domain, "example.org");
}

TEST_F(LoadServeConfigTest, MissingFileIsNotFoundNamingIt) {
  auto c = LoadServeConfig(dir_ + "/absent.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code(), StatusCode::kNotFound);
  EXPECT_THAT(c.error().message(), HasSubstr(dir_ + "/absent.yaml"));
}

TEST_F(LoadServeConfigTest, ParseErrorsNameTheFileAndTheKey) {
  const std::string path = dir_ + "/bad.yaml";
  std::ofstream(path) << "instance:\n  acces: direct\n";
  auto c = LoadServeConfig(path);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c.error().message(), "config file " + path + ": instance.acces: unknown key");
}

TEST(ServeConfigTest, ReplicasSectionIsReadAndChecked) {
  auto off = ParseServeConfig("");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->replicas.enabled);
  EXPECT_EQ(off->replicas.shards, 64);
  EXPECT_EQ(off->replicas.lease_duration, std::chrono::seconds(15));
  EXPECT_EQ(off->replicas.renew_deadline, std::chrono::seconds(10));
  EXPECT_EQ(off->replicas.retry_period, std::chrono::seconds(2));
  auto c = ParseServeConfig(
      "replicas: {name: steward-0, shards: 128, leaseDuration: 20s, renewDeadline: 12s, "
      "retryPeriod: 500ms}");
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_TRUE(c->replicas.enabled);  // a name enables sharded mode
  EXPECT_EQ(c->replicas.name, "steward-0");
  EXPECT_EQ(c->replicas.shards, 128);
  EXPECT_EQ(c->replicas.lease_duration, std::chrono::seconds(20));
  EXPECT_EQ(c->replicas.renew_deadline, std::chrono::seconds(12));
  EXPECT_EQ(c->replicas.retry_period, std::chrono::milliseconds(500));
  auto host = ParseServeConfig("replicas: {enabled: true}");
  ASSERT_TRUE(host.ok());
  EXPECT_TRUE(host->replicas.enabled);
  EXPECT_EQ(host->replicas.name, "");  // the host name, at start
  ExpectInvalid("replicas: {nme: x}", "replicas.nme", "unknown");
  ExpectInvalid("replicas: {name: Steward_0}", "replicas.name", "DNS label");
  ExpectInvalid("replicas: {name: a, shards: 0}", "replicas.shards", "");
  ExpectInvalid("replicas: {name: a, shards: 4097}", "replicas.shards", "");
  ExpectInvalid("replicas: {name: a, leaseDuration: 1500ms}", "replicas.leaseDuration", "whole");
  ExpectInvalid("replicas: {name: a, leaseDuration: 10s}", "replicas.renewDeadline",
                "less than leaseDuration");
  ExpectInvalid("replicas: {name: a, retryPeriod: 10s}", "replicas.retryPeriod",
                "less than renewDeadline");
  ExpectInvalid("replicas: {name: a, retryPeriod: soon}", "replicas.retryPeriod", "duration");
  EXPECT_EQ(off->replicas.leases, "");  // by the clusters: the store with several
  auto store = ParseServeConfig("replicas: {name: a, leases: store}");
  ASSERT_TRUE(store.ok()) << store.error().ToString();
  EXPECT_EQ(store->replicas.leases, "store");
  ExpectInvalid("replicas: {name: a, leases: etcd}", "replicas.leases", "kubernetes");
}

}  // namespace
}  // namespace steward::app

namespace steward::app {
namespace {

TEST(ServeConfigClustersTest, WithoutClustersTheTopLevelIsTheDefaultCluster) {
  auto c = ParseServeConfig(R"(
kubernetes: {source: embedded, embedded: {profile: instant, seed: 7}}
engine: {namespace: projects, domain: example.com}
)");
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_TRUE(c->clusters.empty());
  std::vector<ServeConfig::Cluster> effective = EffectiveClusters(*c);
  ASSERT_EQ(effective.size(), 1u);
  EXPECT_EQ(effective[0].name, "default");
  EXPECT_EQ(effective[0].cluster, ClusterSource::kEmbedded);
  EXPECT_EQ(effective[0].embedded_profile, "instant");
  EXPECT_EQ(effective[0].seed, 7u);
  EXPECT_EQ(effective[0].engine.namespace_name, "projects");
  EXPECT_EQ(effective[0].capacity, 0);
}

TEST(ServeConfigClustersTest, EachClusterIsReadWithItsEngineMergedOverTheTopLevel) {
  auto c = ParseServeConfig(R"(
engine: {namespace: projects, domain: example.com, workers: 3}
clusters:
  - name: east
    kubernetes: {source: kubeconfig, kubeconfig: /k/east, context: prod}
    engine: {domain: east.example.com, ingressClass: nginx}
    capacity: 500
    labels: {region: eu, tier: prod}
    unreachableGrace: 45s
  - name: lab
    kubernetes: {source: embedded, embedded: {profile: hostile}}
placement: {requiredLabels: {tier: prod}, teamAffinity: true}
)");
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  ASSERT_EQ(c->clusters.size(), 2u);
  const ServeConfig::Cluster& east = c->clusters[0];
  EXPECT_EQ(east.name, "east");
  EXPECT_EQ(east.cluster, ClusterSource::kKubeconfig);
  EXPECT_EQ(east.kubeconfig, "/k/east");
  EXPECT_EQ(east.context, "prod");
  EXPECT_EQ(east.engine.domain, "east.example.com");  // its own
  EXPECT_EQ(east.engine.ingress_class, "nginx");      // its own
  EXPECT_EQ(east.engine.namespace_name, "projects");  // the top level's
  EXPECT_EQ(east.engine.workers, 3);                  // the top level's
  EXPECT_EQ(east.capacity, 500);
  EXPECT_EQ(east.labels, (std::map<std::string, std::string>{{"region", "eu"}, {"tier", "prod"}}));
  EXPECT_EQ(east.unreachable_grace, milliseconds(45000));
  const ServeConfig::Cluster& lab = c->clusters[1];
  EXPECT_EQ(lab.cluster, ClusterSource::kEmbedded);
  EXPECT_EQ(lab.embedded_profile, "hostile");
  EXPECT_EQ(lab.engine.domain, "example.com");
  EXPECT_EQ(lab.unreachable_grace, milliseconds(30000));
  // Seeds: each its own by position unless given.
  EXPECT_EQ(east.seed, 1u);
  EXPECT_EQ(lab.seed, 2u);
  EXPECT_EQ(c->placement.required_labels, (std::map<std::string, std::string>{{"tier", "prod"}}));
  EXPECT_TRUE(c->placement.team_affinity);
  EXPECT_EQ(EffectiveClusters(*c).size(), 2u);
}

TEST(ServeConfigClustersTest, MistakesAreNamedWithTheirPath) {
  ExpectInvalid("clusters: []", "clusters", "at least one");
  ExpectInvalid("clusters: {a: 1}", "clusters", "must be a list");
  ExpectInvalid("clusters: [{kubernetes: {source: embedded}}]", "clusters[0].name", "is required");
  ExpectInvalid("clusters: [{name: East}]", "clusters[0].name", "DNS label");
  ExpectInvalid("clusters: [{name: a}, {name: a}]", "clusters[1].name", "listed twice");
  ExpectInvalid("clusters: [{name: a, zone: x}]", "clusters[0].zone", "unknown");
  ExpectInvalid("clusters: [{name: a, capacity: -1}]", "clusters[0].capacity", "");
  ExpectInvalid("clusters: [{name: a, labels: {'bad key!': x}}]",
                R"(clusters[0].labels["bad key!"])", "");
  ExpectInvalid("clusters: [{name: a, unreachableGrace: 10ms}]", "clusters[0].unreachableGrace",
                "between 1s and 1h");
  ExpectInvalid("clusters: [{name: a, kubernetes: {source: mars}}]",
                "clusters[0].kubernetes.source", "");
  ExpectInvalid("clusters: [{name: a, kubernetes: {embedded: {listen: nowhere}}}]",
                "clusters[0].kubernetes.embedded.listen", "HOST:PORT");
  ExpectInvalid("clusters: [{name: a, engine: {domian: x}}]", "clusters[0].engine.domian",
                "unknown");
  ExpectInvalid("clusters: [{name: a, engine: {urlScheme: gopher}}]",
                "clusters[0].engine.urlScheme", "");
  ExpectInvalid("kubernetes: {source: embedded}\nclusters: [{name: a}]", "kubernetes",
                "not with clusters");
  ExpectInvalid("placement: {requiredLabels: {tier: [1]}}", R"(placement.requiredLabels["tier"])",
                "");
  ExpectInvalid("placement: {spread: true}", "placement.spread", "unknown");
}

}  // namespace
}  // namespace steward::app
