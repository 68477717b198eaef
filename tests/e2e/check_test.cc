// `steward check` against `steward cluster`: the Kubernetes client's whole chain (kubeconfig
// loading, TLS, credentials, resource calls, informer) as an operator runs it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "process.h"

namespace steward::e2e {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

class CheckTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new ClusterUnderTest({"--profile", "instant"});
    ASSERT_TRUE(cluster_->ok());
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }

  // `env -i` keeps the test's own KUBECONFIG/HOME from leaking in; `env` lists what is set.
  static RunResult Check(const std::vector<std::string>& args,
                         const std::vector<std::string>& env = {}) {
    std::vector<std::string> argv = {"/usr/bin/env", "-i", "PATH=/usr/bin:/bin",
                                     "HOME=" + temp_home_.path()};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.push_back(StewardBinary());
    argv.push_back("check");
    argv.insert(argv.end(), args.begin(), args.end());
    return ::steward::e2e::Run(argv, "", std::chrono::seconds(60));
  }

  static ClusterUnderTest* cluster_;
  static TempDir temp_home_;
};
ClusterUnderTest* CheckTest::cluster_ = nullptr;
TempDir CheckTest::temp_home_;

TEST_F(CheckTest, PassesAgainstTheEmbeddedClusterWithItsKubeconfig) {
  RunResult r = Check({"--kubeconfig", cluster_->kubeconfig()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("ok    configuration: kubeconfig " + cluster_->kubeconfig()));
  EXPECT_THAT(r.out, HasSubstr(cluster_->api_url()));
  EXPECT_THAT(r.out, HasSubstr("ok    server: Kubernetes v"));
  EXPECT_THAT(r.out, HasSubstr("ok    list deployments.apps in default"));
  // Every kind the engine's informers list, ReplicaSets included (a Role without them would
  // pass the check and leave the engine unsynced).
  for (const char* kind :
       {"secrets", "persistentvolumeclaims", "services", "ingresses.networking.k8s.io",
        "endpointslices.discovery.k8s.io", "pods", "replicasets.apps"}) {
    EXPECT_THAT(r.out, HasSubstr(std::string("ok    list ") + kind + " in default"));
  }
  EXPECT_THAT(r.out, HasSubstr("ok    watch deployments.apps in default: synced"));
  EXPECT_THAT(r.out, Not(HasSubstr("FAIL")));
}

TEST_F(CheckTest, AClusterOfTheConfigurationIsCheckedAsStewardReachesIt) {
  TempDir dir;
  const std::string config = dir.path() + "/steward.yaml";
  WriteFile(config,
            "engine: {namespace: default}\n"
            "clusters:\n"
            "  - name: west\n"
            "    kubernetes: {kubeconfig: " +
                cluster_->kubeconfig() +
                "}\n"
                "  - name: lab\n"
                "    kubernetes: {source: embedded}\n"
                "    engine: {namespace: lab}\n");
  RunResult r = Check({"--config", config, "--cluster", "west"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("ok    configuration: kubeconfig " + cluster_->kubeconfig()));
  EXPECT_THAT(r.out, HasSubstr("ok    list deployments.apps in default"));
  // What cannot be checked is named.
  RunResult embedded = Check({"--config", config, "--cluster", "lab"});
  EXPECT_EQ(embedded.exit_code, 1) << embedded.out;
  EXPECT_THAT(embedded.out + embedded.err, HasSubstr("--cluster: lab is an embedded cluster"));
  RunResult unknown = Check({"--config", config, "--cluster", "mars"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.out + unknown.err,
              HasSubstr("--cluster: the configuration lists no cluster \"mars\""));
  RunResult alone = Check({"--cluster", "west"});
  EXPECT_EQ(alone.exit_code, 1);
  EXPECT_THAT(alone.out + alone.err, HasSubstr("--cluster: needs --config FILE"));
}

TEST_F(CheckTest, KubeconfigListFromTheEnvironmentSkipsMissingFiles) {
  RunResult r = Check({}, {"KUBECONFIG=/nonexistent/config:" + cluster_->kubeconfig()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("Steward can work with this cluster"));
}

TEST_F(CheckTest, MissingNamespaceIsNamed) {
  RunResult r = Check({"--kubeconfig", cluster_->kubeconfig(), "-n", "no-such-namespace"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("FAIL  namespace no-such-namespace: does not exist"));
}

TEST_F(CheckTest, BrokenKubeconfigNamesFileContextAndField) {
  std::string broken = temp_home_.path() + "/broken-config";
  std::string text = ReadFile(cluster_->kubeconfig());
  // Point the context at a cluster entry that does not exist.
  text = std::regex_replace(text, std::regex("cluster: *\"?steward\"?"), "cluster: missing");
  WriteFile(broken, text);
  RunResult r = Check({"--kubeconfig", broken});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("FAIL  configuration: kubeconfig " + broken));
  EXPECT_THAT(r.out, HasSubstr("\"missing\""));
}

TEST_F(CheckTest, MissingExplicitKubeconfigIsAnErrorEvenWithKubeconfigSet) {
  RunResult r =
      Check({"--kubeconfig", "/nonexistent/kubeconfig"}, {"KUBECONFIG=" + cluster_->kubeconfig()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("/nonexistent/kubeconfig"));
}

TEST_F(CheckTest, WrongTokenIsRefusedAsUnauthorized) {
  std::string wrong = temp_home_.path() + "/wrong-token-config";
  std::string text = ReadFile(cluster_->kubeconfig());
  text =
      std::regex_replace(text, std::regex("token: *\"?[A-Za-z0-9._-]+\"?"), "token: not-the-token");
  ASSERT_THAT(text, HasSubstr("not-the-token"));
  WriteFile(wrong, text);
  RunResult r = Check({"--kubeconfig", wrong});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("FAIL"));
  EXPECT_THAT(r.out, HasSubstr("Unauthorized"));
}

TEST_F(CheckTest, InClusterExcludesKubeconfig) {
  RunResult r = Check({"--in-cluster", "--kubeconfig", cluster_->kubeconfig()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err + r.out, HasSubstr("excludes"));
}

TEST_F(CheckTest, InClusterOutsideAPodSaysWhatIsMissing) {
  RunResult r = Check({"--in-cluster"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("KUBERNETES_SERVICE_HOST"));
}

}  // namespace
}  // namespace steward::e2e
