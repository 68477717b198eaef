#include "kube/config/kubeconfig.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>

#include "common/base64.h"
#include "kube/config/test_util.h"

namespace steward::kube {
namespace {

using test_util::kCaPem;
using test_util::kCertPem;
using test_util::kKeyPem;
using test_util::TempDir;
using ::testing::HasSubstr;

std::string B64(const std::string& s) { return Base64Encode(s); }

// A one-context kubeconfig with the given cluster and user bodies (indented YAML lines).
std::string Kubeconfig(const std::string& cluster_body, const std::string& user_body,
                       const std::string& context_extra = "") {
  return "apiVersion: v1\nkind: Config\ncurrent-context: dev\n"
         "clusters:\n- name: c1\n  cluster:\n" +
         cluster_body + "users:\n- name: u\n  user:\n" + user_body +
         "contexts:\n- name: dev\n  context:\n    cluster: c1\n    user: u\n" + context_extra;
}

const std::string kServer = "    server: https://10.1.2.3:6443\n";

StatusOr<RestConfig> LoadFile(const std::string& path, const std::string& context = "") {
  KubeconfigSources s;
  s.explicit_path = path;
  s.context = context;
  return LoadKubeconfig(s);
}

std::string ErrorOf(const StatusOr<RestConfig>& r) { return r.ok() ? "<ok>" : r.error().message(); }

Credentials GetCreds(const RestConfig& rc) {
  EXPECT_NE(rc.credentials, nullptr);
  if (rc.credentials == nullptr) return {};
  auto c = rc.credentials->Get();
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : Credentials{};
}

// --- fields --------------------------------------------------------------------------------------

TEST(KubeconfigTest, ClusterFieldsTokenAndNamespace) {
  TempDir dir;
  std::string path =
      dir.Write("config", Kubeconfig("    server: https://api.example.com:6443/prefix/\n"
                                     "    certificate-authority-data: " +
                                         B64(kCaPem) +
                                         "\n"
                                         "    tls-server-name: kubernetes.internal\n"
                                         "    proxy-url: http://proxy.local:3128\n",
                                     "    token: abc.def\n", "    namespace: team-a\n"));
  auto rc = LoadFile(path);
  ASSERT_TRUE(rc.ok()) << ErrorOf(rc);
  EXPECT_EQ(rc->server, "https://api.example.com:6443/prefix");
  EXPECT_EQ(rc->ca_pem, kCaPem);
  EXPECT_FALSE(rc->insecure_skip_tls_verify);
  EXPECT_EQ(rc->tls_server_name, "kubernetes.internal");
  EXPECT_EQ(rc->proxy_url, "http://proxy.local:3128");
  EXPECT_EQ(rc->namespace_name, "team-a");
  EXPECT_EQ(rc->source, "kubeconfig " + path + ", context dev");
  Credentials c = GetCreds(*rc);
  EXPECT_EQ(c.bearer_token, "abc.def");
  EXPECT_TRUE(c.client_cert_pem.empty());
}

TEST(KubeconfigTest, NamespaceDefaultsToDefault) {
  TempDir dir;
  auto rc = LoadFile(dir.Write("config", Kubeconfig(kServer, "    token: t\n")));
  ASSERT_TRUE(rc.ok()) << ErrorOf(rc);
  EXPECT_EQ(rc->namespace_name, "default");
}

TEST(KubeconfigTest, InsecureSkipTlsVerify) {
  TempDir dir;
  auto rc = LoadFile(dir.Write(
      "config", Kubeconfig(kServer + "    insecure-skip-tls-verify: true\n", "    token: t\n")));
  ASSERT_TRUE(rc.ok()) << ErrorOf(rc);
  EXPECT_TRUE(rc->insecure_skip_tls_verify);
  EXPECT_TRUE(rc->ca_pem.empty());
}

TEST(KubeconfigTest, CaFileRelativeToTheKubeconfigThatDefinesIt) {
  TempDir dir;
  dir.Write("a/certs/ca.crt", kCaPem);
  dir.Write("b/certs/ca.crt", "-----BEGIN CERTIFICATE-----\nV1JPTkc=\n-----END CERTIFICATE-----\n");
  // The cluster lives in a/config, the context in b/config: the CA path is resolved against a/.
  dir.Write("a/config", "clusters:\n- name: c1\n  cluster:\n" + kServer +
                            "    certificate-authority: certs/ca.crt\n");
  dir.Write("b/config",
            "current-context: dev\nusers:\n- name: u\n  user:\n    token: t\n"
            "contexts:\n- name: dev\n  context: {cluster: c1, user: u}\n");
  KubeconfigSources s;
  s.env_kubeconfig = dir.Path("b/config") + ":" + dir.Path("a/config");
  auto rc = LoadKubeconfig(s);
  ASSERT_TRUE(rc.ok()) << ErrorOf(rc);
  EXPECT_EQ(rc->ca_pem, kCaPem);
}

TEST(KubeconfigTest, ClientCertificateFromData) {
  TempDir dir;
  auto rc = LoadFile(dir.Write(
      "config", Kubeconfig(kServer, "    client-certificate-data: " + B64(kCertPem) +
                                        "\n    client-key-data: " + B64(kKeyPem) + "\n")));
  ASSERT_TRUE(rc.ok()) << ErrorOf(rc);
  Credentials c = GetCreds(*rc);
  EXPECT_EQ(c.client_cert_pem, kCertPem);
  EXPECT_EQ(c.client_key_pem, kKeyPem);
  EXPECT_TRUE(c.bearer_token.empty());
}

TEST(KubeconfigTest, ClientCertificateFromRelativeFiles) {
  TempDir dir;
  dir.Write("kube/pki/client.crt", kCertPem);
  dir.Write("kube/pki/client.key", kKeyPem);
  auto rc = LoadFile(dir.Write("kube/config", Kubeconfig(kServer,
                                                         "    client-certificate: pki/client.crt\n"
                                                         "    client-key: pki/client.key\n")));
  ASSERT_TRUE(rc.ok()) << ErrorOf(rc);
  Credentials c = GetCreds(*rc);
  EXPECT_EQ(c.client_cert_pem, kCertPem);
  EXPECT_EQ(c.client_key_pem, kKeyPem);
}

TEST(KubeconfigTest, TokenAndClientCertificateTogether) {
  TempDir dir;
  auto rc = LoadFile(dir.Write(
      "config",
      Kubeconfig(kServer, "    token: tok\n    client-certificate-data: " + B64(kCertPem) +
                              "\n    client-key-data: " + B64(kKeyPem) + "\n")));
  ASSERT_TRUE(rc.ok()) << ErrorOf(rc);
  Credentials c = GetCreds(*rc);
  EXPECT_EQ(c.bearer_token, "tok");
  EXPECT_EQ(c.client_cert_pem, kCertPem);
}

TEST(KubeconfigTest, TokenFileRelative) {
  TempDir dir;
  dir.Write("kube/token", "  file-token\n");
  auto rc = LoadFile(dir.Write("kube/config", Kubeconfig(kServer, "    tokenFile: token\n")));
  ASSERT_TRUE(rc.ok()) << ErrorOf(rc);
  EXPECT_EQ(GetCreds(*rc).bearer_token, "file-token");
  EXPECT_EQ(rc->credentials->Describe(), "token file " + dir.Path("kube/token"));
}

// client-go: with both, the file is read and its value wins; `token` is the fallback used while
// the file cannot be read.
TEST(KubeconfigTest, TokenFileWinsOverTokenWhenReadable) {
  TempDir dir;
  dir.Write("token", "from-file\n");
  auto rc = LoadFile(dir.Write("config", Kubeconfig(kServer,
                                                    "    token: inline\n"
                                                    "    tokenFile: token\n")));
  ASSERT_TRUE(rc.ok()) << ErrorOf(rc);
  EXPECT_EQ(GetCreds(*rc).bearer_token, "from-file");

  auto rc2 = LoadFile(dir.Write("config2", Kubeconfig(kServer,
                                                      "    token: inline\n"
                                                      "    tokenFile: missing\n")));
  ASSERT_TRUE(rc2.ok()) << ErrorOf(rc2);
  EXPECT_EQ(GetCreds(*rc2).bearer_token, "inline");
}

TEST(KubeconfigTest, ExecUserGetsAnExecProvider) {
  TempDir dir;
  auto rc = LoadFile(dir.Write(
      "config", Kubeconfig(kServer,
                           "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
                           "      command: aws\n      args: [eks, get-token]\n"
                           "      interactiveMode: Never\n")));
  ASSERT_TRUE(rc.ok()) << ErrorOf(rc);
  ASSERT_NE(rc->credentials, nullptr);
  EXPECT_EQ(rc->credentials->Describe(), "exec plugin aws");
}

// client-go: a token (or client certificate) next to an exec section wins; the plugin is not run.
TEST(KubeconfigTest, StaticTokenTakesPrecedenceOverExec) {
  TempDir dir;
  auto rc = LoadFile(
      dir.Write("config", Kubeconfig(kServer,
                                     "    token: static\n    exec:\n"
                                     "      apiVersion: client.authentication.k8s.io/v1beta1\n"
                                     "      command: /nonexistent/plugin\n")));
  ASSERT_TRUE(rc.ok()) << ErrorOf(rc);
  EXPECT_EQ(rc->credentials->Describe(), "token of kubeconfig user \"u\"");
  EXPECT_EQ(GetCreds(*rc).bearer_token, "static");
}

TEST(KubeconfigTest, ParsedModelKeepsExecFieldsAndResolvesPathCommands) {
  std::string text =
      Kubeconfig(kServer +
                     "    extensions:\n    - name: client.authentication.k8s.io/exec\n"
                     "      extension: {audience: a1, n: 3}\n",
                 "    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
                 "      command: bin/plugin\n      args: [\"--x\", \"y z\"]\n"
                 "      env:\n      - {name: FOO, value: bar}\n      installHint: install it\n"
                 "      provideClusterInfo: true\n      interactiveMode: IfAvailable\n");
  auto f = ParseKubeconfig(text, "/etc/kube/config");
  ASSERT_TRUE(f.ok()) << f.error().message();
  const KubeUser& u = f->users.at("u");
  ASSERT_TRUE(u.exec.has_value());
  EXPECT_EQ(u.exec->command, "/etc/kube/bin/plugin");
  EXPECT_EQ(u.exec->args, (std::vector<std::string>{"--x", "y z"}));
  ASSERT_EQ(u.exec->env.size(), 1u);
  EXPECT_EQ(u.exec->env[0].name, "FOO");
  EXPECT_EQ(u.exec->env[0].value, "bar");
  EXPECT_EQ(u.exec->install_hint, "install it");
  EXPECT_TRUE(u.exec->provide_cluster_info);
  EXPECT_EQ(u.exec->interactive_mode, "IfAvailable");
  EXPECT_EQ(f->clusters.at("c1").exec_extension, (Json{{"audience", "a1"}, {"n", 3}}));
  // A bare command name is looked up in PATH, not resolved.
  auto g = ParseKubeconfig(Kubeconfig(kServer, "    exec: {command: kubelogin}\n"), "/k/config");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->users.at("u").exec->command, "kubelogin");
}

TEST(KubeconfigTest, ChosenContextOverridesCurrentContext) {
  TempDir dir;
  std::string text = Kubeconfig(kServer, "    token: t\n") +
                     "- name: other\n  context: {cluster: c1, user: u, namespace: ns2}\n";
  auto rc = LoadFile(dir.Write("config", text), "other");
  ASSERT_TRUE(rc.ok()) << ErrorOf(rc);
  EXPECT_EQ(rc->namespace_name, "ns2");
  EXPECT_THAT(rc->source, HasSubstr("context other"));
}

// --- sources and merging -------------------------------------------------------------------------

struct ThreeFiles {
  TempDir dir;
  std::string f1, f2, f3;
  ThreeFiles() {
    // f1: no current-context; defines cluster "shared" and user "u" (token only).
    f1 = dir.Write("one", R"(clusters:
- name: shared
  cluster: {server: "https://first:6443"}
users:
- name: u
  user: {token: first-token}
contexts:
- name: ctx-a
  context: {cluster: shared, user: u, namespace: from-first}
)");
    // f2: sets current-context; redefines "shared" and "u" (ignored: f1 wins, whole entries).
    f2 = dir.Write("two",
                   "current-context: ctx-a\n"
                   "clusters:\n- name: shared\n  cluster:\n    server: https://second:6443\n"
                   "    insecure-skip-tls-verify: true\n"
                   "users:\n- name: u\n  user:\n    client-certificate-data: " +
                       B64(kCertPem) + "\n    client-key-data: " + B64(kKeyPem) + "\n" +
                       "contexts:\n- name: ctx-a\n  context: {cluster: shared, user: u, "
                       "namespace: from-second}\n");
    // f3: another current-context (ignored) and a context only it defines.
    f3 = dir.Write("three", R"(current-context: ctx-c
clusters:
- name: third
  cluster: {server: "https://third:6443"}
contexts:
- name: ctx-c
  context: {cluster: third, user: u}
)");
  }
};

TEST(KubeconfigMergeTest, FirstFileToSetAKeyWins) {
  ThreeFiles t;
  KubeconfigSources s;
  s.env_kubeconfig = t.f1 + ":" + t.f2 + ":" + t.f3;
  auto rc = LoadKubeconfig(s);
  ASSERT_TRUE(rc.ok()) << ErrorOf(rc);
  EXPECT_EQ(rc->server, "https://first:6443");  // cluster from f1
  EXPECT_FALSE(rc->insecure_skip_tls_verify);   // not field-merged from f2
  EXPECT_EQ(rc->namespace_name, "from-first");  // context from f1
  Credentials c = GetCreds(*rc);
  EXPECT_EQ(c.bearer_token, "first-token");  // user from f1 ...
  EXPECT_TRUE(c.client_cert_pem.empty());    // ... as a whole entry
  EXPECT_EQ(rc->source, "kubeconfig " + t.f1 + ":" + t.f2 + ":" + t.f3 + ", context ctx-a");
}

TEST(KubeconfigMergeTest, CurrentContextFromFirstFileThatSetsIt) {
  ThreeFiles t;
  std::vector<KubeconfigFile> files;
  for (const auto& p : {t.f1, t.f3, t.f2}) {
    auto f = ReadKubeconfigFile(p);
    ASSERT_TRUE(f.ok()) << f.error().message();
    files.push_back(*f);
  }
  MergedKubeconfig m = MergeKubeconfigs(files);
  EXPECT_EQ(m.current_context, "ctx-c");
  EXPECT_EQ(m.current_context_origin, t.f3);
  EXPECT_EQ(m.clusters.at("shared").origin, t.f1);
  EXPECT_EQ(m.clusters.at("third").origin, t.f3);
  EXPECT_EQ(m.contexts.size(), 2u);
  auto r = ResolveContext(m, "");
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->cluster.server, "https://third:6443");
}

TEST(KubeconfigMergeTest, OrderDecidesTheWinner) {
  ThreeFiles t;
  KubeconfigSources s;
  s.env_kubeconfig = t.f2 + ":" + t.f1;
  auto rc = LoadKubeconfig(s);
  ASSERT_TRUE(rc.ok()) << ErrorOf(rc);
  EXPECT_EQ(rc->server, "https://second:6443");
  EXPECT_TRUE(rc->insecure_skip_tls_verify);
  EXPECT_EQ(rc->namespace_name, "from-second");
  EXPECT_EQ(GetCreds(*rc).client_cert_pem, kCertPem);
}

TEST(KubeconfigMergeTest, MissingFilesAndEmptyEntriesAreSkipped) {
  ThreeFiles t;
  KubeconfigSources s;
  s.env_kubeconfig = "::" + t.dir.Path("nope") + ":" + t.f3 + "::" + t.f3 + ":";
  s.context = "ctx-c";
  auto files = KubeconfigFilesToLoad(s);
  ASSERT_TRUE(files.ok()) << files.error().message();
  EXPECT_EQ(*files, std::vector<std::string>{t.f3});  // missing skipped, duplicate dropped
  auto rc = LoadKubeconfig(s);
  // ctx-c names user "u", which only f1 defines: not loaded here.
  EXPECT_THAT(ErrorOf(rc),
              HasSubstr("kubeconfig " + t.f3 + ": context \"ctx-c\": user \"u\" not found"));
}

TEST(KubeconfigMergeTest, KubeconfigListWithNoExistingFileIsAnError) {
  TempDir dir;
  KubeconfigSources s;
  s.env_kubeconfig = dir.Path("a") + ":" + dir.Path("b");
  s.home = dir.path();
  dir.Write(".kube/config", Kubeconfig(kServer, "    token: t\n"));
  auto rc = LoadKubeconfig(s);
  EXPECT_THAT(ErrorOf(rc), HasSubstr("none of the files in KUBECONFIG exist"));
}

TEST(KubeconfigSourcesTest, Precedence) {
  TempDir dir;
  std::string explicit_file =
      dir.Write("explicit", Kubeconfig("    server: https://explicit\n", "    token: t\n"));
  std::string env_file =
      dir.Write("env", Kubeconfig("    server: https://env\n", "    token: t\n"));
  dir.Write("home/.kube/config", Kubeconfig("    server: https://home\n", "    token: t\n"));
  KubeconfigSources s;
  s.home = dir.Path("home");
  s.env_kubeconfig = env_file;
  s.explicit_path = explicit_file;
  auto rc = LoadKubeconfig(s);
  ASSERT_TRUE(rc.ok()) << ErrorOf(rc);
  EXPECT_EQ(rc->server, "https://explicit");

  s.explicit_path.clear();
  rc = LoadKubeconfig(s);
  ASSERT_TRUE(rc.ok()) << ErrorOf(rc);
  EXPECT_EQ(rc->server, "https://env");

  s.env_kubeconfig = "";  // set but empty counts as unset (client-go)
  rc = LoadKubeconfig(s);
  ASSERT_TRUE(rc.ok()) << ErrorOf(rc);
  EXPECT_EQ(rc->server, "https://home");
  EXPECT_EQ(rc->source, "kubeconfig " + dir.Path("home/.kube/config") + ", context dev");

  s.env_kubeconfig.reset();
  rc = LoadKubeconfig(s);
  ASSERT_TRUE(rc.ok()) << ErrorOf(rc);
  EXPECT_EQ(rc->server, "https://home");
}

TEST(KubeconfigSourcesTest, ExplicitFileMustExistEvenWithKubeconfigSet) {
  TempDir dir;
  KubeconfigSources s;
  s.explicit_path = dir.Path("missing");
  s.env_kubeconfig = dir.Write("env", Kubeconfig(kServer, "    token: t\n"));
  auto rc = LoadKubeconfig(s);
  ASSERT_FALSE(rc.ok());
  EXPECT_EQ(rc.error().code(), StatusCode::kNotFound);
  EXPECT_THAT(rc.error().message(), HasSubstr(dir.Path("missing")));
}

TEST(KubeconfigSourcesTest, NoHomeConfig) {
  TempDir dir;
  KubeconfigSources s;
  s.home = dir.path();
  auto rc = LoadKubeconfig(s);
  EXPECT_THAT(ErrorOf(rc), HasSubstr(dir.Path(".kube/config") + " does not exist"));
  s.home.clear();
  EXPECT_THAT(ErrorOf(LoadKubeconfig(s)), HasSubstr("HOME not set"));
}

// Sets environment variables for one test and restores them afterwards.
class ScopedEnv {
 public:
  void Set(const char* name, const char* value) {
    if (!saved_.count(name)) {
      const char* old = std::getenv(name);
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) Set(name.c_str(), value ? value->c_str() : nullptr);
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST(KubeconfigSourcesTest, FromEnvironment) {
  ScopedEnv env;
  env.Set("KUBECONFIG", "/a:/b");
  env.Set("HOME", "/home/someone");
  KubeconfigSources s = KubeconfigSourcesFromEnvironment("/x", "ctx");
  EXPECT_EQ(s.explicit_path, "/x");
  EXPECT_EQ(s.context, "ctx");
  EXPECT_EQ(s.env_kubeconfig, std::optional<std::string>("/a:/b"));
  EXPECT_EQ(s.home, "/home/someone");
  env.Set("KUBECONFIG", nullptr);
  EXPECT_FALSE(KubeconfigSourcesFromEnvironment("", "").env_kubeconfig.has_value());
}

// --- errors: each names the file, the context or entry, and the field ----------------------------

struct ErrorCase {
  const char* name;
  std::string text;      // file content
  std::string context;   // --context
  std::string expected;  // substring, after "kubeconfig <path>"
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class KubeconfigErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(KubeconfigErrorTest, NamesFileContextAndField) {
  TempDir dir;
  std::string path = dir.Write("config", GetParam().text);
  auto rc = LoadFile(path, GetParam().context);
  ASSERT_FALSE(rc.ok()) << "loaded: " << rc->server;
  EXPECT_THAT(rc.error().message(), HasSubstr("kubeconfig " + path + ": " + GetParam().expected));
}

std::string Ctx(const std::string& clusters, const std::string& users, const std::string& ctx) {
  return "current-context: dev\nclusters:\n" + clusters + "users:\n" + users +
         "contexts:\n- name: dev\n  context:\n" + ctx;
}
const std::string kC1 = "- name: c1\n  cluster: {server: \"https://h:6443\"}\n";
const std::string kU = "- name: u\n  user: {token: t}\n";

INSTANTIATE_TEST_SUITE_P(
    Cases, KubeconfigErrorTest,
    ::testing::Values(
        ErrorCase{"ClusterNotFound", Ctx(kC1, kU, "    cluster: c9\n    user: u\n"), "",
                  "context \"dev\": cluster \"c9\" not found"},
        ErrorCase{"UserNotFound", Ctx(kC1, kU, "    cluster: c1\n    user: nobody\n"), "",
                  "context \"dev\": user \"nobody\" not found"},
        ErrorCase{"ContextWithoutCluster", Ctx(kC1, kU, "    user: u\n"), "",
                  "context \"dev\": cluster: missing"},
        ErrorCase{"ContextWithoutUser", Ctx(kC1, kU, "    cluster: c1\n"), "",
                  "context \"dev\": user: missing"},
        ErrorCase{"ServerMissing",
                  Kubeconfig("    insecure-skip-tls-verify: true\n", "    token: t\n"), "",
                  "context \"dev\": cluster \"c1\": server: missing"},
        ErrorCase{"ServerNotHttp", Kubeconfig("    server: ftp://h:21\n", "    token: t\n"), "",
                  "context \"dev\": cluster \"c1\": server: \"ftp://h:21\" is not an http(s) URL"},
        ErrorCase{"ServerWithoutScheme", Kubeconfig("    server: h:6443\n", "    token: t\n"), "",
                  "context \"dev\": cluster \"c1\": server: \"h:6443\" is not an http(s) URL: has "
                  "no scheme"},
        ErrorCase{"BadCertData",
                  Kubeconfig(kServer, "    client-certificate-data: '***'\n    client-key-data: " +
                                          B64(kKeyPem) + "\n"),
                  "", "user \"u\": client-certificate-data: not valid base64 (line 11)"},
        ErrorCase{"BadCaData",
                  Kubeconfig(kServer + "    certificate-authority-data: abc\n", "    token: t\n"),
                  "", "cluster \"c1\": certificate-authority-data: not valid base64"},
        ErrorCase{"CaDataNotPem",
                  Kubeconfig(kServer + "    certificate-authority-data: " + B64("hello") + "\n",
                             "    token: t\n"),
                  "", "context \"dev\": cluster \"c1\": certificate-authority-data: no PEM block"},
        ErrorCase{"CaFileMissing",
                  Kubeconfig(kServer + "    certificate-authority: /nonexistent/ca.crt\n",
                             "    token: t\n"),
                  "",
                  "context \"dev\": cluster \"c1\": certificate-authority: /nonexistent/ca.crt: No "
                  "such file"},
        ErrorCase{
            "CaFileAndData",
            Kubeconfig(kServer + "    certificate-authority: /x\n    certificate-authority-data: " +
                           B64(kCaPem) + "\n",
                       "    token: t\n"),
            "",
            "context \"dev\": cluster \"c1\": certificate-authority and certificate-authority-data "
            "are both set"},
        ErrorCase{
            "InsecureWithCa",
            Kubeconfig(kServer +
                           "    insecure-skip-tls-verify: true\n    certificate-authority-data: " +
                           B64(kCaPem) + "\n",
                       "    token: t\n"),
            "",
            "context \"dev\": cluster \"c1\": insecure-skip-tls-verify: cannot be combined with a "
            "certificate "
            "authority"},
        ErrorCase{"InsecureNotBool",
                  Kubeconfig(kServer + "    insecure-skip-tls-verify: maybe\n", ""), "",
                  "cluster \"c1\": insecure-skip-tls-verify: expected true or false (line 8)"},
        ErrorCase{"BadProxy", Kubeconfig(kServer + "    proxy-url: ftp://p\n", "    token: t\n"),
                  "",
                  "context \"dev\": cluster \"c1\": proxy-url: \"ftp://p\" scheme \"ftp\" is not "
                  "supported"},
        ErrorCase{"CertWithoutKey",
                  Kubeconfig(kServer, "    client-certificate-data: " + B64(kCertPem) + "\n"), "",
                  "context \"dev\": user \"u\": client-key: missing (client-certificate is set)"},
        ErrorCase{"KeyWithoutCert",
                  Kubeconfig(kServer, "    client-key-data: " + B64(kKeyPem) + "\n"), "",
                  "context \"dev\": user \"u\": client-certificate: missing (client-key is set)"},
        ErrorCase{"CertFileMissing",
                  Kubeconfig(kServer, "    client-certificate: /nope.crt\n    client-key-data: " +
                                          B64(kKeyPem) + "\n"),
                  "", "context \"dev\": user \"u\": client-certificate: /nope.crt: No such file"},
        ErrorCase{"CertFileAndData",
                  Kubeconfig(kServer, "    client-certificate: /c\n    client-certificate-data: " +
                                          B64(kCertPem) + "\n    client-key-data: " + B64(kKeyPem) +
                                          "\n"),
                  "",
                  "context \"dev\": user \"u\": client-certificate and client-certificate-data are "
                  "both set"},
        ErrorCase{"TokenFileMissing", Kubeconfig(kServer, "    tokenFile: /no/token\n"), "",
                  "context \"dev\": user \"u\": tokenFile: token file /no/token: No such file"},
        ErrorCase{"GcpAuthProvider",
                  Kubeconfig(kServer, "    auth-provider:\n      name: gcp\n      config: {}\n"),
                  "",
                  "context \"dev\": user \"u\": auth-provider \"gcp\": auth providers are not "
                  "supported; use the "
                  "exec plugin gke-gcloud-auth-plugin"},
        ErrorCase{"OidcAuthProvider", Kubeconfig(kServer, "    auth-provider:\n      name: oidc\n"),
                  "",
                  "context \"dev\": user \"u\": auth-provider \"oidc\": auth providers are not "
                  "supported; use "
                  "an exec plugin"},
        ErrorCase{"BasicAuth", Kubeconfig(kServer, "    username: admin\n    password: secret\n"),
                  "",
                  "context \"dev\": user \"u\": username/password: basic authentication is not "
                  "supported"},
        ErrorCase{"Impersonation", Kubeconfig(kServer, "    token: t\n    as: someone\n"), "",
                  "context \"dev\": user \"u\": as: impersonation is not supported"},
        ErrorCase{
            "ExecV1WithoutInteractiveMode",
            Kubeconfig(kServer,
                       "    exec: {apiVersion: client.authentication.k8s.io/v1, command: x}\n"),
            "", "context \"dev\": user \"u\": exec: interactiveMode: missing"},
        ErrorCase{
            "ExecAlpha",
            Kubeconfig(
                kServer,
                "    exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: x}\n"),
            "",
            "context \"dev\": user \"u\": exec: apiVersion: "
            "\"client.authentication.k8s.io/v1alpha1\" is not supported"},
        ErrorCase{
            "ExecNoCommand",
            Kubeconfig(kServer, "    exec: {apiVersion: client.authentication.k8s.io/v1beta1}\n"),
            "", "context \"dev\": user \"u\": exec: command: missing"},
        ErrorCase{
            "ExecInteractiveAlways",
            Kubeconfig(kServer,
                       "    exec: {apiVersion: client.authentication.k8s.io/v1, "
                       "command: x, interactiveMode: Always}\n"),
            "", "context \"dev\": user \"u\": exec: interactiveMode: \"Always\" needs a terminal"},
        ErrorCase{"ExecArgsNotList", Kubeconfig(kServer, "    exec: {command: x, args: 5}\n"), "",
                  "user \"u\": exec.args: expected a list of strings"},
        ErrorCase{"ExecEnvWithoutName",
                  Kubeconfig(kServer,
                             "    exec: {apiVersion: client.authentication.k8s.io/v1beta1, "
                             "command: x, env: [{value: v}]}\n"),
                  "", "context \"dev\": user \"u\": exec: env[0]: name: missing"},
        ErrorCase{"BadNamespace", Kubeconfig(kServer, "    token: t\n", "    namespace: Bad_NS\n"),
                  "", "context \"dev\": namespace: \"Bad_NS\" is not a valid namespace name"},
        ErrorCase{"ServerIsAMapping", Kubeconfig("    server: {a: b}\n", ""), "",
                  "cluster \"c1\": server: expected a string, got a mapping (line 7)"},
        ErrorCase{"ClustersNotAList", "clusters: {a: b}\n", "", "clusters: expected a list"},
        ErrorCase{"ClusterWithoutName", "clusters:\n- cluster: {server: x}\n", "",
                  "clusters[0]: name: missing"},
        ErrorCase{"DuplicateCluster",
                  "clusters:\n- name: a\n  cluster: {}\n- name: a\n  cluster: {}\n", "",
                  "clusters: duplicate name \"a\" (line 4)"},
        ErrorCase{"MalformedYaml", "clusters:\n- name: a\n  cluster: [unclosed\n", "",
                  "malformed YAML at line"},
        ErrorCase{"TopLevelNotAMapping", "- a\n- b\n", "",
                  "expected a mapping at the top, got a list"},
        ErrorCase{"WrongKind", "kind: Pod\napiVersion: v1\n", "",
                  "kind: \"Pod\" is not a kubeconfig"},
        ErrorCase{"EmptyFile", "", "", "file is empty"},
        ErrorCase{"CommentsOnly", "# nothing here\n", "", "file is empty"},
        ErrorCase{"NoCurrentContext", "clusters:\n" + kC1 + "users:\n" + kU, "",
                  "no context chosen and current-context is not set"},
        ErrorCase{"CurrentContextMissing", "current-context: ghost\nclusters:\n" + kC1, "",
                  "current-context \"ghost\": no such context"},
        ErrorCase{"ChosenContextMissing", Kubeconfig(kServer, "    token: t\n"), "prod",
                  "context \"prod\" not found"}),
    [](const ::testing::TestParamInfo<ErrorCase>& p) { return std::string(p.param.name); });

TEST(KubeconfigErrorTest, UnreadableFileNamesIt) {
  TempDir dir;
  std::string path = dir.Path("config");
  std::filesystem::create_directories(path);  // a directory, not a file
  auto rc = LoadFile(path);
  EXPECT_THAT(ErrorOf(rc), HasSubstr("kubeconfig " + path + ": not a regular file"));
}

// --- robustness ----------------------------------------------------------------------------------

TEST(KubeconfigRobustnessTest, NeverCrashesOnOddInput) {
  std::vector<std::string> inputs = {
      std::string("\0\x01\xff\xfe", 4),
      std::string(5000, '['),
      std::string(5000, '{'),
      "a: &x [*x]\n",
      "a: &a [1,2]\nb: &b [*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b]\nclusters: [*c, *c]\n",
      "clusters: !!binary aGVsbG8=\n",
      "? [a, b]\n: c\n",
      "clusters:\n- name: [x]\n",
      "users:\n- name: u\n  user: 7\n",
      "users:\n- name: u\n  user:\n    exec: [1]\n",
      "users:\n- name: u\n  user:\n    exec: {env: [[1]]}\n",
      "contexts:\n- 5\n",
      "current-context: [a]\n",
      "\t- bad indent",
      "%YAML 9.9\n---\na: 1\n",
      "--- a\n--- b\n",
  };
  for (const auto& in : inputs) {
    auto f = ParseKubeconfig(in, "/fuzz");
    if (!f.ok()) {
      EXPECT_THAT(f.error().message(), HasSubstr("kubeconfig /fuzz: "));
    }
  }
}

TEST(KubeconfigRobustnessTest, EveryPrefixOfAValidFileParsesOrFails) {
  std::string text =
      Kubeconfig(kServer + "    certificate-authority-data: " + B64(kCaPem) + "\n",
                 "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
                 "      command: x\n      args: [a, b]\n      env: [{name: A, value: b}]\n",
                 "    namespace: ns\n");
  int ok = 0;
  for (size_t n = 0; n <= text.size(); ++n) {
    auto f = ParseKubeconfig(text.substr(0, n), "/prefix");
    ok += f.ok();
  }
  EXPECT_GT(ok, 0);
  EXPECT_TRUE(ParseKubeconfig(text, "/prefix").ok());
}

}  // namespace
}  // namespace steward::kube
