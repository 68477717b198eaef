#include <unistd.h>

#include <climits>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "torture/torture.h"

namespace steward::cli {
namespace {

struct TortureFlags {
  torture::TortureOptions options;
  int quiesce_seconds = 300;
  int orphan_grace_seconds = 30;
  int unreachable_grace_seconds = 3;
};

// The running executable: the torture starts copies of it as `steward cluster` and `serve`.
std::string SelfPath() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace

void AddTortureCommand(CLI::App& app) {
  auto flags = std::make_shared<TortureFlags>();
  CLI::App* cmd = app.add_subcommand(
      "torture",
      "Random operations on many projects through the REST API against a hostile embedded "
      "cluster, with an oracle checking every claim (docs/torture.md). Exit 0: no violation; 1: "
      "violations (each printed with the seed that replays it); 2: the run could not start");
  auto& o = flags->options;
  cmd->add_option("--seed", o.seed, "Seeds the workload, the cluster and the kills")
      ->capture_default_str();
  cmd->add_option("--projects", o.projects, "Projects")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--agents", o.agents, "MQTT schema agents driven beside the projects")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--ops", o.plan.ops, "Operations per project")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--clients", o.clients, "Concurrent driver threads")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--max-gap-ms", o.plan.max_gap_ms, "Longest pause before an operation")
      ->capture_default_str()
      ->check(CLI::Range(0, 600000));
  cmd->add_option("--profile", o.profile,
                  "The cluster's profile (instant, realistic, hostile, FILE)")
      ->capture_default_str();
  cmd->add_option("--set", o.profile_sets, "Override a profile field: FIELD=VALUE (repeatable)");
  cmd->add_option(
         "--kill-steward", o.kill_steward,
         "SIGKILL Steward (a random replica) this many times at random moments (restarted on "
         "its data dir)")
      ->capture_default_str()
      ->check(CLI::Range(0, 10000));
  cmd->add_option("--restart-cluster", o.restart_cluster,
                  "SIGKILL a cluster process this many times (restarted on its data dir within "
                  "0.5-2 s)")
      ->capture_default_str()
      ->check(CLI::Range(0, 10000));
  cmd->add_option("--clusters", o.clusters,
                  "Clusters (steward cluster processes) Steward places the projects over")
      ->capture_default_str()
      ->check(CLI::Range(1, 8));
  cmd->add_option("--kill-cluster", o.kill_cluster,
                  "SIGKILL a cluster this many times and keep it down past its unreachable grace "
                  "(needs --clusters 2 or more)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--unreachable-grace", flags->unreachable_grace_seconds,
                  "Seconds each cluster may not answer before its projects say Unknown "
                  "(clusters[].unreachableGrace)")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  cmd->add_option(
         "--replicas", o.replicas,
         "steward serve replicas sharing the projects (more than one: --database postgres)")
      ->capture_default_str()
      ->check(CLI::Range(1, 16));
  cmd->add_option("--database", o.database,
                  "sqlite (each replica's data dir) or postgres (a server the run starts itself)")
      ->capture_default_str()
      ->check(CLI::IsMember({"sqlite", "postgres"}));
  cmd->add_option("--restart-database", o.restart_database,
                  "Stop and start the PostgreSQL server this many times at random moments")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--work-dir", o.work_dir, "Data dirs and logs (default: a new temp dir)");
  cmd->add_option("--quiesce-timeout", flags->quiesce_seconds,
                  "Seconds for every project to reach its last requested state")
      ->capture_default_str()
      ->check(CLI::Range(1, 86400));
  cmd->add_option("--orphan-grace", flags->orphan_grace_seconds,
                  "Seconds an object may belong to no project")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  cmd->add_option("--progress-deadline", o.progress_deadline_seconds,
                  "Steward's engine.progressDeadlineSeconds (a failing image shows as Failed)")
      ->capture_default_str()
      ->check(CLI::Range(1, 86400));
  cmd->add_option("--steward-binary", o.steward_binary,
                  "The steward executable to run as cluster and server (default: this one)");
  cmd->add_option("--log-level", o.steward_log_level, "Steward's log level (in steward.log)")
      ->capture_default_str()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
  cmd->callback([flags] {
    auto options = flags->options;
    if (options.steward_binary.empty()) options.steward_binary = SelfPath();
    options.quiesce_timeout = std::chrono::seconds(flags->quiesce_seconds);
    options.orphan_grace = std::chrono::seconds(flags->orphan_grace_seconds);
    options.unreachable_grace = std::chrono::seconds(flags->unreachable_grace_seconds);
    auto report = torture::RunTorture(options, std::cout);
    if (!report.ok()) {
      std::cerr << "steward torture: " << report.error().ToString() << "\n";
      SetExitCode(kExitUsage);
      return;
    }
    std::cout << "work dir: " << report->work_dir << "\n";
    SetExitCode(report->violations.empty() ? kExitOk : kExitFailed);
  });
}

}  // namespace steward::cli
