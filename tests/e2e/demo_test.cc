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

#include "process.h"
#include "test_support/held_port.h"

namespace steward::e2e {
namespace {

using std::chrono::seconds;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
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

// Every "http://NAME.localhost:PORT/" in `text`: name → port.
std::map<std::string, uint16_t> Urls(const std::string& text) {
  std::map<std::string, uint16_t> urls;
  std::regex re(R"(http://([a-z0-9-]+)\.localhost:(\d+)/)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    urls[(*it)[1]] = static_cast<uint16_t>(std::stoi((*it)[2]));
  }
  return urls;
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

TEST(DemoTest, ProjectsThatNeverRunTimeOutWithExitOneNamingThem) {
  TempDir dir;
  const std::string profile = dir.path() + "/never-ready.yaml";
  std::ofstream(profile) << "base: instant\npod_ready: {fixed_ms: 600000}\n";
  RunResult r = RunDemo({"--profile", profile, "--exit-when-running", "--projects", "1",
                         "--data-dir", dir.path() + "/state", "--timeout", "2"},
                        seconds(60));
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
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

}  // namespace
}  // namespace steward::e2e
