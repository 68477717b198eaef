#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/api_flags.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cluster/embedded_cluster.h"
#include "common/ascii.h"
#include "common/host_port.h"
#include "common/log.h"

namespace steward::cli {

namespace {

int g_exit_code = 0;

struct ClusterFlags {
  std::string listen = "127.0.0.1:0";
  std::string ingress_listen = "127.0.0.1:0";
  bool no_ingress = false;
  std::string data_dir;
  std::string kubeconfig_out;
  std::string profile = "realistic";
  std::vector<std::string> sets;
  uint64_t seed = 1;
  std::string audit_log;
  std::string token_file;  // --token-file, else $STEWARD_CLUSTER_TOKEN, else generated
  std::string log_level = "info";
};

int Fail(const std::string& message) {
  std::cerr << "steward cluster: " << message << "\n";
  return kExitUsage;
}

// The admin token to require: from --token-file, else $STEWARD_CLUSTER_TOKEN, else "" (the
// cluster generates one and keeps it in its data directory). Never from the command line, where
// every user of the machine reads it (ps, /proc/PID/cmdline).
StatusOr<std::string> AdminToken(const ClusterFlags& flags) {
  if (!flags.token_file.empty()) return ReadTokenFile(flags.token_file, "--token-file");
  const char* env = std::getenv("STEWARD_CLUSTER_TOKEN");
  return std::string(env != nullptr ? TrimAsciiWhitespace(env) : "");
}

int RunCluster(const ClusterFlags& flags) {
  auto level = spdlog::level::from_str(flags.log_level);
  spdlog::set_level(level);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");

  cluster::EmbeddedCluster::Options options;
  if (!SplitHostPort(flags.listen, &options.api_host, &options.api_port)) {
    return Fail("--listen: expected HOST:PORT, got \"" + flags.listen + "\"");
  }
  options.ingress = !flags.no_ingress;
  if (options.ingress &&
      !SplitHostPort(flags.ingress_listen, &options.ingress_host, &options.ingress_port)) {
    return Fail("--ingress-listen: expected HOST:PORT, got \"" + flags.ingress_listen + "\"");
  }
  auto profile = cluster::LoadProfile(flags.profile);
  if (!profile.ok()) return Fail("--profile: " + profile.status().message());
  for (const auto& set : flags.sets) {
    size_t eq = set.find('=');
    if (eq == std::string::npos) return Fail("--set: expected FIELD=VALUE, got \"" + set + "\"");
    Status st = cluster::SetProfileField(*profile, set.substr(0, eq), set.substr(eq + 1));
    if (!st.ok()) return Fail("--set " + set + ": " + st.message());
  }
  options.profile = *profile;
  options.data_dir = flags.data_dir;
  options.seed = flags.seed;
  options.audit_log = flags.audit_log;
  auto token = AdminToken(flags);
  if (!token.ok()) return Fail(token.status().message());
  options.token = *token;

  // Signals are taken synchronously by this thread; every other thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto cluster = cluster::EmbeddedCluster::Start(options);
  if (!cluster.ok()) return Fail(cluster.status().message());
  if (!flags.kubeconfig_out.empty()) {
    Status st = (*cluster)->WriteKubeconfig(flags.kubeconfig_out);
    if (!st.ok()) return Fail("--kubeconfig-out: " + st.message());
  }
  std::printf("Embedded cluster ready (profile %s, seed %llu)\n", profile->name.c_str(),
              static_cast<unsigned long long>(flags.seed));
  std::printf("API server:  %s\n", (*cluster)->api_url().c_str());
  if (options.ingress) std::printf("Ingress:     %s\n", (*cluster)->ingress_url().c_str());
  if (!flags.kubeconfig_out.empty()) {
    std::printf("Kubeconfig:  %s\n", flags.kubeconfig_out.c_str());
    std::printf("Try:         kubectl --kubeconfig %s get all -A\n", flags.kubeconfig_out.c_str());
  }
  std::fflush(stdout);

  int sig = 0;
  sigwait(&signals, &sig);
  LOG_INFO("received {}, shutting down", sig == SIGINT ? "SIGINT" : "SIGTERM");
  (*cluster)->Stop();
  std::printf("Embedded cluster stopped\n");
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace

int ExitCode() { return g_exit_code; }
void SetExitCode(int code) { g_exit_code = code; }

void AddClusterCommand(CLI::App& app) {
  auto flags = std::make_shared<ClusterFlags>();
  auto* cmd = app.add_subcommand(
      "cluster",
      "Run the embedded Kubernetes-compatible cluster (HTTPS API server, simulated controllers, "
      "ingress listener) until SIGINT/SIGTERM");
  cmd->add_option("--listen", flags->listen, "API server address HOST:PORT (port 0: any free)")
      ->capture_default_str();
  cmd->add_option("--ingress-listen", flags->ingress_listen,
                  "Ingress listener address HOST:PORT (port 0: any free)")
      ->capture_default_str();
  cmd->add_flag("--no-ingress", flags->no_ingress, "Do not start the ingress listener");
  cmd->add_option("--data-dir", flags->data_dir,
                  "Keep objects, CA and token here across restarts (default: memory only)");
  cmd->add_option("--kubeconfig-out", flags->kubeconfig_out,
                  "Write a kubeconfig for this cluster to FILE");
  cmd->add_option("--profile", flags->profile,
                  "Behaviour profile: instant, realistic, hostile, or a YAML/JSON file")
      ->capture_default_str();
  cmd->add_option("--set", flags->sets,
                  "Override one profile field, e.g. --set pod_ready.fixed_ms=500 (repeatable)");
  cmd->add_option("--seed", flags->seed, "Seed for every random choice (reproducible runs)")
      ->capture_default_str();
  cmd->add_option("--audit-log", flags->audit_log, "Append one JSON line per API request to FILE");
  cmd->add_option("--token-file", flags->token_file,
                  "File holding the bearer token to require (default: $STEWARD_CLUSTER_TOKEN, "
                  "else generated and kept in --data-dir)");
  cmd->add_option("--log-level", flags->log_level, "trace, debug, info, warn, error")
      ->capture_default_str()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  cmd->callback([flags] { SetExitCode(RunCluster(*flags)); });
}

}  // namespace steward::cli
