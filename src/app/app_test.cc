// App against the embedded cluster (instant profile) in a temporary data dir: what starts,
// what it serves, what it keeps in the data dir, and the configurations it refuses.
#include "app/app.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/engine_metrics.h"
#include "cluster/embedded_cluster.h"
#include "common/json.h"
#include "engine/model/project.h"
#include "kube/test_support/embedded.h"
#include "local_postgres/local_postgres.h"
#include "net/http_client.h"
#include "net/tls_certs.h"
#include "replica/membership.h"
#include "test_support/captured_log.h"
#include "test_support/eventually.h"
#include "test_support/held_port.h"
#include "test_support/private_files.h"

namespace steward::app {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;
using ::testing::StartsWith;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

uint16_t PortOf(const std::string& url) {
  return static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
}

class AppTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "app-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Embedded, instant profile, everything on free loopback ports, state under dir_/data.
  ServeConfig Embedded() const {
    ServeConfig c;
    c.listen = "127.0.0.1:0";
    c.data_dir = dir_ + "/data";
    c.cluster = ClusterSource::kEmbedded;
    c.embedded_profile = "instant";
    c.log_level = "warn";
    c.engine.workers = 2;
    return c;
  }

  static StatusOr<net::HttpResponse> Call(const App& app, const std::string& method,
                                          const std::string& target, const std::string& body = "",
                                          bool with_token = true) {
    net::HttpClient::Options o;
    o.port = PortOf(app.api_url());
    if (with_token) o.bearer_token = app.api_token();
    net::Headers headers;
    if (!body.empty()) headers.Set("Content-Type", "application/json");
    return net::HttpClient::Create(o)->Request(method, target, body, headers);
  }

  std::string dir_;
};

TEST_F(AppTest, EmbeddedClusterServesTheApiAndRunsAProject) {
  auto app = App::Start(Embedded());
  ASSERT_TRUE(app.ok()) << app.error().ToString();
  EXPECT_THAT((*app)->api_url(), MatchesRegex(R"(http://127\.0\.0\.1:[0-9]+)"));
  ASSERT_NE((*app)->embedded_cluster(), nullptr);
  EXPECT_EQ((*app)->store().Describe(), "sqlite:" + dir_ + "/data/steward.db");
  EXPECT_TRUE(fs::is_directory(dir_ + "/data/cluster"));

  auto healthz = Call(**app, "GET", "/healthz", "", /*with_token=*/false);
  ASSERT_TRUE(healthz.ok()) << healthz.error().ToString();
  EXPECT_EQ(healthz->status, 200);
  auto readyz = Call(**app, "GET", "/readyz", "", false);
  ASSERT_TRUE(readyz.ok());
  EXPECT_EQ(readyz->status, 200) << readyz->body;
  auto anonymous = Call(**app, "GET", "/v1/projects", "", false);
  ASSERT_TRUE(anonymous.ok());
  EXPECT_EQ(anonymous->status, 401);

  // A project put through the API runs, with its URL on the embedded ingress listener's port.
  const std::string spec = R"({"spec": {"team": "t"}, "start": true})";
  const auto put_sent = std::chrono::steady_clock::now();
  auto put = Call(**app, "PUT", "/v1/projects/alpha", spec);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  ASSERT_EQ(put->status, 201) << put->body;
  const std::string want_url =
      "http://alpha.localhost:" + std::to_string((*app)->embedded_cluster()->ingress_port()) + "/";
  store::Store& store = (*app)->store();
  EXPECT_TRUE(test_support::Eventually(
      [&] {
        auto r = store.GetProjectByName("alpha");
        if (!r.ok() || r->phase != "Running") return false;
        auto status = engine::ParseProjectStatus(*ParseJson(r->status_json));
        return status.ok() && status->url == want_url;
      },
      std::chrono::seconds(20)))
      << store.GetProjectByName("alpha")->status_json;
  const double seen_running_after =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - put_sent).count();

  auto metrics = Call(**app, "GET", "/metrics", "", false);
  ASSERT_TRUE(metrics.ok());
  EXPECT_EQ(metrics->status, 200);
  EXPECT_THAT(metrics->body, HasSubstr("steward_reconciles_total"));
  EXPECT_THAT(metrics->body, HasSubstr("steward_workqueue_depth"));
  // The SLO metrics: the create+start completed Running (one observation), through Provisioning.
  EXPECT_THAT(
      metrics->body,
      HasSubstr("steward_intent_duration_seconds_count{cluster=\"default\",kind=\"project\","
                "operation=\"create+start\",phase=\"Running\"} 1\n"));
  EXPECT_THAT(metrics->body,
              HasSubstr("steward_phase_transitions_total{cluster=\"default\",kind=\"project\","
                        "from=\"Provisioning\",to=\"Running\"} 1\n"));
  // Its value: the time from acceptance to Running, which the client saw happen within the time
  // from sending the PUT to seeing Running (the metric's clock is wall time in ms: 2 ms slack).
  const std::string sum_series =
      "steward_intent_duration_seconds_sum{cluster=\"default\",kind=\"project\",operation=\"create+"
      "start\",phase=\"Running\"} ";
  const size_t at = metrics->body.find(sum_series);
  ASSERT_NE(at, std::string::npos);
  const double took = std::stod(metrics->body.substr(at + sum_series.size()));
  EXPECT_GT(took, 0.0);
  EXPECT_LE(took, seen_running_after + 0.002);
  EXPECT_THAT(metrics->body, HasSubstr("# TYPE steward_projects_unhealthy gauge"));
  EXPECT_THAT(metrics->body, HasSubstr("# TYPE steward_kube_writes_refused_total counter"));

  const uint16_t port = PortOf((*app)->api_url());
  (*app)->Stop();
  (*app)->Stop();  // idempotent
  net::HttpClient::Options o;
  o.port = port;
  o.timeout = std::chrono::seconds(2);
  EXPECT_FALSE(net::HttpClient::Create(o)->Request("GET", "/healthz").ok());
}

TEST_F(AppTest, TokenFileIsCreated0600AndReusedOnTheNextStart) {
  std::string token;
  {
    auto app = App::Start(Embedded());
    ASSERT_TRUE(app.ok()) << app.error().ToString();
    EXPECT_EQ((*app)->api_token_file(), dir_ + "/data/api-token");
    token = (*app)->api_token();
    EXPECT_THAT(token, MatchesRegex("[0-9a-f]{64}"));
    struct stat st {};
    ASSERT_EQ(stat((*app)->api_token_file().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_EQ(ReadFile((*app)->api_token_file()), token + "\n");
  }
  auto again = App::Start(Embedded());
  ASSERT_TRUE(again.ok()) << again.error().ToString();
  EXPECT_EQ((*again)->api_token(), token);
  auto list = Call(**again, "GET", "/v1/projects");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->status, 200) << list->body;
}

TEST_F(AppTest, ConfiguredTokenFileIsReadTrimmedAndNeverCreated) {
  ServeConfig c = Embedded();
  c.api_token_file = dir_ + "/token";
  std::ofstream(c.api_token_file) << "s3cret\n";
  auto app = App::Start(c);
  ASSERT_TRUE(app.ok()) << app.error().ToString();
  EXPECT_EQ((*app)->api_token(), "s3cret");
  EXPECT_EQ((*app)->api_token_file(), c.api_token_file);
  EXPECT_FALSE(fs::exists(dir_ + "/data/api-token"));
  (*app)->Stop();

  c.api_token_file = dir_ + "/absent-token";
  auto absent = App::Start(c);
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(absent.error().message(), StartsWith("apiTokenFile " + c.api_token_file + ": "));
  EXPECT_FALSE(fs::exists(c.api_token_file));
}

TEST_F(AppTest, EmptyOrMultiWordTokenFileIsRefused) {
  ServeConfig c = Embedded();
  c.api_token_file = dir_ + "/token";
  std::ofstream(c.api_token_file) << "\n  \n";
  auto empty = App::Start(c);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(empty.error().message(), "apiTokenFile " + c.api_token_file + ": the file is empty");

  std::ofstream(c.api_token_file) << "two words\n";
  auto spaced = App::Start(c);
  ASSERT_FALSE(spaced.ok());
  EXPECT_THAT(spaced.error().message(), HasSubstr("one line without spaces"));
}

TEST_F(AppTest, PostgresUrlWithAPasswordIsRefusedBeforeAnythingStarts) {
  ServeConfig c = Embedded();
  c.database = "postgres://steward:pw-s3cret@db/steward";
  auto app = App::Start(c);
  ASSERT_FALSE(app.ok());
  EXPECT_EQ(app.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(app.error().message(), StartsWith("database: the URL must not hold a password: put "
                                                "the password in databasePasswordFile or "
                                                "PGPASSWORD"));
  EXPECT_THAT(app.error().message(), Not(HasSubstr("s3cret")));  // no credentials in errors
  EXPECT_FALSE(fs::exists(c.data_dir));
}

TEST_F(AppTest, DatabasePasswordFileIsOnlyForPostgres) {
  ServeConfig c = Embedded();
  c.database_password_file = dir_ + "/db-password";
  auto app = App::Start(c);
  ASSERT_FALSE(app.ok());
  EXPECT_EQ(app.error().ToString(),
            "INVALID_ARGUMENT: databasePasswordFile: only for a postgres:// database");
}

TEST_F(AppTest, AnUnreachablePostgresFailsStartNamingHostAndPortNeverThePassword) {
  int port = 0;
  {
    test_support::HeldPort closed;  // closed again at once: nobody listens there
    port = closed.port();
  }
  ServeConfig c = Embedded();
  c.database = "postgres://steward@127.0.0.1:" + std::to_string(port) + "/steward";
  c.database_password_file = dir_ + "/db-password";
  std::ofstream(c.database_password_file) << "pw-s3cret\n";
  ASSERT_EQ(::chmod(c.database_password_file.c_str(), 0600), 0);
  test_support::CapturedLog log;
  auto app = App::Start(c);
  ASSERT_FALSE(app.ok());
  EXPECT_EQ(app.error().code(), StatusCode::kUnavailable);
  EXPECT_THAT(app.error().message(), StartsWith("database: " + c.database + ": cannot connect: "));
  EXPECT_THAT(app.error().message(), Not(HasSubstr("s3cret")));
  EXPECT_THAT(log.Text(), Not(HasSubstr("s3cret")));
}

TEST_F(AppTest, PostgresDatabaseIsUsed) {
  auto server = LocalPostgres::Launch();
  ASSERT_TRUE(server.ok()) << server.error().ToString();
  ASSERT_TRUE((*server)->CreateDatabase("steward").ok());
  ServeConfig c = Embedded();
  c.database = (*server)->Url("steward");
  auto app = App::Start(c);
  ASSERT_TRUE(app.ok()) << app.error().ToString();
  EXPECT_EQ((*app)->store().Describe(),
            "postgres://steward@127.0.0.1:" + std::to_string((*server)->port()) + "/steward");
  EXPECT_FALSE(fs::exists(c.data_dir + "/steward.db"));
  EXPECT_EQ((*server)->Query("steward", "SELECT max(version) FROM schema_migrations").value(), "6");
  (*app)->Stop();
}

TEST_F(AppTest, SqliteDatabasePathIsUsed) {
  ServeConfig c = Embedded();
  c.database = "sqlite:" + dir_ + "/elsewhere.db";
  auto app = App::Start(c);
  ASSERT_TRUE(app.ok()) << app.error().ToString();
  EXPECT_EQ((*app)->store().Describe(), "sqlite:" + dir_ + "/elsewhere.db");
  EXPECT_FALSE(fs::exists(dir_ + "/data/steward.db"));
}

TEST_F(AppTest, BrokenKubeconfigIsRefusedNamingTheFile) {
  ServeConfig c = Embedded();
  c.cluster = ClusterSource::kKubeconfig;
  c.kubeconfig = dir_ + "/no-such-kubeconfig";
  auto missing = App::Start(c);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.error().message(), StartsWith("kubernetes: kubeconfig " + c.kubeconfig));
  EXPECT_FALSE(fs::exists(c.data_dir + "/api-token"));  // refused before anything is written

  c.kubeconfig = dir_ + "/garbage-kubeconfig";
  std::ofstream(c.kubeconfig) << "clusters: [unclosed\n";
  auto garbage = App::Start(c);
  ASSERT_FALSE(garbage.ok());
  EXPECT_THAT(garbage.error().message(), StartsWith("kubernetes: "));
  EXPECT_THAT(garbage.error().message(), HasSubstr(c.kubeconfig));
}

TEST_F(AppTest, KubeconfigSourceReachesTheClusterItNames) {
  cluster::EmbeddedCluster::Options o;
  o.profile = *cluster::BuiltinProfile("instant");
  auto cluster = cluster::EmbeddedCluster::Start(o);
  ASSERT_TRUE(cluster.ok()) << cluster.error().ToString();
  ServeConfig c = Embedded();
  c.cluster = ClusterSource::kKubeconfig;
  c.kubeconfig = dir_ + "/kubeconfig";
  ASSERT_TRUE((*cluster)->WriteKubeconfig(c.kubeconfig).ok());
  {
    auto app = App::Start(c);
    ASSERT_TRUE(app.ok()) << app.error().ToString();
    EXPECT_EQ((*app)->embedded_cluster(), nullptr);
    auto readyz = Call(**app, "GET", "/readyz", "", false);
    ASSERT_TRUE(readyz.ok());
    EXPECT_EQ(readyz->status, 200) << readyz->body;
  }
  // The same kubeconfig once the server is gone: refused at once, naming the server.
  const std::string server = (*cluster)->api_url();
  (*cluster)->Stop();
  auto app = App::Start(c);
  ASSERT_FALSE(app.ok());
  EXPECT_EQ(app.error().code(), StatusCode::kUnavailable) << app.error().ToString();
  EXPECT_THAT(app.error().message(), StartsWith("kubernetes: " + server + " (kubeconfig "));
}

TEST_F(AppTest, UnknownProfileIsNamed) {
  ServeConfig c = Embedded();
  c.embedded_profile = "no-such-profile";
  auto app = App::Start(c);
  ASSERT_FALSE(app.ok());
  EXPECT_EQ(app.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(app.error().message(), StartsWith("kubernetes.embedded.profile: "));
  EXPECT_THAT(app.error().message(), HasSubstr("no-such-profile"));
}

TEST_F(AppTest, DataDirThatIsAFileIsNamed) {
  ServeConfig c = Embedded();
  c.data_dir = dir_ + "/file";
  std::ofstream(c.data_dir) << "x";
  auto app = App::Start(c);
  ASSERT_FALSE(app.ok());
  EXPECT_EQ(app.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(app.error().message(), "dataDir " + c.data_dir + ": exists and is not a directory");
}

TEST_F(AppTest, ListenAddressInUseIsNamedAndTheClusterIsStopped) {
  ServeConfig c = Embedded();
  StatusOr<std::unique_ptr<App>> app = InvalidArgument("not started");
  {
    test_support::HeldPort taken;
    ASSERT_NE(taken.port(), 0);
    c.listen = taken.address();
    app = App::Start(c);
  }
  ASSERT_FALSE(app.ok());
  EXPECT_THAT(app.error().message(), StartsWith("listen " + c.listen + ": "));
  // Everything started before the API was stopped again: a second start succeeds on the same
  // data dir (the store and the cluster's state are free).
  c.listen = "127.0.0.1:0";
  auto second = App::Start(c);
  EXPECT_TRUE(second.ok()) << second.error().ToString();
}

TEST_F(AppTest, EmbeddedKubeconfigIsWrittenWhenAsked) {
  ServeConfig c = Embedded();
  c.kubeconfig_out = dir_ + "/kubeconfig";
  auto app = App::Start(c);
  ASSERT_TRUE(app.ok()) << app.error().ToString();
  EXPECT_THAT(ReadFile(c.kubeconfig_out), HasSubstr((*app)->embedded_cluster()->api_url()));
}

TEST_F(AppTest, ApiServesHttpsWithTheConfiguredCertificate) {
  auto ca = net::GenerateCa("test-ca");
  ASSERT_TRUE(ca.ok());
  auto serving = net::GenerateServingCert(*ca, "steward", {"localhost"}, {"127.0.0.1"});
  ASSERT_TRUE(serving.ok());
  ServeConfig c = Embedded();
  c.tls_cert_file = dir_ + "/tls.crt";
  c.tls_key_file = dir_ + "/tls.key";
  std::ofstream(c.tls_cert_file) << serving->cert_pem;
  std::ofstream(c.tls_key_file) << serving->key_pem;
  auto app = App::Start(c);
  ASSERT_TRUE(app.ok()) << app.error().ToString();
  EXPECT_THAT((*app)->api_url(), MatchesRegex(R"(https://127\.0\.0\.1:[0-9]+)"));
  net::HttpClient::Options o;
  o.port = PortOf((*app)->api_url());
  o.tls = true;
  o.ca_pem = ca->cert_pem;
  o.bearer_token = (*app)->api_token();
  auto r = net::HttpClient::Create(o)->Request("GET", "/v1/projects");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->status, 200) << r->body;
  // Plain HTTP is not answered as HTTP on that port.
  net::HttpClient::Options plain = o;
  plain.tls = false;
  auto p = net::HttpClient::Create(plain)->Request("GET", "/healthz");
  EXPECT_FALSE(p.ok() && p->status == 200);
}

TEST_F(AppTest, UnusableTlsFilesAreNamedBeforeAnythingStarts) {
  auto ca = net::GenerateCa("test-ca");
  ASSERT_TRUE(ca.ok());
  auto one = net::GenerateServingCert(*ca, "one", {"localhost"}, {"127.0.0.1"});
  auto other = net::GenerateServingCert(*ca, "other", {"localhost"}, {"127.0.0.1"});
  ASSERT_TRUE(one.ok() && other.ok());
  ServeConfig c = Embedded();
  c.tls_cert_file = dir_ + "/missing.crt";
  c.tls_key_file = dir_ + "/tls.key";
  std::ofstream(c.tls_key_file) << one->key_pem;
  auto missing = App::Start(c);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(missing.error().message(), StartsWith("tls.certFile " + c.tls_cert_file + ": "));
  EXPECT_FALSE(fs::exists(dir_ + "/data/cluster")) << "nothing may start before the check";

  c.tls_cert_file = dir_ + "/tls.crt";
  std::ofstream(c.tls_cert_file) << "not a certificate\n";
  auto garbage = App::Start(c);
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.error().message(), "tls.certFile " + c.tls_cert_file + ": not a PEM file");

  std::ofstream(c.tls_cert_file) << other->cert_pem;  // the key is one's, the cert other's
  auto mismatched = App::Start(c);
  ASSERT_FALSE(mismatched.ok());
  EXPECT_EQ(mismatched.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(mismatched.error().message(), StartsWith("tls.certFile " + c.tls_cert_file));
  EXPECT_THAT(mismatched.error().message(), HasSubstr("private key"));
}

// The store (instance credentials in clear, also in its WAL), the API token, the cluster's
// objects (Secrets), CA key and token, and the kubeconfig: private whatever the umask.
TEST_F(AppTest, DataDirAndEverythingInItArePrivateWhateverTheUmask) {
  test_support::ScopedUmask umask(022);
  ServeConfig c = Embedded();
  c.kubeconfig_out = dir_ + "/kubeconfig";
  auto app = App::Start(c);
  ASSERT_TRUE(app.ok()) << app.error().ToString();
  auto put = Call(**app, "PUT", "/v1/projects/alpha", R"({"spec": {"team": "t"}, "start": true})");
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  ASSERT_EQ(put->status, 201) << put->body;
  store::Store& store = (*app)->store();
  ASSERT_TRUE(test_support::Eventually(
      [&] {
        auto r = store.GetProjectByName("alpha");
        return r.ok() && r->phase == "Running";
      },
      std::chrono::seconds(20)));
  EXPECT_THAT(
      test_support::EntriesUnder(c.data_dir),
      ::testing::IsSupersetOf({"steward.db", "steward.db-wal", "steward.db-shm", "api-token",
                               "cluster", "cluster/cluster.db", "cluster/cluster.db-wal",
                               "cluster/ca.key", "cluster/token"}));
  EXPECT_THAT(test_support::NotPrivate(c.data_dir), ::testing::IsEmpty());
  EXPECT_EQ(test_support::ModeOf(c.kubeconfig_out), 0600);
  (*app)->Stop();
  app->reset();
  EXPECT_THAT(test_support::NotPrivate(c.data_dir), ::testing::IsEmpty());
}

TEST_F(AppTest, LooseDataDirIsNamedWithTheFixAndItsFilesAreTightened) {
  test_support::ScopedUmask umask(022);
  ServeConfig c = Embedded();
  ASSERT_TRUE(fs::create_directories(c.data_dir));  // 0755, as the umask leaves mkdir -p
  {
    test_support::CapturedLog log;
    auto app = App::Start(c);
    ASSERT_TRUE(app.ok()) << app.error().ToString();
    EXPECT_THAT(log.Text(), HasSubstr("warning dataDir " + c.data_dir +
                                      " is mode 0755: group or others may enter or list this "
                                      "directory, which holds secrets; fix: chmod 700 " +
                                      c.data_dir + "\n"));
  }
  // The directory is named, not changed; what Steward wrote in it is private.
  EXPECT_EQ(test_support::ModeOf(c.data_dir), 0755);
  EXPECT_EQ(test_support::ModeOf(c.data_dir + "/steward.db"), 0600);
  EXPECT_EQ(test_support::ModeOf(c.data_dir + "/api-token"), 0600);

  // Files an earlier Steward left readable by others are tightened at the next start.
  for (const char* name : {"steward.db", "api-token", "cluster/cluster.db", "cluster/ca.key"}) {
    ASSERT_EQ(::chmod((c.data_dir + "/" + name).c_str(), 0644), 0) << name;
  }
  ASSERT_EQ(::chmod(c.data_dir.c_str(), 0700), 0);
  test_support::CapturedLog log;
  auto again = App::Start(c);
  ASSERT_TRUE(again.ok()) << again.error().ToString();
  EXPECT_THAT(test_support::NotPrivate(c.data_dir), ::testing::IsEmpty());
  EXPECT_THAT(log.Text(), HasSubstr("API token file " + c.data_dir +
                                    "/api-token was mode 0644, open to group or others; "
                                    "changed to 0600"));
  EXPECT_THAT(log.Text(), HasSubstr(c.data_dir + "/steward.db was mode 0644"));
  EXPECT_THAT(log.Text(), Not(HasSubstr("dataDir")));
}

TEST_F(AppTest, SeveralReplicasNeedASharedDatabase) {
  ServeConfig c = Embedded();
  c.replicas.enabled = true;
  c.replicas.name = "steward-0";
  auto app = App::Start(c);
  ASSERT_FALSE(app.ok());
  EXPECT_EQ(app.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(app.error().message(),
              StartsWith("replicas: need a postgres:// database; SQLite is one process's"));
  // Refused before anything started: no store was created.
  EXPECT_FALSE(fs::exists(c.data_dir + "/steward.db"));
}

TEST_F(AppTest, ReplicaMetricsShowOwnedShardsEpochsAndHandovers) {
  auto app = App::Start(Embedded());
  ASSERT_TRUE(app.ok()) << app.error().ToString();
  replica::MembershipOptions mo;
  mo.name = "steward-0";
  mo.ns = Embedded().engine.namespace_name;
  mo.shards = 4;
  mo.lease_duration = std::chrono::seconds(2);
  mo.renew_deadline = std::chrono::seconds(1);
  mo.retry_period = std::chrono::milliseconds(100);
  mo.apply = [](std::map<int, store::Fence>) { return Status::Ok(); };
  auto membership = replica::Membership::Create(
      mo, kube::test_support::ClientFor(*(*app)->embedded_cluster()), (*app)->store());
  ASSERT_TRUE(membership.ok()) << membership.error().ToString();
  MetricsRegistry registry;
  InstallReplicaMetrics(registry, **membership);
  (*membership)->Start();
  ASSERT_TRUE(test_support::Eventually([&] { return (*membership)->stats().owned.size() == 4; }));
  const std::string text = registry.Text();
  EXPECT_THAT(text, HasSubstr("steward_replica_shards_owned 4"));
  EXPECT_THAT(text, HasSubstr("steward_replica_shard_epoch{shard=\"3\"} 1"));
  EXPECT_THAT(text, HasSubstr("steward_replica_lease_renewing 1"));
  EXPECT_THAT(text, HasSubstr("steward_replica_handovers_total{direction=\"acquired\"} 4"));
  EXPECT_THAT(text, HasSubstr("steward_replica_handovers_total{direction=\"released\"} 0"));
  EXPECT_THAT(text, HasSubstr("steward_replica_lease_renew_failures_total 0"));
  (*membership)->Stop();
  EXPECT_THAT(registry.Text(),
              HasSubstr("steward_replica_handovers_total{direction=\"released\"} 4"));
  (*app)->Stop();
}

}  // namespace
}  // namespace steward::app
