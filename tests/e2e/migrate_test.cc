// `steward migrate --from driver-k8s` end to end: instances rendered as FlowFuse's driver-k8s
// renders them (testdata/driver_k8s_*.json) are created on the embedded cluster of a running
// `steward serve`, with pods running; the dry run prints the plan and changes nothing; the real
// run adopts them with every uid kept, the pods' credentials unchanged, the instance answering
// through the ingress listener throughout; a second run changes nothing. MQTT schema agents
// (testdata/driver_k8s_agent*.json, rendered by the driver's own code): one of today's driver
// (a Deployment) adopted with its uids, one of a driver before v2.31.0 (a bare Pod) replaced by
// Steward's Deployment, both answering throughout with the token the platform issued.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "common/json.h"
#include "process.h"

namespace steward::e2e {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Substitute(std::string text, const std::map<std::string, std::string>& values) {
  for (const auto& [key, value] : values) {
    const std::string needle = "@" + key + "@";
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at)) {
      text.replace(at, needle.size(), value);
      at += value.size();
    }
  }
  return text;
}

struct Instance {
  std::string id, name, service, image, custom_host;
  std::map<std::string, std::string> values;
};

Instance MakeInstance(const std::string& id, const std::string& name, const std::string& host) {
  Instance i;
  i.id = id;
  i.name = name;
  i.service = (name[0] >= '0' && name[0] <= '9') ? "srv-" + name : name;
  i.image = "flowfuse/node-red:4.0";
  i.custom_host = host;
  i.values = {{"ID", id},
              {"NAME", name},
              {"SERVICE", i.service},
              {"IMAGE", i.image},
              {"DOMAIN", "localhost"},
              {"TEAM", "teamX" + name.substr(0, 2)},
              {"CLIENT_ID", "ffp_" + name},
              {"CLIENT_SECRET", "secret-of-" + name + "-Zq9"},
              {"TOKEN", "ffpt_token_" + name},
              {"BROKER_PASSWORD", "broker-pw-" + name},
              {"NR_SECRET", "nr-secret-" + name},
              {"HOST", host}};
  return i;
}

class MigrateE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    serve_ = std::make_unique<BackgroundProcess>(std::vector<std::string>{
        StewardBinary(), "serve", "--embedded-cluster", "instant", "--data-dir",
        dir_.path() + "/data", "--listen", "127.0.0.1:0", "--log-level", "warn", "--namespace",
        "steward", "--kubeconfig-out", dir_.path() + "/kubeconfig"});
    auto api = serve_->WaitForLine("  API ", seconds(60));
    auto token = serve_->WaitForLine("  API token ", seconds(10));
    auto cluster = serve_->WaitForLine("  Cluster ", seconds(10));
    ASSERT_TRUE(api && token && cluster) << serve_->output();
    std::smatch m;
    ASSERT_TRUE(std::regex_search(*api, m, std::regex(R"((https?://\S+))")));
    server_ = m[1];
    ASSERT_TRUE(std::regex_search(*token, m, std::regex(R"(API token +(\S+))")));
    token_file_ = m[1];
    ASSERT_TRUE(std::regex_search(*cluster, m, std::regex(R"(ingress http://127\.0\.0\.1:(\d+))")))
        << *cluster;
    ingress_port_ = static_cast<uint16_t>(std::stoi(m[1]));
  }

  RunResult Kubectl(const std::vector<std::string>& args, const std::string& input = "") {
    std::vector<std::string> argv = {"kubectl",
                                     "--kubeconfig",
                                     dir_.path() + "/kubeconfig",
                                     "--cache-dir",
                                     dir_.path() + "/kube-cache",
                                     "-n",
                                     "steward"};
    argv.insert(argv.end(), args.begin(), args.end());
    return ::steward::e2e::Run(argv, input, seconds(60));
  }

  RunResult Migrate(const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {StewardBinary(),
                                     "migrate",
                                     "--from",
                                     "driver-k8s",
                                     "--kubeconfig",
                                     dir_.path() + "/kubeconfig",
                                     "-n",
                                     "steward",
                                     "--server",
                                     server_,
                                     "--token-file",
                                     token_file_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return ::steward::e2e::Run(argv, "", seconds(120));
  }

  void Create(const Instance& i) {
    const std::string dir = std::string(STEWARD_SOURCE_DIR) + "/tests/e2e/testdata/";
    std::string objects = Substitute(ReadFile(dir + "driver_k8s_instance.json"), i.values);
    // driver-k8s puts enableServiceLinks beside the pod spec; its client sends no
    // fieldValidation, so a server drops the field with a warning, as --validate=warn does.
    RunResult r = Kubectl({"create", "--validate=warn", "-f", "-"}, objects);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    if (!i.custom_host.empty()) {
      r = Kubectl({"create", "--validate=warn", "-f", "-"},
                  Substitute(ReadFile(dir + "driver_k8s_custom_ingress.json"), i.values));
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }

  // kind/name → uid of every object of the instance.
  std::map<std::string, std::string> Uids(const Instance& i) {
    std::map<std::string, std::string> uids;
    std::vector<std::string> objects = {"deployment/" + i.name, "service/" + i.service,
                                        "ingress/" + i.name, "pvc/" + i.id + "-pvc"};
    if (!i.custom_host.empty()) objects.push_back("ingress/" + i.name + "-custom");
    for (const std::string& o : objects) {
      RunResult r = Kubectl({"get", o, "-o", "jsonpath={.metadata.uid}"});
      uids[o] = r.exit_code == 0 ? r.out : "(missing: " + r.err + ")";
    }
    return uids;
  }

  // The env the instance's pods started with, from each pod's launcher (GET :2880/flowforge/env
  // through the API server's pod proxy); pod name → env.
  std::map<std::string, Json> PodEnv(const Instance& i) {
    std::map<std::string, Json> out;
    RunResult pods = Kubectl({"get", "pods", "-l", "app=" + i.id, "-o",
                              "jsonpath={range .items[*]}{.metadata.name}{\"\\n\"}{end}"});
    std::istringstream in(pods.out);
    std::string pod;
    while (std::getline(in, pod)) {
      if (pod.empty()) continue;
      RunResult env = Kubectl(
          {"get", "--raw", "/api/v1/namespaces/steward/pods/" + pod + ":2880/proxy/flowforge/env"});
      auto j = ParseJson(env.out);
      out[pod] = j.ok() ? *j : Json(env.err);
    }
    return out;
  }

  bool WaitAvailable(const Instance& i) {
    RunResult r = Kubectl({"rollout", "status", "deployment/" + i.name, "--timeout=60s"});
    return r.exit_code == 0;
  }

  TempDir dir_;
  std::unique_ptr<BackgroundProcess> serve_;
  std::string server_, token_file_;
  uint16_t ingress_port_ = 0;
};

TEST_F(MigrateE2E, DriverK8sInstancesAreAdoptedKeepingUidsDataAndCredentialsWithoutDowntime) {
  const Instance alpha =
      MakeInstance("3f0c1a52-7d1e-4c8b-9a55-0c7f3e9d2b11", "alpha", "nodered.customer.example.com");
  const Instance beta = MakeInstance("8d2e4b61-1a3c-4f7e-b2d9-5e6f7a8b9c02", "7beta", "");
  for (const Instance* i : {&alpha, &beta}) {
    ASSERT_NO_FATAL_FAILURE(Create(*i));
    ASSERT_TRUE(WaitAvailable(*i)) << i->name;
  }
  std::map<std::string, std::map<std::string, std::string>> uids_before;
  std::map<std::string, std::map<std::string, Json>> env_before;
  for (const Instance* i : {&alpha, &beta}) {
    uids_before[i->name] = Uids(*i);
    env_before[i->name] = PodEnv(*i);
    ASSERT_EQ(env_before[i->name].size(), 1u) << i->name;
    EXPECT_EQ(env_before[i->name].begin()->second.value("FORGE_CLIENT_SECRET", ""),
              i->values.at("CLIENT_SECRET"));
    ASSERT_EQ(HttpGet(ingress_port_, i->name + ".localhost", "/").status, 200) << i->name;
  }

  // The dry run: the plan, no credential value in it, nothing changed.
  RunResult dry = Migrate({"--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.out << dry.err;
  EXPECT_THAT(dry.out, HasSubstr("project alpha (id " + alpha.id + "): migrate"));
  EXPECT_THAT(dry.out, HasSubstr("project 7beta (id " + beta.id + "): migrate"));
  EXPECT_THAT(dry.out, HasSubstr("relabel  Deployment alpha, PersistentVolumeClaim " + alpha.id +
                                 "-pvc, Service alpha, Ingress alpha, Ingress alpha-custom"));
  EXPECT_THAT(dry.out, HasSubstr("Service srv-7beta"));
  EXPECT_THAT(dry.out,
              HasSubstr("Deployment alpha: spec.template.spec.containers[node-red].env[FORGE_"
                        "CLIENT_SECRET].valueFrom"));
  EXPECT_THAT(dry.out, HasSubstr("rollout  rolling"));
  EXPECT_THAT(dry.out, HasSubstr("dry run: nothing changed"));
  RunResult dry_json = Migrate({"--dry-run", "-o", "json"});
  ASSERT_EQ(dry_json.exit_code, 0) << dry_json.err;
  auto plan = ParseJson(dry_json.out);
  ASSERT_TRUE(plan.ok()) << dry_json.out;
  ASSERT_EQ((*plan)["projects"].size(), 2u);
  const Json& pa = (*plan)["projects"][0];
  EXPECT_EQ(pa["name"], "7beta");
  EXPECT_EQ(pa["action"], "migrate");
  EXPECT_EQ(pa["rollout"], "rolling");
  EXPECT_EQ(pa["spec"]["stack"]["cpu"], 10);
  // Placed on the cluster named, in the plan as in the put.
  RunResult placed = Migrate({"--dry-run", "-o", "json", "--cluster", "default"});
  ASSERT_EQ(placed.exit_code, 0) << placed.err;
  EXPECT_EQ((*ParseJson(placed.out))["projects"][0]["spec"]["cluster"], "default") << placed.out;
  EXPECT_EQ(pa["spec"]["stack"]["memory"], 256);
  EXPECT_EQ(pa["spec"]["storage"]["accessMode"], "ReadWriteMany");
  EXPECT_EQ(pa["spec"]["url"], "http://7beta.localhost");
  EXPECT_EQ((*plan)["projects"][1]["spec"]["customHostname"], "nodered.customer.example.com");
  for (const Instance* i : {&alpha, &beta}) {
    for (const std::string key : {"CLIENT_SECRET", "TOKEN", "BROKER_PASSWORD", "NR_SECRET"}) {
      EXPECT_THAT(dry.out + dry_json.out, Not(HasSubstr(i->values.at(key)))) << key;
    }
    EXPECT_EQ(Uids(*i), uids_before[i->name]);
    EXPECT_EQ(Kubectl({"get", "deployment", i->name, "-o",
                       "jsonpath={.metadata.labels.steward\\.io/project}"})
                  .out,
              "");
  }

  // The real run, sampled through the ingress listener all the while.
  std::atomic<bool> stop{false};
  std::atomic<int> ok{0}, bad{0};
  std::string first_bad;
  std::thread sampler([&] {
    while (!stop.load()) {
      for (const Instance* i : {&alpha, &beta}) {
        HttpAnswer a = HttpGet(ingress_port_, i->name + ".localhost", "/");
        if (a.status == 200) {
          ++ok;
        } else if (bad++ == 0) {
          first_bad = i->name + ": " + std::to_string(a.status) + " " + a.body;
        }
      }
    }
  });
  RunResult real = Migrate({"--wait-timeout", "90s"});
  // A few more samples after Running.
  const int at_end = ok.load();
  while (ok.load() < at_end + 20 && bad.load() == 0) std::this_thread::yield();
  stop = true;
  sampler.join();
  ASSERT_EQ(real.exit_code, 0) << real.out << real.err;
  EXPECT_THAT(real.out, HasSubstr("ok       alpha: handed to Steward (Running)"));
  EXPECT_THAT(real.out, HasSubstr("ok       7beta: handed to Steward (Running)"));
  EXPECT_EQ(bad.load(), 0) << first_bad;
  EXPECT_GT(ok.load(), 20);
  std::printf("ingress samples during the migration: %d answered 200, %d failed\n", ok.load(),
              bad.load());

  for (const Instance* i : {&alpha, &beta}) {
    EXPECT_EQ(Uids(*i), uids_before[i->name]) << i->name;
    // Rolled (plain env → Secret): new pods, the same credential values.
    std::map<std::string, Json> env_after = PodEnv(*i);
    ASSERT_EQ(env_after.size(), 1u) << i->name;
    EXPECT_NE(env_after.begin()->first, env_before[i->name].begin()->first) << i->name;
    for (const std::string key :
         {"FORGE_CLIENT_ID", "FORGE_CLIENT_SECRET", "FORGE_PROJECT_TOKEN", "FORGE_BROKER_URL",
          "FORGE_BROKER_USERNAME", "FORGE_BROKER_PASSWORD", "FORGE_NR_SECRET", "BASE_URL",
          "FORGE_TEAM_ID", "FORGE_PROJECT_ID", "FORGE_LICENSE_TYPE"}) {
      EXPECT_EQ(env_after.begin()->second.value(key, "(absent)"),
                env_before[i->name].begin()->second.value(key, "(absent before)"))
          << i->name << " " << key;
    }
    EXPECT_THAT(Kubectl({"get", "deployment", i->name, "-o", "json"}).out,
                Not(HasSubstr(i->values.at("CLIENT_SECRET"))));
    EXPECT_EQ(Kubectl({"get", "deployment", i->name, "-o",
                       "jsonpath={.spec.selector.matchLabels.app} {.spec.strategy.type}"})
                  .out,
              i->id + " RollingUpdate");
    EXPECT_EQ(Kubectl({"get", "pvc", i->id + "-pvc", "-o",
                       "jsonpath={.status.phase} {.metadata.labels.steward\\.io/project} "
                       "{.metadata.annotations.steward\\.io/migrating}"})
                  .out,
              "Bound " + i->id + " ");
  }
  EXPECT_EQ(HttpGet(ingress_port_, "nodered.customer.example.com", "/").status, 200);

  // Again: nothing to do, nothing changes.
  const std::string rv =
      Kubectl({"get", "deployment", "alpha", "-o", "jsonpath={.metadata.resourceVersion}"}).out;
  RunResult again = Migrate({});
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_THAT(again.out, HasSubstr("project alpha (id " + alpha.id + "): managed"));
  EXPECT_THAT(again.out, HasSubstr("project 7beta (id " + beta.id + "): managed"));
  EXPECT_EQ(
      Kubectl({"get", "deployment", "alpha", "-o", "jsonpath={.metadata.resourceVersion}"}).out,
      rv);
}

struct Agent {
  std::string name, team, broker, token, file;
  std::map<std::string, std::string> values;
};

Agent MakeAgent(const std::string& team, const std::string& broker, const std::string& file) {
  Agent a;
  auto lower = [](std::string v) {
    for (char& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return v;
  };
  a.team = team;
  a.broker = broker;
  a.name = "mqtt-schema-agent-" + lower(team) + "-" + lower(broker);
  a.token = "ffbt_" + lower(team) + "_Zq9-issued-by-the-platform";
  a.file = file;
  a.values = {{"TEAM", team},
              {"TEAM_LC", lower(team)},
              {"BROKER", broker},
              {"BROKER_LC", lower(broker)},
              {"TOKEN", a.token}};
  return a;
}

class MigrateAgentsE2E : public MigrateE2E {
 protected:
  void CreateAgent(const Agent& a) {
    const std::string dir = std::string(STEWARD_SOURCE_DIR) + "/tests/e2e/testdata/";
    RunResult r = Kubectl({"create", "--validate=warn", "-f", "-"},
                          Substitute(ReadFile(dir + a.file), a.values));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::string UidOf(const std::string& object) {
    RunResult r = Kubectl({"get", object, "-o", "jsonpath={.metadata.uid}"});
    return r.exit_code == 0 ? r.out : "(missing: " + r.err + ")";
  }
  // The agent's pods (label name=<agent>, which the driver's and Steward's pods carry) that are
  // not terminating, by name.
  std::vector<std::string> LivePods(const Agent& a) {
    std::vector<std::string> out;
    auto list = ParseJson(Kubectl({"get", "pods", "-l", "name=" + a.name, "-o", "json"}).out);
    if (!list.ok()) return out;
    for (const Json& p : (*list)["items"]) {
      if (!p["metadata"].contains("deletionTimestamp")) out.push_back(p["metadata"]["name"]);
    }
    return out;
  }
  // The env the pod's container started with, resolved (a secretKeyRef read from its Secret),
  // from the virtual pod's :2880/flowforge/env.
  Json PodEnv(const std::string& pod) {
    RunResult env = Kubectl(
        {"get", "--raw", "/api/v1/namespaces/steward/pods/" + pod + ":2880/proxy/flowforge/env"});
    auto j = ParseJson(env.out);
    return j.ok() ? *j : Json(env.err);
  }
  // The agent's own status through its Service (GET :3500/api/v1/status): connected (it has
  // its credentials), or why not.
  std::string ServiceStatus(const Agent& a) {
    RunResult r =
        Kubectl({"get", "--raw",
                 "/api/v1/namespaces/steward/services/" + a.name + ":3500/proxy/api/v1/status"});
    auto j = ParseJson(r.out);
    if (j.ok() && j->value("connected", false)) return "connected";
    return "exit " + std::to_string(r.exit_code) + ": " + r.out + r.err;
  }
  // Repeats `check` until it holds or the deadline passes.
  template <typename Check>
  bool Until(Check check, seconds timeout = seconds(60)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (check()) return true;
    }
    return check();
  }
  Json AgentRecord(const Agent& a) {
    RunResult r = ::steward::e2e::Run({StewardBinary(), "agent", "get", a.name, "-o", "json",
                                       "--server", server_, "--token-file", token_file_});
    auto j = ParseJson(r.out);
    return j.ok() ? *j : Json(r.out + r.err);
  }
};

TEST_F(MigrateAgentsE2E, DriverK8sAgentsAreTakenOverWithTheirUidsAndTokenWithoutAGap) {
  const Agent dep = MakeAgent("TmAlpha", "Bk1", "driver_k8s_agent.json");      // driver 2.31+
  const Agent bare = MakeAgent("TmBeta", "Bk2", "driver_k8s_agent_pod.json");  // before 2.31
  for (const Agent* a : {&dep, &bare}) ASSERT_NO_FATAL_FAILURE(CreateAgent(*a));
  ASSERT_EQ(Kubectl({"rollout", "status", "deployment/" + dep.name, "--timeout=60s"}).exit_code, 0);
  for (const Agent* a : {&dep, &bare}) {
    ASSERT_TRUE(Until([&] { return ServiceStatus(*a) == "connected"; })) << ServiceStatus(*a);
  }
  const std::string dep_uid = UidOf("deployment/" + dep.name);
  const std::string dep_svc_uid = UidOf("service/" + dep.name);
  const std::string bare_svc_uid = UidOf("service/" + bare.name);
  const std::string bare_pod_uid = UidOf("pod/" + bare.name);
  std::map<std::string, std::string> pod_before;
  for (const Agent* a : {&dep, &bare}) {
    const std::vector<std::string> pods = LivePods(*a);
    ASSERT_EQ(pods.size(), 1u) << a->name;
    pod_before[a->name] = pods[0];
    EXPECT_EQ(PodEnv(pods[0]).value("FORGE_TEAM_TOKEN", "(absent)"), a->token) << a->name;
  }
  EXPECT_EQ(pod_before[bare.name], bare.name);  // the bare Pod itself

  // The dry run: both planned, nothing changed, no token shown.
  RunResult dry = Migrate({"--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.out << dry.err;
  EXPECT_THAT(dry.out, HasSubstr("agent " + dep.name + " (team TmAlpha, broker Bk1, id "));
  EXPECT_THAT(dry.out, HasSubstr("relabel  Deployment " + dep.name + ", Service " + dep.name));
  EXPECT_THAT(dry.out, HasSubstr("replace  Pod " + bare.name + " (driver-k8s before v2.31.0)"));
  EXPECT_THAT(dry.out, HasSubstr("create   Secret "));
  EXPECT_THAT(dry.out, HasSubstr(", Deployment " + bare.name + "\n"));
  EXPECT_THAT(dry.out, HasSubstr("dry run: nothing changed"));
  RunResult dry_json = Migrate({"--dry-run", "-o", "json"});
  ASSERT_EQ(dry_json.exit_code, 0) << dry_json.err;
  auto plan = ParseJson(dry_json.out);
  ASSERT_TRUE(plan.ok()) << dry_json.out;
  ASSERT_EQ((*plan)["agents"].size(), 2u) << dry_json.out;
  const Json& pd = (*plan)["agents"][0];  // by name: tmalpha first
  const Json& pb = (*plan)["agents"][1];
  EXPECT_EQ(pd["name"], dep.name);
  EXPECT_EQ(pd["action"], "migrate");
  EXPECT_EQ(pd["rollout"], "rolling");
  EXPECT_EQ(pd["start"], true);
  EXPECT_EQ(pd["adopt"],
            (Json::array({{{"kind", "Deployment"}, {"name", dep.name}, {"uid", dep_uid}},
                          {{"kind", "Service"}, {"name", dep.name}, {"uid", dep_svc_uid}}})));
  EXPECT_EQ(pd["spec"]["team"], "TmAlpha");
  EXPECT_EQ(pd["spec"]["credentials"]["keys"], Json::array({"FORGE_TEAM_TOKEN"}));
  EXPECT_EQ(pb["name"], bare.name);
  EXPECT_EQ(pb["rollout"], "replace");
  EXPECT_EQ(pb["replace"],
            (Json::array({{{"kind", "Pod"}, {"name", bare.name}, {"uid", bare_pod_uid}}})));
  EXPECT_EQ(Kubectl({"get", "deployment", dep.name, "-o",
                     "jsonpath={.metadata.labels.steward\\.io/project}"})
                .out,
            "");
  EXPECT_EQ(UidOf("pod/" + bare.name), bare_pod_uid);

  // The real run, each agent asked through its Service all the while.
  std::atomic<bool> stop{false};
  std::atomic<int> ok{0}, bad{0};
  std::string first_bad;  // written by the sampler only
  std::thread sampler([&] {
    while (!stop.load()) {
      for (const Agent* a : {&dep, &bare}) {
        const std::string s = ServiceStatus(*a);
        if (s == "connected") {
          ++ok;
        } else if (bad++ == 0) {
          first_bad = a->name + ": " + s;
        }
      }
    }
  });
  RunResult real = Migrate({"--wait-timeout", "90s"});
  const int at_end = ok.load();
  Until([&] { return ok.load() >= at_end + 4 || bad.load() > 0; }, seconds(30));
  stop = true;
  sampler.join();
  ASSERT_EQ(real.exit_code, 0) << real.out << real.err;
  EXPECT_THAT(real.out, HasSubstr("ok       " + dep.name + ": handed to Steward (Running)"));
  EXPECT_THAT(real.out, HasSubstr("ok       " + bare.name + ": handed to Steward; Pod " +
                                  bare.name + " (driver-k8s's) replaced (Running)"));
  EXPECT_EQ(bad.load(), 0) << first_bad;
  EXPECT_GE(ok.load(), 8);
  std::printf("agent status samples during the migration: %d connected, %d not\n", ok.load(),
              bad.load());

  // Adopted: the same objects; the bare Pod replaced by Steward's Deployment.
  EXPECT_EQ(UidOf("deployment/" + dep.name), dep_uid);
  EXPECT_EQ(UidOf("service/" + dep.name), dep_svc_uid);
  EXPECT_EQ(UidOf("service/" + bare.name), bare_svc_uid);
  EXPECT_THAT(UidOf("pod/" + bare.name), HasSubstr("(missing: "));
  EXPECT_EQ(
      Kubectl({"get", "deployment", dep.name, "-o", "jsonpath={.spec.selector.matchLabels.name}"})
          .out,
      dep.name);  // the driver's selector, kept (immutable)
  for (const Agent* a : {&dep, &bare}) {
    const Json rec = AgentRecord(*a);
    EXPECT_EQ(rec.value("kind", ""), "agent") << rec;
    EXPECT_EQ(rec["status"].value("phase", ""), "Running") << rec;
    EXPECT_EQ(Kubectl({"get", "deployment", a->name, "-o",
                       "jsonpath={.metadata.labels.steward\\.io/project}"})
                  .out,
              rec.value("id", "(no id)"));
    // One pod, a new one, started with the same token, which it reads from a Secret.
    std::vector<std::string> pods;
    ASSERT_TRUE(Until([&] { return (pods = LivePods(*a)).size() == 1; })) << a->name;
    EXPECT_NE(pods[0], pod_before[a->name]) << a->name;
    EXPECT_EQ(PodEnv(pods[0]).value("FORGE_TEAM_TOKEN", "(absent)"), a->token) << a->name;
    EXPECT_EQ(Kubectl({"get", "pod", pods[0], "-o",
                       "jsonpath={.spec.containers[0].env[?(@.name==\"FORGE_TEAM_TOKEN\")]"
                       ".valueFrom.secretKeyRef.key}"})
                  .out,
              "FORGE_TEAM_TOKEN");
    EXPECT_THAT(Kubectl({"get", "deployment", a->name, "-o", "json"}).out,
                Not(HasSubstr(a->token)));
    EXPECT_EQ(ServiceStatus(*a), "connected");
  }

  // Again: nothing to do, nothing written.
  const std::string rv =
      Kubectl({"get", "deployment", dep.name, "-o", "jsonpath={.metadata.resourceVersion}"}).out;
  const std::string svc_rv =
      Kubectl({"get", "service", bare.name, "-o", "jsonpath={.metadata.resourceVersion}"}).out;
  RunResult again = Migrate({});
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  for (const Agent* a : {&dep, &bare}) {
    EXPECT_THAT(again.out, HasSubstr("agent " + a->name + " (id "));
    EXPECT_THAT(again.out, HasSubstr("): managed, already Steward's: nothing to do"));
    EXPECT_THAT(again.out, HasSubstr("ok       " + a->name + ": already Steward's"));
  }
  EXPECT_EQ(
      Kubectl({"get", "deployment", dep.name, "-o", "jsonpath={.metadata.resourceVersion}"}).out,
      rv);
  EXPECT_EQ(
      Kubectl({"get", "service", bare.name, "-o", "jsonpath={.metadata.resourceVersion}"}).out,
      svc_rv);
  for (const Agent* a : {&dep, &bare}) {
    EXPECT_THAT(dry.out + dry_json.out + real.out + real.err + again.out + again.err,
                Not(HasSubstr(a->token)));
  }
}

TEST_F(MigrateE2E, UnmappableInstanceIsNamedAndLeftAlone) {
  Instance broken = MakeInstance("5b5b5b5b-1111-4222-8333-444455556666", "broken", "");
  broken.values["TOKEN"] = "";  // driver-k8s always sets FORGE_PROJECT_TOKEN
  ASSERT_NO_FATAL_FAILURE(Create(broken));
  const auto before = Uids(broken);
  RunResult r = Migrate({});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("env[FORGE_PROJECT_TOKEN]: missing"));
  EXPECT_EQ(Uids(broken), before);
  EXPECT_EQ(Kubectl({"get", "deployment", "broken", "-o",
                     "jsonpath={.metadata.labels.steward\\.io/project}"})
                .out,
            "");
  RunResult bad =
      ::steward::e2e::Run({StewardBinary(), "migrate", "--from", "driver-k8s", "--kubeconfig",
                           dir_.path() + "/absent-kubeconfig", "--dry-run"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("kubeconfig"));
  RunResult from =
      ::steward::e2e::Run({StewardBinary(), "migrate", "--from", "driver-docker", "--dry-run"});
  EXPECT_EQ(from.exit_code, 2);
  EXPECT_THAT(from.err, HasSubstr("--from"));
  RunResult cluster = Migrate({"--dry-run", "--cluster", "Not_A_Name"});
  EXPECT_EQ(cluster.exit_code, 2);
  EXPECT_THAT(cluster.err, HasSubstr("--cluster: a cluster's name"));
}

}  // namespace
}  // namespace steward::e2e
