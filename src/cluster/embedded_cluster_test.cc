// The embedded cluster over the wire: HTTPS, the token, faults, watches, persistence.
#include "cluster/embedded_cluster.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "common/json.h"
#include "common/time_util.h"
#include "common/yaml.h"
#include "net/http_client.h"
#include "test_support/captured_log.h"
#include "test_support/private_files.h"

namespace steward::cluster {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;

class EmbeddedClusterTest : public ::testing::Test {
 protected:
  void Start(Profile profile = {}, std::string data_dir = "", std::string audit_log = "") {
    EmbeddedCluster::Options o;
    o.profile = std::move(profile);
    o.data_dir = std::move(data_dir);
    o.audit_log = std::move(audit_log);
    auto c = EmbeddedCluster::Start(o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    cluster_ = std::move(c).value();
  }

  std::unique_ptr<net::HttpClient> Client(std::string token = "") {
    net::HttpClient::Options o;
    o.port = cluster_->api_port();
    o.tls = true;
    o.ca_pem = cluster_->ca_pem();
    o.bearer_token = token.empty() ? cluster_->token() : token;
    return net::HttpClient::Create(o);
  }

  static net::Headers JsonHeaders() {
    net::Headers h;
    h.Add("Content-Type", "application/json");
    return h;
  }

  // Polls `fn` until it returns true or the deadline passes (a condition wait, not a sleep).
  static bool Eventually(const std::function<bool()>& fn, milliseconds timeout = seconds(10)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (fn()) return true;
      std::this_thread::sleep_for(milliseconds(10));
    }
    return fn();
  }

  std::unique_ptr<EmbeddedCluster> cluster_;
};

constexpr const char* kConfigMap = R"({"metadata":{"name":"cm"},"data":{"k":"v"}})";

// Sends `request` on a fresh plain TCP connection and returns everything until the server
// closes it (10 s at most).
std::string RawExchange(uint16_t port, const std::string& request) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size())) {
    char buf[4096];
    ssize_t n;
    while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

// Regression (issue 13, finding 9), through the cluster's API server: a POST whose
// Transfer-Encoding the server did not read as chunked was taken as bodyless, and the
// authenticated DELETE after it ran as a second request.
TEST(EmbeddedClusterSmugglingTest, AnUnknownTransferEncodingDoesNotRunTheBytesAfterIt) {
  EmbeddedCluster::Options o;
  o.tls = false;  // the same HTTP server as over TLS; plain lets the test write raw bytes
  o.ingress = false;
  o.controllers = false;
  auto started = EmbeddedCluster::Start(o);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  auto cluster = std::move(started).value();
  net::HttpClient::Options co;
  co.port = cluster->api_port();
  co.bearer_token = cluster->token();
  auto client = net::HttpClient::Create(co);
  net::Headers json;
  json.Add("Content-Type", "application/json");
  auto created = client->Request("POST", "/api/v1/namespaces/default/configmaps",
                                 R"({"metadata":{"name":"cm"},"data":{"k":"v"}})", json);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_EQ(created->status, 201) << created->body;

  const std::string auth = "Authorization: Bearer " + cluster->token() + "\r\n";
  std::string reply =
      RawExchange(cluster->api_port(),
                  "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n" + auth +
                      "Content-Type: application/json\r\nTransfer-Encoding: xchunked\r\n\r\n"
                      "DELETE /api/v1/namespaces/default/configmaps/cm HTTP/1.1\r\nHost: x\r\n" +
                      auth + "\r\n");
  EXPECT_THAT(reply, ::testing::StartsWith("HTTP/1.1 400 Bad Request\r\n"));
  EXPECT_EQ(reply.find("HTTP/1.1", 1), std::string::npos) << "a second response: " << reply;
  auto still = client->Request("GET", "/api/v1/namespaces/default/configmaps/cm");
  ASSERT_TRUE(still.ok()) << still.status().ToString();
  EXPECT_EQ(still->status, 200) << "the smuggled DELETE ran: " << still->body;
}

TEST_F(EmbeddedClusterTest, ServesHttpsWithTheTokenAndRefusesOthers) {
  Start();
  auto ok = Client()->Request("GET", "/api/v1/namespaces");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->status, 200);
  EXPECT_THAT(ok->body, HasSubstr("\"NamespaceList\""));
  auto denied = Client("wrong-token")->Request("GET", "/api/v1/namespaces");
  ASSERT_TRUE(denied.ok());
  EXPECT_EQ(denied->status, 401);
  EXPECT_THAT(denied->body, HasSubstr("\"reason\":\"Unauthorized\""));
  // Health and version are open, as on a default API server.
  auto health = Client("wrong-token")->Request("GET", "/healthz");
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok");
  // A client trusting another CA refuses the server.
  net::HttpClient::Options other;
  other.port = cluster_->api_port();
  other.tls = true;
  auto stranger = EmbeddedCluster::Start({});
  ASSERT_TRUE(stranger.ok());
  other.ca_pem = (*stranger)->ca_pem();
  auto refused = net::HttpClient::Create(other)->Request("GET", "/healthz");
  EXPECT_FALSE(refused.ok());
}

// Two embedded clusters in one process (what several clusters from one Steward will be tested
// with, issue 37) share nothing: each its own CA, admin token, ports and objects. Regression: the
// admin token came from the seeded simulation random, so every cluster started with the default
// seed had the same, predictable token (a local user could take the cluster over).
TEST_F(EmbeddedClusterTest, TwoClustersInOneProcessShareNothing) {
  Start();
  auto other = EmbeddedCluster::Start({});
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EmbeddedCluster& b = **other;
  EXPECT_NE(b.api_port(), cluster_->api_port());
  EXPECT_NE(b.ingress_port(), cluster_->ingress_port());
  EXPECT_NE(b.token(), cluster_->token());
  EXPECT_NE(b.ca_pem(), cluster_->ca_pem());
  net::HttpClient::Options bo;
  bo.port = b.api_port();
  bo.tls = true;
  bo.ca_pem = b.ca_pem();
  bo.bearer_token = b.token();
  auto to_b = net::HttpClient::Create(bo);
  // An object created in the first is not in the second.
  auto created =
      Client()->Request("POST", "/api/v1/namespaces/default/configmaps", kConfigMap, JsonHeaders());
  ASSERT_TRUE(created.ok());
  ASSERT_EQ(created->status, 201) << created->body;
  auto in_b = to_b->Request("GET", "/api/v1/namespaces/default/configmaps/cm");
  ASSERT_TRUE(in_b.ok());
  EXPECT_EQ(in_b->status, 404) << in_b->body;
  // The same name created in the second is another object: the first's is unchanged.
  auto created_b = to_b->Request("POST", "/api/v1/namespaces/default/configmaps",
                                 R"({"metadata":{"name":"cm"},"data":{"k":"w"}})", JsonHeaders());
  ASSERT_TRUE(created_b.ok());
  ASSERT_EQ(created_b->status, 201) << created_b->body;
  auto in_a = Client()->Request("GET", "/api/v1/namespaces/default/configmaps/cm");
  ASSERT_TRUE(in_a.ok());
  EXPECT_EQ(ParseJson(in_a->body)->at("data").at("k"), "v") << in_a->body;
  // Each refuses the other's token.
  bo.bearer_token = cluster_->token();
  auto crossed = net::HttpClient::Create(bo)->Request("GET", "/api/v1/namespaces");
  ASSERT_TRUE(crossed.ok());
  EXPECT_EQ(crossed->status, 401);
  // Stopping the second leaves the first serving.
  other->reset();
  auto still = Client()->Request("GET", "/api/v1/namespaces/default/configmaps/cm");
  ASSERT_TRUE(still.ok());
  EXPECT_EQ(still->status, 200) << still->body;
}

TEST_F(EmbeddedClusterTest, KubeconfigNamesTheServerCaAndToken) {
  Start();
  auto kc = ParseYaml(cluster_->Kubeconfig());
  ASSERT_TRUE(kc.ok());
  EXPECT_EQ((*kc)["current-context"], "steward");
  EXPECT_EQ((*kc)["clusters"][0]["cluster"]["server"], cluster_->api_url());
  EXPECT_EQ((*kc)["users"][0]["user"]["token"], cluster_->token());
  EXPECT_FALSE(
      (*kc)["clusters"][0]["cluster"]["certificate-authority-data"].get<std::string>().empty());
}

TEST_F(EmbeddedClusterTest, ErrorsAreStatusObjectsWithTheRightCodes) {
  Start();
  auto c = Client();
  auto missing = c->Request("GET", "/api/v1/namespaces/default/configmaps/none");
  EXPECT_EQ(missing->status, 404);
  EXPECT_THAT(missing->body, HasSubstr("configmaps \\\"none\\\" not found"));
  auto malformed =
      c->Request("POST", "/api/v1/namespaces/default/configmaps", "{nope", JsonHeaders());
  EXPECT_EQ(malformed->status, 400);
  net::Headers text;
  text.Add("Content-Type", "text/plain");
  auto wrong_type = c->Request("PATCH", "/api/v1/namespaces/default/configmaps/none", "{}", text);
  EXPECT_EQ(wrong_type->status, 415);
  std::string huge =
      R"({"metadata":{"name":"big"},"data":{"k":")" + std::string(4 * 1024 * 1024, 'x') + "\"}}";
  auto too_large =
      Client()->Request("POST", "/api/v1/namespaces/default/configmaps", huge, JsonHeaders());
  ASSERT_TRUE(too_large.ok());
  EXPECT_EQ(too_large->status, 413);
  auto unknown = c->Request("GET", "/apis/example.com/v1/widgets");
  EXPECT_EQ(unknown->status, 404);
  auto put_collection =
      c->Request("PUT", "/api/v1/namespaces/default/configmaps", kConfigMap, JsonHeaders());
  EXPECT_EQ(put_collection->status, 405);
  auto extra = c->Request("GET", "/api/v1/namespaces/default/pods/x/status/more");
  EXPECT_EQ(extra->status, 404);
  auto bad_dry_run = c->Request("DELETE", "/api/v1/namespaces/default/configmaps/none",
                                R"({"dryRun":["Sometimes"]})", JsonHeaders());
  EXPECT_EQ(bad_dry_run->status, 400);
  // Nothing was stored by the refused requests.
  auto list = Client()->Request("GET", "/api/v1/namespaces/default/configmaps");
  EXPECT_THAT(list->body, HasSubstr("\"items\":[]"));
}

TEST_F(EmbeddedClusterTest, WronglyTypedFieldsAreRefusedAndTheServerStaysUp) {
  Profile p;
  p.faults.latency["create"] = DelaySpec{milliseconds(5), milliseconds(0)};
  Start(p);
  auto c = Client();
  for (const char* body : {R"({"metadata":{"name":"zz","labels":"oops"}})",
                           R"({"metadata":{"name":"zz"},"spec":[]})"}) {
    auto r = c->Request("POST", "/api/v1/namespaces", body, JsonHeaders());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_GE(r->status, 400) << r->body;
    EXPECT_LT(r->status, 500) << r->body;
  }
  auto secret =
      c->Request("POST", "/api/v1/namespaces/default/secrets",
                 R"({"metadata":{"name":"s"},"data":"x","stringData":{"a":"b"}})", JsonHeaders());
  ASSERT_TRUE(secret.ok());
  EXPECT_EQ(secret->status / 100, 4) << secret->body;
  auto svc = c->Request("POST", "/api/v1/namespaces/default/services",
                        R"({"metadata":{"name":"s"},"spec":{"type":"NodePort","ports":"x"}})",
                        JsonHeaders());
  ASSERT_TRUE(svc.ok());
  EXPECT_EQ(svc->status / 100, 4) << svc->body;
  EXPECT_EQ(Client()->Request("GET", "/healthz")->status, 200);
  auto list = Client()->Request("GET", "/api/v1/namespaces/default/secrets");
  EXPECT_THAT(list->body, HasSubstr("\"items\":[]"));
}

TEST_F(EmbeddedClusterTest, FieldSelectedWatchSeesAnObjectLeaveTheSelection) {
  Start();
  auto c = Client();
  std::string pod = R"({"metadata":{"name":"p"},"spec":{"nodeName":"n","containers":[
    {"name":"c","image":"x"}]}})";
  ASSERT_EQ(c->Request("POST", "/api/v1/namespaces/default/pods", pod, JsonHeaders())->status, 201);
  net::Headers merge;
  merge.Add("Content-Type", "application/merge-patch+json");
  ASSERT_EQ(c->Request("PATCH", "/api/v1/namespaces/default/pods/p/status",
                       R"({"status":{"phase":"Running"}})", merge)
                ->status,
            200);
  std::string rv = std::to_string(cluster_->storage().CurrentRevision());
  std::string received;
  std::thread watcher([&] {
    auto r = Client()->Stream(
        "GET",
        "/api/v1/namespaces/default/pods?watch=1&fieldSelector=status.phase%3DRunning"
        "&resourceVersion=" +
            rv,
        [&](std::string_view data) {
          received.append(data);
          return received.find('\n') == std::string::npos;
        },
        {}, seconds(10));
    (void)r;
  });
  ASSERT_EQ(c->Request("PATCH", "/api/v1/namespaces/default/pods/p/status",
                       R"({"status":{"phase":"Failed"}})", merge)
                ->status,
            200);
  watcher.join();
  EXPECT_THAT(received, HasSubstr("\"type\":\"DELETED\"")) << received;
}

TEST_F(EmbeddedClusterTest, InjectedThrottlingAnswers429WithRetryAfter) {
  Start();
  Profile p = cluster_->profile();
  p.faults.error_rate_429 = 1.0;
  p.faults.retry_after_seconds = 3;
  cluster_->SetProfile(p);
  auto r = Client()->Request("GET", "/api/v1/namespaces/default/configmaps");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 429);
  EXPECT_EQ(r->headers.Get("Retry-After"), "3");
  EXPECT_THAT(r->body, HasSubstr("\"retryAfterSeconds\":3"));
  p.faults.error_rate_429 = 0;
  p.faults.reset_rate = 1.0;
  cluster_->SetProfile(p);
  auto reset = Client()->Request("GET", "/api/v1/namespaces/default/configmaps");
  EXPECT_FALSE(reset.ok());
  p.faults.reset_rate = 0;
  p.faults.error_rate_503 = 1.0;
  cluster_->SetProfile(p);
  EXPECT_EQ(Client()->Request("GET", "/api/v1/namespaces/default/configmaps")->status, 503);
  p.faults.error_rate_503 = 0;
  cluster_->SetProfile(p);
  EXPECT_EQ(Client()->Request("GET", "/api/v1/namespaces/default/configmaps")->status, 200);
  EXPECT_GE(cluster_->request_log().Count("list"), 4u);
}

TEST_F(EmbeddedClusterTest, WatchStreamsEventsAndIsCutAfterTheConfiguredCount) {
  Start();
  Profile p = cluster_->profile();
  p.faults.watch_cut_after_events = 3;
  cluster_->SetProfile(p);
  std::string rv = std::to_string(cluster_->storage().CurrentRevision());
  std::string received;
  std::atomic<bool> done{false};
  Status stream_status;
  std::thread watcher([&] {
    auto r = Client()->Stream(
        "GET", "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=" + rv,
        [&](std::string_view data) {
          received.append(data);
          return true;
        },
        {}, seconds(10));
    stream_status = r.status();
    done = true;
  });
  auto writer = Client();
  for (int i = 0; i < 5 && !done; ++i) {
    std::string body = R"({"metadata":{"name":"cm)" + std::to_string(i) + R"("}})";
    ASSERT_EQ(writer->Request("POST", "/api/v1/namespaces/default/configmaps", body, JsonHeaders())
                  ->status,
              201);
  }
  ASSERT_TRUE(Eventually([&] { return done.load(); }));
  watcher.join();
  // Exactly three ADDED events arrived, then the connection was dropped.
  size_t events = 0;
  for (size_t pos = 0; (pos = received.find("\"type\":\"ADDED\"", pos)) != std::string::npos;
       ++pos) {
    ++events;
  }
  EXPECT_EQ(events, 3u) << received << " / " << stream_status.ToString();
}

TEST_F(EmbeddedClusterTest, WatchFromACompactedRevisionGetsExpired) {
  Start();
  auto c = Client();
  ASSERT_EQ(c->Request("POST", "/api/v1/namespaces/default/configmaps", kConfigMap, JsonHeaders())
                ->status,
            201);
  cluster_->storage().Compact();
  std::string body;
  auto r = Client()->Stream(
      "GET", "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=1",
      [&](std::string_view data) {
        body.append(data);
        return true;
      },
      {}, seconds(5));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(body, HasSubstr("\"type\":\"ERROR\""));
  EXPECT_THAT(body, HasSubstr("\"code\":410"));
  EXPECT_THAT(body, HasSubstr("\"reason\":\"Expired\""));
}

TEST_F(EmbeddedClusterTest, IngressAdmissionSwitchRefusesIngressWithoutService) {
  Profile p;
  p.ingress_requires_service = true;
  Start(p);
  std::string ingress = R"({"metadata":{"name":"web"},"spec":{"rules":[{"host":"a.test",
    "http":{"paths":[{"path":"/","pathType":"Prefix","backend":{"service":{"name":"web",
    "port":{"number":80}}}}]}}]}})";
  auto c = Client();
  auto refused = c->Request("POST", "/apis/networking.k8s.io/v1/namespaces/default/ingresses",
                            ingress, JsonHeaders());
  EXPECT_EQ(refused->status, 403);
  EXPECT_THAT(refused->body, HasSubstr("backend service default/web does not exist"));
  ASSERT_EQ(
      c->Request("POST", "/api/v1/namespaces/default/services",
                 R"({"metadata":{"name":"web"},"spec":{"ports":[{"port":80}]}})", JsonHeaders())
          ->status,
      201);
  EXPECT_EQ(c->Request("POST", "/apis/networking.k8s.io/v1/namespaces/default/ingresses", ingress,
                       JsonHeaders())
                ->status,
            201);
}

TEST_F(EmbeddedClusterTest, AuditLogAndMetricsCountEveryRequest) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("steward-audit-" + std::to_string(::getpid()) + ".log"))
                         .string();
  std::filesystem::remove(path);
  Start({}, "", path);
  auto c = Client();
  net::Headers create_headers = JsonHeaders();
  create_headers.Add("User-Agent", "steward/0.1 replica/steward-1");
  ASSERT_EQ(c->Request("POST", "/api/v1/namespaces/default/configmaps", kConfigMap, create_headers)
                ->status,
            201);
  ASSERT_EQ(c->Request("GET", "/api/v1/namespaces/default/configmaps/cm")->status, 200);
  ASSERT_EQ(c->Request("GET", "/api/v1/namespaces/default/configmaps/none")->status, 404);
  auto metrics = c->Request("GET", "/metrics");
  ASSERT_EQ(metrics->status, 200);
  EXPECT_THAT(metrics->body,
              HasSubstr("apiserver_request_total{code=\"201\",group=\"\",resource=\"configmaps\","
                        "subresource=\"\",verb=\"CREATE\"} 1"));
  EXPECT_THAT(metrics->body,
              HasSubstr("apiserver_request_total{code=\"404\",group=\"\",resource=\"configmaps\","
                        "subresource=\"\",verb=\"GET\"} 1"));
  cluster_->Stop();
  std::ifstream in(path);
  std::vector<Json> lines;
  std::string line;
  while (std::getline(in, line)) {
    auto j = ParseJson(line);
    ASSERT_TRUE(j.ok()) << line;
    lines.push_back(*j);
  }
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0]["verb"], "create");
  EXPECT_EQ(lines[0]["resource"], "configmaps");
  EXPECT_EQ(lines[0]["namespace"], "default");
  EXPECT_EQ(lines[0]["code"], 201);
  EXPECT_EQ(lines[0]["user"], "admin");
  // Audit events name the client (a replica, in sharded mode), as the real API server's do.
  EXPECT_EQ(lines[0]["userAgent"], "steward/0.1 replica/steward-1");
  EXPECT_TRUE(lines[0]["latencyMs"].is_number());
  // When the request arrived and when it was answered (the answer's time taken as it is sent).
  for (const Json& l : lines) {
    auto started = ParseRfc3339(GetString(l, "startTime"));
    auto answered = ParseRfc3339(GetString(l, "time"));
    ASSERT_TRUE(started && answered) << DumpJson(l);
    EXPECT_LE(*started, *answered) << DumpJson(l);
  }
  EXPECT_EQ(lines[2]["name"], "none");
  EXPECT_EQ(lines[2]["code"], 404);
  std::filesystem::remove(path);
}

TEST_F(EmbeddedClusterTest, DataDirKeepsObjectsIdentityAndRevisions) {
  std::string dir =
      (std::filesystem::temp_directory_path() / ("steward-ec-" + std::to_string(::getpid())))
          .string();
  std::filesystem::remove_all(dir);
  std::string token, ca;
  uint64_t revision = 0;
  {
    Start({}, dir);
    ASSERT_EQ(
        Client()
            ->Request("POST", "/api/v1/namespaces/default/configmaps", kConfigMap, JsonHeaders())
            ->status,
        201);
    token = cluster_->token();
    ca = cluster_->ca_pem();
    revision = cluster_->storage().CurrentRevision();
    cluster_->Stop();
    cluster_.reset();
  }
  Start({}, dir);
  EXPECT_EQ(cluster_->token(), token);
  EXPECT_EQ(cluster_->ca_pem(), ca);
  EXPECT_EQ(cluster_->storage().CurrentRevision(), revision);
  auto cm = Client()->Request("GET", "/api/v1/namespaces/default/configmaps/cm");
  EXPECT_EQ(cm->status, 200);
  cluster_->Stop();
  cluster_.reset();
  std::filesystem::remove_all(dir);
}

// A ServiceAccount token (TokenRequest) still works after the cluster restarts on its data dir,
// as on a real cluster (tokens are signed, not remembered); a cluster without the data dir, with
// another CA key, refuses it.
TEST_F(EmbeddedClusterTest, ServiceAccountTokensOutliveARestartOnTheDataDir) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("steward-ec-sa-" + std::to_string(::getpid())))
          .string();
  std::filesystem::remove_all(dir);
  Start({}, dir);
  ASSERT_EQ(Client()
                ->Request("POST", "/api/v1/namespaces/default/serviceaccounts",
                          R"({"metadata":{"name":"robot"}})", JsonHeaders())
                ->status,
            201);
  auto issued = Client()->Request("POST", "/api/v1/namespaces/default/serviceaccounts/robot/token",
                                  R"({"spec":{}})", JsonHeaders());
  ASSERT_EQ(issued->status, 201) << issued->body;
  const std::string sa_token = ParseJson(issued->body).value()["status"]["token"];
  // The Role-less token may read discovery and is refused configmaps: it is a ServiceAccount.
  EXPECT_EQ(Client(sa_token)->Request("GET", "/apis")->status, 200);
  EXPECT_EQ(Client(sa_token)->Request("GET", "/api/v1/namespaces/default/configmaps")->status, 403);
  cluster_->Stop();
  cluster_.reset();

  Start({}, dir);
  EXPECT_EQ(Client(sa_token)->Request("GET", "/apis")->status, 200);
  EXPECT_EQ(Client(sa_token)->Request("GET", "/api/v1/namespaces/default/configmaps")->status, 403);
  auto whoami = Client(sa_token)->Request(
      "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", "{}", JsonHeaders());
  ASSERT_EQ(whoami->status, 201) << whoami->body;
  EXPECT_EQ(ParseJson(whoami->body).value()["status"]["userInfo"]["username"],
            "system:serviceaccount:default:robot");
  cluster_->Stop();
  cluster_.reset();
  std::filesystem::remove_all(dir);

  Start();  // another cluster: another CA key
  EXPECT_EQ(Client(sa_token)->Request("GET", "/apis")->status, 401);
}

// Restarts over one data dir must not replay the uids of an earlier run: two objects with one
// uid made the garbage collector wait forever on a Foreground deletion (a "dependent" that was
// really another Deployment's ReplicaSet) after the cluster was killed and started again.
TEST_F(EmbeddedClusterTest, RestartOnDataDirNeverRepeatsUidsAndForegroundDeletionCompletes) {
  std::string dir =
      (std::filesystem::temp_directory_path() / ("steward-ec-uid-" + std::to_string(::getpid())))
          .string();
  std::filesystem::remove_all(dir);
  const ResourceType& deployments = *FindGroupResource("deployments.apps");
  auto deployment = [](const std::string& name) {
    return Json{
        {"apiVersion", "apps/v1"},
        {"kind", "Deployment"},
        {"metadata", {{"name", name}}},
        {"spec",
         {{"replicas", 1},
          {"selector", {{"matchLabels", {{"app", name}}}}},
          {"template",
           {{"metadata", {{"labels", {{"app", name}}}}},
            {"spec", {{"containers", Json::array({{{"name", "web"}, {"image", "nginx"}}})}}}}}}}};
  };
  auto count = [&](const std::string& gr, const std::string& label) {
    ListOptions opts;
    opts.label_selector = label;
    auto list = cluster_->api().List(*FindGroupResource(gr), "default", opts);
    return list.ok() ? (*list)["items"].size() : size_t{999};
  };
  auto running = [&](const std::string& app) {
    return Eventually([&] {
      ListOptions opts;
      opts.label_selector = "app=" + app;
      auto pods = cluster_->api().List(*FindGroupResource("pods"), "default", opts);
      if (!pods.ok() || (*pods)["items"].size() != 1) return false;
      return GetString((*pods)["items"][0]["status"], "phase") == "Running";
    });
  };
  Start({}, dir);  // the first run only creates the cluster's own objects
  cluster_->Stop();
  cluster_.reset();
  // Two runs that do the same thing: before the fix both drew the same random stream.
  for (const char* name : {"d1", "d2"}) {
    Start({}, dir);
    ASSERT_TRUE(cluster_->api().Create(deployments, "default", deployment(name)).ok());
    ASSERT_TRUE(running(name)) << name;
    cluster_->Stop();
    cluster_.reset();
  }
  Start({}, dir);
  std::map<std::string, std::string> owner_of_uid;
  for (const char* gr : {"namespaces", "deployments.apps", "replicasets.apps", "pods"}) {
    for (const auto& rec : cluster_->storage().List(gr, "").items) {
      Json obj = rec.Parse();
      std::string uid = GetString(obj["metadata"], "uid");
      std::string who = std::string(gr) + " " + rec.ns + "/" + rec.name;
      auto [it, fresh] = owner_of_uid.emplace(uid, who);
      EXPECT_TRUE(fresh) << "uid " << uid << " of " << who << " is also " << it->second;
    }
  }
  DeleteOptions foreground;
  foreground.propagation_policy = "Foreground";
  ASSERT_TRUE(cluster_->api().Delete(deployments, "default", "d1", foreground).ok());
  ASSERT_TRUE(Eventually([&] {
    return !cluster_->api().Get(deployments, "default", "d1").ok() &&
           count("replicasets.apps", "app=d1") == 0 && count("pods", "app=d1") == 0;
  }));
  EXPECT_EQ(count("replicasets.apps", "app=d2"), 1u);
  EXPECT_EQ(count("pods", "app=d2"), 1u);
  cluster_->Stop();
  cluster_.reset();
  std::filesystem::remove_all(dir);
}

// The data dir holds Secrets (cluster.db and its WAL), the CA key and the token; the kubeconfig
// holds the token: private whatever the umask, also when they existed looser before.
TEST_F(EmbeddedClusterTest, DataDirAndKubeconfigArePrivateWhateverTheUmask) {
  test_support::ScopedUmask umask(022);
  const std::string top = (std::filesystem::temp_directory_path() /
                           ("steward-ec-private-" + std::to_string(::getpid())))
                              .string();
  std::filesystem::remove_all(top);
  const std::string dir = top + "/state/cluster";
  const std::string kubeconfig = top + "/kubeconfig";
  {
    Start({}, dir);
    constexpr const char* kSecret = R"({"metadata":{"name":"s"},"data":{"k":"c2VjcmV0"}})";
    ASSERT_EQ(Client()
                  ->Request("POST", "/api/v1/namespaces/default/secrets", kSecret, JsonHeaders())
                  ->status,
              201);
    ASSERT_TRUE(cluster_->WriteKubeconfig(kubeconfig).ok());
    EXPECT_THAT(test_support::EntriesUnder(dir),
                ::testing::IsSupersetOf({"cluster.db", "cluster.db-wal", "cluster.db-shm", "ca.crt",
                                         "ca.key", "token"}));
    EXPECT_THAT(test_support::NotPrivate(dir), ::testing::IsEmpty());
    EXPECT_EQ(test_support::ModeOf(kubeconfig), 0600);
    EXPECT_EQ(test_support::ModeOf(top + "/state"), 0755);  // a parent, made as mkdir -p does
    cluster_->Stop();
    cluster_.reset();
  }
  // As an earlier Steward left them: everything readable by others.
  for (const char* name : {"cluster.db", "ca.crt", "ca.key", "token"}) {
    ASSERT_EQ(::chmod((dir + "/" + name).c_str(), 0644), 0) << name;
  }
  ASSERT_EQ(::chmod(kubeconfig.c_str(), 0644), 0);
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  {
    test_support::CapturedLog log;
    spdlog::set_level(spdlog::level::warn);
    Start({}, dir);
    EXPECT_THAT(log.Text(), HasSubstr("embedded cluster data dir " + dir +
                                      " is mode 0755: group or others may enter or list this "
                                      "directory, which holds secrets; fix: chmod 700 " +
                                      dir));
    EXPECT_THAT(log.Text(), HasSubstr(dir + "/cluster.db was mode 0644"));
  }
  ASSERT_TRUE(cluster_->WriteKubeconfig(kubeconfig).ok());
  // The directory is the operator's to change (named above); every file in it is private again.
  EXPECT_EQ(test_support::ModeOf(dir), 0755);
  ASSERT_EQ(::chmod(dir.c_str(), 0700), 0);
  EXPECT_THAT(test_support::NotPrivate(dir), ::testing::ElementsAre(dir + "/ca.crt 0644"));
  EXPECT_EQ(test_support::ModeOf(kubeconfig), 0600);
  auto secret = Client()->Request("GET", "/api/v1/namespaces/default/secrets/s");
  EXPECT_EQ(secret->status, 200);
  cluster_->Stop();
  cluster_.reset();
  std::filesystem::remove_all(top);
}

}  // namespace
}  // namespace steward::cluster
