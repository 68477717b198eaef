// steward: the command-line entry point.
#include <CLI/CLI.hpp>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Steward: provisions and runs customer projects on Kubernetes"};
  app.require_subcommand(1);
  steward::cli::AddClusterCommand(app);
  steward::cli::AddCheckCommand(app);
  steward::cli::AddDemoCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return steward::cli::ExitCode();
}
