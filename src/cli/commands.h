// The subcommands of the steward binary. Each Add*Command registers its subcommand and flags on
// the app; the command runs from the subcommand's callback and records its exit code.
#pragma once

#include <CLI/CLI.hpp>

namespace steward::cli {

// `steward cluster`: runs the embedded cluster until SIGINT/SIGTERM.
void AddClusterCommand(CLI::App& app);

// `steward check`: checks that Steward can work with a cluster (config, TLS, namespace,
// permissions, watch).
void AddCheckCommand(CLI::App& app);

// `steward demo`: the embedded cluster, a SQLite store and the engine in one process; starts a
// few projects, shows their phases live and a summary with their URLs, then runs until
// SIGINT/SIGTERM (or exits once all are Running, with --exit-when-running).
void AddDemoCommand(CLI::App& app);

// The exit code recorded by the command that ran.
int ExitCode();
void SetExitCode(int code);

}  // namespace steward::cli
