// The transport over real HTTPS: against the embedded cluster (with its fault injection), a
// scripted net::HttpServer, a CONNECT proxy and a TLS server that requires client
// certificates.
#include "kube/transport/transport.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <deque>
#include <thread>

#include "cluster/embedded_cluster.h"
#include "net/http_server.h"
#include "net/tls_certs.h"
#include "test_support/eventually.h"

namespace steward::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;
using SteadyClock = std::chrono::steady_clock;

constexpr const char* kConfigMaps = "/api/v1/namespaces/default/configmaps";

// Polls `fn` until it returns true or the deadline passes (a condition wait, not a sleep).
using ::steward::test_support::Eventually;

std::string ConfigMap(const std::string& name) {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
         R"("},"data":{"k":"v"}})";
}

size_t Occurrences(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = 0; (pos = text.find(needle, pos)) != std::string::npos; pos += needle.size()) {
    ++n;
  }
  return n;
}

// A credential provider that hands out tokens (and optionally a client certificate) and
// moves to the next token on Invalidate().
class TestProvider : public CredentialProvider {
 public:
  explicit TestProvider(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {}

  StatusOr<Credentials> Get() override {
    MutexLock lock(mu_);
    ++gets_;
    if (!error_.empty()) return Status(StatusCode::kUnauthenticated, error_);
    Credentials c;
    c.bearer_token = tokens_.empty() ? "" : tokens_[std::min(index_, tokens_.size() - 1)];
    c.client_cert_pem = cert_.cert_pem;
    c.client_key_pem = cert_.key_pem;
    return c;
  }
  void Invalidate() override {
    MutexLock lock(mu_);
    ++invalidations_;
    ++index_;
  }
  std::string Describe() const override { return "test provider"; }

  void SetError(std::string e) {
    MutexLock lock(mu_);
    error_ = std::move(e);
  }
  void SetClientCert(net::CertAndKey cert) {
    MutexLock lock(mu_);
    cert_ = std::move(cert);
  }
  int gets() const {
    MutexLock lock(mu_);
    return gets_;
  }
  int invalidations() const {
    MutexLock lock(mu_);
    return invalidations_;
  }

 private:
  mutable Mutex mu_;
  std::vector<std::string> tokens_ GUARDED_BY(mu_);
  size_t index_ GUARDED_BY(mu_) = 0;
  int gets_ GUARDED_BY(mu_) = 0;
  int invalidations_ GUARDED_BY(mu_) = 0;
  std::string error_ GUARDED_BY(mu_);
  net::CertAndKey cert_;
};

// A port nothing listens on.
uint16_t ClosedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// ---------------------------------------------------------------------------------------------
// A scripted HTTPS server: answers from a queue (200 "ok" once it is empty) and records what it
// received.

class ScriptedServer : public net::Handler {
 public:
  struct Seen {
    std::string method, target, authorization, body;
  };

  explicit ScriptedServer(std::chrono::seconds idle_timeout = seconds(120)) {
    auto ca = net::GenerateCa("scripted-ca");
    auto cert = net::GenerateServingCert(*ca, "scripted", {"localhost"}, {"127.0.0.1"});
    ca_pem_ = ca->cert_pem;
    net::HttpServer::Options o;
    o.tls = net::TlsConfig{cert->cert_pem, cert->key_pem};
    o.idle_timeout = idle_timeout;
    auto s = net::HttpServer::Start(o, *this);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(s).value();
  }
  ~ScriptedServer() override { server_->Stop(); }

  void Handle(net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer) override {
    net::HttpResponse response;
    {
      MutexLock lock(mu_);
      seen_.push_back({request.method, request.target,
                       std::string(request.headers.Get("Authorization")), request.body});
      if (!script_.empty()) {
        response = std::move(script_.front());
        script_.pop_front();
      } else {
        response.body = "ok";
      }
    }
    writer->Send(std::move(response));
  }

  void Then(int status, std::string retry_after = "") {
    net::HttpResponse r;
    r.status = status;
    if (!retry_after.empty()) r.headers.Add("Retry-After", retry_after);
    r.body = "scripted " + std::to_string(status);
    MutexLock lock(mu_);
    script_.push_back(std::move(r));
  }
  std::vector<Seen> seen() const {
    MutexLock lock(mu_);
    return seen_;
  }
  RestConfig Config() const {
    RestConfig c;
    c.server = "https://127.0.0.1:" + std::to_string(server_->port());
    c.ca_pem = ca_pem_;
    c.source = "scripted test server";
    return c;
  }
  net::HttpServer& server() { return *server_; }

 private:
  mutable Mutex mu_;
  std::deque<net::HttpResponse> script_ GUARDED_BY(mu_);
  std::vector<Seen> seen_ GUARDED_BY(mu_);
  std::string ca_pem_;
  std::unique_ptr<net::HttpServer> server_;
};

// ---------------------------------------------------------------------------------------------
// A tiny HTTP CONNECT proxy: one thread per client connection, pumping bytes both ways.

class ConnectProxy {
 public:
  explicit ConnectProxy(int answer = 200) : answer_(answer) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(listen_fd_, 16), 0);
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }

  ~ConnectProxy() {
    {
      MutexLock lock(mu_);
      stopping_ = true;
      for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
    }
    ::shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
    acceptor_.join();
    for (auto& t : workers_) t.join();
    ::close(listen_fd_);
    for (int fd : fds_) ::close(fd);
  }

  uint16_t port() const { return port_; }
  std::vector<std::string> requests() const {
    MutexLock lock(mu_);
    return requests_;
  }

 private:
  void AcceptLoop() {
    for (;;) {
      int client = ::accept(listen_fd_, nullptr, nullptr);
      if (client < 0) return;
      MutexLock lock(mu_);
      if (stopping_) {
        ::close(client);
        return;
      }
      fds_.push_back(client);
      workers_.emplace_back([this, client] { Serve(client); });
    }
  }

  static bool SendAll(int fd, const char* data, size_t n) {
    while (n > 0) {
      ssize_t w = ::send(fd, data, n, MSG_NOSIGNAL);
      if (w <= 0) return false;
      data += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  }

  void Serve(int client) {
    std::string head;
    char c;
    while (head.find("\r\n\r\n") == std::string::npos && ::recv(client, &c, 1, 0) == 1) {
      head.push_back(c);
    }
    std::string first = head.substr(0, head.find("\r\n"));
    std::string auth;
    if (size_t p = head.find("Proxy-Authorization: "); p != std::string::npos) {
      auth = head.substr(p + 21, head.find("\r\n", p) - p - 21);
    }
    {
      MutexLock lock(mu_);
      requests_.push_back(first + " | " + auth);
    }
    if (answer_ != 200) {
      std::string no = "HTTP/1.1 " + std::to_string(answer_) + " Forbidden\r\n\r\n";
      SendAll(client, no.data(), no.size());
      ::shutdown(client, SHUT_RDWR);
      return;
    }
    // "CONNECT 127.0.0.1:PORT HTTP/1.1"
    std::string authority = first.substr(8, first.rfind(' ') - 8);
    int port = std::stoi(authority.substr(authority.rfind(':') + 1));
    int upstream = ::socket(AF_INET, SOCK_STREAM, 0);
    {
      MutexLock lock(mu_);
      fds_.push_back(upstream);
      if (stopping_) return;
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (::connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return;
    const std::string ok = "HTTP/1.1 200 Connection established\r\n\r\n";
    if (!SendAll(client, ok.data(), ok.size())) return;
    Pump(client, upstream);
    ::shutdown(client, SHUT_RDWR);
    ::shutdown(upstream, SHUT_RDWR);
  }

  static void Pump(int a, int b) {
    char buf[16384];
    pollfd fds[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
    for (;;) {
      if (::poll(fds, 2, -1) < 0) return;
      for (int i = 0; i < 2; ++i) {
        if (fds[i].revents == 0) continue;
        ssize_t n = ::recv(fds[i].fd, buf, sizeof buf, 0);
        if (n <= 0 || !SendAll(fds[1 - i].fd, buf, static_cast<size_t>(n))) return;
      }
    }
  }

  const int answer_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::thread acceptor_;
  mutable Mutex mu_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::vector<int> fds_ GUARDED_BY(mu_);
  std::vector<std::thread> workers_ GUARDED_BY(mu_);
  std::vector<std::string> requests_ GUARDED_BY(mu_);
};

// ---------------------------------------------------------------------------------------------
// A TLS server that requires a client certificate signed by its client CA and answers every
// request with the certificate's common name.

class ClientCertServer {
 public:
  ClientCertServer() {
    namespace ssl = boost::asio::ssl;
    auto server_ca = net::GenerateCa("server-ca");
    auto serving = net::GenerateServingCert(*server_ca, "cc", {}, {"127.0.0.1"});
    server_ca_pem_ = server_ca->cert_pem;
    client_ca_ = *net::GenerateCa("client-ca");
    ctx_.use_certificate_chain(boost::asio::buffer(serving->cert_pem));
    ctx_.use_private_key(boost::asio::buffer(serving->key_pem), ssl::context::pem);
    ctx_.add_certificate_authority(boost::asio::buffer(client_ca_.cert_pem));
    ctx_.set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
    // net::GenerateServingCert makes serverAuth certificates; accept them as client ones.
    X509_VERIFY_PARAM_set_purpose(SSL_CTX_get0_param(ctx_.native_handle()), X509_PURPOSE_ANY);
    acceptor_.open(boost::asio::ip::tcp::v4());
    acceptor_.bind({boost::asio::ip::make_address("127.0.0.1"), 0});
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    thread_ = std::thread([this] { AcceptLoop(); });
  }

  ~ClientCertServer() {
    stopping_ = true;
    boost::asio::io_context ioc;
    boost::asio::ip::tcp::socket wake(ioc);
    boost::system::error_code ec;
    wake.connect({boost::asio::ip::make_address("127.0.0.1"), port_}, ec);  // wakes accept()
    thread_.join();
    for (auto& t : workers_) t.join();
  }

  // A client certificate signed by the client CA (a serving certificate: see the purpose set
  // above).
  net::CertAndKey ClientCert(const std::string& cn) const {
    return *net::GenerateServingCert(client_ca_, cn, {}, {});
  }
  RestConfig Config() const {
    RestConfig c;
    c.server = "https://127.0.0.1:" + std::to_string(port_);
    c.ca_pem = server_ca_pem_;
    return c;
  }

 private:
  void AcceptLoop() {
    for (;;) {
      auto socket = std::make_shared<boost::asio::ip::tcp::socket>(ioc_);
      boost::system::error_code ec;
      acceptor_.accept(*socket, ec);
      if (ec || stopping_) return;
      workers_.emplace_back([this, socket] { Serve(std::move(*socket)); });
    }
  }

  void Serve(boost::asio::ip::tcp::socket socket) {
    namespace http = boost::beast::http;
    boost::asio::ssl::stream<boost::asio::ip::tcp::socket> stream(std::move(socket), ctx_);
    boost::system::error_code ec;
    stream.handshake(boost::asio::ssl::stream_base::server, ec);
    if (ec) return;
    std::string cn;
    if (X509* peer = SSL_get1_peer_certificate(stream.native_handle())) {
      char buf[256] = {};
      X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, buf, sizeof buf);
      cn = buf;
      X509_free(peer);
    }
    boost::beast::flat_buffer buffer;
    for (;;) {
      http::request<http::string_body> request;
      http::read(stream, buffer, request, ec);
      if (ec) return;
      http::response<http::string_body> response(http::status::ok, 11);
      response.body() = cn;
      response.prepare_payload();
      http::write(stream, response, ec);
      if (ec) return;
    }
  }

  boost::asio::io_context ioc_;
  boost::asio::ssl::context ctx_{boost::asio::ssl::context::tls_server};
  boost::asio::ip::tcp::acceptor acceptor_{ioc_};
  uint16_t port_ = 0;
  std::string server_ca_pem_;
  net::CertAndKey client_ca_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  std::vector<std::thread> workers_;  // touched by the accept thread only, joined after it
};

// ---------------------------------------------------------------------------------------------

class TransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster::EmbeddedCluster::Options o;
    o.controllers = false;
    o.ingress = false;
    auto c = cluster::EmbeddedCluster::Start(o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    cluster_ = std::move(c).value();
    provider_ = std::make_shared<TestProvider>(std::vector<std::string>{cluster_->token()});
  }

  RestConfig Config() const {
    RestConfig c;
    c.server = cluster_->api_url();
    c.ca_pem = cluster_->ca_pem();
    c.credentials = provider_;
    c.source = "test";
    return c;
  }

  static TransportOptions FastOptions() {
    TransportOptions o;
    o.backoff_initial = milliseconds(10);
    o.backoff_max = milliseconds(40);
    o.default_timeout = seconds(10);
    return o;
  }

  std::shared_ptr<Transport> Make(RestConfig config, TransportOptions options = FastOptions()) {
    auto t = Transport::Create(config, std::move(options));
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? *t : nullptr;
  }

  void SetFaults(const std::function<void(cluster::FaultSpec&)>& edit) {
    cluster::Profile p = cluster_->profile();
    edit(p.faults);
    cluster_->SetProfile(p);
  }

  static TransportRequest Get(std::string target) {
    TransportRequest r;
    r.method = "GET";
    r.target = std::move(target);
    return r;
  }
  static TransportRequest Post(std::string target, std::string body) {
    TransportRequest r;
    r.method = "POST";
    r.target = std::move(target);
    r.body = std::move(body);
    r.content_type = "application/json";
    return r;
  }

  bool ConfigMapExists(const std::string& name) {
    auto t = Make(Config());
    auto r = t->Do(Get(std::string(kConfigMaps) + "/" + name));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() && r->status == 200;
  }

  std::unique_ptr<cluster::EmbeddedCluster> cluster_;
  std::shared_ptr<TestProvider> provider_;
};

TEST_F(TransportTest, KeepAliveReusesOneConnectionForSequentialRequests) {
  auto t = Make(Config());
  for (int i = 0; i < 100; ++i) {
    auto r = t->Do(Get("/api/v1/namespaces/default"));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->status, 200) << r->body;
    ASSERT_EQ(r->attempts, 1);
  }
  TransportStats s = t->stats();
  EXPECT_EQ(s.requests, 100u);
  EXPECT_EQ(s.attempts, 100u);
  EXPECT_EQ(s.by_method["GET"], 100u);
  EXPECT_EQ(s.retries, 0u);
  EXPECT_EQ(s.connections_opened, 1u);
}

TEST_F(TransportTest, SendsTheRequestHeadersAndBody) {
  ScriptedServer server;
  RestConfig config = server.Config();
  config.server += "/prefix/";
  config.credentials = std::make_shared<TestProvider>(std::vector<std::string>{"tok-1"});
  auto t = Make(config);
  auto r = t->Do(Post("/api/v1/things?x=1", "{\"a\":1}"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "ok");
  auto seen = server.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "POST");
  EXPECT_EQ(seen[0].target, "/prefix/api/v1/things?x=1");
  EXPECT_EQ(seen[0].authorization, "Bearer tok-1");
  EXPECT_EQ(seen[0].body, "{\"a\":1}");
}

TEST_F(TransportTest, ConcurrentRequestsFromEightThreadsShareThePool) {
  auto t = Make(Config());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      for (int j = 0; j < 20; ++j) {
        auto r = (j % 4 == 0)
                     ? t->Do(Post(kConfigMaps,
                                  ConfigMap("cm-" + std::to_string(i) + "-" + std::to_string(j))))
                     : t->Do(Get(kConfigMaps));
        if (!r.ok() || r->status / 100 != 2) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  TransportStats s = t->stats();
  EXPECT_EQ(s.requests, 160u);
  EXPECT_EQ(s.by_method["POST"], 40u);
  EXPECT_EQ(s.by_method["GET"], 120u);
  EXPECT_LE(s.connections_opened, 8u);  // never more than one per concurrent caller
  auto list = t->Do(Get(kConfigMaps));
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(Occurrences(list->body, "\"name\":\"cm-"), 40u);
}

TEST_F(TransportTest, WrongCaFailsAtOnceWithACertificateError) {
  RestConfig config = Config();
  config.ca_pem = net::GenerateCa("some-other-ca")->cert_pem;
  auto t = Make(config);
  auto r = t->Do(Get("/api/v1/namespaces"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(r.status().message(), HasSubstr("certificate verify failed"));
  EXPECT_THAT(r.status().message(), HasSubstr(cluster_->api_url()));
  EXPECT_EQ(t->stats().retries, 0u);  // not a transient failure
  EXPECT_EQ(t->stats().attempts, 0u);
}

TEST_F(TransportTest, TlsServerNameIsVerified) {
  RestConfig wrong = Config();
  wrong.tls_server_name = "not-the-api.example.com";
  auto r = Make(wrong)->Do(Get("/api/v1/namespaces"));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("certificate verify failed"));
  EXPECT_THAT(r.status().message(), HasSubstr("not-the-api.example.com"));
  // A name the certificate does carry (as a DNS subjectAltName) is accepted.
  RestConfig right = Config();
  right.tls_server_name = "kubernetes.default";
  auto ok = Make(right)->Do(Get("/api/v1/namespaces"));
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->status, 200);
}

TEST_F(TransportTest, AnIpAddressMustMatchAnIpSubjectAltName) {
  // The scripted server's certificate has 127.0.0.1 as an IP SAN; this one has DNS names only.
  auto ca = net::GenerateCa("dns-only-ca");
  auto cert = net::GenerateServingCert(*ca, "dns-only", {"localhost", "127.0.0.1"}, {});
  ScriptedServer handler;
  net::HttpServer::Options o;
  o.tls = net::TlsConfig{cert->cert_pem, cert->key_pem};
  auto server = net::HttpServer::Start(o, handler);
  ASSERT_TRUE(server.ok());
  RestConfig config;
  config.server = "https://127.0.0.1:" + std::to_string((*server)->port());
  config.ca_pem = ca->cert_pem;
  auto r = Make(config)->Do(Get("/"));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("certificate verify failed"));
  config.server = "https://localhost:" + std::to_string((*server)->port());
  auto ok = Make(config)->Do(Get("/"));
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->status, 200);
  (*server)->Stop();
}

TEST_F(TransportTest, InsecureSkipTlsVerifyAcceptsAnUnknownCa) {
  RestConfig config = Config();
  config.ca_pem.clear();  // the system trust store does not know the cluster's CA
  auto refused = Make(config)->Do(Get("/api/v1/namespaces"));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("certificate verify failed"));
  config.insecure_skip_tls_verify = true;
  config.tls_server_name = "not-the-api.example.com";  // not checked either
  auto r = Make(config)->Do(Get("/api/v1/namespaces"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
}

TEST_F(TransportTest, TooManyRequestsOnAGetWaitsRetryAfterThenRetries) {
  SetFaults([](cluster::FaultSpec& f) {
    f.error_rate_429 = 1.0;
    f.retry_after_seconds = 1;
  });
  TransportOptions o = FastOptions();
  o.max_retries = 1;
  auto t = Make(Config(), o);
  auto start = SteadyClock::now();
  auto r = t->Do(Get(kConfigMaps));
  auto elapsed = SteadyClock::now() - start;
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 429);  // still throttled after the one allowed retry
  EXPECT_EQ(r->attempts, 2);
  EXPECT_GE(elapsed, seconds(1));  // the retry waited Retry-After, not the 10 ms backoff
  EXPECT_EQ(t->stats().throttled_429, 2u);
  EXPECT_EQ(t->stats().retries, 1u);
}

TEST_F(TransportTest, TooManyRequestsOnAPostIsRetriedBecauseNothingApplied) {
  SetFaults([](cluster::FaultSpec& f) {
    f.error_rate_429 = 1.0;
    f.retry_after_seconds = 1;
  });
  TransportOptions o = FastOptions();
  o.max_retries = 1;
  auto t = Make(Config(), o);
  auto start = SteadyClock::now();
  auto r = t->Do(Post(kConfigMaps, ConfigMap("throttled")));
  auto elapsed = SteadyClock::now() - start;
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 429);
  EXPECT_EQ(r->attempts, 2);
  EXPECT_GE(elapsed, seconds(1));
  EXPECT_EQ(t->stats().by_method["POST"], 2u);
  SetFaults([](cluster::FaultSpec& f) { f.error_rate_429 = 0; });
  EXPECT_FALSE(ConfigMapExists("throttled"));
}

TEST_F(TransportTest, ThrottledWriteSucceedsOnTheRetryAfterRetryAfter) {
  ScriptedServer server;
  server.Then(429, "1");
  auto t = Make(server.Config());
  auto start = SteadyClock::now();
  auto r = t->Do(Post("/api/v1/namespaces/default/configmaps", "{}"));
  auto elapsed = SteadyClock::now() - start;
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->attempts, 2);
  EXPECT_GE(elapsed, seconds(1));
  EXPECT_EQ(server.seen().size(), 2u);
}

TEST_F(TransportTest, RetryAfterPastTheDeadlineReturnsTheResponseAtOnce) {
  ScriptedServer server;
  server.Then(429, "30");
  auto t = Make(server.Config());
  TransportRequest req = Get("/x");
  req.timeout = seconds(5);
  auto start = SteadyClock::now();
  auto r = t->Do(req);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 429);
  EXPECT_EQ(r->headers.Get("Retry-After"), "30");
  EXPECT_EQ(r->attempts, 1);
  EXPECT_LT(SteadyClock::now() - start, seconds(2));
}

TEST_F(TransportTest, ServerErrorOnAGetIsRetried) {
  SetFaults([](cluster::FaultSpec& f) { f.error_rate_500 = 1.0; });
  TransportOptions o = FastOptions();
  o.max_retries = 2;
  auto t = Make(Config(), o);
  auto r = t->Do(Get(kConfigMaps));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 500);
  EXPECT_EQ(r->attempts, 3);
  EXPECT_EQ(t->stats().retries, 2u);
}

TEST_F(TransportTest, ServerErrorThenSuccessOnAGet) {
  ScriptedServer server;
  server.Then(503);
  server.Then(500);
  auto t = Make(server.Config());
  auto r = t->Do(Get("/x"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->attempts, 3);
}

TEST_F(TransportTest, ServerErrorOnAPostIsNotRetried) {
  SetFaults([](cluster::FaultSpec& f) { f.error_rate_500 = 1.0; });
  auto t = Make(Config());
  auto r = t->Do(Post(kConfigMaps, ConfigMap("once")));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 500);
  EXPECT_EQ(r->attempts, 1);
  EXPECT_EQ(t->stats().retries, 0u);
  EXPECT_EQ(t->stats().by_method["POST"], 1u);
}

TEST_F(TransportTest, ResetAfterSendingIsRetriedForReadsOnly) {
  SetFaults([](cluster::FaultSpec& f) { f.reset_rate = 1.0; });
  TransportOptions o = FastOptions();
  o.max_retries = 2;
  auto t = Make(Config(), o);
  auto get = t->Do(Get(kConfigMaps));
  ASSERT_FALSE(get.ok());
  EXPECT_EQ(get.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(get.status().message(), HasSubstr("(3 tries)"));
  EXPECT_EQ(t->stats().by_method["GET"], 3u);
  auto post = t->Do(Post(kConfigMaps, ConfigMap("reset")));
  ASSERT_FALSE(post.ok());
  EXPECT_EQ(post.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(post.status().message(), HasSubstr("may have been applied"));
  EXPECT_EQ(t->stats().by_method["POST"], 1u);
}

TEST_F(TransportTest, ConnectionRefusedIsRetriedThenUnavailableNamingTheServer) {
  RestConfig config = Config();
  uint16_t port = ClosedPort();
  config.server = "https://127.0.0.1:" + std::to_string(port);
  TransportOptions o = FastOptions();
  o.max_retries = 3;
  auto t = Make(config, o);
  auto r = t->Do(Post(kConfigMaps, ConfigMap("x")));  // a write: nothing was sent, so retried
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(r.status().message(), HasSubstr("127.0.0.1:" + std::to_string(port)));
  EXPECT_THAT(r.status().message(), HasSubstr("refused"));
  EXPECT_THAT(r.status().message(), HasSubstr("(4 tries)"));
  TransportStats s = t->stats();
  EXPECT_EQ(s.retries, 3u);
  EXPECT_EQ(s.connections_opened, 4u);
  EXPECT_EQ(s.attempts, 0u);  // nothing reached a server
}

// failing_since(): set at the first failed attempt after an answered one (no answer, or a 5xx),
// kept through further failures, cleared by any answer (a 4xx is an answer: the server is there).
TEST_F(TransportTest, FailingSinceIsTheFirstFailureSinceTheLastAnswer) {
  ScriptedServer server;
  server.Then(503);
  server.Then(500);
  server.Then(404);
  TransportOptions o = FastOptions();
  o.max_retries = 0;
  auto t = Make(server.Config(), o);
  EXPECT_EQ(t->failing_since(), std::nullopt);
  ASSERT_EQ(t->Do(Get("/x"))->status, 503);
  const std::optional<SteadyTime> first = t->failing_since();
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(t->Do(Get("/x"))->status, 500);
  EXPECT_EQ(t->failing_since(), first) << "a second failure moved the start";
  ASSERT_EQ(t->Do(Get("/x"))->status, 404);
  EXPECT_EQ(t->failing_since(), std::nullopt);
  ASSERT_EQ(t->Do(Get("/x"))->status, 200);
  EXPECT_EQ(t->failing_since(), std::nullopt);

  RestConfig refused = Config();
  refused.server = "https://127.0.0.1:" + std::to_string(ClosedPort());
  auto nobody = Make(refused, o);
  EXPECT_FALSE(nobody->Do(Get(kConfigMaps)).ok());
  EXPECT_TRUE(nobody->failing_since().has_value());
}

// A watch stream is an answer from its head on, not only once it ends: a cluster whose only
// traffic is long watches (a quiet fleet, a re-watch or two failing) was taken for one that did
// not answer at all (the torture run on the hostile profile declared live clusters unreachable).
TEST_F(TransportTest, AnOpenWatchStreamIsAnAnswerWhileItLasts) {
  TransportOptions o = FastOptions();
  o.max_retries = 0;
  auto t = Make(Config(), o);
  ASSERT_EQ(t->Do(Post(kConfigMaps, ConfigMap("s-0")))->status, 201);
  SetFaults([](cluster::FaultSpec& f) { f.error_rate_500 = 1.0; });
  ASSERT_EQ(t->Do(Get(kConfigMaps))->status, 500);
  ASSERT_TRUE(t->failing_since().has_value());
  SetFaults([](cluster::FaultSpec& f) { f.error_rate_500 = 0; });
  std::optional<bool> failing_while_open;
  TransportRequest req = Get(std::string(kConfigMaps) + "?watch=1");
  req.timeout = seconds(20);
  auto streamed = t->Stream(req, [&](std::string_view) {
    failing_while_open = t->failing_since().has_value();
    return false;  // the first event is enough
  });
  ASSERT_TRUE(streamed.ok()) << streamed.status().ToString();
  ASSERT_TRUE(failing_while_open.has_value());
  EXPECT_FALSE(*failing_while_open);
}

// SetFailFast: while set, neither a connection failure nor a 5xx is retried (a 429 still is);
// cleared, the retries come back.
TEST_F(TransportTest, FailFastRetriesNoFailureUntilCleared) {
  TransportOptions o = FastOptions();
  o.max_retries = 3;
  RestConfig refused = Config();
  refused.server = "https://127.0.0.1:" + std::to_string(ClosedPort());
  auto nobody = Make(refused, o);
  nobody->SetFailFast(true);
  auto r = nobody->Do(Get(kConfigMaps));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("not retried: the cluster is declared unreachable"));
  EXPECT_EQ(nobody->stats().retries, 0u);
  EXPECT_EQ(nobody->stats().connections_opened, 1u);
  nobody->SetFailFast(false);
  EXPECT_FALSE(nobody->Do(Get(kConfigMaps)).ok());
  EXPECT_EQ(nobody->stats().retries, 3u);

  ScriptedServer server;
  server.Then(503);
  server.Then(429);
  server.Then(200);
  auto t = Make(server.Config(), o);
  t->SetFailFast(true);
  ASSERT_EQ(t->Do(Get("/x"))->status, 503);  // not retried
  ASSERT_EQ(t->Do(Get("/x"))->status, 200);  // the 429 was retried
  EXPECT_EQ(t->stats().retries, 1u);
}

TEST_F(TransportTest, SlowResponseFailsWithDeadlineExceeded) {
  SetFaults([](cluster::FaultSpec& f) { f.latency["list"] = {seconds(3), milliseconds(0)}; });
  auto t = Make(Config());
  TransportRequest req = Get(kConfigMaps);
  req.timeout = milliseconds(300);
  auto start = SteadyClock::now();
  auto r = t->Do(req);
  auto elapsed = SteadyClock::now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(r.status().message(), HasSubstr("300 ms"));
  EXPECT_GE(elapsed, milliseconds(300));
  EXPECT_LT(elapsed, milliseconds(2500));
  // The connection that timed out is not reused; the next request works.
  SetFaults([](cluster::FaultSpec& f) { f.latency.clear(); });
  auto next = t->Do(Get(kConfigMaps));
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->status, 200);
  EXPECT_EQ(t->stats().connections_opened, 2u);
}

TEST_F(TransportTest, CancelFromAnotherThreadEndsTheRequestPromptly) {
  SetFaults([](cluster::FaultSpec& f) { f.latency["list"] = {seconds(5), milliseconds(0)}; });
  auto t = Make(Config());
  TransportRequest req = Get(kConfigMaps);
  req.cancel = std::make_shared<CancelToken>();
  SteadyClock::time_point cancelled_at;
  std::thread canceller([&] {
    // Once the request is on the wire (the server is now holding it for 5 s)...
    ASSERT_TRUE(Eventually([&] { return t->stats().attempts >= 1; }));
    cancelled_at = SteadyClock::now();
    req.cancel->Cancel();
  });
  auto r = t->Do(req);
  auto returned_at = SteadyClock::now();
  canceller.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled);
  EXPECT_LT(returned_at - cancelled_at, milliseconds(1000));
  EXPECT_EQ(t->stats().retries, 0u);
}

TEST_F(TransportTest, CancelledTokenStopsBeforeSendingAndDuringBackoff) {
  auto t = Make(Config());
  TransportRequest req = Get(kConfigMaps);
  req.cancel = std::make_shared<CancelToken>();
  req.cancel->Cancel();
  auto r = t->Do(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled);
  EXPECT_EQ(t->stats().attempts, 0u);

  // Cancelled while waiting for a retry: the server throttles with a long Retry-After.
  SetFaults([](cluster::FaultSpec& f) {
    f.error_rate_429 = 1.0;
    f.retry_after_seconds = 20;
  });
  TransportRequest slow = Get(kConfigMaps);
  slow.timeout = seconds(60);
  slow.cancel = std::make_shared<CancelToken>();
  std::thread canceller([&] {
    ASSERT_TRUE(Eventually([&] { return t->stats().throttled_429 >= 1; }));
    slow.cancel->Cancel();
  });
  auto start = SteadyClock::now();
  auto s = t->Do(slow);
  canceller.join();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kCancelled);
  EXPECT_THAT(s.status().message(), HasSubstr("before a retry"));
  EXPECT_LT(SteadyClock::now() - start, seconds(5));
}

TEST_F(TransportTest, UnauthorizedInvalidatesTheCredentialsAndRetriesOnce) {
  provider_ =
      std::make_shared<TestProvider>(std::vector<std::string>{"stale-token", cluster_->token()});
  TransportOptions o = FastOptions();
  o.max_retries = 0;  // the refresh does not use the retry budget
  auto t = Make(Config(), o);
  auto r = t->Do(Post(kConfigMaps, ConfigMap("after-401")));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(r->attempts, 2);
  EXPECT_EQ(provider_->invalidations(), 1);
  EXPECT_EQ(provider_->gets(), 2);
  // Always refused: retried exactly once, then the 401 is the answer.
  auto bad = std::make_shared<TestProvider>(std::vector<std::string>{"bad-1", "bad-2", "bad-3"});
  RestConfig config = Config();
  config.credentials = bad;
  auto t2 = Make(config);
  auto denied = t2->Do(Get(kConfigMaps));
  ASSERT_TRUE(denied.ok()) << denied.status().ToString();
  EXPECT_EQ(denied->status, 401);
  EXPECT_EQ(denied->attempts, 2);
  EXPECT_EQ(bad->invalidations(), 1);
}

TEST_F(TransportTest, ProviderFailureIsUnauthenticatedAndAnonymousIsAllowed) {
  provider_->SetError("token file /nowhere/token: no such file");
  auto t = Make(Config());
  auto r = t->Do(Get(kConfigMaps));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnauthenticated);
  EXPECT_THAT(r.status().message(), HasSubstr("test provider"));
  EXPECT_THAT(r.status().message(), HasSubstr("/nowhere/token"));
  RestConfig anonymous = Config();
  anonymous.credentials = nullptr;
  auto a = Make(anonymous)->Do(Get(kConfigMaps));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->status, 401);  // sent without Authorization, and nothing to refresh
  EXPECT_EQ(a->attempts, 1);
}

TEST_F(TransportTest, ClientSideRateLimitDelaysRequests) {
  TransportOptions o = FastOptions();
  o.qps = 20;
  o.burst = 2;
  auto t = Make(Config(), o);
  auto start = SteadyClock::now();
  for (int i = 0; i < 10; ++i) {
    auto r = t->Do(Get("/api/v1/namespaces/default"));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  auto elapsed = SteadyClock::now() - start;
  // Two requests ride the burst; the other eight wait for tokens at 20/s.
  EXPECT_GE(t->stats().rate_limited_waits, 7u);
  EXPECT_LE(t->stats().rate_limited_waits, 8u);
  EXPECT_GE(elapsed, milliseconds(350));
  // A limiter wait that would pass the deadline fails at once.
  o.qps = 0.5;
  o.burst = 1;
  auto slow = Make(Config(), o);
  ASSERT_TRUE(slow->Do(Get("/api/v1/namespaces/default")).ok());
  TransportRequest req = Get("/api/v1/namespaces/default");
  req.timeout = milliseconds(500);
  auto r = slow->Do(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(r.status().message(), HasSubstr("rate limiter (qps 0.5)"));
}

TEST_F(TransportTest, StreamDeliversAWatchBodyAsItArrives) {
  auto t = Make(Config());
  ASSERT_EQ(t->Do(Post(kConfigMaps, ConfigMap("w-0")))->status, 201);
  Mutex mu;
  std::string received;
  int pieces = 0;
  std::atomic<bool> first_seen{false};
  StatusOr<TransportResponse> result = Status(StatusCode::kInternal, "not run");
  std::thread watcher([&] {
    TransportRequest req = Get(std::string(kConfigMaps) + "?watch=1");
    req.timeout = seconds(20);
    result = t->Stream(req, [&](std::string_view data) {
      MutexLock lock(mu);
      received.append(data);
      ++pieces;
      first_seen = true;
      return Occurrences(received, "\"type\":\"ADDED\"") < 3;
    });
  });
  // The first event (the existing object) arrives before the others are even created.
  ASSERT_TRUE(Eventually([&] { return first_seen.load(); }));
  ASSERT_EQ(t->Do(Post(kConfigMaps, ConfigMap("w-1")))->status, 201);
  ASSERT_EQ(t->Do(Post(kConfigMaps, ConfigMap("w-2")))->status, 201);
  watcher.join();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->status, 200);
  EXPECT_EQ(result->body, "");
  MutexLock lock(mu);
  EXPECT_GE(pieces, 2);
  EXPECT_EQ(Occurrences(received, "\"type\":\"ADDED\""), 3u);
  EXPECT_THAT(received, HasSubstr("\"name\":\"w-2\""));
  EXPECT_EQ(t->stats().by_method["GET"], 1u);
}

TEST_F(TransportTest, StreamEndsWithTheServerOrFailsOnItsDeadline) {
  auto t = Make(Config());
  // The server ends the watch after timeoutSeconds: the call returns OK.
  std::string body;
  auto ended = t->Stream(Get(std::string(kConfigMaps) + "?watch=1&timeoutSeconds=1"),
                         [&](std::string_view d) {
                           body.append(d);
                           return true;
                         });
  ASSERT_TRUE(ended.ok()) << ended.status().ToString();
  EXPECT_EQ(ended->status, 200);
  // Our own deadline in the middle of the body.
  TransportRequest req = Get(std::string(kConfigMaps) + "?watch=1");
  req.timeout = milliseconds(300);
  auto timed_out = t->Stream(req, [](std::string_view) { return true; });
  ASSERT_FALSE(timed_out.ok());
  EXPECT_EQ(timed_out.status().code(), StatusCode::kDeadlineExceeded);
  // A non-2xx answer comes back with its body and is not streamed.
  bool called = false;
  auto missing = t->Stream(Get("/api/v1/namespaces/nope/configmaps/none?watch=1"),
                           [&](std::string_view) { return called = true; });
  ASSERT_TRUE(missing.ok()) << missing.status().ToString();
  EXPECT_EQ(missing->status / 100, 4);
  EXPECT_THAT(missing->body, HasSubstr("\"kind\":\"Status\""));
  EXPECT_FALSE(called);
}

TEST_F(TransportTest, CancelEndsAStreamInTheMiddleOfItsBody) {
  auto t = Make(Config());
  ASSERT_EQ(t->Do(Post(kConfigMaps, ConfigMap("c-0")))->status, 201);
  TransportRequest req = Get(std::string(kConfigMaps) + "?watch=1");
  req.timeout = seconds(30);
  req.cancel = std::make_shared<CancelToken>();
  std::atomic<bool> got_data{false};
  std::thread canceller([&] {
    ASSERT_TRUE(Eventually([&] { return got_data.load(); }));
    req.cancel->Cancel();
  });
  auto start = SteadyClock::now();
  auto r = t->Stream(req, [&](std::string_view) {
    got_data = true;
    return true;
  });
  canceller.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled);
  EXPECT_LT(SteadyClock::now() - start, seconds(5));
}

TEST_F(TransportTest, StaleKeptAliveConnectionIsReplacedWithoutRepeatingAWrite) {
  ScriptedServer server(seconds(1));  // closes connections idle for a second
  auto t = Make(server.Config());
  auto first = t->Do(Post("/create", "one"));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  // The server closes the idle kept-alive connection.
  ASSERT_TRUE(Eventually([&] { return server.server().connection_count() == 0; }, seconds(5)));
  auto second = t->Do(Post("/create", "two"));
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->status, 200);
  EXPECT_EQ(second->attempts, 1);
  TransportStats s = t->stats();
  EXPECT_EQ(s.stale_connections, 1u);
  EXPECT_EQ(s.connections_opened, 2u);
  auto seen = server.seen();
  ASSERT_EQ(seen.size(), 2u);  // each write reached the server exactly once
  EXPECT_EQ(seen[0].body, "one");
  EXPECT_EQ(seen[1].body, "two");
}

TEST_F(TransportTest, ResponseLargerThanTheLimitFails) {
  TransportOptions o = FastOptions();
  o.max_response_bytes = 64;
  auto t = Make(Config(), o);
  auto r = t->Do(Get("/api/v1/namespaces"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("larger than 64 bytes"));
}

TEST_F(TransportTest, ConnectProxyTunnelsTheTlsConnection) {
  ConnectProxy proxy;
  RestConfig config = Config();
  config.proxy_url = "http://user:pw@127.0.0.1:" + std::to_string(proxy.port());
  auto t = Make(config);
  for (int i = 0; i < 3; ++i) {
    auto r = t->Do(Get("/api/v1/namespaces/default"));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, 200);
  }
  auto requests = proxy.requests();
  ASSERT_EQ(requests.size(), 1u);  // one tunnel, kept alive
  EXPECT_EQ(requests[0], "CONNECT 127.0.0.1:" + std::to_string(cluster_->api_port()) +
                             " HTTP/1.1 | Basic dXNlcjpwdw==");
  t.reset();  // closes the tunnel before the proxy stops
}

TEST_F(TransportTest, ProxyRefusingConnectFailsNamingTheProxy) {
  ConnectProxy proxy(403);
  RestConfig config = Config();
  config.proxy_url = "http://127.0.0.1:" + std::to_string(proxy.port());
  auto t = Make(config);
  auto r = t->Do(Get("/api/v1/namespaces/default"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(r.status().message(),
              HasSubstr("proxy 127.0.0.1:" + std::to_string(proxy.port()) + " refused CONNECT"));
  EXPECT_THAT(r.status().message(), HasSubstr("403"));
  EXPECT_EQ(proxy.requests().size(), 1u);  // a refusal is not retried
}

TEST_F(TransportTest, ClientCertificatesArePresentedAndRotated) {
  ClientCertServer server;
  auto provider = std::make_shared<TestProvider>(std::vector<std::string>{});
  provider->SetClientCert(server.ClientCert("alice"));
  RestConfig config = server.Config();
  config.credentials = provider;
  auto t = Make(config);
  for (int i = 0; i < 2; ++i) {
    auto r = t->Do(Get("/whoami"));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->body, "alice");
  }
  EXPECT_EQ(t->stats().connections_opened, 1u);
  // New credentials (an exec plugin's renewal): new connections present the new certificate.
  provider->SetClientCert(server.ClientCert("bob"));
  auto r = t->Do(Get("/whoami"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->body, "bob");
  EXPECT_EQ(t->stats().connections_opened, 2u);
  // An unusable certificate is a credentials error.
  net::CertAndKey broken = server.ClientCert("carol");
  broken.key_pem = server.ClientCert("dave").key_pem;
  provider->SetClientCert(broken);
  auto bad = t->Do(Get("/whoami"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kUnauthenticated);
  EXPECT_THAT(bad.status().message(), HasSubstr("unusable client key from test provider"));
  t.reset();
}

TEST_F(TransportTest, PlainHttpServerWorks) {
  cluster::EmbeddedCluster::Options o;
  o.controllers = false;
  o.ingress = false;
  o.tls = false;
  auto plain = cluster::EmbeddedCluster::Start(o);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  RestConfig config;
  config.server = (*plain)->api_url();
  ASSERT_EQ(config.server.rfind("http://", 0), 0u) << config.server;
  config.credentials = std::make_shared<TestProvider>(std::vector<std::string>{(*plain)->token()});
  auto t = Make(config);
  auto r = t->Do(Get("/api/v1/namespaces/default"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200);
}

TEST_F(TransportTest, CreateRejectsUnusableConfigs) {
  RestConfig config = Config();
  config.server = "ftp://x";
  auto a = Transport::Create(config);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(a.status().message(), HasSubstr("test: server URL \"ftp://x\""));
  config = Config();
  config.ca_pem = "not a certificate";
  auto b = Transport::Create(config);
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.status().message(), HasSubstr("holds no PEM certificate"));
  config = Config();
  config.proxy_url = "socks5://127.0.0.1:1080";
  auto c = Transport::Create(config);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("only http:// proxies"));
}

TEST(CancelTokenTest, CallbacksRunOnceAndUnsubscribeStopsThem) {
  CancelToken token;
  int a = 0, b = 0;
  int id_a = token.Subscribe([&] { ++a; });
  token.Subscribe([&] { ++b; });
  token.Unsubscribe(id_a);
  token.Cancel();
  token.Cancel();
  EXPECT_TRUE(token.cancelled());
  EXPECT_EQ(a, 0);
  EXPECT_EQ(b, 1);
  int late = 0;
  EXPECT_EQ(token.Subscribe([&] { ++late; }), -1);  // already cancelled: runs at once
  EXPECT_EQ(late, 1);
}

}  // namespace
}  // namespace steward::kube
