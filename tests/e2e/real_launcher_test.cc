// Steward's instance operations (instance::InstanceOps) against the REAL FlowFuse launcher: the
// npm package @flowfuse/nr-launcher and Node-RED pinned in tests/real-launcher (installed by
// scripts/setup.sh), started as a process with a small platform ("forge") stand-in served here,
// so that it loads its settings, starts Node-RED and reaches "running". The pod is a hand-made
// EndpointSlice in an embedded cluster; InstanceOps dials the launcher's admin port through its
// dial_override seam. What this check found is listed in docs/flowfuse.md ("Checked against the
// real launcher"). Run alone: ctest -R RealLauncher (in a build directory).
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cluster/embedded_cluster.h"
#include "cluster/profile/profile.h"
#include "common/mutex.h"
#include "instance/instance_ops.h"
#include "kube/client/resource.h"
#include "kube/test_support/embedded.h"
#include "net/free_port.h"
#include "net/http_server.h"
#include "process.h"
#include "test_support/eventually.h"

namespace steward::e2e {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr char kNs[] = "projects";
constexpr char kProject[] = "real-launcher-project";
constexpr char kTeam[] = "team-1";
constexpr char kToken[] = "ffpt_test-project-token";
constexpr char kService[] = "real-launcher";
constexpr char kPod[] = "real-launcher-0";
constexpr char kPodIp[] = "10.9.0.1";

const fs::path kRealLauncherDir = fs::path(STEWARD_SOURCE_DIR) / "tests" / "real-launcher";

fs::path LauncherMain() {
  return kRealLauncherDir / "launcher" / "node_modules" / "@flowfuse" / "nr-launcher" / "index.js";
}
fs::path NodeRedPath() { return kRealLauncherDir / "node-red"; }

// "version" of an installed package's package.json ("" when unreadable).
std::string PackageVersion(const fs::path& package_json) {
  auto parsed = ParseJson(ReadFile(package_json.string()));
  return parsed.ok() && parsed->is_object() ? GetString(*parsed, "version") : "";
}

// A free TCP port on 127.0.0.1 for the launcher and Node-RED, outside the ephemeral range (a
// kernel-picked one was seen taken by another test's connection before Node-RED could bind it).
uint16_t FreePort() { return net::PickFreePort(); }

// The platform as far as the launcher and its Node-RED call it at start and while running:
//   GET  /api/v1/projects/<id>/settings      the launcher's settings (bearer: the project token)
//   POST /api/v1/projects/<id>/update-state  {state}: reported on every settled state change
//   POST /logging/<id>/audit                 audit events (the launcher's and Node-RED's)
//   GET|POST /storage/<id>/{flows,credentials,settings,sessions,library/...}: the storage API
//                                            Node-RED's storage module uses (lib/storage)
// A wrong token gets 401 (the launcher then fails to start: "Unauthorized").
class ForgeStandIn : public net::Handler {
 public:
  struct Call {
    std::string method, path, authorization, body;
  };

  ForgeStandIn(std::string root_dir, uint16_t node_red_port)
      : root_dir_(std::move(root_dir)), node_red_port_(node_red_port) {
    auto s = net::HttpServer::Start({}, *this);
    EXPECT_TRUE(s.ok()) << s.error().ToString();
    if (s.ok()) server_ = std::move(*s);
  }
  ~ForgeStandIn() override {
    if (server_) server_->Stop();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()); }
  std::vector<Call> calls() const {
    MutexLock lock(mu_);
    return calls_;
  }
  // The states the launcher reported, in order.
  std::vector<std::string> reported_states() const {
    std::vector<std::string> states;
    for (const Call& c : calls()) {
      if (c.path != std::string("/api/v1/projects/") + kProject + "/update-state") continue;
      auto body = ParseJson(c.body);
      if (body.ok() && body->is_object()) states.push_back(GetString(*body, "state"));
    }
    return states;
  }
  size_t count(const std::string& method, const std::string& path) const {
    size_t n = 0;
    for (const Call& c : calls()) n += c.method == method && c.path == path ? 1 : 0;
    return n;
  }

  void Handle(net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer) override {
    const std::string auth(request.headers.Get("Authorization"));
    {
      MutexLock lock(mu_);
      calls_.push_back({request.method, request.path, auth, request.body});
    }
    if (auth != std::string("Bearer ") + kToken) return writer->Send(Json401());
    const std::string project = std::string("/api/v1/projects/") + kProject;
    const std::string storage = std::string("/storage/") + kProject + "/";
    if (request.method == "GET" && request.path == project + "/settings") {
      return writer->Send(JsonAnswer(200, Settings()));
    }
    if (request.method == "GET" && request.path == storage + "flows") {
      return writer->Send(JsonAnswer(200, Json::array()));
    }
    writer->Send(JsonAnswer(200, Json::object()));  // state reports, audit, storage saves
  }

 private:
  static net::HttpResponse JsonAnswer(int status, const Json& body) {
    net::HttpResponse r;
    r.status = status;
    r.headers.Set("Content-Type", "application/json");
    r.body = DumpJson(body);
    return r;
  }
  static net::HttpResponse Json401() {
    return JsonAnswer(401, {{"code", "unauthorized"}, {"error", "unauthorized"}});
  }
  // What the launcher reads from the platform's settings answer (lib/launcher.js loadSettings,
  // lib/runtimeSettings.js): where the instance lives, its ports and URLs, and the settings
  // Node-RED's settings.js is written from. healthCheckInterval (ms, > 1000 to count) is how
  // often the launcher asks Node-RED whether it is up: "starting" lasts until the first answer
  // (7.5 s by default).
  Json Settings() const {
    const std::string base = "http://127.0.0.1:" + std::to_string(node_red_port_);
    return {{"rootDir", root_dir_},
            {"userDir", "userdir"},
            {"port", node_red_port_},
            {"baseURL", base},
            {"forgeURL", url()},
            {"projectID", kProject},
            {"teamID", kTeam},
            {"storageURL", url() + "/storage"},
            {"auditURL", url() + "/logging"},
            {"state", "running"},
            {"healthCheckInterval", 1500},
            {"env", {{"NODE_RED_DISABLE_TELEMETRY", "true"}}},
            {"settings", {{"palette", {{"modules", Json::object()}}}, {"disableTours", true}}}};
  }

  const std::string root_dir_;
  const uint16_t node_red_port_;
  mutable Mutex mu_;
  std::vector<Call> calls_ GUARDED_BY(mu_);
  std::unique_ptr<net::HttpServer> server_;
};

// The launcher as a process in a process group of its own (Node-RED, which it spawns, is in it
// too), output to a log file. The destructor ends the whole group: SIGTERM, then SIGKILL after
// a grace period (the launcher's SIGTERM handler waits for Node-RED, and never returns when
// Node-RED had already exited on its own). If this test process dies, the launcher gets SIGTERM
// (PR_SET_PDEATHSIG) and stops its Node-RED.
class LauncherProcess {
 public:
  LauncherProcess(const std::string& dir, uint16_t admin_port, const std::string& forge_url)
      : log_(dir + "/launcher.log") {
    std::vector<std::string> argv = {"node",          LauncherMain().string(),
                                     "--port",        std::to_string(admin_port),
                                     "--forgeURL",    forge_url,
                                     "--project",     kProject,
                                     "--token",       kToken,
                                     "--nodeRedPath", NodeRedPath().string()};
    // The container's environment as the FlowFuse driver sets it (no FORGE_* from ours).
    const char* path = std::getenv("PATH");
    std::vector<std::string> env = {"PATH=" + std::string(path != nullptr ? path : "/usr/bin:/bin"),
                                    "HOME=" + dir,
                                    std::string("FORGE_CLIENT_ID=ffp_test-client"),
                                    std::string("FORGE_CLIENT_SECRET=test-client-secret"),
                                    std::string("FORGE_TEAM_ID=") + kTeam,
                                    std::string("FORGE_NR_SECRET=test-credential-secret")};
    std::vector<char*> cargv, cenv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    for (auto& e : env) cenv.push_back(e.data());
    cenv.push_back(nullptr);
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
      setpgid(0, 0);
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (getppid() != parent) _exit(126);  // the test died before prctl
      int out = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int in = open("/dev/null", O_RDONLY);
      if (out < 0 || in < 0 || chdir(dir.c_str()) != 0) _exit(126);
      dup2(in, 0);
      dup2(out, 1);
      dup2(out, 2);
      execvpe(cargv[0], cargv.data(), cenv.data());
      _exit(127);
    }
    pid_ = pid;
    if (pid_ > 0) setpgid(pid_, pid_);  // also here: no race with the kill below
  }
  ~LauncherProcess() {
    if (pid_ <= 0) return;
    kill(-pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + seconds(5);
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(20));  // waiting on another process's exit
    }
    kill(-pid_, SIGKILL);  // Node-RED too, if the launcher left it behind
    waitpid(pid_, &status, 0);
  }
  LauncherProcess(const LauncherProcess&) = delete;
  LauncherProcess& operator=(const LauncherProcess&) = delete;

  bool started() const { return pid_ > 0; }
  // The last `bytes` of the launcher's output.
  std::string LogTail(size_t bytes = 6000) const {
    std::string all = ReadFile(log_);
    return all.size() <= bytes ? all : all.substr(all.size() - bytes);
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
};

// The multipart/form-data body the launcher's upload route reads (multer, field "file").
std::pair<std::string, std::string> Multipart(const std::string& content) {
  const std::string boundary = "steward-real-launcher-boundary";
  std::string body = "--" + boundary +
                     "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n"
                     "Content-Type: application/octet-stream\r\n\r\n" +
                     content + "\r\n--" + boundary + "--\r\n";
  return {"multipart/form-data; boundary=" + boundary, body};
}

class RealLauncherTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!fs::exists(LauncherMain()) || !fs::exists(NodeRedPath() / "node_modules" / "node-red")) {
      setup_error_ = new std::string(
          "the real launcher is not installed (" + LauncherMain().string() + " or " +
          (NodeRedPath() / "node_modules" / "node-red").string() +
          " missing): run scripts/setup.sh, which runs npm ci in tests/real-launcher/*");
      return;
    }
    dir_ = new TempDir();
    // What the platform's container image provides: the user directory with its package.json
    // (the launcher compares its dependencies with the settings' palette modules and runs npm
    // install when they differ: here they do not) and its storage directory (Node-RED's cwd).
    fs::create_directories(fs::path(dir_->path()) / "userdir" / "storage");
    std::ofstream(fs::path(dir_->path()) / "userdir" / "package.json")
        << R"({"name":"steward-real-launcher-instance","version":"0.0.1","dependencies":{}})";
    admin_port_ = FreePort();
    forge_ = new ForgeStandIn(dir_->path(), FreePort());
    launcher_ = new LauncherProcess(dir_->path(), admin_port_, forge_->url());

    cluster::EmbeddedCluster::Options o;
    o.profile = *cluster::BuiltinProfile("instant");
    auto c = cluster::EmbeddedCluster::Start(o);
    if (!c.ok()) {
      setup_error_ = new std::string("embedded cluster: " + c.error().ToString());
      return;
    }
    cluster_ = std::move(*c).release();
    client_ = new std::shared_ptr<kube::Client>(kube::test_support::ClientFor(*cluster_));
    Json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", kNs}}}};
    Json slice = {
        {"apiVersion", "discovery.k8s.io/v1"},
        {"kind", "EndpointSlice"},
        {"metadata",
         {{"name", std::string(kService) + "-1"},
          {"labels", {{"kubernetes.io/service-name", kService}}}}},
        {"addressType", "IPv4"},
        {"endpoints",
         Json::array({{{"addresses", {kPodIp}},
                       {"conditions", {{"ready", true}}},
                       {"targetRef", {{"kind", "Pod"}, {"name", kPod}, {"namespace", kNs}}}}})}};
    for (auto [type, object] : {std::pair{kube::ResourceType::Namespace(), ns},
                                std::pair{kube::ResourceType::EndpointSlice(), slice}}) {
      auto created = (*client_)->Create(type, type.namespaced ? kNs : "", object);
      if (!created.ok()) {
        setup_error_ = new std::string("creating " + type.kind + ": " + created.error().ToString());
        return;
      }
    }
    // Loading settings, starting Node-RED, the first health check: a few seconds.
    const bool running = test_support::Eventually(
        [] {
          auto info = Ops().Info(kService);
          return info.ok() && GetString(*info, "state") == "running";
        },
        seconds(40), milliseconds(100));
    if (!running) {
      setup_error_ = new std::string("the launcher never reported running; its output:\n" +
                                     launcher_->LogTail());
    }
  }

  static void TearDownTestSuite() {
    delete launcher_;  // first: the processes go even if anything below fails
    launcher_ = nullptr;
    delete forge_;
    forge_ = nullptr;
    delete client_;
    client_ = nullptr;
    delete cluster_;
    cluster_ = nullptr;
    delete dir_;
    dir_ = nullptr;
    delete setup_error_;
    setup_error_ = nullptr;
  }

  void SetUp() override { ASSERT_EQ(setup_error_, nullptr) << *setup_error_; }
  void TearDown() override {
    if (HasFailure() && launcher_ != nullptr) {
      std::string forge_calls;
      for (const auto& c : forge_->calls()) forge_calls += c.method + " " + c.path + "\n";
      ADD_FAILURE() << "the launcher's output (tail):\n"
                    << launcher_->LogTail() << "\nforge calls:\n"
                    << forge_calls;
    }
  }

  static instance::InstanceOps Ops(milliseconds timeout = milliseconds(5000)) {
    instance::InstanceOptions o;
    o.ns = kNs;
    o.access = instance::Access::kDirect;
    o.timeout = timeout;
    o.restart_poll = milliseconds(100);
    const uint16_t port = admin_port_;
    o.dial_override = [port](const std::string& ip, uint16_t pod_port) {
      // Only the project's pod on the launcher's admin port is the real launcher.
      const bool ours = ip == kPodIp && pod_port == 2880;
      return std::pair<std::string, uint16_t>("127.0.0.1", ours ? port : 1);
    };
    return instance::InstanceOps(*client_, o);
  }

  static std::string State() {
    auto info = Ops().Info(kService);
    return info.ok() ? GetString(*info, "state") : "(" + info.error().ToString() + ")";
  }
  static bool WaitState(const std::string& state, milliseconds timeout = milliseconds(20000)) {
    return test_support::Eventually([&] { return State() == state; }, timeout, milliseconds(100));
  }
  static instance::PodAnswer CommandToPod(const Json& command) {
    auto answers = Ops(milliseconds(30000)).Command(kService, command);
    EXPECT_TRUE(answers.ok()) << answers.error().ToString();
    if (!answers.ok() || answers->size() != 1) return {};
    return (*answers)[0];
  }
  static StatusOr<instance::FileAnswer> File(const std::string& method, const std::string& path,
                                             const std::string& body = "",
                                             const std::string& content_type = "") {
    return Ops().Files(kService, {method, path, body, content_type}, 1 << 20);
  }
  static fs::path StorageDir() { return fs::path(dir_->path()) / "userdir" / "storage"; }

  static TempDir* dir_;
  static uint16_t admin_port_;
  static ForgeStandIn* forge_;
  static LauncherProcess* launcher_;
  static cluster::EmbeddedCluster* cluster_;
  static std::shared_ptr<kube::Client>* client_;
  static std::string* setup_error_;
};

TempDir* RealLauncherTest::dir_ = nullptr;
uint16_t RealLauncherTest::admin_port_ = 0;
ForgeStandIn* RealLauncherTest::forge_ = nullptr;
LauncherProcess* RealLauncherTest::launcher_ = nullptr;
cluster::EmbeddedCluster* RealLauncherTest::cluster_ = nullptr;
std::shared_ptr<kube::Client>* RealLauncherTest::client_ = nullptr;
std::string* RealLauncherTest::setup_error_ = nullptr;

TEST_F(RealLauncherTest, InfoSaysRunningWithTheVersionsInstalled) {
  auto info = Ops().Info(kService);
  ASSERT_TRUE(info.ok()) << info.error().ToString();
  EXPECT_EQ(GetString(*info, "id"), kProject);
  EXPECT_EQ(GetString(*info, "state"), "running");
  ASSERT_TRUE((*info)["lastStartTime"].is_number_integer()) << info->dump();
  EXPECT_GT((*info)["lastStartTime"].get<int64_t>(), 1'600'000'000'000);  // epoch ms
  const Json& versions = (*info)["versions"];
  EXPECT_EQ(GetString(versions, "launcher"), "2.29.1");
  EXPECT_EQ(GetString(versions, "launcher"),
            PackageVersion(LauncherMain().parent_path() / "package.json"));
  EXPECT_EQ(GetString(versions, "node-red"),
            PackageVersion(NodeRedPath() / "node_modules" / "node-red" / "package.json"));
  EXPECT_THAT(GetString(versions, "node"), ::testing::MatchesRegex("[0-9]+\\.[0-9]+\\.[0-9]+"));
  // The launcher loaded its settings with the project token and reported "running".
  EXPECT_GE(forge_->count("GET", std::string("/api/v1/projects/") + kProject + "/settings"), 1u);
  for (const auto& c : forge_->calls()) EXPECT_EQ(c.authorization, std::string("Bearer ") + kToken);
  auto states = forge_->reported_states();
  EXPECT_NE(std::find(states.begin(), states.end(), "running"), states.end());
}

TEST_F(RealLauncherTest, LogsAreTheLaunchersAndNodeRedsEntriesInOrder) {
  auto logs = Ops().Logs(kService);
  ASSERT_TRUE(logs.ok()) << logs.error().ToString();
  ASSERT_TRUE(logs->is_array());
  bool starting = false, started_flows = false;
  std::string last;
  for (const Json& e : *logs) {
    EXPECT_EQ(GetString(e, "pod"), kPod);
    // The real ts: a string of epoch milliseconds and a 4-digit counter, increasing.
    ASSERT_TRUE(e["ts"].is_string()) << e.dump();
    const std::string ts = e["ts"].get<std::string>();
    EXPECT_EQ(ts.size(), 17u) << ts;
    EXPECT_TRUE(last.empty() || ts.size() > last.size() || ts >= last) << last << " " << ts;
    last = ts;
    EXPECT_TRUE(e.contains("src")) << e.dump();
    starting |= GetString(e, "level") == "system" && GetString(e, "msg") == "Starting Node-RED";
    started_flows |= GetString(e, "level") == "info" && GetString(e, "msg") == "Started flows";
  }
  EXPECT_TRUE(starting) << logs->dump();
  EXPECT_TRUE(started_flows) << logs->dump();
}

TEST_F(RealLauncherTest, StopAndStartChangeWhatInfoSays) {
  instance::PodAnswer stop = CommandToPod({{"cmd", "stop"}});
  EXPECT_EQ(stop.pod, kPod);
  EXPECT_EQ(stop.status, 200) << stop.error;
  EXPECT_EQ(stop.body, Json::object());
  EXPECT_TRUE(WaitState("stopped")) << State();
  // A stopped launcher answers a second stop as the first.
  EXPECT_EQ(CommandToPod({{"cmd", "stop"}}).status, 200);
  EXPECT_EQ(State(), "stopped");

  // start answers once Node-RED is spawned ("starting"); running after its first health check.
  instance::PodAnswer start = CommandToPod({{"cmd", "start"}});
  EXPECT_EQ(start.status, 200) << start.error;
  EXPECT_EQ(start.body, Json::object());
  EXPECT_TRUE(WaitState("running")) << State();
  // A start to a running launcher: 409 {"err": "Already running"}.
  instance::PodAnswer again = CommandToPod({{"cmd", "start"}});
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(again.body, (Json{{"err", "Already running"}}));
  auto states = forge_->reported_states();
  ASSERT_GE(states.size(), 3u);
  EXPECT_EQ(std::vector<std::string>(states.end() - 2, states.end()),
            (std::vector<std::string>{"stopped", "running"}));
  EXPECT_GE(forge_->count("POST", std::string("/logging/") + kProject + "/audit"), 1u);
}

TEST_F(RealLauncherTest, RestartEachWaitsUntilTheLauncherIsRunningAgain) {
  auto before = Ops().Info(kService);
  ASSERT_TRUE(before.ok());
  const size_t settings_reads =
      forge_->count("GET", std::string("/api/v1/projects/") + kProject + "/settings");
  auto steps = Ops().RestartEach(kService, milliseconds(30000));
  ASSERT_TRUE(steps.ok()) << steps.error().ToString();
  ASSERT_EQ(steps->size(), 1u);
  const instance::RestartStep& step = (*steps)[0];
  EXPECT_EQ(step.pod, kPod);
  EXPECT_EQ(step.outcome, "restarted") << step.error;
  EXPECT_EQ(step.status, 200);
  EXPECT_EQ(step.body, Json::object());
  // The launcher answers a restart only after its 2 s pause and a fresh start.
  EXPECT_GE(step.elapsed_ms, 2000);
  EXPECT_EQ(State(), "running");
  auto after = Ops().Info(kService);
  ASSERT_TRUE(after.ok());
  EXPECT_GT((*after)["lastStartTime"].get<int64_t>(), (*before)["lastStartTime"].get<int64_t>());
  // A restart reloads the settings from the platform.
  EXPECT_EQ(forge_->count("GET", std::string("/api/v1/projects/") + kProject + "/settings"),
            settings_reads + 1);
}

TEST_F(RealLauncherTest, LogoutAnswersAndIsLogged) {
  instance::PodAnswer logout = CommandToPod({{"cmd", "logout"}, {"token", "a-user-token"}});
  EXPECT_EQ(logout.status, 200) << logout.error;
  EXPECT_EQ(logout.body, Json::object());
  ASSERT_TRUE(test_support::Eventually([] {
    auto logs = Ops().Logs(kService);
    if (!logs.ok()) return false;
    for (const Json& e : *logs) {
      if (GetString(e, "msg") == "Node-RED logout requested") return true;
    }
    return false;
  }));
}

TEST_F(RealLauncherTest, FilesListMakeUploadOverwriteRenameAndDelete) {
  // The storage root holds the launcher's own log directory.
  auto root = File("GET", "");
  ASSERT_TRUE(root.ok()) << root.error().ToString();
  EXPECT_EQ(root->status, 200);
  EXPECT_EQ(root->content_type, "application/json; charset=utf-8");
  auto listing = ParseJson(root->body);
  ASSERT_TRUE(listing.ok()) << root->body;
  EXPECT_EQ((*listing)["meta"], Json::object());
  bool ff_logs = false;
  for (const Json& f : (*listing)["files"]) {
    ff_logs |= GetString(f, "name") == "ff-logs" && GetString(f, "type") == "directory";
  }
  EXPECT_TRUE(ff_logs) << root->body;

  auto made = File("POST", "", R"({"path":"steward"})", "application/json");
  ASSERT_TRUE(made.ok()) << made.error().ToString();
  EXPECT_EQ(made->status, 201);
  EXPECT_TRUE(made->body.empty());
  EXPECT_TRUE(fs::is_directory(StorageDir() / "steward"));

  auto [type, body] = Multipart("hello");
  auto uploaded = File("POST", "steward/a file.txt", body, type);
  ASSERT_TRUE(uploaded.ok()) << uploaded.error().ToString();
  EXPECT_EQ(uploaded->status, 201);
  EXPECT_EQ(ReadFile((StorageDir() / "steward" / "a file.txt").string()), "hello");
  auto [type2, body2] = Multipart("hello again, longer");
  auto overwritten = File("POST", "steward/a file.txt", body2, type2);
  ASSERT_TRUE(overwritten.ok()) << overwritten.error().ToString();
  EXPECT_EQ(overwritten->status, 201);
  EXPECT_EQ(ReadFile((StorageDir() / "steward" / "a file.txt").string()), "hello again, longer");

  auto dir = File("GET", "steward");
  ASSERT_TRUE(dir.ok());
  auto entries = ParseJson(dir->body);
  ASSERT_TRUE(entries.ok()) << dir->body;
  ASSERT_EQ((*entries)["files"].size(), 1u) << dir->body;
  const Json& entry = (*entries)["files"][0];
  EXPECT_EQ(GetString(entry, "name"), "a file.txt");
  EXPECT_EQ(GetString(entry, "type"), "file");
  EXPECT_EQ(entry["size"], 19);
  EXPECT_THAT(GetString(entry, "lastModified"),
              ::testing::MatchesRegex("[0-9-]+T[0-9:]+\\.[0-9]{3}Z"));
  EXPECT_EQ((*entries)["count"], 1);

  // 2.29.1 has no download: a GET on a file is a listing of a non-directory (400, no body).
  auto read = File("GET", "steward/a file.txt");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->status, 400);
  EXPECT_TRUE(read->body.empty());
  auto missing = File("GET", "steward/nothing");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);

  // An upload onto a directory would kill the launcher: refused before sending.
  auto onto_dir = File("POST", "steward", body, type);
  ASSERT_FALSE(onto_dir.ok());
  EXPECT_EQ(onto_dir.error().field(), "path");
  // Traversal: refused before sending.
  for (std::string path : {"../userdir/package.json", "steward/%2e%2e/%2e%2e", "/etc"}) {
    auto refused = File("GET", path);
    ASSERT_FALSE(refused.ok()) << path;
    EXPECT_EQ(refused.error().code(), StatusCode::kInvalidArgument) << path;
  }

  auto renamed =
      File("PUT", "steward/a file.txt", R"({"path":"steward/b.txt"})", "application/json");
  ASSERT_TRUE(renamed.ok());
  EXPECT_EQ(renamed->status, 202);
  EXPECT_TRUE(fs::exists(StorageDir() / "steward" / "b.txt"));
  EXPECT_FALSE(fs::exists(StorageDir() / "steward" / "a file.txt"));
  auto rename_missing =
      File("PUT", "steward/a file.txt", R"({"path":"steward/c.txt"})", "application/json");
  ASSERT_TRUE(rename_missing.ok());
  EXPECT_EQ(rename_missing->status, 404);

  auto deleted = File("DELETE", "steward/b.txt");
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted->status, 204);
  EXPECT_FALSE(fs::exists(StorageDir() / "steward" / "b.txt"));
  auto deleted_again = File("DELETE", "steward/b.txt");
  ASSERT_TRUE(deleted_again.ok());
  EXPECT_EQ(deleted_again->status, 404);
  auto deleted_dir = File("DELETE", "steward");
  ASSERT_TRUE(deleted_dir.ok());
  EXPECT_EQ(deleted_dir->status, 204);
  EXPECT_FALSE(fs::exists(StorageDir() / "steward"));
  // And the launcher is still there (none of the above killed it).
  EXPECT_EQ(State(), "running");
}

TEST_F(RealLauncherTest, McpAndUnknownCommandsAre404WithAnEmptyObject) {
  // 2.29.1 has no MCP commands (lib/mcp.js came after it): 404 {} as for any unknown command.
  for (const Json& command :
       {Json{{"cmd", "mcp:get-features"}, {"data", {{"endpoints", Json::array({"/mcp"})}}}},
        Json{{"cmd", "mcp:call-tool"}, {"data", {{"endpoint", "/mcp"}, {"name", "echo"}}}},
        Json{{"cmd", "mcp:read-resource"}, {"data", {{"endpoint", "/mcp"}, {"uri", "x://y"}}}},
        Json{{"cmd", "no-such-command"}}}) {
    auto answer = Ops().CommandOne(kService, command);
    ASSERT_TRUE(answer.ok()) << answer.error().ToString();
    EXPECT_EQ(answer->pod, kPod);
    EXPECT_EQ(answer->status, 404) << command.dump();
    EXPECT_EQ(answer->body, Json::object()) << command.dump();
  }
}

TEST_F(RealLauncherTest, CommandOneAsksThePodAndKeepsItsAnswer) {
  auto answer = Ops().CommandOne(kService, {{"cmd", "start"}});
  ASSERT_TRUE(answer.ok()) << answer.error().ToString();
  EXPECT_EQ(answer->pod, kPod);
  EXPECT_EQ(answer->status, 409);
  EXPECT_EQ(answer->body, (Json{{"err", "Already running"}}));
  EXPECT_TRUE(answer->error.empty());
}

TEST_F(RealLauncherTest, ResourcesHaveTheLaunchersSampleShape) {
  // A sample every 10 s while Node-RED runs (from its start). When Node-RED's metrics endpoint
  // does not answer (it is not listening yet on a loaded machine) the launcher keeps an error
  // sample {src, ts, err} instead: wait until a measured one is among them.
  StatusOr<Json> resources = InvalidArgument("not asked");
  auto measured = [](const Json& s) { return !s.contains("err"); };
  ASSERT_TRUE(test_support::Eventually(
      [&] {
        resources = Ops().Resources(kService);
        if (!resources.ok()) return false;
        for (const Json& s : (*resources)["resources"]) {
          if (measured(s)) return true;
        }
        return false;
      },
      seconds(45), milliseconds(250)))
      << (resources.ok() ? resources->dump() : resources.error().ToString());
  EXPECT_EQ((*resources)["meta"], Json::object());
  EXPECT_EQ((*resources)["pods"], Json::array({kPod}));
  for (const Json& s : (*resources)["resources"]) {
    EXPECT_EQ(GetString(s, "pod"), kPod);
    EXPECT_THAT(GetString(s, "src"), ::testing::MatchesRegex("[0-9a-f]{4}")) << s.dump();
    EXPECT_TRUE(s["ts"].is_number_integer()) << s.dump();
    if (!measured(s)) {
      // The launcher's error sample: the reason, no figures.
      EXPECT_TRUE(s["err"].is_string()) << s.dump();
      EXPECT_FALSE(s.contains("ps")) << s.dump();
      continue;
    }
    // Node-RED's metrics: resident memory (MB), event loop lag mean and p99 (s), message counts;
    // cpu (%) from the second sample on; no heap figures.
    for (const char* key : {"ps", "ela", "el99", "nrmsgs", "nrrecv", "nrsend"}) {
      EXPECT_TRUE(s.contains(key) && s[key].is_number()) << key << " in " << s.dump();
    }
    EXPECT_FALSE(s.contains("hs")) << s.dump();
    EXPECT_FALSE(s.contains("hu")) << s.dump();
  }
}

}  // namespace
}  // namespace steward::e2e
