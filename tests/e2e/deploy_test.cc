// deploy/ against the embedded cluster with a real kubectl: every overlay passes
// `kubectl apply --dry-run=server -k` (and stores nothing), and least privilege is checked for
// real — `steward serve` runs a project's whole life with the token of the deploy Role's
// ServiceAccount (`kubectl create token`), `kubectl auth can-i` answers through
// SelfSubjectAccessReview (`whoami` and `can-i --list` through their reviews), and for every verb
// of the Role a copy without it makes `steward check` name exactly what is missing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/json.h"
#include "process.h"

namespace steward::e2e {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kDeploy = std::string(STEWARD_SOURCE_DIR) + "/deploy";

std::string Describe(const RunResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

class DeployTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(cluster_.ok()) << cluster_.process().output();
    // `apply -k` of a fresh cluster cannot dry-run objects into a namespace that its own dry
    // run did not create (as on a real cluster): the namespace comes first.
    RunResult ns = cluster_.Kubectl({"create", "namespace", "steward"});
    ASSERT_EQ(ns.exit_code, 0) << Describe(ns);
  }

  // Applies the overlay for real and writes a kubeconfig whose user is a token of the
  // steward ServiceAccount, namespace steward.
  void ApplyAndLogInAsTheServiceAccount(const std::string& overlay) {
    RunResult apply = cluster_.Kubectl({"apply", "-k", kDeploy + "/overlays/" + overlay});
    ASSERT_EQ(apply.exit_code, 0) << Describe(apply);
    RunResult token =
        cluster_.Kubectl({"create", "token", "steward", "-n", "steward", "--duration", "2h"});
    ASSERT_EQ(token.exit_code, 0) << Describe(token);
    const std::string t = token.out.substr(0, token.out.find_last_not_of("\n") + 1);
    ASSERT_FALSE(t.empty());
    sa_kubeconfig_ = dir_.path() + "/sa.kubeconfig";
    RunResult copy = ::steward::e2e::Run({"cp", cluster_.kubeconfig(), sa_kubeconfig_});
    ASSERT_EQ(copy.exit_code, 0) << Describe(copy);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"config", "set-credentials", "steward-sa", "--token=" + t},
          std::vector<std::string>{"config", "set-context", "--current", "--user=steward-sa",
                                   "--namespace=steward"}}) {
      std::vector<std::string> argv = {"kubectl", "--kubeconfig", sa_kubeconfig_};
      argv.insert(argv.end(), args.begin(), args.end());
      RunResult r = ::steward::e2e::Run(argv);
      ASSERT_EQ(r.exit_code, 0) << Describe(r);
    }
  }

  RunResult AsServiceAccount(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"kubectl", "--kubeconfig", sa_kubeconfig_, "--cache-dir",
                                     dir_.path() + "/sa-cache"};
    argv.insert(argv.end(), args.begin(), args.end());
    return ::steward::e2e::Run(argv);
  }

  // `kubectl auth can-i --list` lines of resources ("deployments.apps [get list]"), URLs left out.
  static std::set<std::string> ResourceLines(const std::string& out) {
    std::set<std::string> lines;
    std::regex row(R"(^(\S+)\s+\[\]\s+\[\]\s+(\[[^\]]*\])\s*$)");
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (std::regex_match(line, m, row)) lines.insert(m[1].str() + " " + m[2].str());
    }
    return lines;
  }
  // The same lines built from the stored Role steward and the bootstrap policy every
  // authenticated user has.
  std::set<std::string> ExpectedResourceLines() {
    std::set<std::string> lines = {"selfsubjectreviews.authentication.k8s.io [create]",
                                   "selfsubjectaccessreviews.authorization.k8s.io [create]",
                                   "selfsubjectrulesreviews.authorization.k8s.io [create]"};
    RunResult got = cluster_.Kubectl({"get", "role", "steward", "-n", "steward", "-o", "json"});
    EXPECT_EQ(got.exit_code, 0) << Describe(got);
    const Json role = ParseJson(got.out).value();
    for (const Json& rule : role["rules"]) {
      std::string verbs;
      for (const Json& v : rule["verbs"])
        verbs += (verbs.empty() ? "" : " ") + v.get<std::string>();
      const std::string group = rule["apiGroups"][0];
      for (const Json& r : rule["resources"]) {
        const std::string name = r.get<std::string>() + (group.empty() ? "" : "." + group);
        lines.insert(name + " [" + verbs + "]");
      }
    }
    return lines;
  }

  RunResult Check(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {
        "/usr/bin/env",  "-i",    "PATH=/usr/bin:/bin", "HOME=" + dir_.path(),
        StewardBinary(), "check", "--kubeconfig",       sa_kubeconfig_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return ::steward::e2e::Run(argv, "", seconds(60));
  }

  ClusterUnderTest cluster_{{"--profile", "instant"}};
  TempDir dir_;
  std::string sa_kubeconfig_;
};

TEST_F(DeployTest, EveryOverlayPassesAServerSideDryRunAndStoresNothing) {
  for (const char* overlay : {"single-sqlite", "replicas-postgres"}) {
    RunResult dry =
        cluster_.Kubectl({"apply", "--dry-run=server", "-k", kDeploy + "/overlays/" + overlay});
    ASSERT_EQ(dry.exit_code, 0) << overlay << "\n" << Describe(dry);
    for (const char* object :
         {"serviceaccount/steward created", "role.rbac.authorization.k8s.io/steward created",
          "rolebinding.rbac.authorization.k8s.io/steward created", "service/steward created",
          "deployment.apps/steward created", "poddisruptionbudget.policy/steward created",
          "networkpolicy.networking.k8s.io/steward created"}) {
      EXPECT_THAT(dry.out, HasSubstr(std::string(object) + " (server dry run)")) << overlay;
    }
    EXPECT_THAT(dry.out, HasSubstr("configmap/steward-config-")) << overlay;
  }
  RunResult after = cluster_.Kubectl(
      {"get", "sa,role,rolebinding,configmap,deploy,pdb,netpol", "-n", "steward", "-o", "name"});
  EXPECT_EQ(after.exit_code, 0) << Describe(after);
  EXPECT_EQ(after.out, "") << "a dry run stored objects";

  // Real validation: a Role rule without verbs and a PDB with both bounds are refused.
  RunResult bad = cluster_.Kubectl({"apply", "--dry-run=server", "-n", "steward", "-f", "-"},
                                   R"(apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: broken}
rules:
- apiGroups: [""]
  resources: [pods]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: broken}
spec: {minAvailable: 1, maxUnavailable: 1}
)");
  EXPECT_NE(bad.exit_code, 0) << Describe(bad);
  EXPECT_THAT(bad.err, HasSubstr("Role.rbac.authorization.k8s.io \"broken\" is invalid: "
                                 "rules[0].verbs: Required value: verbs must contain at least one "
                                 "value"));
  EXPECT_THAT(bad.err, HasSubstr("PodDisruptionBudget.policy \"broken\" is invalid: spec: "
                                 "Invalid value:"));
  EXPECT_THAT(bad.err, HasSubstr("minAvailable and maxUnavailable cannot be both set"));
}

TEST_F(DeployTest, StewardRunsAProjectsWholeLifeWithTheDeployRolesToken) {
  ASSERT_NO_FATAL_FAILURE(ApplyAndLogInAsTheServiceAccount("single-sqlite"));
  RunResult yes = AsServiceAccount({"auth", "can-i", "create", "deployments.apps"});
  EXPECT_EQ(yes.exit_code, 0) << Describe(yes);
  EXPECT_EQ(yes.out, "yes\n");
  RunResult no = AsServiceAccount({"auth", "can-i", "patch", "deployments.apps"});
  EXPECT_NE(no.exit_code, 0) << Describe(no);
  EXPECT_EQ(no.out, "no\n");
  EXPECT_EQ(AsServiceAccount({"auth", "can-i", "get", "leases"}).out, "no\n");
  // Who the token is (SelfSubjectReview) and all it may do in its namespace
  // (SelfSubjectRulesReview): exactly the Role's rules beside the bootstrap policy.
  RunResult whoami = AsServiceAccount({"auth", "whoami", "-o", "json"});
  ASSERT_EQ(whoami.exit_code, 0) << Describe(whoami);
  const Json user = ParseJson(whoami.out).value()["status"]["userInfo"];
  EXPECT_EQ(user["username"], "system:serviceaccount:steward:steward");
  EXPECT_EQ(
      user["uid"],
      cluster_.Kubectl({"get", "sa", "steward", "-n", "steward", "-o", "jsonpath={.metadata.uid}"})
          .out);
  RunResult list = AsServiceAccount({"auth", "can-i", "--list", "--no-headers"});
  ASSERT_EQ(list.exit_code, 0) << Describe(list);
  EXPECT_EQ(ResourceLines(list.out), ExpectedResourceLines()) << list.out;
  RunResult forbidden = AsServiceAccount({"get", "configmaps"});
  EXPECT_NE(forbidden.exit_code, 0);
  EXPECT_THAT(forbidden.err,
              HasSubstr("configmaps is forbidden: User \"system:serviceaccount:steward:steward\" "
                        "cannot list resource \"configmaps\" in API group \"\" in the namespace "
                        "\"steward\""));

  BackgroundProcess serve({StewardBinary(), "serve", "--kubeconfig", sa_kubeconfig_, "-n",
                           "steward", "--data-dir", dir_.path() + "/data", "--listen",
                           "127.0.0.1:0", "--log-level", "warn"});
  auto address = WaitForServeAddress(serve);
  ASSERT_TRUE(address) << serve.output();
  const std::string server = address->server;
  const std::string token_file = address->token_file;
  auto cli = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", StewardBinary(),
                                     "project"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--server", server, "--token-file", token_file});
    return ::steward::e2e::Run(argv, "", seconds(90));
  };
  RunResult create = cli({"create", "alpha", "--team", "team-a", "--image", "nodered/node-red:4.0",
                          "--start", "--wait", "60s"});
  ASSERT_EQ(create.exit_code, 0) << Describe(create) << serve.output();
  EXPECT_THAT(create.out, HasSubstr("alpha is Running at generation 1"));
  RunResult objects =
      cluster_.Kubectl({"get", "deploy,svc,ingress,secret,pvc", "-n", "steward", "-l",
                        "app.kubernetes.io/managed-by=steward", "-o", "name"});
  EXPECT_THAT(objects.out, HasSubstr("deployment.apps/")) << Describe(objects);
  RunResult restart = cli({"restart", "alpha", "--wait", "60s"});
  EXPECT_EQ(restart.exit_code, 0) << Describe(restart);
  RunResult suspend = cli({"suspend", "alpha", "--wait", "60s"});
  ASSERT_EQ(suspend.exit_code, 0) << Describe(suspend);
  EXPECT_THAT(suspend.out, HasSubstr("Suspended"));
  RunResult del = cli({"delete", "alpha", "--wait", "60s"});
  ASSERT_EQ(del.exit_code, 0) << Describe(del) << serve.output();
  RunResult gone = cluster_.Kubectl({"get", "deploy,svc,ingress,pvc", "-n", "steward", "-l",
                                     "app.kubernetes.io/managed-by=steward", "-o", "name"});
  EXPECT_EQ(gone.out, "") << Describe(gone);
  EXPECT_THAT(serve.output(), Not(HasSubstr("forbidden")));
  EXPECT_EQ(serve.Stop(SIGTERM, seconds(30)), 0) << serve.output();
}

// The FAIL lines of `steward check`: (verb, resource) pairs.
std::set<std::pair<std::string, std::string>> MissingPermissions(const std::string& out) {
  std::set<std::pair<std::string, std::string>> missing;
  std::regex line(R"(FAIL  permission: (\S+) (\S+) in steward is not granted)");
  for (std::sregex_iterator it(out.begin(), out.end(), line), end; it != end; ++it) {
    missing.emplace((*it)[1], (*it)[2]);
  }
  return missing;
}

TEST_F(DeployTest, CheckNamesExactlyTheVerbARoleWithoutItLacks) {
  ASSERT_NO_FATAL_FAILURE(ApplyAndLogInAsTheServiceAccount("replicas-postgres"));
  RunResult all = Check({"--replicas"});
  ASSERT_EQ(all.exit_code, 0) << Describe(all);
  EXPECT_THAT(all.out, HasSubstr("ok    permissions: all 42 verbs Steward uses in steward"));

  RunResult got = cluster_.Kubectl({"get", "role", "steward", "-n", "steward", "-o", "json"});
  ASSERT_EQ(got.exit_code, 0) << Describe(got);
  const Json role = ParseJson(got.out).value();
  const Json& rules = role["rules"];
  int variants = 0;
  for (size_t i = 0; i < rules.size(); ++i) {
    for (const auto& verb_json : rules[i]["verbs"]) {
      const std::string verb = verb_json.get<std::string>();
      Json without = role;
      without["metadata"].erase("resourceVersion");
      Json& verbs = without["rules"][i]["verbs"];
      verbs.erase(std::find(verbs.begin(), verbs.end(), verb_json));
      if (verbs.empty()) without["rules"].erase(i);
      RunResult replace = cluster_.Kubectl({"replace", "-f", "-"}, DumpJson(without));
      ASSERT_EQ(replace.exit_code, 0) << Describe(replace);

      std::set<std::pair<std::string, std::string>> expected;
      const std::string group = rules[i]["apiGroups"][0].get<std::string>();
      for (const auto& r : rules[i]["resources"]) {
        expected.emplace(verb,
                         group.empty() ? r.get<std::string>() : r.get<std::string>() + "." + group);
      }
      RunResult check = Check({"--replicas"});
      EXPECT_EQ(check.exit_code, 1) << verb << " of rule " << i << "\n" << Describe(check);
      EXPECT_EQ(MissingPermissions(check.out), expected) << verb << " of rule " << i << "\n"
                                                         << check.out;
      ++variants;
    }
  }
  EXPECT_EQ(variants, 30);  // 6 + 6 + 6 + 2 + 4 + 2 verbs in the base, 4 for the Leases
  Json restored = role;
  restored["metadata"].erase("resourceVersion");
  ASSERT_EQ(cluster_.Kubectl({"replace", "-f", "-"}, DumpJson(restored)).exit_code, 0);
  EXPECT_EQ(Check({"--replicas"}).exit_code, 0);
}

}  // namespace
}  // namespace steward::e2e
