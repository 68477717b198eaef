// `steward migrate --from driver-k8s`: hands the instances and MQTT schema agents FlowFuse's
// driver-k8s created over to Steward without re-creating anything (docs/migration.md).
//
// Per instance, in this order (why in docs/migration.md "Order of steps"):
//   1. plan (read only): map the driver's objects to a Steward project and say what differs;
//   2. ask Steward's API whether it already has the project (same id: a rerun; another id: an
//      error, nothing changed);
//   3. relabel the objects in Kubernetes (steward.io/project, managed-by, and the
//      steward.io/migrating marker that keeps orphan removal away from them);
//   4. PUT the project through the API, its credentials as supplied values (no rotation), with
//      its id and start=true: the engine then adopts the objects and rolls the Deployment once;
//   5. remove the marker; 6. wait until Steward reports the project Running.
// Per agent the same steps through /v1/agents (the id is the one the plan labels the objects
// with; start when the driver's agent was running), and then: 7. check that the Deployment and
// Service Steward runs it with are the adopted ones (same uids); 8. delete the bare Pod an older
// driver-k8s made, once Steward's own Deployment is Running beside it.
// Exit 0 when every instance is migrated (or already was), 1 when some could not be, 2 for
// usage, configuration or connection errors before anything changed.
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api_client/api_client.h"
#include "app/app.h"
#include "cli/api_flags.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/kube_flags.h"
#include "common/json_access.h"
#include "common/log.h"
#include "engine/migrate/driver_k8s.h"
#include "kube/client/client.h"
#include "kube/transport/transport.h"
#include "net/http.h"

namespace steward::cli {
namespace {

using engine::migrate::AgentPlan;
using engine::migrate::InstancePlan;
using Action = engine::migrate::InstancePlan::Action;

struct MigrateFlags {
  std::string from;
  KubeFlags kube;
  GlobalFlags api;
  std::string config_file;
  std::string cluster;  // the Steward cluster the instances are placed on; "" = placement's
  bool dry_run = false;
  std::string output = "text";
  std::string wait_timeout = "10m";
  bool no_wait = false;
};

int Fail(const std::string& message, int code) {
  std::fflush(stdout);
  std::fprintf(stderr, "steward migrate: %s\n", message.c_str());
  return code;
}

std::string ProjectPath(const std::string& name) {
  return "/v1/projects/" + net::PercentEncode(name);
}
std::string AgentPath(const std::string& name) { return "/v1/agents/" + net::PercentEncode(name); }

struct Result {
  std::string kind = "project";  // project | agent
  std::string name;
  std::string outcome;  // migrated | managed | failed
  std::string message;
  int64_t generation = 0;
  std::string phase;
  std::string want = "Running";      // the phase that ends the wait
  const AgentPlan* agent = nullptr;  // kind agent

  std::string path() const { return kind == "agent" ? AgentPath(name) : ProjectPath(name); }
};

// Steps 2 to 5 for one instance or agent (`path`: its API path); on failure `r.outcome` is
// "failed" and says which step. `taken` words the refusal when Steward already has the name
// with another id (given that id).
template <typename PlanT>
void MigrateRecord(const kube::Client& kube, const std::string& ns, api_client::ApiClient& api,
                   const PlanT& p, const std::string& path,
                   const std::function<std::string(const std::string&)>& taken, Result& r) {
  auto failed = [&](std::string message) {
    r.outcome = "failed";
    r.message = std::move(message);
  };
  bool stored = false;
  auto got = api.Get(path);
  if (got.ok()) {
    if (GetString(*got, "id") != p.id) return failed(taken(GetString(*got, "id")));
    const std::string want = GetString(p.spec, "cluster");
    if (!want.empty() && GetString(*got, "cluster") != want) {
      return failed("Steward already has it on cluster " + GetString(*got, "cluster") + ", not " +
                    want + "; nothing changed");
    }
    stored = true;
    r.generation = GetInt(*got, "generation");
  } else if (api.last_error().http_status != 404) {
    return failed("GET " + path + ": " + got.error().message() + "; nothing changed");
  }
  if (Status s = engine::migrate::Relabel(kube, ns, p); !s.ok()) {
    return failed("relabel: " + s.message() + " (run again to go on)");
  }
  if (!stored) {
    Json body = {{"spec", p.spec}, {"id", p.id}, {"start", p.start}};
    auto put = api.Put(path, body);
    if (!put.ok()) {
      return failed("PUT " + path + ": " + put.error().message() +
                    " (the objects stay labelled and marked steward.io/migrating, so orphan "
                    "removal leaves them; fix the cause and run again)");
    }
    r.generation = GetInt(*put, "generation");
  }
  if (Status s = engine::migrate::ClearMarkers(kube, ns, p); !s.ok()) {
    return failed("removing the steward.io/migrating marker: " + s.message() +
                  " (run again to go on)");
  }
  r.outcome = "migrated";
  r.message = stored ? "already stored; relabelling finished" : "handed to Steward";
}

void MigrateOne(const kube::Client& kube, const std::string& ns, api_client::ApiClient& api,
                const InstancePlan& p, Result& r) {
  MigrateRecord(
      kube, ns, api, p, ProjectPath(p.name),
      [&](const std::string& other) {
        return "Steward already has a project " + p.name + " with id " + other +
               " (the Deployment's is " + p.id + "); nothing changed";
      },
      r);
}

void MigrateAgent(const kube::Client& kube, const std::string& ns, api_client::ApiClient& api,
                  const AgentPlan& a, Result& r) {
  MigrateRecord(
      kube, ns, api, a, AgentPath(a.name),
      [&](const std::string& other) {
        return "Steward already has an agent " + a.name + " with id " + other +
               ", not this one's " + a.id +
               "; nothing changed (delete that agent in Steward, or the driver's objects, then "
               "run again)";
      },
      r);
}

// Steps 7 and 8 for an agent Steward reports in the phase wanted: the adopted objects are the
// ones it runs, and the bare Pod goes (its replacement is ready and the Service selects it).
void FinishAgent(const kube::Client& kube, const std::string& ns, Result& r,
                 std::chrono::steady_clock::time_point deadline) {
  const AgentPlan& a = *r.agent;
  if (r.outcome != "migrated") return;
  if (r.phase != r.want) {
    if (a.bare_pod) r.message += "; Pod " + a.bare_pod->name + " kept until the agent is " + r.want;
    return;
  }
  auto failed = [&](std::string message) {
    r.outcome = "failed";
    r.message += "; " + message;
  };
  if (a.start) {
    if (Status s = engine::migrate::CheckAdopted(kube, ns, a); !s.ok()) return failed(s.message());
  }
  if (!a.bare_pod) return;
  auto deleted = engine::migrate::DeleteBarePod(kube, ns, a);
  if (!deleted.ok()) {
    return failed("deleting Pod " + a.bare_pod->name + ": " + deleted.error().message() +
                  " (run again to go on)");
  }
  for (bool gone = *deleted; !gone;) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return failed("Pod " + a.bare_pod->name + " is still terminating (run again to go on)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));  // polling the cluster
    auto g = engine::migrate::BarePodGone(kube, ns, a);
    if (!g.ok()) return failed("Pod " + a.bare_pod->name + ": " + g.error().message());
    gone = *g;
  }
  r.message += "; Pod " + a.bare_pod->name + " (driver-k8s's) replaced";
}

// Step 6: every migrated project (agent) in the phase wanted (Running, or Suspended for an
// agent that was not running) at (at least) the generation its PUT answered.
void WaitRunning(api_client::ApiClient& api, std::vector<Result>& results,
                 std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    bool pending = false;
    for (Result& r : results) {
      if (r.outcome != "migrated" || r.phase == r.want || r.phase == "Failed") continue;
      auto got = api.Get(r.path());
      if (!got.ok()) {
        r.phase = "unknown (" + got.error().message() + ")";
        pending = true;
        continue;
      }
      const Json& status = MemberOrNull(*got, "status");
      const std::string phase = GetString(status, "phase");
      const bool current = GetInt(status, "observedGeneration") >= r.generation;
      r.phase = current ? phase : "Pending";
      if (current && phase == "Failed") {
        r.message +=
            "; Failed: " + GetString(status, "reason") + ": " + GetString(status, "message");
      }
      if (r.phase != r.want && r.phase != "Failed") pending = true;
    }
    if (!pending || std::chrono::steady_clock::now() >= deadline) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));  // polling the API
  }
}

// Steps 2 to 5 for an agent in the plan (or nothing, for an error or one already Steward's).
Result StartAgent(const kube::Client& kube, const std::string& ns, api_client::ApiClient& api,
                  const AgentPlan& a) {
  Result r;
  r.kind = "agent";
  r.name = a.name;
  r.agent = &a;
  r.want = a.start ? "Running" : "Suspended";
  if (a.action == Action::kError) {
    r.outcome = "failed";
    r.message = a.error + " (nothing changed)";
  } else if (a.action == Action::kManaged) {
    r.outcome = "managed";
    r.message = "already Steward's";
    bool marked = false;
    for (const auto& o : a.objects) marked |= o.marked;
    if (marked) {
      if (Status s = engine::migrate::ClearMarkers(kube, ns, a); !s.ok()) {
        r.outcome = "failed";
        r.message = "removing the steward.io/migrating marker: " + s.message();
      }
    }
  } else {
    MigrateAgent(kube, ns, api, a, r);
  }
  return r;
}

int RunMigrate(const MigrateFlags& flags) {
  spdlog::set_level(spdlog::level::warn);
  if (flags.from != engine::migrate::kFromDriverK8s) {
    return Fail("--from: only driver-k8s is known (got \"" + flags.from + "\")", kExitUsage);
  }
  if (flags.output != "text" && flags.output != "json") {
    return Fail("--output: text or json (got \"" + flags.output + "\")", kExitUsage);
  }
  engine::EngineConfig config;
  KubeFlags kube_flags = flags.kube;
  if (!flags.cluster.empty() && !engine::IsDns1123Label(flags.cluster)) {
    return Fail("--cluster: a cluster's name, a DNS label (got \"" + flags.cluster + "\")",
                kExitUsage);
  }
  if (!flags.config_file.empty()) {
    auto serve = app::LoadServeConfig(flags.config_file);
    if (!serve.ok()) return Fail("--config: " + serve.error().message(), kExitUsage);
    config = serve->engine;
    if (!flags.cluster.empty() && !serve->clusters.empty()) {
      // The cluster's own engine section and, unless flags say otherwise, how it is reached.
      const app::ServeConfig::Cluster* c = nullptr;
      for (const auto& each : serve->clusters) c = each.name == flags.cluster ? &each : c;
      if (c == nullptr) {
        return Fail("--cluster: the configuration lists no cluster \"" + flags.cluster + "\"",
                    kExitUsage);
      }
      if (c->cluster == app::ClusterSource::kEmbedded) {
        return Fail(
            "--cluster: " + c->name + " is an embedded cluster (driver-k8s never ran there)",
            kExitUsage);
      }
      config = c->engine;
      if (kube_flags.kubeconfig.empty() && kube_flags.context.empty() && !kube_flags.in_cluster) {
        kube_flags.kubeconfig = c->kubeconfig;
        kube_flags.context = c->context;
        kube_flags.in_cluster = c->cluster == app::ClusterSource::kInCluster;
      }
    }
  }
  if (kube_flags.namespace_name.empty() && !flags.config_file.empty()) {
    kube_flags.namespace_name = config.namespace_name;
  }
  auto rest = LoadRestConfig(kube_flags);
  if (!rest.ok()) return Fail("kubeconfig: " + rest.error().message(), kExitUsage);
  config.namespace_name = rest->namespace_name;
  const std::string ns = rest->namespace_name;
  auto transport = kube::Transport::Create(*rest, kube::TransportOptions{});
  if (!transport.ok()) return Fail("kubernetes: " + transport.error().message(), kExitUsage);
  kube::Client kube(*transport);

  auto plan = engine::migrate::BuildPlan(kube, ns, config);
  if (!plan.ok()) return Fail(plan.error().message(), ExitCodeForStatus(plan.error().code()));
  if (!flags.cluster.empty()) {
    // Placed where their objects are: the put names the cluster (spec.cluster).
    for (InstancePlan& p : plan->instances) {
      p.spec["cluster"] = flags.cluster;
      p.public_spec["cluster"] = flags.cluster;
    }
    for (AgentPlan& a : plan->agents) a.spec["cluster"] = flags.cluster;
  }
  bool unmappable = false;
  for (const InstancePlan& p : plan->instances) unmappable |= p.action == Action::kError;
  for (const AgentPlan& a : plan->agents) unmappable |= a.action == Action::kError;

  if (flags.dry_run) {
    if (flags.output == "json") {
      std::printf("%s\n", DumpJson(engine::migrate::PlanJson(*plan)).c_str());
    } else {
      std::printf("%s", engine::migrate::PlanText(*plan).c_str());
      std::printf("dry run: nothing changed\n");
    }
    std::fflush(stdout);
    return unmappable ? kExitFailed : kExitOk;
  }

  std::chrono::milliseconds wait{0};
  if (!flags.no_wait) {
    auto d = api_client::ParseDuration(flags.wait_timeout);
    if (!d.ok()) return Fail("--wait-timeout: " + d.error().message(), kExitUsage);
    wait = *d;
  }
  auto options = ClientOptions(flags.api);
  if (!options.ok()) return Fail(options.error().message(), kExitUsage);
  auto api = api_client::ApiClient::Create(*options);
  if (!api.ok()) return Fail(api.error().message(), kExitUsage);
  // Steward must answer before anything is relabelled.
  if (auto ping = (*api)->Get("/v1/projects?limit=1"); !ping.ok()) {
    return Fail(
        "Steward's API (" + (*api)->server() + "): " + ping.error().message() + "; nothing changed",
        ExitCodeForCall(ping.error(), (*api)->last_error().http_status));
  }

  if (flags.output == "text") std::printf("%s", engine::migrate::PlanText(*plan).c_str());
  std::vector<Result> results;
  for (const InstancePlan& p : plan->instances) {
    Result r;
    r.name = p.name;
    if (p.action == Action::kError) {
      r.outcome = "failed";
      r.message = p.error + " (nothing changed)";
    } else if (p.action == Action::kManaged) {
      r.outcome = "managed";
      r.message = "already Steward's";
      bool marked = false;
      for (const auto& o : p.objects) marked |= o.marked;
      if (marked) {
        if (Status s = engine::migrate::ClearMarkers(kube, ns, p); !s.ok()) {
          r.outcome = "failed";
          r.message = "removing the steward.io/migrating marker: " + s.message();
        }
      }
    } else {
      MigrateOne(kube, ns, **api, p, r);
    }
    results.push_back(std::move(r));
  }
  for (const AgentPlan& a : plan->agents) results.push_back(StartAgent(kube, ns, **api, a));
  const auto deadline = std::chrono::steady_clock::now() + wait;
  if (wait.count() > 0) WaitRunning(**api, results, wait);
  for (Result& r : results) {
    if (r.agent != nullptr) FinishAgent(kube, ns, r, deadline);
  }

  int code = kExitOk;
  Json out = Json::array();
  for (const Result& r : results) {
    const bool ok = r.outcome == "managed" ||
                    (r.outcome == "migrated" && (wait.count() == 0 || r.phase == r.want));
    if (!ok) code = kExitFailed;
    if (flags.output == "json") {
      out.push_back({{"kind", r.kind},
                     {"name", r.name},
                     {"outcome", r.outcome},
                     {"message", r.message},
                     {"generation", r.generation},
                     {"phase", r.phase}});
    } else {
      std::printf("%-8s %s: %s%s\n", ok ? "ok" : "FAILED", r.name.c_str(), r.message.c_str(),
                  r.phase.empty() ? "" : (" (" + r.phase + ")").c_str());
    }
  }
  if (flags.output == "json") {
    Json j = engine::migrate::PlanJson(*plan);
    j["results"] = std::move(out);
    std::printf("%s\n", DumpJson(j).c_str());
  }
  std::fflush(stdout);
  return code;
}

}  // namespace

void AddMigrateCommand(CLI::App& app) {
  auto flags = std::make_shared<MigrateFlags>();
  auto* cmd = app.add_subcommand(
      "migrate",
      "Take over the instances and MQTT schema agents FlowFuse's driver-k8s created (no "
      "re-create, no data or credential change): plan with --dry-run, then adopt");
  cmd->add_option("--from", flags->from, "What created the objects: driver-k8s")->required();
  AddKubeFlags(*cmd, flags->kube);
  AddGlobalFlags(*cmd, flags->api);
  cmd->add_option("--config", flags->config_file,
                  "Steward's config file (as given to `steward serve`): its engine section says "
                  "what Steward renders, and its namespace is the default for -n");
  cmd->add_option("--cluster", flags->cluster,
                  "The Steward cluster the instances run on (a name of the configuration's "
                  "clusters:): their records are placed there, and with --config the cluster's "
                  "kubeconfig, context and engine section are used unless flags give them");
  cmd->add_flag("--dry-run", flags->dry_run, "Print the plan and change nothing");
  cmd->add_option("--output,-o", flags->output, "text or json")->capture_default_str();
  cmd->add_option("--wait-timeout", flags->wait_timeout,
                  "How long to wait for the migrated projects and agents to be Running")
      ->capture_default_str();
  cmd->add_flag("--no-wait", flags->no_wait, "Do not wait for Running");
  cmd->callback([flags] { SetExitCode(RunMigrate(*flags)); });
}

}  // namespace steward::cli
