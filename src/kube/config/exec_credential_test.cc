#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "common/base64.h"
#include "common/time_util.h"
#include "kube/config/credential_providers.h"
#include "kube/config/kubeconfig.h"
#include "kube/config/test_util.h"

namespace steward::kube {
namespace {

using test_util::CountLines;
using test_util::kCaPem;
using test_util::kCertPem;
using test_util::kKeyPem;
using test_util::ReadAll;
using test_util::TempDir;
using ::testing::HasSubstr;

const std::string kV1(kExecApiV1);
const std::string kV1Beta1(kExecApiV1Beta1);

std::string CredentialJson(const std::string& api, const Json& status) {
  return DumpJson({{"apiVersion", api}, {"kind", "ExecCredential"}, {"status", status}});
}

struct ExecTest : ::testing::Test {
  TempDir dir;
  FakeClock clock;
  CredentialOptions options;
  std::string counter;
  ExecTest() {
    options.clock = &clock;
    options.exec_timeout = std::chrono::seconds(10);
    options.exec_refresh_margin = std::chrono::seconds(10);
    counter = dir.Path("count");
  }

  // A plugin that counts its runs, then runs `body` (shell), then prints `output`.
  std::string Plugin(const std::string& output, const std::string& body = "") {
    return dir.Write("plugin.sh",
                     "#!/bin/sh\necho run >> '" + counter + "'\n" + body +
                         "\ncat <<'END_OF_JSON'\n" + output + "\nEND_OF_JSON\n",
                     0755);
  }

  ExecPluginConfig Config(const std::string& command, const std::string& api = kV1) {
    ExecPluginConfig c;
    c.command = command;
    c.api_version = api;
    c.interactive_mode = "Never";
    return c;
  }

  std::shared_ptr<ExecCredentialProvider> Provider(ExecPluginConfig c) {
    auto p = ExecCredentialProvider::Create(std::move(c), options);
    EXPECT_TRUE(p.ok()) << p.error().message();
    return p.ok() ? *p : nullptr;
  }

  int Runs() { return CountLines(counter); }
};

std::string TokenOf(CredentialProvider& p) {
  auto c = p.Get();
  return c.ok() ? c->bearer_token : "<error: " + c.error().message() + ">";
}

TEST_F(ExecTest, CachedUntilShortlyBeforeExpiry) {
  std::string expiry = FormatRfc3339(clock.WallNow() + std::chrono::seconds(60));
  auto p = Provider(
      Config(Plugin(CredentialJson(kV1, {{"token", "tok-1"}, {"expirationTimestamp", expiry}}))));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(TokenOf(*p), "tok-1");
  EXPECT_EQ(Runs(), 1);
  auto c = p->Get();
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c->expiry.has_value());
  EXPECT_EQ(FormatRfc3339(*c->expiry), expiry);
  clock.Advance(std::chrono::seconds(45));
  EXPECT_EQ(TokenOf(*p), "tok-1");
  EXPECT_EQ(Runs(), 1);
  clock.Advance(std::chrono::seconds(6));  // 51 s: inside the 10 s refresh margin
  EXPECT_EQ(TokenOf(*p), "tok-1");
  EXPECT_EQ(Runs(), 2);
}

TEST_F(ExecTest, NoExpiryCachedUntilInvalidate) {
  auto p = Provider(Config(Plugin(CredentialJson(kV1, {{"token", "tok"}}))));
  EXPECT_EQ(TokenOf(*p), "tok");
  clock.Advance(std::chrono::hours(24));
  EXPECT_EQ(TokenOf(*p), "tok");
  EXPECT_EQ(Runs(), 1);
  p->Invalidate();  // a 401
  EXPECT_EQ(TokenOf(*p), "tok");
  EXPECT_EQ(Runs(), 2);
  EXPECT_EQ(TokenOf(*p), "tok");
  EXPECT_EQ(Runs(), 2);
}

TEST_F(ExecTest, ExpiredCredentialIsUsedOnceAndRerun) {
  std::string expiry = FormatRfc3339(clock.WallNow() - std::chrono::seconds(1));
  auto p = Provider(
      Config(Plugin(CredentialJson(kV1, {{"token", "old"}, {"expirationTimestamp", expiry}}))));
  EXPECT_EQ(TokenOf(*p), "old");
  EXPECT_EQ(TokenOf(*p), "old");
  EXPECT_EQ(Runs(), 2);
}

TEST_F(ExecTest, ClientCertificateWithV1Beta1) {
  ExecPluginConfig c = Config(Plugin(CredentialJson(kV1Beta1, {{"clientCertificateData", kCertPem},
                                                               {"clientKeyData", kKeyPem}})),
                              kV1Beta1);
  c.interactive_mode = "";  // defaults to IfAvailable for v1beta1
  auto p = Provider(c);
  auto creds = p->Get();
  ASSERT_TRUE(creds.ok()) << creds.error().message();
  EXPECT_EQ(creds->client_cert_pem, kCertPem);
  EXPECT_EQ(creds->client_key_pem, kKeyPem);
  EXPECT_TRUE(creds->bearer_token.empty());
  EXPECT_FALSE(creds->expiry.has_value());
}

TEST_F(ExecTest, FailingPluginReportsExitStatusAndStderr) {
  std::string cmd = Plugin("", "echo 'error: no credentials for profile dev' >&2\nexit 3");
  auto p = Provider(Config(cmd));
  auto c = p->Get();
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code(), StatusCode::kUnauthenticated);
  EXPECT_THAT(c.error().message(), HasSubstr("exec plugin " + cmd + ": exited with status 3"));
  EXPECT_THAT(c.error().message(), HasSubstr("error: no credentials for profile dev"));
  // Failures are not cached: once the plugin works, Get() succeeds.
  Plugin(CredentialJson(kV1, {{"token", "fixed"}}));
  EXPECT_EQ(TokenOf(*p), "fixed");
}

TEST_F(ExecTest, TimeoutKillsThePluginAndItsChildren) {
  options.exec_timeout = Millis(300);
  std::string pidfile = dir.Path("sleeper.pid");
  std::string cmd = Plugin("{}", "sleep 30 &\necho $! > '" + pidfile + "'\nwait");
  auto p = Provider(Config(cmd));
  auto start = std::chrono::steady_clock::now();
  auto c = p->Get();
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code(), StatusCode::kUnauthenticated);
  EXPECT_THAT(c.error().message(), HasSubstr("exec plugin " + cmd));
  EXPECT_THAT(c.error().message(), HasSubstr("did not finish within 300 ms"));
  EXPECT_LT(took, std::chrono::seconds(3));
  // The grandchild (sleep) was in the plugin's process group and was killed too.
  std::string pid = test_util::ReadAll(pidfile);
  while (!pid.empty() && pid.back() == '\n') pid.pop_back();
  ASSERT_FALSE(pid.empty());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  bool gone = false;
  while (!gone && std::chrono::steady_clock::now() < deadline) {
    std::string stat = ReadAll("/proc/" + pid + "/stat");
    // Gone, or a zombie waiting for a reaper: either way no longer running.
    gone = stat.empty() || stat.find(") Z ") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(Millis(10));
  }
  EXPECT_TRUE(gone) << "sleep " << pid << " still running";
}

TEST_F(ExecTest, MissingCommandShowsTheInstallHint) {
  ExecPluginConfig c = Config(dir.Path("no-such-plugin"));
  c.install_hint = "Install it with: brew install no-such-plugin";
  auto p = Provider(c);
  auto r = p->Get();
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message(), HasSubstr("exec plugin " + dir.Path("no-such-plugin")));
  EXPECT_THAT(r.error().message(), HasSubstr("not found"));
  EXPECT_THAT(r.error().message(), HasSubstr("brew install no-such-plugin"));
  ExecPluginConfig in_path = Config("steward-no-such-plugin-in-path");
  EXPECT_THAT(Provider(in_path)->Get().error().message(), HasSubstr("not found"));
}

TEST_F(ExecTest, BadOutputThroughTheRunner) {
  std::string cmd = Plugin("this is not json");
  auto r = Provider(Config(cmd))->Get();
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message(),
              HasSubstr("exec plugin " + cmd + ": output is not an ExecCredential"));
}

TEST_F(ExecTest, ArgsEnvAndExecInfoWithoutAShell) {
  std::string record = dir.Path("record");
  std::string info = dir.Path("info");
  std::string pwned = dir.Path("pwned");
  std::string cmd = Plugin(CredentialJson(kV1, {{"token", "t"}}),
                           "printf '%s|%s|%s|%s' \"$1\" \"$2\" \"$FOO\" \"$HOME\" > '" + record +
                               "'\nprintf '%s' \"$KUBERNETES_EXEC_INFO\" > '" + info + "'");
  ExecPluginConfig c = Config(cmd);
  c.args = {"--region=eu west", "$(touch " + pwned + "); echo"};
  c.env = {{"FOO", "bar"}, {"HOME", "/custom-home"}};
  c.provide_cluster_info = true;
  c.cluster = {{"server", "https://10.0.0.1:6443"}, {"config", {{"audience", "steward"}}}};
  ASSERT_EQ(TokenOf(*Provider(c)), "t");
  EXPECT_EQ(ReadAll(record), "--region=eu west|$(touch " + pwned + "); echo|bar|/custom-home");
  EXPECT_FALSE(std::filesystem::exists(pwned));
  auto req = ParseJson(ReadAll(info));
  ASSERT_TRUE(req.ok()) << ReadAll(info);
  EXPECT_EQ((*req)["apiVersion"], kV1);
  EXPECT_EQ((*req)["kind"], "ExecCredential");
  EXPECT_EQ((*req)["spec"]["interactive"], false);
  EXPECT_EQ((*req)["spec"]["cluster"]["server"], "https://10.0.0.1:6443");
  EXPECT_EQ((*req)["spec"]["cluster"]["config"]["audience"], "steward");

  c.provide_cluster_info = false;
  ASSERT_EQ(TokenOf(*Provider(c)), "t");
  req = ParseJson(ReadAll(info));
  ASSERT_TRUE(req.ok());
  EXPECT_FALSE((*req)["spec"].contains("cluster"));
}

TEST_F(ExecTest, ConcurrentGetsRunThePluginOnce) {
  options.clock = nullptr;
  auto p = Provider(Config(Plugin(CredentialJson(kV1, {{"token", "shared"}}), "sleep 0.3")));
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] { good += TokenOf(*p) == "shared"; });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), 8);
  EXPECT_EQ(Runs(), 1);
}

TEST_F(ExecTest, LoadedFromAKubeconfig) {
  std::string info = dir.Path("info");
  Plugin(CredentialJson(kV1, {{"token", "from-plugin"}}),
         "printf '%s' \"$KUBERNETES_EXEC_INFO\" > '" + info + "'");
  std::string kubeconfig =
      dir.Write("config",
                "current-context: dev\nclusters:\n- name: c\n  cluster:\n"
                "    server: https://api.test:6443\n    certificate-authority-data: " +
                    Base64Encode(kCaPem) +
                    "\n    extensions:\n    - name: client.authentication.k8s.io/exec\n"
                    "      extension: {audience: aud}\n"
                    "users:\n- name: u\n  user:\n    exec:\n"
                    "      apiVersion: client.authentication.k8s.io/v1\n"
                    "      command: ./plugin.sh\n      interactiveMode: Never\n"
                    "      provideClusterInfo: true\n"
                    "contexts:\n- name: dev\n  context: {cluster: c, user: u}\n");
  KubeconfigSources s;
  s.explicit_path = kubeconfig;
  auto rc = LoadKubeconfig(s, options);
  ASSERT_TRUE(rc.ok()) << rc.error().message();
  EXPECT_EQ(rc->credentials->Describe(), "exec plugin " + dir.Path("plugin.sh"));
  EXPECT_EQ(TokenOf(*rc->credentials), "from-plugin");
  auto req = ParseJson(ReadAll(info));
  ASSERT_TRUE(req.ok());
  const Json& cluster = (*req)["spec"]["cluster"];
  EXPECT_EQ(cluster["server"], "https://api.test:6443");
  EXPECT_EQ(cluster["certificate-authority-data"], Base64Encode(kCaPem));
  EXPECT_EQ(cluster["config"]["audience"], "aud");
  EXPECT_FALSE(cluster.contains("insecure-skip-tls-verify"));
}

// --- ParseExecCredential
// ---------------------------------------------------------------------------

struct ParseCase {
  const char* name;
  std::string output;
  std::string expected;
};
void PrintTo(const ParseCase& c, std::ostream* os) { *os << c.name; }

class ParseExecCredentialTest : public ::testing::TestWithParam<ParseCase> {};

TEST_P(ParseExecCredentialTest, RejectsWithAClearError) {
  ExecPluginConfig c;
  c.command = "my-plugin";
  c.api_version = kV1;
  auto r = ParseExecCredential(GetParam().output, c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), StatusCode::kUnauthenticated);
  EXPECT_THAT(r.error().message(), HasSubstr("exec plugin my-plugin: " + GetParam().expected));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseExecCredentialTest,
    ::testing::Values(
        ParseCase{"NotJson", "token=abc", "output is not an ExecCredential"},
        ParseCase{"Empty", "", "output is not an ExecCredential"},
        ParseCase{"NotAnObject", "[1]", "output is not a JSON object"},
        ParseCase{"WrongApiVersion", CredentialJson(kV1Beta1, {{"token", "t"}}),
                  "returned apiVersion \"client.authentication.k8s.io/v1beta1\", configured "
                  "\"client.authentication.k8s.io/v1\""},
        ParseCase{"WrongKind", DumpJson({{"apiVersion", kV1}, {"kind", "Secret"}, {"status", {}}}),
                  "returned kind \"Secret\""},
        ParseCase{"NoStatus", DumpJson({{"apiVersion", kV1}, {"kind", "ExecCredential"}}),
                  "returned no status"},
        ParseCase{"NothingUsable", CredentialJson(kV1, Json::object()),
                  "returned neither a token nor a client certificate and key"},
        ParseCase{"CertWithoutKey", CredentialJson(kV1, {{"clientCertificateData", kCertPem}}),
                  "returned only one of clientCertificateData and clientKeyData"},
        ParseCase{"TokenNotString", CredentialJson(kV1, {{"token", 42}}),
                  "status.token is not a string"},
        ParseCase{"BadExpiry",
                  CredentialJson(kV1, {{"token", "t"}, {"expirationTimestamp", "tomorrow"}}),
                  "status.expirationTimestamp \"tomorrow\" is not an RFC 3339 time"}),
    [](const ::testing::TestParamInfo<ParseCase>& p) { return std::string(p.param.name); });

TEST(ParseExecCredentialTest, AcceptsTokenAndExpiry) {
  ExecPluginConfig c;
  c.command = "p";
  c.api_version = kV1;
  auto r = ParseExecCredential(
      CredentialJson(kV1, {{"token", "tk"}, {"expirationTimestamp", "2030-01-02T03:04:05Z"}}), c);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->bearer_token, "tk");
  ASSERT_TRUE(r->expiry.has_value());
  EXPECT_EQ(FormatRfc3339(*r->expiry), "2030-01-02T03:04:05Z");
}

TEST(ExecPluginConfigTest, Validation) {
  ExecPluginConfig c;
  c.command = "x";
  c.api_version = kV1;
  EXPECT_THAT(ValidateExecPluginConfig(c).message(), HasSubstr("interactiveMode: missing"));
  c.interactive_mode = "Sometimes";
  EXPECT_THAT(ValidateExecPluginConfig(c).message(), HasSubstr("\"Sometimes\" is not one of"));
  c.interactive_mode = "IfAvailable";
  EXPECT_TRUE(ValidateExecPluginConfig(c).ok());
  c.api_version = kV1Beta1;
  c.interactive_mode = "";
  EXPECT_TRUE(ValidateExecPluginConfig(c).ok());
  EXPECT_FALSE(ExecCredentialProvider::Create(ExecPluginConfig{}).ok());
}

}  // namespace
}  // namespace steward::kube
