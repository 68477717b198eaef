#include "kube/config/in_cluster.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kube/config/test_util.h"

namespace steward::kube {
namespace {

using test_util::kCaPem;
using test_util::TempDir;
using ::testing::HasSubstr;

struct InClusterTest : ::testing::Test {
  TempDir dir;
  InClusterSources sources;
  FakeClock clock;
  CredentialOptions options;
  InClusterTest() {
    dir.Write("sa/token", "sa-token-1\n");
    dir.Write("sa/ca.crt", kCaPem);
    dir.Write("sa/namespace", "steward-system");
    sources.root = dir.Path("sa");
    sources.host = "10.96.0.1";
    sources.port = "443";
    options.clock = &clock;
  }
  std::string Token(const RestConfig& rc) {
    auto c = rc.credentials->Get();
    return c.ok() ? c->bearer_token : "<error: " + c.error().message() + ">";
  }
};

TEST_F(InClusterTest, ReadsTheServiceAccount) {
  auto rc = LoadInCluster(sources, options);
  ASSERT_TRUE(rc.ok()) << rc.error().message();
  EXPECT_EQ(rc->server, "https://10.96.0.1:443");
  EXPECT_EQ(rc->ca_pem, kCaPem);
  EXPECT_EQ(rc->namespace_name, "steward-system");
  EXPECT_FALSE(rc->insecure_skip_tls_verify);
  ASSERT_NE(rc->credentials, nullptr);
  EXPECT_EQ(Token(*rc), "sa-token-1");
  EXPECT_EQ(rc->credentials->Describe(), "token file " + dir.Path("sa/token"));
  EXPECT_THAT(rc->source, HasSubstr("in-cluster service account " + dir.Path("sa")));
}

TEST_F(InClusterTest, Ipv6HostIsBracketed) {
  sources.host = "fd00:10:96::1";
  sources.port = "6443";
  auto rc = LoadInCluster(sources, options);
  ASSERT_TRUE(rc.ok()) << rc.error().message();
  EXPECT_EQ(rc->server, "https://[fd00:10:96::1]:6443");
}

TEST_F(InClusterTest, TokenRotation) {
  auto rc = LoadInCluster(sources, options);
  ASSERT_TRUE(rc.ok());
  dir.Write("sa/token", "sa-token-2\n");
  EXPECT_EQ(Token(*rc), "sa-token-1");
  rc->credentials->Invalidate();
  EXPECT_EQ(Token(*rc), "sa-token-2");
  dir.Write("sa/token", "sa-token-3\n");
  clock.Advance(std::chrono::minutes(1));
  EXPECT_EQ(Token(*rc), "sa-token-3");
}

TEST_F(InClusterTest, NotInAClusterWithoutTheVariables) {
  for (auto clear : {&InClusterSources::host, &InClusterSources::port}) {
    InClusterSources s = sources;
    s.*clear = std::nullopt;
    auto rc = LoadInCluster(s, options);
    ASSERT_FALSE(rc.ok());
    EXPECT_EQ(rc.error().code(), StatusCode::kFailedPrecondition);
    EXPECT_THAT(rc.error().message(),
                HasSubstr("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set"));
  }
  sources.host = "";
  EXPECT_FALSE(LoadInCluster(sources, options).ok());
}

TEST_F(InClusterTest, BadPort) {
  sources.port = "https";
  auto rc = LoadInCluster(sources, options);
  ASSERT_FALSE(rc.ok());
  EXPECT_THAT(rc.error().message(), HasSubstr("KUBERNETES_SERVICE_PORT \"https\""));
}

TEST_F(InClusterTest, MissingFilesAreNamed) {
  std::filesystem::remove(dir.Path("sa/token"));
  auto rc = LoadInCluster(sources, options);
  ASSERT_FALSE(rc.ok());
  EXPECT_EQ(rc.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(rc.error().message(), HasSubstr(dir.Path("sa/token") + ": No such file"));

  dir.Write("sa/token", "t");
  std::filesystem::remove(dir.Path("sa/ca.crt"));
  rc = LoadInCluster(sources, options);
  ASSERT_FALSE(rc.ok());
  EXPECT_THAT(rc.error().message(), HasSubstr(dir.Path("sa/ca.crt") + ": No such file"));
}

TEST_F(InClusterTest, NamespaceSources) {
  std::filesystem::remove(dir.Path("sa/namespace"));
  auto rc = LoadInCluster(sources, options);
  ASSERT_TRUE(rc.ok());
  EXPECT_EQ(rc->namespace_name, "default");
  sources.pod_namespace = "from-env";
  dir.Write("sa/namespace", "from-file");
  rc = LoadInCluster(sources, options);
  ASSERT_TRUE(rc.ok());
  EXPECT_EQ(rc->namespace_name, "from-env");
}

TEST(InClusterSourcesTest, FromEnvironment) {
  // Run only where the variables are not set for real (not inside a pod).
  if (std::getenv("KUBERNETES_SERVICE_HOST") != nullptr ||
      std::getenv("POD_NAMESPACE") != nullptr) {
    GTEST_SKIP() << "running inside a pod";
  }
  ::setenv("KUBERNETES_SERVICE_HOST", "1.2.3.4", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", "8443", 1);
  InClusterSources s = InClusterSources::FromEnvironment();
  EXPECT_EQ(s.root, "/var/run/secrets/kubernetes.io/serviceaccount");
  EXPECT_EQ(s.host, std::optional<std::string>("1.2.3.4"));
  EXPECT_EQ(s.port, std::optional<std::string>("8443"));
  EXPECT_FALSE(s.pod_namespace.has_value());
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  ::unsetenv("KUBERNETES_SERVICE_PORT");
  EXPECT_FALSE(InClusterSources::FromEnvironment().host.has_value());
}

}  // namespace
}  // namespace steward::kube
