// steward: the command-line entry point.
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <string>

#include "cli/commands.h"
#include "cli/exit_codes.h"

namespace {

// Every listener caps its open connections (512 each), but a process with four listeners, the
// store and the cluster client needs more descriptors than the usual soft limit of 1024 when
// clients hold many idle connections (520 idle sockets made the API fail with EMFILE). The hard
// limit is what the operator allows: take all of it, as Go's runtime does since 1.19.
void RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);  // best effort: the soft limit stays on failure
}

}  // namespace

int main(int argc, char** argv) {
  RaiseOpenFileLimit();
  CLI::App app{"Steward: provisions and runs customer projects on Kubernetes"};
  app.require_subcommand(1);
  // CMake's project version (STEWARD_VERSION, set for this file only); exits 0.
  app.set_version_flag("--version", std::string("steward ") + STEWARD_VERSION);
  steward::cli::AddClusterCommand(app);
  steward::cli::AddCheckCommand(app);
  steward::cli::AddDemoCommand(app);
  steward::cli::AddServeCommand(app);
  steward::cli::AddTortureCommand(app);
  steward::cli::AddProjectCommand(app);
  steward::cli::AddAgentCommand(app);
  steward::cli::AddMigrateCommand(app);
  steward::cli::AddCompletionCommand(app);  // last: it walks the commands above
  std::string footer = "Exit codes (docs/cli.md):";
  for (const auto& c : steward::cli::ExitCodeTable()) {
    footer += "\n  " + std::to_string(c.code) + "  " + std::string(c.meaning);
  }
  app.footer(footer + "\n");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every parse error is a usage error.
    return app.exit(e) == 0 ? steward::cli::kExitOk : steward::cli::kExitUsage;
  }
  return steward::cli::ExitCode();
}
