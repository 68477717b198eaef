// steward: the command-line entry point.
#include <CLI/CLI.hpp>
#include <string>

#include "cli/commands.h"

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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // usage errors exit 2; --help exits 0
  }
  return steward::cli::ExitCode();
}
