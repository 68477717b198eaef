// steward: the command-line entry point.
#include <CLI/CLI.hpp>
#include <string>

#include "cli/commands.h"
#include "cli/exit_codes.h"

int main(int argc, char** argv) {
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
