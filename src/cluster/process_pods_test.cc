// Process pods: the embedded cluster running a real local process for a pod whose image matches
// the profile's process_images (a small Python HTTP + WebSocket server written by the test),
// through the kubelet (env, ports, readiness, restarts, termination) and the ingress listener
// (HTTP and WebSocket).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cluster/controllers/util.h"
#include "cluster/embedded_cluster.h"
#include "cluster/model/resource_types.h"
#include "common/base64.h"
#include "common/json_access.h"
#include "net/http_client.h"
#include "test_support/websocket_client.h"

namespace steward::cluster {
namespace {

namespace fs = std::filesystem;
using controllers::At;
using controllers::AtPath;
using controllers::StrAt;
using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;

// The pod's process: HTTP on $PORT (GET /env: its env, cwd and pid; GET /ready: 200 while
// $READY_FILE exists, else 503; anything else: a greeting) and a WebSocket echo at /ws. On
// SIGTERM it appends "TERM" to $TERM_FILE, then exits unless IGNORE_TERM=1.
constexpr const char* kServer = R"PY(
import base64, hashlib, http.server, json, os, signal, socketserver, struct
def on_term(sig, frame):
    with open(os.environ["TERM_FILE"], "a") as f:
        f.write("TERM\n")
    if os.environ.get("IGNORE_TERM") != "1":
        os._exit(0)
signal.signal(signal.SIGTERM, on_term)
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def send(self, code, body, ctype="text/plain"):
        b = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
    def do_GET(self):
        if self.path == "/ready":
            ok = os.path.exists(os.environ["READY_FILE"])
            return self.send(200 if ok else 503, "ok" if ok else "not yet")
        if self.path == "/env":
            return self.send(200, json.dumps({"env": dict(os.environ), "cwd": os.getcwd(),
                                              "pid": os.getpid()}), "application/json")
        if self.path == "/ws" and self.headers.get("Upgrade", "").lower() == "websocket":
            return self.websocket()
        self.send(200, "hello from the process")
    def websocket(self):
        key = self.headers["Sec-WebSocket-Key"] + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept",
                         base64.b64encode(hashlib.sha1(key.encode()).digest()).decode())
        self.end_headers()
        self.wfile.flush()
        self.wfile.write(b"\x81\x05hello")
        self.wfile.flush()
        while True:
            h = self.rfile.read(2)
            if len(h) < 2:
                return
            op, n = h[0] & 15, h[1] & 127
            if n == 126:
                n = struct.unpack(">H", self.rfile.read(2))[0]
            mask = self.rfile.read(4) if h[1] & 128 else b"\0\0\0\0"
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(n)))
            if op == 8:
                self.wfile.write(b"\x88\x02" + data[:2])
                self.wfile.flush()
                return
            if op in (1, 2):
                out = (b"echo:" + data)[:125]
                self.wfile.write(bytes([0x80 | op, len(out)]) + out)
                self.wfile.flush()
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
S(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
)PY";

const ResourceType& Type(const char* group, const char* version, const char* resource) {
  return *FindResource(group, version, resource);
}

class ProcessPodsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/steward-process-pods-test-XXXXXX";
    ASSERT_NE(::mkdtemp(templ), nullptr);
    dir_ = templ;
    std::ofstream(dir_ / "server.py") << kServer;
  }
  void TearDown() override {
    cluster_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void Start(std::map<std::string, std::string> extra_env = {}, std::string data_dir = "") {
    auto profile = BuiltinProfile("instant");
    ASSERT_TRUE(profile.ok());
    ProcessImage server{"example.com/pyserver*",
                        "exec python3 -u " + (dir_ / "server.py").string(),
                        "",
                        {{"READY_FILE", ready_file()}, {"TERM_FILE", term_file()}}};
    for (auto& [k, v] : extra_env) server.env[k] = v;
    profile->process_images.push_back(server);
    profile->process_images.push_back({"example.com/crash*", "echo started; exit 3", "", {}});
    EmbeddedCluster::Options o;
    o.profile = *profile;
    o.data_dir = std::move(data_dir);
    auto c = EmbeddedCluster::Start(o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    cluster_ = std::move(c).value();
  }

  std::string ready_file() const { return (dir_ / "ready").string(); }
  std::string term_file() const { return (dir_ / "term").string(); }
  void MakeReady() { std::ofstream(ready_file()) << "1"; }

  // A pod of `image` with a "web" port 8080, readiness GET /ready on it every second.
  void CreatePod(const std::string& name, const std::string& image, int grace = 30) {
    Json pod = {
        {"metadata", {{"name", name}, {"labels", {{"app", name}}}}},
        {"spec",
         {{"terminationGracePeriodSeconds", grace},
          {"containers",
           Json::array(
               {{{"name", "app"},
                 {"image", image},
                 {"ports", Json::array({{{"name", "web"}, {"containerPort", 8080}}})},
                 {"env",
                  Json::array(
                      {{{"name", "FROM_SECRET"},
                        {"valueFrom", {{"secretKeyRef", {{"name", "creds"}, {"key", "token"}}}}}},
                       {{"name", "POD_IP"},
                        {"valueFrom", {{"fieldRef", {{"fieldPath", "status.podIP"}}}}}}})},
                 {"readinessProbe",
                  {{"httpGet", {{"path", "/ready"}, {"port", "web"}}},
                   {"periodSeconds", 1},
                   {"failureThreshold", 1}}}}})}}}};
    auto r = cluster_->api().Create(Type("", "v1", "pods"), "default", pod);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }

  // A Secret, a Service and an Ingress routing NAME.example.com to the pod's port 8080.
  void Expose(const std::string& name) {
    ASSERT_TRUE(cluster_->api()
                    .Create(Type("", "v1", "secrets"), "default",
                            Json{{"metadata", {{"name", "creds"}}},
                                 {"data", {{"token", Base64Encode("s3cret")}}}})
                    .ok());
    Json svc = {{"metadata", {{"name", name}}},
                {"spec",
                 {{"selector", {{"app", name}}},
                  {"ports", Json::array({{{"port", 80}, {"targetPort", 8080}}})}}}};
    ASSERT_TRUE(cluster_->api().Create(Type("", "v1", "services"), "default", svc).ok());
    Json ing = {
        {"metadata", {{"name", name}}},
        {"spec",
         {{"rules",
           Json::array({{{"host", name + ".example.com"},
                         {"http",
                          {{"paths", Json::array({{{"path", "/"},
                                                   {"pathType", "Prefix"},
                                                   {"backend",
                                                    {{"service",
                                                      {{"name", name},
                                                       {"port", {{"number", 80}}}}}}}}})}}}}})}}}};
    ASSERT_TRUE(
        cluster_->api().Create(Type("networking.k8s.io", "v1", "ingresses"), "default", ing).ok());
  }

  std::optional<Json> Pod(const std::string& name) {
    auto r = cluster_->api().Get(Type("", "v1", "pods"), "default", name);
    if (!r.ok()) return std::nullopt;
    return *r;
  }
  bool PodReady(const std::string& name, bool want = true) {
    auto pod = Pod(name);
    if (!pod) return false;
    for (const auto& c : AtPath(*pod, "status.conditions")) {
      if (GetString(c, "type") == "Ready") return (GetString(c, "status") == "True") == want;
    }
    return false;
  }
  Json ContainerStatus(const std::string& name) {
    auto pod = Pod(name);
    if (!pod) return Json();
    const Json& cs = AtPath(*pod, "status.containerStatuses");
    return cs.is_array() && !cs.empty() ? cs[0] : Json();
  }

  StatusOr<net::HttpResponse> ViaIngress(const std::string& host, const std::string& path) {
    net::HttpClient::Options o;
    o.port = cluster_->ingress_port();
    auto client = net::HttpClient::Create(o);
    net::Headers h;
    h.Set("Host", host);
    return client->Request("GET", path, "", h);
  }

  // Waits until the ingress routes HOST to a pod (its answer names the pod). A Ready pod is not
  // yet an endpoint: the endpoints controller adds it to the Service's EndpointSlice afterwards,
  // and until then the ingress answers 503 itself — as in a real cluster.
  bool RoutedToPod(const std::string& host) {
    return Eventually([&] {
      auto r = ViaIngress(host, "/");
      return r.ok() && !r->headers.Get("X-Steward-Pod").empty();
    });
  }

  // Polls `fn` until it returns true or the deadline passes (a condition wait, not a sleep).
  static bool Eventually(const std::function<bool()>& fn, milliseconds timeout = seconds(15)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (fn()) return true;
      std::this_thread::sleep_for(milliseconds(20));
    }
    return fn();
  }

  fs::path dir_;
  std::unique_ptr<EmbeddedCluster> cluster_;
};

TEST_F(ProcessPodsTest, ThePodRunsTheProcessWithItsEnvAndIsReadyOnlyWhileItSaysSo) {
  Start();
  Expose("web");
  CreatePod("web", "example.com/pyserver:1");
  // Running, started, but not ready: the process answers its readiness probe 503.
  ASSERT_TRUE(Eventually([&] {
    Json cs = ContainerStatus("web");
    return AtPath(cs, "state.running").is_object() && At(cs, "started") == Json(true);
  }));
  EXPECT_TRUE(PodReady("web", false));
  EXPECT_EQ(ContainerStatus("web")["ready"], Json(false));
  auto refused = ViaIngress("web.example.com", "/");
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, 503);  // no ready endpoint

  MakeReady();
  ASSERT_TRUE(Eventually([&] { return PodReady("web"); }));
  EXPECT_EQ(ContainerStatus("web")["ready"], Json(true));
  ASSERT_TRUE(RoutedToPod("web.example.com"));
  auto hello = ViaIngress("web.example.com", "/");
  ASSERT_TRUE(hello.ok());
  EXPECT_EQ(hello->status, 200);
  EXPECT_EQ(hello->body, "hello from the process");
  EXPECT_EQ(hello->headers.Get("X-Steward-Pod"), "default/web");

  auto env = ViaIngress("web.example.com", "/env");
  ASSERT_TRUE(env.ok());
  Json e = ParseJson(env->body).value();
  EXPECT_EQ(e["env"]["FROM_SECRET"], "s3cret");
  EXPECT_EQ(e["env"]["POD_IP"], StrAt(*Pod("web"), "status.podIP"));
  const std::string port = e["env"]["PORT"];
  EXPECT_EQ(e["env"]["STEWARD_PORT_WEB"], port);
  EXPECT_NE(port, "8080");
  const std::string pod_dir = e["env"]["STEWARD_POD_DIR"];
  EXPECT_EQ(e["cwd"], pod_dir);
  EXPECT_EQ(e["env"]["HOME"], pod_dir);
  struct stat st {};
  ASSERT_EQ(::stat(pod_dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);

  // The API server's pod proxy reaches the process too.
  net::HttpClient::Options api;
  api.port = cluster_->api_port();
  api.tls = true;
  api.ca_pem = cluster_->ca_pem();
  api.bearer_token = cluster_->token();
  auto proxied = net::HttpClient::Create(api)->Request(
      "GET", "/api/v1/namespaces/default/pods/web:8080/proxy/");
  ASSERT_TRUE(proxied.ok());
  EXPECT_EQ(proxied->body, "hello from the process");

  // The process stops answering 200: the pod is no longer ready (failureThreshold 1).
  fs::remove(ready_file());
  ASSERT_TRUE(Eventually([&] { return PodReady("web", false); }));
  EXPECT_EQ(ContainerStatus("web")["ready"], Json(false));
  EXPECT_EQ(ContainerStatus("web")["restartCount"], 0);
}

TEST_F(ProcessPodsTest, AWebSocketThroughTheIngressReachesTheProcess) {
  Start();
  MakeReady();
  Expose("ws");
  CreatePod("ws", "example.com/pyserver:1");
  ASSERT_TRUE(Eventually([&] { return PodReady("ws"); }));
  ASSERT_TRUE(RoutedToPod("ws.example.com"));

  test_support::WsClient::Options o;
  o.port = cluster_->ingress_port();
  o.target = "/ws";
  o.headers = {{"Host", "ws.example.com"}};
  test_support::WsClient ws(o);
  ASSERT_TRUE(ws.upgraded()) << ws.status() << " " << ws.body() << ws.handshake_error();
  ASSERT_TRUE(ws.WaitForMessages(1));
  ws.Send("ping over the tunnel");
  ASSERT_TRUE(ws.WaitForMessages(2));
  EXPECT_EQ(ws.messages()[0], "hello");
  EXPECT_EQ(ws.messages()[1], "echo:ping over the tunnel");
  // Binary stays binary both ways (bytes that are not UTF-8 could not travel as text).
  const std::string bytes("\x00\xff\xfe", 3);
  ws.Send(bytes, /*binary=*/true);
  ASSERT_TRUE(ws.WaitForMessages(3));
  EXPECT_EQ(ws.messages()[2], "echo:" + bytes);
  EXPECT_EQ(ws.binary_flags(), std::vector<bool>({false, false, true}));
  ws.Close(1000, "done");
  ASSERT_TRUE(ws.WaitEnded());
  EXPECT_EQ(ws.close_code(), 1000);

  // A path where the process does not upgrade: its answer reaches the client as it is.
  o.target = "/";
  test_support::WsClient refused(o);
  EXPECT_FALSE(refused.upgraded());
  EXPECT_EQ(refused.status(), 200);
  EXPECT_EQ(refused.body(), "hello from the process");
}

TEST_F(ProcessPodsTest, PodsOfOtherImagesStayVirtual) {
  Start();
  Expose("plain");
  Json pod = {
      {"metadata", {{"name", "plain"}, {"labels", {{"app", "plain"}}}}},
      {"spec",
       {{"containers", Json::array({{{"name", "app"},
                                     {"image", "nginx:1.27"},
                                     {"ports", Json::array({{{"containerPort", 8080}}})}}})}}}};
  ASSERT_TRUE(cluster_->api().Create(Type("", "v1", "pods"), "default", pod).ok());
  ASSERT_TRUE(Eventually([&] { return PodReady("plain"); }));
  ASSERT_TRUE(RoutedToPod("plain.example.com"));
  auto page = ViaIngress("plain.example.com", "/");
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->status, 200);
  EXPECT_THAT(page->body, HasSubstr("nginx:1.27"));  // the virtual pod's page names its image
  EXPECT_THAT(page->body, ::testing::Not(HasSubstr("hello from the process")));
}

TEST_F(ProcessPodsTest, AnExitedProcessIsRestartedWithBackOffAndCounted) {
  Start();
  Json pod = {
      {"metadata", {{"name", "crash"}}},
      {"spec",
       {{"containers", Json::array({{{"name", "app"}, {"image", "example.com/crash:1"}}})}}}};
  ASSERT_TRUE(cluster_->api().Create(Type("", "v1", "pods"), "default", pod).ok());
  ASSERT_TRUE(Eventually([&] {
    Json cs = ContainerStatus("crash");
    return cs.is_object() && GetInt(cs, "restartCount") >= 2;
  }));
  Json cs = ContainerStatus("crash");
  EXPECT_EQ(AtPath(cs, "lastState.terminated.exitCode"), 3);
  EXPECT_EQ(AtPath(cs, "lastState.terminated.reason"), "Error");
  EXPECT_EQ(StrAt(*Pod("crash"), "status.phase"), "Running");  // restartPolicy Always
}

TEST_F(ProcessPodsTest, DeletionSendsSigtermThenSigkillAfterTheGraceAndWaitsForTheProcess) {
  Start({{"IGNORE_TERM", "1"}});
  MakeReady();
  Expose("stubborn");
  CreatePod("stubborn", "example.com/pyserver:1", /*grace=*/2);
  ASSERT_TRUE(Eventually([&] { return PodReady("stubborn"); }));
  ASSERT_TRUE(RoutedToPod("stubborn.example.com"));
  auto env = ViaIngress("stubborn.example.com", "/env");
  ASSERT_TRUE(env.ok());
  ASSERT_EQ(env->status, 200) << env->body;
  const pid_t pid = ParseJson(env->body).value()["pid"].get<int>();
  const std::string pod_dir = ParseJson(env->body).value()["env"]["STEWARD_POD_DIR"];

  const auto deleted_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(cluster_->api().Delete(Type("", "v1", "pods"), "default", "stubborn").ok());
  // SIGTERM arrives; the process ignores it, and the pod stays while it runs.
  ASSERT_TRUE(Eventually([&] { return fs::exists(term_file()); }));
  EXPECT_TRUE(Pod("stubborn").has_value());
  EXPECT_EQ(::kill(pid, 0), 0);
  // SIGKILL after the 2 s grace period; then the pod goes.
  ASSERT_TRUE(Eventually([&] { return !Pod("stubborn").has_value(); }));
  EXPECT_GE(std::chrono::steady_clock::now() - deleted_at, milliseconds(1900));
  EXPECT_EQ(::kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
  EXPECT_FALSE(fs::exists(pod_dir));
}

TEST_F(ProcessPodsTest, AProcessThatHonoursSigtermEndsThePodBeforeTheGracePeriod) {
  Start();
  MakeReady();
  CreatePod("polite", "example.com/pyserver:1", /*grace=*/60);
  ASSERT_TRUE(Eventually([&] { return PodReady("polite"); }));
  const auto deleted_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(cluster_->api().Delete(Type("", "v1", "pods"), "default", "polite").ok());
  ASSERT_TRUE(Eventually([&] { return !Pod("polite").has_value(); }, seconds(20)));
  EXPECT_LT(std::chrono::steady_clock::now() - deleted_at, seconds(20));
  std::ifstream term(term_file());
  std::string line;
  std::getline(term, line);
  EXPECT_EQ(line, "TERM");
}

TEST_F(ProcessPodsTest, APodAdoptedFromAnEarlierRunGetsItsProcessAndNoStandInAnswersMeanwhile) {
  const std::string data_dir = (dir_ / "state").string();
  Start({}, data_dir);
  MakeReady();
  Expose("again");
  CreatePod("again", "example.com/pyserver:1");
  ASSERT_TRUE(Eventually([&] { return PodReady("again"); }));
  cluster_->Stop();
  cluster_.reset();

  // The pod is stored Running and Ready; its process is gone with the first run.
  Start({}, data_dir);
  std::vector<std::string> answers;
  ASSERT_TRUE(Eventually([&] {
    auto r = ViaIngress("again.example.com", "/");
    if (!r.ok()) return false;
    answers.push_back(std::to_string(r->status) + " " + r->body);
    return r->status == 200;
  }));
  EXPECT_EQ(answers.back(), "200 hello from the process");
  for (const auto& a : answers) EXPECT_THAT(a, ::testing::Not(HasSubstr("pyserver"))) << a;
  EXPECT_TRUE(PodReady("again"));
}

TEST_F(ProcessPodsTest, StoppingTheClusterStopsEveryProcess) {
  Start();
  MakeReady();
  Expose("bye");
  CreatePod("bye", "example.com/pyserver:1");
  ASSERT_TRUE(Eventually([&] { return PodReady("bye"); }));
  ASSERT_TRUE(RoutedToPod("bye.example.com"));
  auto env = ViaIngress("bye.example.com", "/env");
  ASSERT_TRUE(env.ok());
  ASSERT_EQ(env->status, 200) << env->body;
  const pid_t pid = ParseJson(env->body).value()["pid"].get<int>();
  cluster_->Stop();
  EXPECT_EQ(::kill(pid, 0), -1);
  EXPECT_TRUE(fs::exists(term_file()));
}

}  // namespace
}  // namespace steward::cluster
