// The HTTP prober: URL and address parsing, what it sends, which statuses count as an answer,
// connection errors and timeouts, TLS verification, and the embedded cluster's ingress
// listener (404 without a rule, 503 without a ready backend).
#include "engine/probe/http_prober.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "cluster/embedded_cluster.h"
#include "cluster/model/resource_types.h"
#include "common/mutex.h"
#include "net/http_server.h"
#include "net/tls_certs.h"
#include "test_support/eventually.h"

namespace steward::engine {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;

// ---- parsing ----

TEST(ParseProbeUrlTest, SplitsSchemeHostPortAndTarget) {
  auto a = ParseProbeUrl("http://alpha.localhost/");
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->tls);
  EXPECT_EQ(a->host, "alpha.localhost");
  EXPECT_EQ(a->port, 80);
  EXPECT_EQ(a->target, "/");

  auto b = ParseProbeUrl("https://b.example.com:8443/flows/x?y=1#frag");
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->tls);
  EXPECT_EQ(b->host, "b.example.com");
  EXPECT_EQ(b->port, 8443);
  EXPECT_EQ(b->target, "/flows/x?y=1");

  auto c = ParseProbeUrl("https://c.example.com");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->port, 443);
  EXPECT_EQ(c->target, "/");

  auto d = ParseProbeUrl("http://[::1]:8080?q");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->host, "::1");
  EXPECT_EQ(d->port, 8080);
  EXPECT_EQ(d->target, "/?q");
}

TEST(ParseProbeUrlTest, RefusesBadUrlsNamingThemAndTheProblem) {
  struct Case {
    const char* url;
    const char* problem;
  } cases[] = {
      {"ftp://a/", "scheme must be http or https"},
      {"alpha.localhost", "scheme must be http or https"},
      {"http:///x", "empty host"},
      {"http://:80/", "empty host"},
      {"http://a:0/", "bad port \"0\""},
      {"http://a:65536/", "bad port \"65536\""},
      {"http://a:x/", "bad port \"x\""},
      {"http://a:/", "bad port \"\""},
      {"http://user@a/", "user info"},
      {"http://[::1/", "unclosed '['"},
      {"http://::1/", "IPv6 address must be in brackets"},
  };
  for (const auto& c : cases) {
    auto r = ParseProbeUrl(c.url);
    ASSERT_FALSE(r.ok()) << c.url;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument) << c.url;
    EXPECT_THAT(r.error().message(), HasSubstr(std::string("probe URL \"") + c.url + "\""));
    EXPECT_THAT(r.error().message(), HasSubstr(c.problem)) << c.url;
  }
}

TEST(ParseProbeAddressTest, NeedsHostAndPort) {
  auto a = ParseProbeAddress("127.0.0.1:8080");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->first, "127.0.0.1");
  EXPECT_EQ(a->second, 8080);
  auto b = ParseProbeAddress("[::1]:80");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->first, "::1");
  auto c = ParseProbeAddress("ingress-nginx.svc:443");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->first, "ingress-nginx.svc");
  for (const char* bad : {"127.0.0.1", "", ":80", "a:99999", "[::1]"}) {
    auto r = ParseProbeAddress(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(r.error().message(), HasSubstr(std::string("probe address \"") + bad + "\""));
  }
}

// ---- against a local server ----

// Answers GET /status/NNN with NNN and records what it received.
class StatusServer : public net::Handler {
 public:
  void Handle(net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer) override {
    {
      MutexLock lock(mu_);
      seen_.push_back({request.method, request.target, std::string(request.headers.Get("Host"))});
    }
    net::HttpResponse r;
    r.status = 200;
    if (request.path.rfind("/status/", 0) == 0) r.status = std::stoi(request.path.substr(8));
    r.body = "ok";
    writer->Send(std::move(r));
  }
  struct Seen {
    std::string method, target, host;
  };
  std::vector<Seen> seen() {
    MutexLock lock(mu_);
    return seen_;
  }

 private:
  Mutex mu_;
  std::vector<Seen> seen_ GUARDED_BY(mu_);
};

class HttpProberServerTest : public ::testing::Test {
 protected:
  void Serve(std::optional<net::TlsConfig> tls = std::nullopt) {
    net::HttpServer::Options o;
    o.tls = std::move(tls);
    auto s = net::HttpServer::Start(o, handler_);
    ASSERT_TRUE(s.ok()) << s.error().ToString();
    server_ = std::move(*s);
    address_ = "127.0.0.1:" + std::to_string(server_->port());
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }

  StatusServer handler_;
  std::unique_ptr<net::HttpServer> server_;
  std::string address_;
};

TEST_F(HttpProberServerTest, SendsGetOfTheUrlsPathWithTheProjectHostToTheAddress) {
  Serve();
  HttpProber probe = MakeHttpProber(address_, seconds(5));
  Status s = probe("alpha.localhost", "http://alpha.localhost/flows?x=1#top");
  ASSERT_TRUE(s.ok()) << s.ToString();
  auto seen = handler_.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "GET");
  EXPECT_EQ(seen[0].target, "/flows?x=1");
  EXPECT_EQ(seen[0].host, "alpha.localhost");
}

TEST_F(HttpProberServerTest, WithoutAnAddressItConnectsToTheUrlsHostAndPort) {
  Serve();
  HttpProber probe = MakeHttpProber("", seconds(5));
  Status s = probe("alpha.localhost", "http://" + address_ + "/status/204");
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(handler_.seen().size(), 1u);
  EXPECT_EQ(handler_.seen()[0].host, "alpha.localhost");
}

TEST_F(HttpProberServerTest, AnyAnswerBelow500But404CountsAsUp) {
  Serve();
  HttpProber probe = MakeHttpProber(address_, seconds(5));
  for (int code : {200, 204, 301, 302, 400, 401, 403, 405, 499}) {
    Status s = probe("a.localhost", "http://a.localhost/status/" + std::to_string(code));
    EXPECT_TRUE(s.ok()) << code << ": " << s.ToString();
  }
  for (int code : {404, 500, 502, 503, 504}) {
    const std::string url = "http://a.localhost/status/" + std::to_string(code);
    Status s = probe("a.localhost", url);
    EXPECT_EQ(s.code(), StatusCode::kUnavailable) << code;
    EXPECT_THAT(s.message(), HasSubstr("HTTP " + std::to_string(code))) << s.message();
    EXPECT_THAT(s.message(), HasSubstr(url));
    EXPECT_THAT(s.message(), HasSubstr("via " + address_));
  }
}

TEST_F(HttpProberServerTest, BadUrlOrAddressIsInvalidArgument) {
  Serve();
  Status bad_url = MakeHttpProber(address_, seconds(1))("a", "ftp://a/");
  EXPECT_EQ(bad_url.code(), StatusCode::kInvalidArgument);
  Status bad_address = MakeHttpProber("nohostport", seconds(1))("a", "http://a/");
  EXPECT_EQ(bad_address.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_address.message(), HasSubstr("probe address \"nohostport\""));
  EXPECT_TRUE(handler_.seen().empty());
}

TEST(HttpProberTest, ClosedPortIsUnavailableNamingTheUrlAndAddress) {
  // Bind a port and close it again: nothing listens there now.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  socklen_t len = sizeof sa;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len), 0);
  const std::string address = "127.0.0.1:" + std::to_string(ntohs(sa.sin_port));
  ::close(fd);
  Status s = MakeHttpProber(address, seconds(5))("a.localhost", "http://a.localhost/");
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("GET http://a.localhost/ via " + address));
}

TEST(HttpProberTest, ASilentServerTimesOutWithinTheTimeout) {
  // Listening but never accepting: the connect succeeds (backlog), no answer ever comes.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  socklen_t len = sizeof sa;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len), 0);
  const std::string address = "127.0.0.1:" + std::to_string(ntohs(sa.sin_port));
  const auto start = std::chrono::steady_clock::now();
  Status s = MakeHttpProber(address, milliseconds(300))("a.localhost", "http://a.localhost/");
  const auto took = std::chrono::steady_clock::now() - start;
  ::close(fd);
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("http://a.localhost/"));
  EXPECT_GE(took, milliseconds(250));
  EXPECT_LT(took, seconds(5));
}

// ---- TLS ----

class HttpProberTlsTest : public HttpProberServerTest {
 protected:
  void SetUp() override {
    auto ca = net::GenerateCa("probe test CA");
    ASSERT_TRUE(ca.ok());
    ca_ = *ca;
    auto cert = net::GenerateServingCert(ca_, "secure.test", {"secure.test"}, {});
    ASSERT_TRUE(cert.ok());
    Serve(net::TlsConfig{cert->cert_pem, cert->key_pem});
  }
  net::CertAndKey ca_;
};

TEST_F(HttpProberTlsTest, HttpsVerifiesTheCertificateForTheProjectHost) {
  HttpProberOptions o{address_, seconds(5), ca_.cert_pem};
  HttpProber probe = MakeHttpProber(o);
  Status ok = probe("secure.test", "https://secure.test/status/200");
  ASSERT_TRUE(ok.ok()) << ok.ToString();
  ASSERT_EQ(handler_.seen().size(), 1u);
  EXPECT_EQ(handler_.seen()[0].host, "secure.test");
  // The certificate does not name this host: no answer counts.
  Status wrong_host = probe("other.test", "https://other.test/status/200");
  EXPECT_FALSE(wrong_host.ok());
  EXPECT_THAT(wrong_host.message(), HasSubstr("https://other.test/status/200"));
  EXPECT_EQ(handler_.seen().size(), 1u);
}

TEST_F(HttpProberTlsTest, HttpsWithSystemRootsRefusesAPrivateCa) {
  Status s = MakeHttpProber(address_, seconds(5))("secure.test", "https://secure.test/");
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(handler_.seen().empty());
}

TEST_F(HttpProberServerTest, HttpsAgainstAPlainListenerFails) {
  Serve();
  Status s = MakeHttpProber(address_, seconds(5))("a.localhost", "https://a.localhost/");
  EXPECT_FALSE(s.ok());
}

// ---- the embedded cluster's ingress listener ----

class HttpProberIngressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster::EmbeddedCluster::Options o;
    auto c = cluster::EmbeddedCluster::Start(o);
    ASSERT_TRUE(c.ok()) << c.error().ToString();
    cluster_ = std::move(*c);
    address_ = "127.0.0.1:" + std::to_string(cluster_->ingress_port());
  }
  std::unique_ptr<cluster::EmbeddedCluster> cluster_;
  std::string address_;
};

TEST_F(HttpProberIngressTest, NoMatchingRuleIs404AndNamedInTheError) {
  HttpProber probe = MakeHttpProber(address_, seconds(5));
  Status s = probe("nobody.localhost", "http://nobody.localhost/");
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_THAT(s.message(), HasSubstr("HTTP 404"));
  EXPECT_THAT(s.message(), HasSubstr("no ingress rule matches host nobody.localhost"));
}

TEST_F(HttpProberIngressTest, BackendWithoutReadyEndpointsIs503) {
  auto& api = cluster_->api();
  Json svc = {{"apiVersion", "v1"},
              {"kind", "Service"},
              {"metadata", {{"name", "web"}}},
              {"spec", {{"selector", {{"app", "none"}}}, {"ports", {{{"port", 80}}}}}}};
  ASSERT_TRUE(api.Create(*cluster::FindGroupResource("services"), "default", svc).ok());
  Json ing = Json::parse(R"({"apiVersion":"networking.k8s.io/v1","kind":"Ingress",
    "metadata":{"name":"web"},"spec":{"rules":[{"host":"empty.localhost","http":{"paths":[
    {"path":"/","pathType":"Prefix","backend":{"service":{"name":"web","port":{"number":80}}}}
    ]}}]}})");
  ASSERT_TRUE(
      api.Create(*cluster::FindGroupResource("ingresses.networking.k8s.io"), "default", ing).ok());
  HttpProber probe = MakeHttpProber(address_, seconds(5));
  Status last;
  ASSERT_TRUE(test_support::Eventually([&] {
    last = probe("empty.localhost", "http://empty.localhost/");
    return last.message().find("HTTP 503") != std::string::npos;
  })) << last.ToString();
  EXPECT_EQ(last.code(), StatusCode::kUnavailable);
  EXPECT_THAT(last.message(), HasSubstr("no ready backend"));
}

}  // namespace
}  // namespace steward::engine
