// `steward demo`: the engine, the store and the embedded cluster in one process, run as a user
// runs it — projects reach Running, their URLs answer, a second run adopts them, errors are named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "common/json.h"
#include "net/http_client.h"
#include "process.h"
#include "test_support/eventually.h"
#include "test_support/held_port.h"
#include "test_support/private_files.h"

namespace steward::e2e {
namespace {

using std::chrono::seconds;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

std::vector<std::string> DemoArgv(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {StewardBinary(), "demo"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

RunResult RunDemo(const std::vector<std::string>& args, seconds timeout = seconds(90)) {
  return ::steward::e2e::Run(DemoArgv(args), "", timeout);
}

std::string Describe(const RunResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout: " + r.out + "\nstderr: " + r.err;
}

// The summary row of a Running project with its URL through this run's ingress listener.
std::string SummaryRow(const std::string& name, const std::string& out) {
  std::smatch m;
  std::regex_search(out, m, std::regex(R"(Ingress +http://127\.0\.0\.1:([0-9]+))"));
  return "\n  " + name + " +Running +http://" + name + "\\.localhost:" + m[1].str() + "/ +[0-9.]+s";
}

void ExpectNoErrors(const RunResult& r) {
  EXPECT_THAT(r.err, Not(HasSubstr(" error "))) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr(" critical "))) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("steward demo:"))) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("Failed"))) << r.out;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The ports a demo's header printed.
struct DemoPorts {
  uint16_t cluster = 0, ingress = 0, api = 0;
};

DemoPorts PortsIn(const std::string& out) {
  auto find = [&](const char* re) -> uint16_t {
    std::smatch m;
    if (!std::regex_search(out, m, std::regex(re))) return 0;
    return static_cast<uint16_t>(std::stoi(m[1].str()));
  };
  return {find(R"(API server +https://127\.0\.0\.1:([0-9]+))"),
          find(R"(Ingress +http://127\.0\.0\.1:([0-9]+))"),
          find(R"(Steward API +http://127\.0\.0\.1:([0-9]+))")};
}

// GET on the API server of the embedded cluster a demo runs on `data_dir`, with its CA and token.
HttpAnswer ClusterGet(const std::string& data_dir, uint16_t port, const std::string& path) {
  net::HttpClient::Options o;
  o.port = port;
  o.tls = true;
  o.ca_pem = ReadAll(data_dir + "/cluster/ca.crt");
  o.bearer_token = ReadAll(data_dir + "/cluster/token");
  while (!o.bearer_token.empty() && o.bearer_token.back() == '\n') o.bearer_token.pop_back();
  auto r = net::HttpClient::Create(o)->Request("GET", path);
  if (!r.ok()) return {};
  return {r->status, r->body};
}

// Every Deployment of the demo's namespace: name → its generation, resourceVersion and template.
std::map<std::string, std::string> Deployments(const std::string& data_dir, uint16_t port) {
  std::map<std::string, std::string> out;
  HttpAnswer a = ClusterGet(data_dir, port, "/apis/apps/v1/namespaces/steward/deployments");
  auto list = ParseJson(a.body);
  if (a.status != 200 || !list.ok()) return out;
  for (const Json& d : (*list)["items"]) {
    const Json& m = d["metadata"];
    out[m["name"].get<std::string>()] = "generation " + DumpJson(m["generation"]) +
                                        " resourceVersion " + DumpJson(m["resourceVersion"]) +
                                        " template " + DumpJson(d["spec"]["template"]);
  }
  return out;
}

// The API server's apiserver_request_total samples of requests that are not reads (create,
// update, patch, delete, whatever their answer), with a count above 0.
std::vector<std::string> NonReadRequests(const std::string& metrics) {
  std::vector<std::string> out;
  std::regex re(R"re(apiserver_request_total\{[^}]*verb="([A-Z]+)"\} ([0-9]+))re");
  for (auto it = std::sregex_iterator(metrics.begin(), metrics.end(), re);
       it != std::sregex_iterator(); ++it) {
    const std::string verb = (*it)[1];
    if (verb != "GET" && verb != "LIST" && verb != "WATCH" && (*it)[2] != "0") {
      out.push_back(it->str());
    }
  }
  return out;
}

// The sum of a Prometheus metric's samples over all its label sets.
double MetricSum(const std::string& text, const std::string& name) {
  double sum = 0;
  std::regex re("(^|\n)" + name + R"((\{[^}]*\})? ([0-9.e+-]+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    sum += std::stod((*it)[3]);
  }
  return sum;
}

TEST(DemoTest, TwoProjectsReachRunningAndASecondRunAdoptsThem) {
  TempDir dir;
  const std::vector<std::string> args = {"--profile",  "instant",   "--exit-when-running",
                                         "--projects", "2",         "--data-dir",
                                         dir.path(),   "--timeout", "60"};
  RunResult first = RunDemo(args, seconds(90));
  ASSERT_EQ(first.exit_code, 0) << Describe(first);
  EXPECT_THAT(first.out, HasSubstr("Created alpha"));
  EXPECT_THAT(first.out, HasSubstr("Created beta"));
  EXPECT_THAT(first.out, Not(HasSubstr("gamma")));
  EXPECT_THAT(first.out, ContainsRegex(R"(\+[0-9.]+s alpha +Running +Running: )"));
  EXPECT_THAT(first.out, ContainsRegex(SummaryRow("alpha", first.out)));
  EXPECT_THAT(first.out, ContainsRegex(SummaryRow("beta", first.out)));
  EXPECT_EQ(Urls(first.out).size(), 2u) << first.out;
  EXPECT_THAT(first.out, ContainsRegex(R"(Dashboard:  http://127\.0\.0\.1:[0-9]+/ui \(sign in )"
                                       R"(with the token in /)"));
  EXPECT_THAT(first.out, HasSubstr("Stopped"));
  ExpectNoErrors(first);
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/steward.db"));

  RunResult second = RunDemo(args, seconds(90));
  ASSERT_EQ(second.exit_code, 0) << Describe(second);
  EXPECT_THAT(second.out, HasSubstr("Adopted stored project alpha"));
  EXPECT_THAT(second.out, HasSubstr("Adopted stored project beta"));
  EXPECT_THAT(second.out, Not(HasSubstr("Created")));
  // Adopted as they stand: nothing was provisioned again.
  EXPECT_THAT(second.out, Not(HasSubstr("Provisioning")));
  EXPECT_THAT(second.out, ContainsRegex(SummaryRow("alpha", second.out)));
  EXPECT_THAT(second.out, ContainsRegex(SummaryRow("beta", second.out)));
  ExpectNoErrors(second);
}

TEST(DemoTest, TwoClustersEachServeTheProjectsPlacedOnThem) {
  TempDir dir;
  RunResult run = RunDemo({"--profile", "instant", "--exit-when-running", "--clusters", "2",
                           "--projects", "3", "--data-dir", dir.path(), "--timeout", "60"},
                          seconds(90));
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  // Each cluster has its own API server and ingress listener.
  std::smatch east, west;
  ASSERT_TRUE(std::regex_search(run.out, east,
                                std::regex(R"(Ingress +http://127\.0\.0\.1:([0-9]+) \(east\))")))
      << run.out;
  ASSERT_TRUE(std::regex_search(run.out, west,
                                std::regex(R"(Ingress +http://127\.0\.0\.1:([0-9]+) \(west\))")))
      << run.out;
  EXPECT_NE(east[1].str(), west[1].str());
  // Placed least loaded first, in order: alpha east, beta west, gamma east; each Running at
  // its own cluster's ingress (the demo asked each URL before it printed the table).
  auto row = [&](const std::string& name, const std::string& cluster, const std::string& port) {
    return "\n  " + name + " +" + cluster + " +Running +http://" + name + "\\.localhost:" + port +
           "/ +[0-9.]+s";
  };
  EXPECT_THAT(run.out, ContainsRegex(row("alpha", "east", east[1].str())));
  EXPECT_THAT(run.out, ContainsRegex(row("beta", "west", west[1].str())));
  EXPECT_THAT(run.out, ContainsRegex(row("gamma", "east", east[1].str())));
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() + "/clusters/east"));
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() + "/clusters/west"));
  ExpectNoErrors(run);
  // More than the demo has names for is refused naming the flag.
  RunResult refused = RunDemo({"--clusters", "9", "--data-dir", dir.path()}, seconds(30));
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.err, HasSubstr("--clusters: must be between 1 and 4"));
}

TEST(DemoTest, RealisticProfileServesTheUrlsAndStopsCleanlyOnSigint) {
  TempDir dir;
  const std::string kubeconfig = dir.path() + "/kubeconfig";
  BackgroundProcess demo(DemoArgv(
      {"--projects", "2", "--data-dir", dir.path() + "/state", "--kubeconfig-out", kubeconfig}));
  ASSERT_TRUE(demo.WaitForLine("Stop:", seconds(60))) << demo.output();
  const std::string out = demo.output();
  // The live view showed the way there, not only the end.
  EXPECT_THAT(out, ContainsRegex(R"(alpha +Provisioning +Waiting)"));
  EXPECT_THAT(out, ContainsRegex(SummaryRow("alpha", out)));
  EXPECT_THAT(out, ContainsRegex(SummaryRow("beta", out)));
  EXPECT_THAT(out, HasSubstr("kubectl --kubeconfig " + kubeconfig));
  EXPECT_TRUE(std::filesystem::exists(kubeconfig));

  auto urls = Urls(out);
  ASSERT_EQ(urls.count("beta"), 1u) << out;
  const uint16_t port = urls["beta"];
  HttpAnswer answer = HttpGet(port, "beta.localhost:" + std::to_string(port), "/");
  EXPECT_EQ(answer.status, 200) << answer.body;
  EXPECT_THAT(answer.body, HasSubstr("flowfuse/node-red:4.0"));
  // A host no project has is not routed: the answer above came from beta's own Ingress.
  EXPECT_EQ(HttpGet(port, "nobody.localhost", "/").status, 404);

  EXPECT_EQ(demo.Stop(SIGINT, seconds(10)), 0) << demo.output();
  EXPECT_THAT(demo.output(), HasSubstr("Received SIGINT, stopping"));
  EXPECT_THAT(demo.output(), HasSubstr("Stopped"));
}

TEST(DemoTest, ProjectsThatNeverRunTimeOutWithExitSevenNamingThem) {
  TempDir dir;
  const std::string profile = dir.path() + "/never-ready.yaml";
  std::ofstream(profile) << "base: instant\npod_ready: {fixed_ms: 600000}\n";
  RunResult r = RunDemo({"--profile", profile, "--exit-when-running", "--projects", "1",
                         "--data-dir", dir.path() + "/state", "--timeout", "2"},
                        seconds(60));
  EXPECT_EQ(r.exit_code, 7) << Describe(r);  // timeout (src/cli/exit_codes.h)
  EXPECT_THAT(r.out, HasSubstr("Timed out after 2s: alpha Provisioning"));
  EXPECT_THAT(r.out, Not(HasSubstr("All 1 projects are Running")));
}

TEST(DemoTest, UnknownProfileIsNamedWithExitTwo) {
  RunResult r = RunDemo({"--profile", "no-such-profile", "--exit-when-running"}, seconds(30));
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("steward demo: --profile: "));
  EXPECT_THAT(r.err, HasSubstr("no-such-profile"));
}

TEST(DemoTest, DataDirThatIsAFileIsNamedWithExitTwo) {
  TempDir dir;
  const std::string file = dir.path() + "/not-a-dir";
  std::ofstream(file) << "x";
  RunResult r =
      RunDemo({"--profile", "instant", "--exit-when-running", "--data-dir", file}, seconds(30));
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("steward demo: "));
  EXPECT_THAT(r.err, HasSubstr(file));
}

TEST(DemoTest, IngressPortInUseIsNamedWithExitTwo) {
  // The port stays taken for the whole run.
  test_support::HeldPort taken;
  ASSERT_NE(taken.port(), 0);
  const std::string port = std::to_string(taken.port());
  TempDir dir;
  RunResult r = RunDemo({"--profile", "instant", "--exit-when-running", "--data-dir", dir.path(),
                         "--ingress-listen", taken.address()},
                        seconds(30));
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("steward demo: "));
  EXPECT_THAT(r.err, HasSubstr(port));
}

// The project URLs carry the ingress port: a second run on the same data dir must keep it (and
// the API ports of the printed hints), adopt what runs, and write nothing to the cluster.
TEST(DemoTest, ASecondRunOnTheSameDataDirKeepsItsPortsAndWritesNothingToTheCluster) {
  TempDir dir;
  const std::string state = dir.path() + "/state";
  const std::vector<std::string> args = {"--profile", "instant",    "--projects",
                                         "2",         "--data-dir", state};
  DemoPorts first_ports;
  std::map<std::string, std::string> before;
  {
    BackgroundProcess first(DemoArgv(args));
    ASSERT_TRUE(first.WaitForLine("Stop:", seconds(60))) << first.output();
    first_ports = PortsIn(first.output());
    ASSERT_NE(first_ports.cluster, 0) << first.output();
    before = Deployments(state, first_ports.cluster);
    ASSERT_EQ(before.size(), 2u) << first.output();
    EXPECT_EQ(first.Stop(SIGINT, seconds(10)), 0) << first.output();
  }
  EXPECT_EQ(test_support::ModeOf(state + "/demo-ports.json"), 0600);

  BackgroundProcess second(DemoArgv(args));
  ASSERT_TRUE(second.WaitForLine("Stop:", seconds(60))) << second.output();
  const std::string out = second.output();
  EXPECT_THAT(out, HasSubstr("Adopted stored project alpha"));
  EXPECT_THAT(out, HasSubstr("Adopted stored project beta"));
  const DemoPorts ports = PortsIn(out);
  EXPECT_EQ(ports.ingress, first_ports.ingress) << out;
  EXPECT_EQ(ports.cluster, first_ports.cluster) << out;
  EXPECT_EQ(ports.api, first_ports.api) << out;
  EXPECT_EQ(Urls(out)["alpha"], first_ports.ingress) << out;

  // Once the engine's adoption pass is over (every stored project reconciled, nothing queued),
  // nothing but reads was sent to the cluster: its request counter counts this process only.
  std::string steward_metrics;
  ASSERT_TRUE(test_support::Eventually(
      [&] {
        steward_metrics = HttpGet(ports.api, "127.0.0.1", "/metrics").body;
        return MetricSum(steward_metrics, "steward_reconciles_total") >= 2 &&
               steward_metrics.find("\nsteward_workqueue_depth{cluster=\"default\"} 0\n") !=
                   std::string::npos;
      },
      seconds(30)))
      << steward_metrics;
  EXPECT_EQ(MetricSum(steward_metrics, "steward_kube_writes_total"), 0) << steward_metrics;
  HttpAnswer metrics = ClusterGet(state, ports.cluster, "/metrics");
  ASSERT_EQ(metrics.status, 200) << metrics.body;
  EXPECT_THAT(metrics.body, ContainsRegex("verb=\"LIST\"\\} [1-9]"));  // it counts this run's
  EXPECT_THAT(NonReadRequests(metrics.body), IsEmpty()) << metrics.body;
  EXPECT_EQ(Deployments(state, ports.cluster), before);
  EXPECT_EQ(second.Stop(SIGINT, seconds(10)), 0) << second.output();
}

TEST(DemoTest, ARememberedPortThatIsTakenIsNamedAndAFlagWinsOverIt) {
  TempDir dir;
  test_support::HeldPort ingress, api;
  ASSERT_NE(ingress.port(), 0);
  ASSERT_NE(api.port(), 0);
  const std::string ports_file = dir.path() + "/demo-ports.json";
  std::ofstream(ports_file) << DumpJson(Json{{"listen", "127.0.0.1:0"},
                                             {"apiListen", api.address()},
                                             {"ingressListen", ingress.address()}});
  const std::vector<std::string> args = {"--profile",  "instant",   "--exit-when-running",
                                         "--projects", "1",         "--data-dir",
                                         dir.path(),   "--timeout", "60"};
  // The ingress port is in every project's URL: taking another one is the user's decision.
  RunResult refused = RunDemo(args, seconds(30));
  EXPECT_EQ(refused.exit_code, 2) << Describe(refused);
  EXPECT_THAT(refused.err, HasSubstr("steward demo: the ingress address " + ingress.address() +
                                     " that " + ports_file + " remembers is in use"));
  EXPECT_THAT(refused.err, HasSubstr("pass --ingress-listen 127.0.0.1:0 to take a new one"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/steward.db"));  // refused before starting

  // An explicit flag wins; a taken API port is replaced, with a warning.
  std::vector<std::string> with_flag = args;
  with_flag.insert(with_flag.end(), {"--ingress-listen", "127.0.0.1:0"});
  RunResult ran = RunDemo(with_flag, seconds(90));
  ASSERT_EQ(ran.exit_code, 0) << Describe(ran);
  EXPECT_THAT(ran.err, HasSubstr("--api-listen " + api.address() + " (remembered in " + ports_file +
                                 ") is in use: taking a free port instead"));
  const DemoPorts ports = PortsIn(ran.out);
  EXPECT_NE(ports.ingress, 0);
  EXPECT_NE(ports.ingress, ingress.port());
  EXPECT_NE(ports.api, api.port());
  // What this run used is what the next one takes.
  auto remembered = ParseJson(ReadAll(ports_file));
  ASSERT_TRUE(remembered.ok());
  EXPECT_EQ((*remembered)["ingressListen"], "127.0.0.1:" + std::to_string(ports.ingress));
  EXPECT_EQ((*remembered)["apiListen"], "127.0.0.1:" + std::to_string(ports.api));
  EXPECT_EQ((*remembered)["listen"], "127.0.0.1:" + std::to_string(ports.cluster));
}

}  // namespace
}  // namespace steward::e2e
