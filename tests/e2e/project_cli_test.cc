// `steward project ...` against `steward serve --embedded-cluster instant`, both run as a user
// runs them: a project's whole life through the CLI (with --wait following each transition),
// reads and filters, bad input named, and the exit codes scripts depend on. Also `steward serve`'s
// own configuration errors, and the CLI's API client (stream parser, error mapping, duration
// syntax) against a stand-in server.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>

#include "api_client/api_client.h"
#include "common/file.h"
#include "common/json.h"
#include "common/mutex.h"
#include "net/http_client.h"
#include "net/http_server.h"
#include "process.h"

namespace steward::e2e {
namespace {

using std::chrono::seconds;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

// ECMAScript regex search (gtest's ContainsRegex is POSIX, without \n or \S).
bool Matches(const std::string& text, const std::string& re) {
  return std::regex_search(text, std::regex(re));
}

std::string Describe(const RunResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

// One step line of --wait: "   3.2s  Provisioning  WaitingForEndpoints  ...".
struct Step {
  double secs;
  std::string phase;
};

std::vector<Step> Steps(const std::string& out) {
  std::vector<Step> steps;
  std::regex re(R"(^ *([0-9]+\.[0-9])s  (\S+))");
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, re)) steps.push_back({std::stod(m[1]), m[2]});
  }
  return steps;
}

// A port nothing listens on: bound, then closed.
uint16_t ClosedPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

class ProjectCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    serve_ = new ServeUnderTest();
    ASSERT_TRUE(serve_->ok()) << serve_->output();
    server_ = serve_->server();
    token_file_ = serve_->token_file();
  }
  static void TearDownTestSuite() {
    delete serve_;
    serve_ = nullptr;
  }

  // `env -i` keeps STEWARD_SERVER / STEWARD_TOKEN of the test's own environment out. `group` is
  // the command (`project` or `agent`); `input` is the command's standard input.
  static RunResult Cli(const std::vector<std::string>& args, const std::vector<std::string>& auth,
                       const std::vector<std::string>& env = {},
                       const std::string& group = "project", const std::string& input = "") {
    std::vector<std::string> argv = {"/usr/bin/env", "-i", "PATH=/usr/bin:/bin"};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.push_back(StewardBinary());
    argv.push_back(group);
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), auth.begin(), auth.end());
    return ::steward::e2e::Run(argv, input, seconds(90));
  }
  // With the server and token of the running `steward serve`.
  static RunResult Cli(const std::vector<std::string>& args) {
    return Cli(args, {"--server", server_, "--token-file", token_file_});
  }
  // `steward agent ...` with the server and token of the running `steward serve`.
  static RunResult AgentCli(const std::vector<std::string>& args, const std::string& input = "") {
    return Cli(args, {"--server", server_, "--token-file", token_file_}, {}, "agent", input);
  }

  static ServeUnderTest* serve_;
  static std::string server_;
  static std::string token_file_;
};
ServeUnderTest* ProjectCliTest::serve_ = nullptr;
std::string ProjectCliTest::server_;
std::string ProjectCliTest::token_file_;

// Raw HTTP against the running `steward serve`: each class of bad input is answered with its
// code, reason and a message naming the problem, and nothing changes in the store (the project
// list and history) or in the cluster (no object in the namespace).
TEST_F(ProjectCliTest, BadRequestsToServeAreRefusedAndChangeNothing) {
  std::smatch m;
  ASSERT_TRUE(std::regex_search(server_, m, std::regex(R"(^http://([^:/]+):([0-9]+)$)")))
      << server_;
  std::ifstream token_in(token_file_);
  std::string token;
  token_in >> token;
  net::HttpClient::Options o;
  o.host = m[1];
  o.port = static_cast<uint16_t>(std::stoi(m[2]));
  o.bearer_token = token;
  auto http = net::HttpClient::Create(o);
  auto call = [&](const std::string& method, const std::string& target, const std::string& body,
                  const std::string& content_type = "application/json") {
    net::Headers h;
    if (!content_type.empty()) h.Set("Content-Type", content_type);
    auto r = http->Request(method, target, body, h);
    EXPECT_TRUE(r.ok()) << r.error().ToString();
    return r.ok() ? *r : net::HttpResponse{};
  };
  // A project name no other test uses, so the checks below see only this test's effect.
  const std::string good =
      R"({"spec":{"team":"bad-input","stack":{"image":"nodered/node-red:4.0"}}})";
  auto before = call("GET", "/v1/projects?team=bad-input", "", "");
  ASSERT_EQ(before.status, 200) << before.body;

  struct Case {
    std::string what, method, target, body, content_type;
    int code;
    std::string reason, named;
  };
  const std::vector<Case> cases = {
      {"malformed JSON", "PUT", "/v1/projects/zeta", R"({"spec": {)", "application/json", 400,
       "MalformedJson", "not JSON"},
      {"unknown top-level field", "PUT", "/v1/projects/zeta",
       R"({"spec":{"team":"bad-input","stack":{"image":"i"}},"colour":"red"})", "application/json",
       400, "InvalidArgument", "colour"},
      {"unknown spec field", "PUT", "/v1/projects/zeta",
       R"({"spec":{"team":"bad-input","stack":{"image":"i"},"colour":"red"}})", "application/json",
       400, "InvalidArgument", "spec.colour"},
      {"invalid name", "PUT", "/v1/projects/Not_A_Name", good, "application/json", 400,
       "InvalidArgument", "name"},
      {"oversized body", "PUT", "/v1/projects/zeta",
       R"({"spec":{"team":"bad-input","stack":{"image":"i"}},"pad":")" +
           std::string(1536 * 1024, 'x') + "\"}",
       "application/json", 413, "BodyTooLarge", "1048576"},
      {"wrong content type", "PUT", "/v1/projects/zeta", good, "text/plain", 415,
       "UnsupportedMediaType", "text/plain"},
      {"unknown project", "POST", "/v1/projects/no-such-project/start", "", "", 404, "NotFound",
       "no-such-project"},
      {"bad wait", "PUT", "/v1/projects/zeta?wait=forever", good, "application/json", 400,
       "InvalidArgument", "wait"},
      // Issue 13.
      {"deep nesting", "PUT", "/v1/projects/zeta",
       R"({"spec":{"team":"bad-input","stack":{"image":"i"},"podSecurityContext":{"a":)" +
           std::string(80000, '[') + std::string(80000, ']') + "}}}",
       "application/json", 400, "MalformedJson", "nest"},
      {"duplicate key", "PUT", "/v1/projects/zeta",
       R"({"spec":{"team":"bad-input","stack":{"image":"i"}},"spec":{"team":"b"}})",
       "application/json", 400, "MalformedJson", "duplicate"},
      {"unknown query parameter", "PUT", "/v1/projects/zeta?wiat=5s", good, "application/json", 400,
       "InvalidArgument", "wiat"},
      {"repeated query parameter", "PUT", "/v1/projects/zeta?wait=1s&wait=2s", good,
       "application/json", 400, "InvalidArgument", "more than once"},
      {"escaped slash in a segment", "GET", "/v1/projects/zeta%2fhistory", "", "", 400, "BadPath",
       "%2F"},
      {"field the cluster would prune", "PUT", "/v1/projects/zeta",
       R"({"start":true,"spec":{"team":"bad-input","stack":{"image":"i"},)"
       R"("containerSecurityContext":{"bogus":true}}})",
       "application/json", 400, "InvalidArgument", "spec.containerSecurityContext.bogus"},
      {"privileged container", "PUT", "/v1/projects/zeta",
       R"({"spec":{"team":"bad-input","stack":{"image":"i"},)"
       R"("containerSecurityContext":{"privileged":true}}})",
       "application/json", 400, "InvalidArgument", "privileged"},
      {"custom hostname of the form <name>.<domain>", "PUT", "/v1/projects/zeta",
       R"({"spec":{"team":"bad-input","stack":{"image":"i"},"customHostname":"alpha.localhost"}})",
       "application/json", 400, "InvalidArgument", "reserved for project names"},
  };
  for (const Case& c : cases) {
    auto r = call(c.method, c.target, c.body, c.content_type);
    EXPECT_EQ(r.status, c.code) << c.what << ": " << r.body;
    auto j = ParseJson(r.body);
    ASSERT_TRUE(j.ok()) << c.what << ": " << r.body;
    EXPECT_EQ(GetString((*j)["error"], "reason"), c.reason) << c.what << ": " << r.body;
    EXPECT_THAT(GetString((*j)["error"], "message"), HasSubstr(c.named))
        << c.what << ": " << r.body;
    // The server closes the connection after an oversized body; start a fresh one.
    if (c.code == 413) http = net::HttpClient::Create(o);
  }

  auto after = call("GET", "/v1/projects?team=bad-input", "", "");
  EXPECT_EQ(after.body, before.body);
  EXPECT_EQ(call("GET", "/v1/projects/zeta", "", "").status, 404);
  EXPECT_EQ(call("GET", "/v1/projects/zeta/history", "", "").status, 404);
  RunResult objects = ::steward::e2e::Run(
      {"kubectl", "--kubeconfig", serve_->dir() + "/kubeconfig", "-n", "steward", "get",
       "deployments,services,ingresses,secrets", "-l", "steward.io/project", "-o", "name"});
  ASSERT_EQ(objects.exit_code, 0) << Describe(objects);
  // Other tests' projects may exist; none of them is called zeta.
  EXPECT_THAT(objects.out, Not(HasSubstr("zeta"))) << objects.out;
}

// Sends `bytes` on a fresh connection to the server, half-closes after `hold_open` is false,
// and returns everything the server sent until it closed (or the deadline passed).
std::string RawExchange(const std::string& host, uint16_t port, const std::string& bytes,
                        std::chrono::milliseconds deadline = std::chrono::seconds(20),
                        const std::function<bool(const std::string&)>& on_data = nullptr) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return "<connect failed>";
  }
  timeval tv{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  std::string out;
  const auto until = std::chrono::steady_clock::now() + deadline;
  char buf[4096];
  while (std::chrono::steady_clock::now() < until) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n == 0) break;
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
      if (on_data && !on_data(out)) break;
    }
  }
  close(fd);
  return out;
}

// Protocol-level abuse against the running `steward serve`: the server answers each with a
// clear error, keeps serving, and nothing changes.
TEST_F(ProjectCliTest, HostileHttpIsRefusedAndTheServerGoesOn) {
  std::smatch m;
  ASSERT_TRUE(std::regex_search(server_, m, std::regex(R"(^http://([^:/]+):([0-9]+)$)")));
  const std::string host = m[1];
  const uint16_t port = static_cast<uint16_t>(std::stoi(m[2]));
  std::ifstream token_in(token_file_);
  std::string token;
  token_in >> token;
  ASSERT_EQ(Cli({"create", "eta-hostile", "--team", "bad-input-2", "--image",
                 "nodered/node-red:4.0", "--hostname", "eta.example.com"})
                .exit_code,
            0);
  const std::string auth = "Authorization: Bearer " + token + "\r\n";
  auto healthy = [&] {
    return RawExchange(host, port, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .starts_with("HTTP/1.1 200");
  };

  // A 70,000-byte header value (this killed the process before).
  std::string r = RawExchange(
      host, port,
      "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(70000, 'a') + "\r\n\r\n");
  EXPECT_TRUE(r.starts_with("HTTP/1.1 431")) << r.substr(0, 200);
  EXPECT_TRUE(healthy());

  // A smuggled DELETE behind an unknown transfer coding is never executed.
  const std::string smuggled =
      "DELETE /v1/projects/eta-hostile HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n";
  for (const std::string te : {"xchunked", "chunked, gzip", "gzip, chunked"}) {
    r = RawExchange(
        host, port,
        "POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: " + te + "\r\n\r\n" + smuggled);
    EXPECT_TRUE(r.starts_with("HTTP/1.1 400") || r.starts_with("HTTP/1.1 501")) << te << ": " << r;
    EXPECT_EQ(r.find("HTTP/1.1", 8), std::string::npos) << te << ": a second answer: " << r;
  }
  // Transfer-Encoding with Content-Length.
  r = RawExchange(host, port,
                  "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n"
                  "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" +
                      smuggled);
  EXPECT_TRUE(r.starts_with("HTTP/1.1 400")) << r;
  auto still = Cli({"get", "eta-hostile", "-o", "json"});
  ASSERT_EQ(still.exit_code, 0) << Describe(still);
  EXPECT_THAT(still.out, HasSubstr("\"desiredState\": \"suspended\"")) << still.out;

  // Expect: 100-continue is answered before the body is sent.
  r = RawExchange(host, port,
                  "PUT /v1/projects/eta-hostile HTTP/1.1\r\nHost: x\r\n" + auth +
                      "Content-Type: application/json\r\nContent-Length: 2\r\n"
                      "Expect: 100-continue\r\n\r\n",
                  std::chrono::seconds(5),
                  [](const std::string& got) { return got.find("\r\n\r\n") == std::string::npos; });
  EXPECT_TRUE(r.starts_with("HTTP/1.1 100")) << r;
  // ... or refused at once, without the body, when the token is missing ...
  r = RawExchange(host, port,
                  "PUT /v1/projects/eta-hostile HTTP/1.1\r\nHost: x\r\n"
                  "Content-Type: application/json\r\nContent-Length: 2\r\n"
                  "Expect: 100-continue\r\n\r\n");
  EXPECT_TRUE(r.starts_with("HTTP/1.1 401")) << r;
  // ... or when the body is too large.
  r = RawExchange(host, port,
                  "PUT /v1/projects/eta-hostile HTTP/1.1\r\nHost: x\r\n" + auth +
                      "Content-Type: application/json\r\nContent-Length: 50000000\r\n"
                      "Expect: 100-continue\r\n\r\n");
  EXPECT_TRUE(r.starts_with("HTTP/1.1 413")) << r;

  // Random methods do not grow /metrics.
  auto series = [&] {
    std::string text =
        RawExchange(host, port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    return std::count(text.begin(), text.end(), '\n');
  };
  for (int i = 0; i < 20; ++i) {
    RawExchange(
        host, port,
        "M" + std::to_string(i) + "X /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  }
  series();  // the scrape's own series exist from here on
  const auto lines = series();
  for (int i = 20; i < 60; ++i) {
    RawExchange(
        host, port,
        "M" + std::to_string(i) + "X /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  }
  EXPECT_EQ(series(), lines);

  // Another project's custom hostname: 409, the holder not named.
  auto thief = Cli({"create", "thief-hostile", "--team", "bad-input-2", "--image",
                    "nodered/node-red:4.0", "--hostname", "eta.example.com"});
  EXPECT_EQ(thief.exit_code, 4) << Describe(thief);
  EXPECT_THAT(thief.err, HasSubstr("hostname \"eta.example.com\" is already in use"));
  EXPECT_THAT(thief.err, Not(HasSubstr("eta-hostile")));
  EXPECT_EQ(Cli({"get", "thief-hostile"}).exit_code, 3);
  EXPECT_TRUE(healthy());
}

TEST_F(ProjectCliTest, WholeLifeThroughTheCli) {
  // create --start --wait: the steps in order, from the accepted state to Running.
  RunResult create = Cli({"create", "alpha", "--team", "team-a", "--image", "nodered/node-red:4.0",
                          "--memory", "256", "--env", "GREETING=hi", "--start", "--wait", "60s"});
  ASSERT_EQ(create.exit_code, 0) << Describe(create);
  EXPECT_THAT(create.out, HasSubstr("alpha: create accepted (generation 1, desired running)"));
  auto steps = Steps(create.out);
  ASSERT_GE(steps.size(), 2u) << create.out;
  EXPECT_EQ(steps.front().phase, "Pending") << create.out;
  EXPECT_EQ(steps.back().phase, "Running") << create.out;
  for (size_t i = 1; i < steps.size(); ++i) {
    EXPECT_LE(steps[i - 1].secs, steps[i].secs) << create.out;
    EXPECT_NE(steps[i].phase, "Failed") << create.out;
  }
  EXPECT_PRED2(Matches, create.out, R"(\n +[0-9.]+s  Provisioning +[A-Za-z]+ )");
  EXPECT_PRED2(Matches, create.out, R"(alpha is Running at generation 1 after [0-9.]+s: http)");

  RunResult get = Cli({"get", "alpha"});
  ASSERT_EQ(get.exit_code, 0) << Describe(get);
  EXPECT_PRED2(Matches, get.out, "NAME +PHASE +DESIRED +GENERATION +URL +AGE\n");
  EXPECT_PRED2(Matches, get.out, R"(\nalpha +Running +running +1 +http://alpha\.\S+ +[0-9]+s\n)");

  RunResult json = Cli({"get", "alpha", "-o", "json"});
  ASSERT_EQ(json.exit_code, 0) << Describe(json);
  auto parsed = ParseJson(json.out);
  ASSERT_TRUE(parsed.ok()) << json.out;
  EXPECT_EQ((*parsed)["status"]["phase"], "Running");
  EXPECT_EQ((*parsed)["spec"]["stack"]["memory"], 256);
  EXPECT_EQ((*parsed)["spec"]["stack"]["env"]["GREETING"], "hi");
  const std::string id = (*parsed)["id"];

  // A second project, created suspended, in another team.
  RunResult beta = Cli({"create", "beta", "--team", "team-b", "--image", "nodered/node-red:4.0"});
  ASSERT_EQ(beta.exit_code, 0) << Describe(beta);
  EXPECT_THAT(beta.out, HasSubstr("beta: create accepted (generation 1, desired suspended)"));

  RunResult all = Cli({"list"});
  ASSERT_EQ(all.exit_code, 0) << Describe(all);
  EXPECT_PRED2(Matches, all.out, R"(\nalpha +Running +running )");
  EXPECT_PRED2(Matches, all.out, R"(\nbeta +\S+ +suspended )");
  RunResult team_b = Cli({"list", "--team", "team-b"});
  ASSERT_EQ(team_b.exit_code, 0) << Describe(team_b);
  EXPECT_THAT(team_b.out, HasSubstr("beta"));
  EXPECT_THAT(team_b.out, Not(HasSubstr("alpha")));
  RunResult running = Cli({"list", "--phase", "Running", "-o", "json"});
  ASSERT_EQ(running.exit_code, 0) << Describe(running);
  auto running_json = ParseJson(running.out);
  ASSERT_TRUE(running_json.ok()) << running.out;
  std::vector<std::string> running_names;
  for (const auto& p : (*running_json)["items"]) {
    EXPECT_EQ(p["status"]["phase"], "Running");
    running_names.push_back(p["name"]);
  }
  EXPECT_THAT(running_names, Contains("alpha"));
  EXPECT_THAT(running_names, Not(Contains("beta")));
  RunResult suspended = Cli({"list", "--desired", "suspended"});
  ASSERT_EQ(suspended.exit_code, 0) << Describe(suspended);
  EXPECT_THAT(suspended.out, HasSubstr("beta"));
  EXPECT_THAT(suspended.out, Not(HasSubstr("alpha")));
  RunResult none = Cli({"list", "--team", "no-such-team"});
  EXPECT_EQ(none.exit_code, 0) << Describe(none);
  EXPECT_THAT(none.err, HasSubstr("No projects found."));
  RunResult bad_phase = Cli({"list", "--desired", "sideways"});
  EXPECT_EQ(bad_phase.exit_code, 2) << Describe(bad_phase);
  EXPECT_THAT(bad_phase.err, HasSubstr("steward: InvalidArgument: "));

  // Restart needs desired running: the API's 409, exit 4 (conflict).
  RunResult refused = Cli({"restart", "beta"});
  EXPECT_EQ(refused.exit_code, 4) << Describe(refused);
  EXPECT_THAT(refused.err, HasSubstr("steward: Conflict: "));

  RunResult suspend = Cli({"suspend", "alpha", "--wait"});
  ASSERT_EQ(suspend.exit_code, 0) << Describe(suspend);
  EXPECT_THAT(suspend.out, HasSubstr("alpha: suspend accepted (generation 2, desired suspended)"));
  EXPECT_EQ(Steps(suspend.out).back().phase, "Suspended") << suspend.out;
  EXPECT_THAT(suspend.out, HasSubstr("alpha is Suspended at generation 2"));
  RunResult after_suspend = Cli({"get", "alpha"});
  EXPECT_PRED2(Matches, after_suspend.out, R"(\nalpha +Suspended +suspended +2 )");

  // Logs need a running instance.
  RunResult no_logs = Cli({"logs", "alpha"});
  EXPECT_EQ(no_logs.exit_code, 4) << Describe(no_logs);
  EXPECT_THAT(no_logs.err, HasSubstr("steward: ProjectNotRunning: "));

  RunResult start = Cli({"start", "alpha", "--wait", "60s"});
  ASSERT_EQ(start.exit_code, 0) << Describe(start);
  EXPECT_EQ(Steps(start.out).back().phase, "Running") << start.out;
  EXPECT_THAT(start.out, HasSubstr("alpha is Running at generation 3"));

  // Start of a running project changes nothing: done at once with the same generation.
  RunResult again = Cli({"start", "alpha", "--wait", "60s"});
  ASSERT_EQ(again.exit_code, 0) << Describe(again);
  EXPECT_THAT(again.out, HasSubstr("alpha is Running at generation 3"));
  EXPECT_EQ(Steps(again.out).size(), 1u) << again.out;

  RunResult restart = Cli({"restart", "alpha", "--wait", "60s"});
  ASSERT_EQ(restart.exit_code, 0) << Describe(restart);
  EXPECT_THAT(restart.out, HasSubstr("alpha is Running at generation 4"));

  RunResult rotate = Cli({"rotate", "alpha", "--wait", "60s"});
  ASSERT_EQ(rotate.exit_code, 0) << Describe(rotate);
  EXPECT_THAT(rotate.out, HasSubstr("alpha is Running at generation 5"));

  RunResult logs = Cli({"logs", "alpha"});
  ASSERT_EQ(logs.exit_code, 0) << Describe(logs);
  // A time (the launcher's string ts read as epoch ms), the level, the pod, the message.
  EXPECT_PRED2(Matches, logs.out,
               R"((^|\n)\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z  [a-z]+ +alpha-\S+  \S.*\n)")
      << logs.out;

  // Instance info and flow commands through the launcher's admin port.
  RunResult info = Cli({"info", "alpha", "-o", "json"});
  ASSERT_EQ(info.exit_code, 0) << Describe(info);
  auto info_json = ParseJson(info.out);
  ASSERT_TRUE(info_json.ok()) << info.out;
  EXPECT_EQ(GetString(*info_json, "state"), "running") << info.out;
  RunResult stop_flows = Cli({"flows", "stop", "alpha"});
  ASSERT_EQ(stop_flows.exit_code, 0) << Describe(stop_flows);
  EXPECT_PRED2(Matches, stop_flows.out, R"(^alpha-\S+: flows stop: HTTP 200\n$)");
  RunResult stopped = Cli({"info", "alpha", "-o", "json"});
  auto stopped_json = ParseJson(stopped.out);
  ASSERT_TRUE(stopped_json.ok()) << Describe(stopped);
  EXPECT_EQ(GetString(*stopped_json, "state"), "stopped") << stopped.out;
  RunResult start_flows = Cli({"flows", "start", "alpha"});
  ASSERT_EQ(start_flows.exit_code, 0) << Describe(start_flows);
  RunResult bad_action = Cli({"flows", "pause", "alpha"});
  EXPECT_EQ(bad_action.exit_code, 2) << Describe(bad_action);
  EXPECT_THAT(bad_action.err, HasSubstr("pause"));

  RunResult history = Cli({"history", "alpha", "-o", "json"});
  ASSERT_EQ(history.exit_code, 0) << Describe(history);
  auto history_json = ParseJson(history.out);
  ASSERT_TRUE(history_json.ok()) << history.out;
  std::vector<std::string> operations;
  int64_t last_seq = -1;
  for (const auto& h : (*history_json)["items"]) {
    EXPECT_GT(h["seq"].get<int64_t>(), last_seq);
    last_seq = h["seq"].get<int64_t>();
    if (h["kind"] == "operation") operations.push_back(h["summary"]);
  }
  EXPECT_THAT(operations, ElementsAre("create+start", "suspend", "start", "restart", "rotate"));
  RunResult history_table = Cli({"history", "alpha"});
  ASSERT_EQ(history_table.exit_code, 0) << Describe(history_table);
  EXPECT_PRED2(Matches, history_table.out, "SEQ +AT +KIND +GENERATION +SUMMARY\n");
  EXPECT_PRED2(Matches, history_table.out, R"(\n[0-9]+ +\S+ +operation +4 +restart)");

  RunResult del = Cli({"delete", "alpha", "--wait", "60s"});
  ASSERT_EQ(del.exit_code, 0) << Describe(del);
  EXPECT_EQ(Steps(del.out).back().phase, "purged") << del.out;
  EXPECT_THAT(del.out, HasSubstr("alpha is deleted (purged)"));

  RunResult gone = Cli({"get", "alpha"});
  EXPECT_EQ(gone.exit_code, 3) << Describe(gone);
  EXPECT_THAT(gone.err, HasSubstr("steward: NotFound: "));
  // History stays reachable by id, with the purge at its end.
  RunResult tomb = Cli({"history", id});
  ASSERT_EQ(tomb.exit_code, 0) << Describe(tomb);
  EXPECT_PRED2(Matches, tomb.out, R"(\n[0-9]+ +\S+ +purged )");

  RunResult del_beta = Cli({"delete", "beta", "--wait", "60s"});
  EXPECT_EQ(del_beta.exit_code, 0) << Describe(del_beta);
}

TEST_F(ProjectCliTest, AnAgentsWholeLifeThroughTheCliWithItsTokenNeverShown) {
  const std::string name = "mqtt-schema-agent-team-c-brk1";
  const std::string token_file = serve_->dir() + "/agent-token";
  ASSERT_TRUE(WritePrivateFile(token_file, "ffbt_cli_one\n").ok());
  auto never_shows_a_token = [](const RunResult& r) {
    return r.out.find("ffbt_cli_") == std::string::npos &&
           r.err.find("ffbt_cli_") == std::string::npos;
  };

  // The first put must carry the token: refused by the API (400: exit 2, usage), nothing created.
  RunResult bare = AgentCli({"put", name, "--team", "team-c", "--broker", "brk1"});
  EXPECT_EQ(bare.exit_code, 2) << Describe(bare);
  EXPECT_THAT(bare.err, HasSubstr("credentials")) << Describe(bare);
  EXPECT_EQ(AgentCli({"get", name}).exit_code, 3);

  RunResult put = AgentCli({"put", name, "--team", "team-c", "--broker", "brk1",
                            "--agent-token-file", token_file, "--start", "--wait", "60s"});
  ASSERT_EQ(put.exit_code, 0) << Describe(put);
  EXPECT_THAT(put.out, HasSubstr(name + ": put accepted (generation 1, desired running)"));
  EXPECT_PRED2(Matches, put.out, name + R"( is Running at generation 1 after [0-9.]+s\n)");
  EXPECT_TRUE(never_shows_a_token(put)) << Describe(put);

  // An agent's table has no URL column; it is listed among agents only.
  RunResult get = AgentCli({"get", name});
  ASSERT_EQ(get.exit_code, 0) << Describe(get);
  EXPECT_PRED2(Matches, get.out, "NAME +PHASE +DESIRED +GENERATION +AGE\n");
  EXPECT_PRED2(Matches, get.out, name + R"( +Running +running +1 +[0-9]+s\n)");
  RunResult json = AgentCli({"get", name, "-o", "json"});
  ASSERT_EQ(json.exit_code, 0) << Describe(json);
  auto parsed = ParseJson(json.out);
  ASSERT_TRUE(parsed.ok()) << json.out;
  EXPECT_EQ((*parsed)["kind"], "agent");
  EXPECT_TRUE((*parsed)["spec"]["credentials"].contains("fingerprint")) << json.out;
  EXPECT_TRUE(never_shows_a_token(json)) << Describe(json);
  RunResult agents = AgentCli({"list", "--team", "team-c"});
  ASSERT_EQ(agents.exit_code, 0) << Describe(agents);
  EXPECT_THAT(agents.out, HasSubstr(name));
  RunResult projects = Cli({"list", "-o", "json"});
  ASSERT_EQ(projects.exit_code, 0) << Describe(projects);
  EXPECT_THAT(projects.out, Not(HasSubstr(name)));
  EXPECT_EQ(Cli({"get", name}).exit_code, 3);  // a project's routes do not find an agent

  // Its own API: status, and a command the agent answers.
  RunResult status = AgentCli({"status", name, "-o", "json"});
  ASSERT_EQ(status.exit_code, 0) << Describe(status);
  auto status_json = ParseJson(status.out);
  ASSERT_TRUE(status_json.ok()) << status.out;
  EXPECT_TRUE((*status_json)["connected"].is_boolean()) << status.out;
  RunResult stop_cmd = AgentCli({"command", "stop", name});
  ASSERT_EQ(stop_cmd.exit_code, 0) << Describe(stop_cmd);
  EXPECT_PRED2(Matches, stop_cmd.out, R"(: stop: HTTP 200)");
  EXPECT_EQ(AgentCli({"command", "reboot", name}).exit_code, 2);  // not a command: usage

  // A new token from standard input rolls the pod; the agent is Running with it.
  RunResult rotate = AgentCli({"put", name, "--team", "team-c", "--broker", "brk1",
                               "--agent-token-file", "-", "--start", "--wait", "60s"},
                              "ffbt_cli_two\n");
  ASSERT_EQ(rotate.exit_code, 0) << Describe(rotate);
  EXPECT_PRED2(Matches, rotate.out, name + R"( is Running at generation 2 after )");
  auto rotated = ParseJson(AgentCli({"get", name, "-o", "json"}).out);
  ASSERT_TRUE(rotated.ok());
  EXPECT_NE((*rotated)["spec"]["credentials"]["fingerprint"],
            (*parsed)["spec"]["credentials"]["fingerprint"]);
  EXPECT_TRUE(never_shows_a_token(rotate)) << Describe(rotate);
  RunResult empty = AgentCli(
      {"put", name, "--team", "team-c", "--broker", "brk1", "--agent-token-file", "-"}, "\n");
  EXPECT_EQ(empty.exit_code, 2) << Describe(empty);
  EXPECT_THAT(empty.err, HasSubstr("no token")) << Describe(empty);

  RunResult stop = AgentCli({"stop", name, "--wait", "60s"});
  ASSERT_EQ(stop.exit_code, 0) << Describe(stop);
  EXPECT_PRED2(Matches, stop.out, name + R"( is Suspended at generation 3 after )");
  EXPECT_EQ(AgentCli({"status", name}).exit_code, 4);  // 409 (exit 4): nothing runs to answer
  RunResult history = AgentCli({"history", name, "-o", "json"});
  ASSERT_EQ(history.exit_code, 0) << Describe(history);
  EXPECT_TRUE(never_shows_a_token(history)) << Describe(history);
  RunResult del = AgentCli({"delete", name, "--wait", "60s"});
  ASSERT_EQ(del.exit_code, 0) << Describe(del);
  EXPECT_THAT(del.out, HasSubstr(name + " is deleted (purged)"));
  EXPECT_EQ(AgentCli({"get", name}).exit_code, 3);
}

TEST_F(ProjectCliTest, SpecFileCreatesAndNamesAnUnknownField) {
  std::string good = serve_->dir() + "/good.yaml";
  WriteFile(good, "team: team-c\nstack:\n  image: nodered/node-red:4.0\n  cpu: 20\nreplicas: 2\n");
  RunResult created = Cli({"create", "gamma", "--spec-file", good});
  ASSERT_EQ(created.exit_code, 0) << Describe(created);
  RunResult json = Cli({"get", "gamma", "-o", "yaml"});
  ASSERT_EQ(json.exit_code, 0) << Describe(json);
  EXPECT_PRED2(Matches, json.out, R"(\n +replicas: 2\n)");

  std::string bad = serve_->dir() + "/bad.json";
  WriteFile(bad, R"({"team": "team-c", "stack": {"image": "nodered/node-red:4.0"}, "colour": 1})");
  RunResult refused = Cli({"create", "delta", "--spec-file", bad});
  EXPECT_EQ(refused.exit_code, 2) << Describe(refused);
  EXPECT_THAT(refused.err, HasSubstr("steward: InvalidArgument: "));
  EXPECT_THAT(refused.err, HasSubstr("spec.colour"));
  EXPECT_EQ(Cli({"get", "delta"}).exit_code, 3);  // a refused request changes nothing

  RunResult bad_memory = Cli(
      {"create", "delta", "--team", "t", "--image", "nodered/node-red:4.0", "--memory", "2000000"});
  EXPECT_EQ(bad_memory.exit_code, 2) << Describe(bad_memory);
  EXPECT_THAT(bad_memory.err, HasSubstr("spec.stack.memory"));

  RunResult missing = Cli({"create", "delta", "--spec-file", serve_->dir() + "/nope.yaml"});
  EXPECT_EQ(missing.exit_code, 2) << Describe(missing);
  EXPECT_THAT(missing.err, HasSubstr("nope.yaml"));

  RunResult both = Cli({"create", "delta", "--spec-file", good, "--team", "x"});
  EXPECT_EQ(both.exit_code, 2) << Describe(both);
  EXPECT_THAT(both.err, HasSubstr("excludes"));

  RunResult no_name = Cli({"get"});
  EXPECT_EQ(no_name.exit_code, 2) << Describe(no_name);
  EXPECT_THAT(no_name.err, HasSubstr("NAME"));
  RunResult bad_output = Cli({"get", "gamma", "-o", "xml"});
  EXPECT_EQ(bad_output.exit_code, 2) << Describe(bad_output);
  EXPECT_THAT(bad_output.err, HasSubstr("--output: xml not in {json,yaml,wide}"));
  RunResult bad_wait = Cli({"start", "gamma", "--wait=soon"});
  EXPECT_EQ(bad_wait.exit_code, 2) << Describe(bad_wait);
  EXPECT_THAT(bad_wait.err, HasSubstr("--wait: \"soon\" is not a duration"));
  RunResult bad_env = Cli({"create", "delta", "--team", "t", "--image", "i", "--env", "NOEQUALS"});
  EXPECT_EQ(bad_env.exit_code, 2) << Describe(bad_env);
  EXPECT_THAT(bad_env.err, HasSubstr("--env: \"NOEQUALS\" is not NAME=VALUE"));
}

TEST_F(ProjectCliTest, InvalidNameIsRefusedNamingTheName) {
  RunResult r = Cli(
      {"create", "Not_A_Name", "--team", "team-a", "--image", "nodered/node-red:4.0", "--wait"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("steward: InvalidArgument: "));
  EXPECT_THAT(r.err, HasSubstr("name"));
  EXPECT_EQ(r.out, "");
}

TEST_F(ProjectCliTest, WaitTimesOutWithTheStateItReached) {
  // The embedded cluster fails to pull *.invalid images: the project cannot become Running.
  RunResult r = Cli({"create", "stuck", "--team", "team-d", "--image", "registry.invalid/x:1",
                     "--start", "--wait", "2s"});
  EXPECT_EQ(r.exit_code, 7) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("steward: timed out after 2.0s waiting for stuck to be Running at "
                               "generation 1 (now "));
  EXPECT_GE(r.elapsed, seconds(2));
  EXPECT_EQ(Cli({"delete", "stuck", "--wait", "60s"}).exit_code, 0);
}

TEST_F(ProjectCliTest, FailedProjectEndsTheWaitWithExitOne) {
  // A Deployment of that name that Steward does not own: the engine refuses to touch it.
  RunResult taken =
      ::steward::e2e::Run({"kubectl", "--kubeconfig", serve_->dir() + "/kubeconfig", "-n",
                           "steward", "create", "deployment", "taken", "--image=nginx"},
                          "", seconds(60));
  ASSERT_EQ(taken.exit_code, 0) << Describe(taken);
  RunResult r = Cli({"create", "taken", "--team", "team-e", "--image", "nodered/node-red:4.0",
                     "--start", "--wait", "60s"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_EQ(Steps(r.out).back().phase, "Failed") << r.out;
  EXPECT_THAT(r.err,
              HasSubstr("steward: taken failed at generation 1: NameTaken: Deployment taken"));
  EXPECT_LT(r.elapsed, seconds(30));
  EXPECT_EQ(Cli({"delete", "taken", "--wait", "60s"}).exit_code, 0);
}

// `project watch`: the current records, then one row per committed change (another team's
// left out), a Deleted row; --timeout ends it with exit 0; -o json prints one event per line.
TEST_F(ProjectCliTest, WatchShowsEveryChangeAsARowUntilItsTimeout) {
  ASSERT_EQ(Cli({"create", "watched-before", "--team", "team-w", "--image", "nodered/node-red:4.0"})
                .exit_code,
            0);
  BackgroundProcess watch({StewardBinary(), "project", "watch", "--team", "team-w", "--timeout",
                           "120s", "--server", server_, "--token-file", token_file_});
  auto header = watch.WaitForLine("NAME", seconds(30));
  ASSERT_TRUE(header) << watch.output();
  EXPECT_TRUE(Matches(*header, "^NAME +PHASE +DESIRED +GENERATION +URL +AGE$")) << *header;
  auto before = watch.WaitForLine("watched-before", seconds(30));
  ASSERT_TRUE(before) << watch.output();
  EXPECT_TRUE(Matches(*before, "^watched-before +\\S+ +suspended +1 ")) << *before;

  ASSERT_EQ(
      Cli({"create", "unwatched", "--team", "team-x", "--image", "nodered/node-red:4.0"}).exit_code,
      0);
  RunResult created = Cli({"create", "watched", "--team", "team-w", "--image",
                           "nodered/node-red:4.0", "--start", "--wait", "60s"});
  ASSERT_EQ(created.exit_code, 0) << Describe(created);
  // Rows of `watched` follow its phases until Running, with its URL (the name column is 24
  // wide, then 3 spaces).
  auto running = watch.WaitForLine("watched" + std::string(20, ' ') + "Running", seconds(60));
  ASSERT_TRUE(running) << watch.output();
  EXPECT_TRUE(Matches(*running, "^watched +Running +running +1 +http://watched\\.")) << *running;
  std::vector<std::string> phases;
  std::istringstream rows(watch.output());
  for (std::string row;
       std::getline(rows, row) && (phases.empty() || phases.back() != "Running");) {
    std::smatch m;
    if (!std::regex_search(row, m, std::regex("^watched +(\\S+) +(\\S+) +1 "))) continue;
    phases.push_back(m[1]);
    EXPECT_EQ(m[2], "running") << row;
  }
  ASSERT_GE(phases.size(), 2u) << watch.output();  // a phase before Running, then Running
  EXPECT_NE(phases.front(), "Running") << watch.output();

  ASSERT_EQ(Cli({"delete", "watched", "--wait", "60s"}).exit_code, 0);
  auto deleted = watch.WaitForLine("watched" + std::string(20, ' ') + "Deleted", seconds(30));
  ASSERT_TRUE(deleted) << watch.output();
  EXPECT_TRUE(Matches(*deleted, "^watched +Deleted$")) << *deleted;
  EXPECT_THAT(watch.output(), Not(HasSubstr("unwatched")));
  watch.Stop(SIGTERM);

  RunResult timed = Cli({"watch", "--team", "team-w", "--timeout", "1s"});
  EXPECT_EQ(timed.exit_code, 0) << Describe(timed);
  EXPECT_TRUE(Matches(timed.out, "^NAME .*\\nwatched-before ")) << timed.out;
  EXPECT_GE(timed.elapsed, seconds(1));

  RunResult json = Cli({"watch", "watched-before", "-o", "json", "--timeout", "1s"});
  EXPECT_EQ(json.exit_code, 0) << Describe(json);
  std::istringstream lines(json.out);
  std::vector<Json> events;
  for (std::string line; std::getline(lines, line);) {
    auto j = ParseJson(line);
    ASSERT_TRUE(j.ok()) << line;
    events.push_back(*j);
  }
  ASSERT_EQ(events.size(), 2u) << json.out;
  EXPECT_EQ(events[0]["event"], "project");
  EXPECT_EQ(events[0]["data"]["name"], "watched-before");
  EXPECT_EQ(events[1]["event"], "sync");
  EXPECT_TRUE(events[1]["id"].is_string());

  RunResult bad = Cli({"watch", "-o", "yaml"});
  EXPECT_EQ(bad.exit_code, 2) << Describe(bad);
  EXPECT_THAT(bad.err, HasSubstr("--output: yaml not in {json,wide}"));
  EXPECT_EQ(Cli({"delete", "watched-before", "--wait", "60s"}).exit_code, 0);
  EXPECT_EQ(Cli({"delete", "unwatched", "--wait", "60s"}).exit_code, 0);
}

TEST_F(ProjectCliTest, WrongTokenIsUnauthorized) {
  RunResult r = Cli({"list"}, {"--server", server_, "--token", "not-the-token"});
  EXPECT_EQ(r.exit_code, 5) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("steward: Unauthorized: "));
  // --wait opens the watch first: refused there, and nothing is sent.
  RunResult w =
      Cli({"create", "epsilon", "--team", "t", "--image", "nodered/node-red:4.0", "--wait"},
          {"--server", server_, "--token", "not-the-token"});
  EXPECT_EQ(w.exit_code, 5) << Describe(w);
  EXPECT_THAT(w.err, HasSubstr("Unauthorized"));
  EXPECT_EQ(Cli({"get", "epsilon"}).exit_code, 3);
}

TEST_F(ProjectCliTest, ServerAndTokenFromTheEnvironment) {
  std::ifstream in(token_file_);
  std::string token;
  std::getline(in, token);
  RunResult r = Cli({"list"}, {}, {"STEWARD_SERVER=" + server_, "STEWARD_TOKEN=" + token});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  RunResult none = Cli({"list"}, {"--server", server_});
  EXPECT_EQ(none.exit_code, 2) << Describe(none);
  EXPECT_THAT(none.err, HasSubstr("no API token"));
}

// The API client's watch resumes after the id it last got from the real server: the changes
// it missed, then `resumed`, and no snapshot; an id of another run gets `reset` and the snapshot.
TEST_F(ProjectCliTest, TheApiClientsWatchResumesAfterItsLastEventId) {
  std::ifstream in(token_file_);
  api_client::ApiClientOptions o;
  o.server = server_;
  std::getline(in, o.token);
  auto client = std::move(api_client::ApiClient::Create(o).value());
  const std::string query = "project=resume-probe&kind=all";
  std::vector<api_client::WatchEvent> got;
  auto until = [&](const std::string& last) {
    return [&got, last](const api_client::WatchEvent& e) {
      got.push_back(e);
      return e.event != last;
    };
  };
  ASSERT_TRUE(client->Watch(query, until("sync"), seconds(30)).ok());
  ASSERT_EQ(got.size(), 1u);  // no such project yet
  const std::string synced = client->last_event_id();
  EXPECT_EQ(synced, got.back().id);
  EXPECT_PRED2(Matches, synced, "^[0-9a-f]{32}\\.[0-9]+$");

  RunResult create = Cli({"create", "resume-probe", "--team", "team-r", "--image",
                          "nodered/node-red:4.0", "--wait", "60s"});
  ASSERT_EQ(create.exit_code, 0) << Describe(create);
  got.clear();
  ASSERT_TRUE(client->Watch(query, until("resumed"), seconds(30), synced).ok());
  ASSERT_GE(got.size(), 2u);
  for (size_t i = 0; i + 1 < got.size(); ++i) {
    EXPECT_EQ(got[i].event, "project") << i;
    EXPECT_EQ(GetString(got[i].data, "name"), "resume-probe");
    EXPECT_EQ(got[i].data["version"], static_cast<int64_t>(i + 1));  // every change, in order
  }
  EXPECT_EQ(got.back().data, (Json{{"from", synced}, {"replayed", got.size() - 1}}));
  EXPECT_EQ(client->last_event_id(), got.back().id);

  got.clear();
  ASSERT_TRUE(client->Watch(query, until("sync"), seconds(30), "0000000000000000.1").ok());
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].event, "reset");
  EXPECT_EQ(got[0].data["reason"], "UnknownFeed");
  EXPECT_EQ(GetString(got[1].data, "name"), "resume-probe");
  EXPECT_EQ(got[2].event, "sync");
  EXPECT_EQ(Cli({"delete", "resume-probe", "--wait", "60s"}).exit_code, 0);
}

TEST_F(ProjectCliTest, UnreachableServerExitsSixAndABadUrlTwo) {
  std::string url = "http://127.0.0.1:" + std::to_string(ClosedPort());
  RunResult r = Cli({"get", "alpha"}, {"--server", url, "--token", "x"});
  EXPECT_EQ(r.exit_code, 6) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("steward: cannot reach the Steward API at " + url + ": "));
  RunResult w = Cli({"start", "alpha", "--wait"}, {"--server", url, "--token", "x"});
  EXPECT_EQ(w.exit_code, 6) << Describe(w);
  EXPECT_THAT(w.err, HasSubstr("cannot reach the Steward API at " + url));
  RunResult bad_url = Cli({"list"}, {"--server", "ftp://example", "--token", "x"});
  EXPECT_EQ(bad_url.exit_code, 2) << Describe(bad_url);
  EXPECT_THAT(bad_url.err, HasSubstr("--server"));
}

TEST(CliTest, VersionPrintsTheVersionAndExitsZero) {
  RunResult r = ::steward::e2e::Run({StewardBinary(), "--version"}, "", seconds(30));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, MatchesRegex("steward [0-9]+\\.[0-9]+\\.[0-9]+\n"));
}

TEST(ServeConfigTest, UnknownKeyInTheConfigFileExitsTwoNamingTheKey) {
  TempDir dir;
  std::string config = dir.path() + "/steward.yaml";
  WriteFile(config, "listen: 127.0.0.1:0\nlistenn: 127.0.0.1:0\n");
  RunResult r = ::steward::e2e::Run(
      {StewardBinary(), "serve", "--config", config, "--data-dir", dir.path() + "/data"}, "",
      seconds(30));
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("listenn"));
}

TEST(ServeConfigTest, MissingConfigFileExitsTwo) {
  TempDir dir;
  RunResult r =
      ::steward::e2e::Run({StewardBinary(), "serve", "--config", dir.path() + "/absent.yaml",
                           "--data-dir", dir.path() + "/data"},
                          "", seconds(30));
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("absent.yaml"));
}

TEST(ServeConfigTest, TlsCertificateWithoutKeyExitsTwoNamingTheFlag) {
  TempDir dir;
  RunResult r =
      ::steward::e2e::Run({StewardBinary(), "serve", "--embedded-cluster", "instant", "--data-dir",
                           dir.path() + "/data", "--tls-cert-file", dir.path() + "/tls.crt"},
                          "", seconds(30));
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("--tls-cert-file: needs --tls-key-file"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/data")) << "nothing may start";
}

// The client's pieces that need no server.

TEST(CliSseParserTest, SplitsEventsAcrossChunksAndSkipsComments) {
  api_client::SseParser parser;
  std::vector<api_client::WatchEvent> got;
  Status status;
  auto collect = [&](const api_client::WatchEvent& e) {
    got.push_back(e);
    return true;
  };
  EXPECT_TRUE(parser.Feed(": keep-alive\n\nevent: project\nid: 4", collect, &status));
  EXPECT_TRUE(got.empty());
  EXPECT_TRUE(parser.Feed("2\r\ndata: {\"name\":\ndata: \"a\"}\n\nevent: sync\ndata: {}\n\n",
                          collect, &status));
  ASSERT_TRUE(status.ok()) << status.ToString();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].event, "project");
  EXPECT_EQ(got[0].id, "42");
  EXPECT_EQ(got[0].data["name"], "a");
  EXPECT_EQ(got[1].event, "sync");
}

// The last event id as an EventSource keeps it, to resume from: set by an event's id once the
// event is complete, kept by events without one, cleared by an empty id, never set with a NUL.
TEST(CliSseParserTest, KeepsTheLastEventIdAsTheStandardSays) {
  api_client::SseParser parser("b.1");
  Status status;
  std::vector<std::string> ids;
  auto collect = [&](const api_client::WatchEvent& e) {
    ids.push_back(e.id);
    return true;
  };
  EXPECT_EQ(parser.last_event_id(), "b.1");
  EXPECT_TRUE(parser.Feed("event: project\nid: b.2\ndata: {}\n\nevent: sync\ndata: {}\n\n", collect,
                          &status));
  EXPECT_EQ(parser.last_event_id(), "b.2");
  EXPECT_TRUE(parser.Feed("event: project\nid: b.3\ndata: {}\n", collect, &status));
  EXPECT_EQ(parser.last_event_id(), "b.2") << "not before the event is complete";
  using namespace std::string_view_literals;
  EXPECT_TRUE(parser.Feed("\nid: b\0.4\ndata: {}\n\n"sv, collect, &status));
  EXPECT_EQ(parser.last_event_id(), "b.3");
  EXPECT_TRUE(parser.Feed("event: reset\nid\ndata: {}\n\n", collect, &status));
  EXPECT_EQ(parser.last_event_id(), "");
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(ids, (std::vector<std::string>{"b.2", "", "b.3", std::string("b\0.4", 4), ""}));
}

TEST(CliSseParserTest, StopsWhenAskedAndNamesBadData) {
  api_client::SseParser parser;
  Status status;
  int seen = 0;
  EXPECT_FALSE(parser.Feed(
      "data: 1\n\ndata: 2\n\n", [&](const api_client::WatchEvent&) { return ++seen < 1; },
      &status));
  EXPECT_EQ(seen, 1);
  api_client::SseParser bad;
  EXPECT_FALSE(bad.Feed(
      "event: project\nid: 7\ndata: {oops\n\n", [](const api_client::WatchEvent&) { return true; },
      &status));
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("watch event project id 7"));
}

TEST(CliParseDurationTest, AcceptsTheApiSyntaxOnly) {
  EXPECT_EQ(*api_client::ParseDuration("30s"), std::chrono::milliseconds(30000));
  EXPECT_EQ(*api_client::ParseDuration("2m"), std::chrono::milliseconds(120000));
  EXPECT_EQ(*api_client::ParseDuration("1500ms"), std::chrono::milliseconds(1500));
  EXPECT_EQ(*api_client::ParseDuration("1.5"), std::chrono::milliseconds(1500));
  EXPECT_EQ(*api_client::ParseDuration("1h"), std::chrono::milliseconds(3600000));
  for (const char* bad : {"", "s", "0", "-1s", "5x", "abc", "1e400"}) {
    auto d = api_client::ParseDuration(bad);
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_EQ(d.error().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(d.error().message(), HasSubstr("is not a duration"));
  }
}

TEST(CliApiClientTest, RefusesServerUrlsItCannotUse) {
  for (const char* bad : {"127.0.0.1:8080", "http://", "http://host:port", "http://h/api",
                          "http://h:0", "http://[::1"}) {
    api_client::ApiClientOptions o;
    o.server = bad;
    auto c = api_client::ApiClient::Create(o);
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_THAT(c.error().message(), HasSubstr("--server")) << bad;
  }
  api_client::ApiClientOptions o;
  o.server = "https://[::1]:8443/";
  auto c = api_client::ApiClient::Create(o);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->server(), "https://[::1]:8443");
}

// A stand-in API server: answers every request with `respond`, records what it was sent.
class FakeApi : public net::Handler {
 public:
  using Responder =
      std::function<void(const net::HttpRequest&, std::shared_ptr<net::ResponseWriter>)>;
  explicit FakeApi(Responder respond) : respond_(std::move(respond)) {
    server_ = std::move(net::HttpServer::Start({}, *this).value());
  }
  ~FakeApi() override { server_->Stop(); }
  void Handle(net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer) override {
    {
      MutexLock lock(mu_);
      requests_.push_back(request);
    }
    respond_(request, std::move(writer));
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()); }
  std::vector<net::HttpRequest> requests() {
    MutexLock lock(mu_);
    return requests_;
  }

 private:
  Responder respond_;
  Mutex mu_;
  std::vector<net::HttpRequest> requests_ GUARDED_BY(mu_);
  std::unique_ptr<net::HttpServer> server_;
};

std::unique_ptr<api_client::ApiClient> ClientFor(const FakeApi& api) {
  api_client::ApiClientOptions o;
  o.server = api.url();
  o.token = "tok";
  o.timeout = std::chrono::seconds(10);
  return std::move(api_client::ApiClient::Create(o).value());
}

net::HttpResponse Answer(int status, std::string body) {
  net::HttpResponse r;
  r.status = status;
  r.headers.Set("Content-Type", "application/json");
  r.body = std::move(body);
  return r;
}

TEST(CliApiClientTest, SendsTokenAndJsonAndDecodesTheAnswer) {
  FakeApi api([](const net::HttpRequest&, std::shared_ptr<net::ResponseWriter> w) {
    w->Send(Answer(201, R"({"name": "a", "generation": 1})"));
  });
  auto client = ClientFor(api);
  auto answer = client->Put("/v1/projects/a", Json{{"spec", {{"team", "t"}}}});
  ASSERT_TRUE(answer.ok()) << answer.error().ToString();
  EXPECT_EQ((*answer)["generation"], 1);
  auto seen = api.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "PUT");
  EXPECT_EQ(seen[0].path, "/v1/projects/a");
  EXPECT_EQ(seen[0].headers.Get("Authorization"), "Bearer tok");
  EXPECT_EQ(seen[0].headers.Get("Content-Type"), "application/json");
  EXPECT_EQ(ParseJson(seen[0].body).value()["spec"]["team"], "t");
}

TEST(CliApiClientTest, MapsErrorBodiesToReasonAndMessage) {
  FakeApi api([](const net::HttpRequest& r, std::shared_ptr<net::ResponseWriter> w) {
    if (r.path == "/conflict") {
      w->Send(Answer(409, R"({"error": {"code": 409, "reason": "Conflict", "message": )"
                          R"("project a is being deleted"}})"));
    } else if (r.path == "/field") {
      w->Send(Answer(400, R"({"error": {"code": 400, "reason": "InvalidArgument", "message": )"
                          R"("spec.foo: unknown field", "field": "spec.foo"}})"));
    } else {
      net::HttpResponse plain;
      plain.status = 502;
      plain.body = "upstream broke\n";
      w->Send(plain);
    }
  });
  auto client = ClientFor(api);
  auto conflict = client->Post("/conflict");
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(conflict.error().message(), "Conflict: project a is being deleted");
  EXPECT_EQ(client->last_error().http_status, 409);
  auto field = client->Get("/field");
  ASSERT_FALSE(field.ok());
  EXPECT_EQ(field.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(client->last_error().field, "spec.foo");
  auto plain = client->Get("/other");
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.error().code(), StatusCode::kInternal);
  EXPECT_EQ(plain.error().message(), "HTTP502: upstream broke");
}

TEST(CliApiClientTest, WatchDeliversEventsInOrderAndStopsWhenAsked) {
  FakeApi api([](const net::HttpRequest& r, std::shared_ptr<net::ResponseWriter> w) {
    if (r.headers.Get("Authorization") != "Bearer tok") {
      w->Send(Answer(401, R"({"error": {"code": 401, "reason": "Unauthorized", "message": )"
                          R"("bad token"}})"));
      return;
    }
    net::Headers h;
    h.Set("Content-Type", "text/event-stream");
    w->BeginStream(200, std::move(h));
    w->Write(": keep-alive\n\nevent: project\nid: 1\nda");
    w->Write("ta: {\"name\": \"a\"}\n\nevent: sync\ndata: {\"projects\": 1}\n\n");
    if (r.Query("end") == "1") {
      w->End();
      return;
    }
    // Left open: the client must stop by itself.
    w->OnClose([w] {});
  });
  auto client = ClientFor(api);
  std::vector<std::string> seen;
  Status s = client->Watch(
      "team=t",
      [&](const api_client::WatchEvent& e) {
        seen.push_back(e.event + "/" + e.id + "/" + GetString(e.data, "name"));
        return e.event != "sync";
      },
      std::chrono::seconds(10));
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_THAT(seen, ElementsAre("project/1/a", "sync//"));
  EXPECT_EQ(api.requests().back().target, "/v1/watch?team=t");

  seen.clear();
  Status ended = client->Watch(
      "end=1",
      [&](const api_client::WatchEvent& e) {
        seen.push_back(e.event);
        return true;
      },
      std::chrono::seconds(10));
  EXPECT_EQ(ended.code(), StatusCode::kUnavailable) << ended.ToString();
  EXPECT_THAT(ended.message(), HasSubstr("ended"));
  EXPECT_THAT(seen, ElementsAre("project", "sync"));

  api_client::ApiClientOptions o;
  o.server = api.url();
  o.token = "wrong";
  auto stranger = std::move(api_client::ApiClient::Create(o).value());
  Status refused = stranger->Watch(
      "", [](const api_client::WatchEvent&) { return true; }, std::chrono::seconds(10));
  EXPECT_EQ(refused.code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(refused.message(), "Unauthorized: bad token");
  EXPECT_EQ(stranger->last_error().http_status, 401);
}

}  // namespace
}  // namespace steward::e2e
