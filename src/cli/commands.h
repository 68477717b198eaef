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

// `steward project create|start|suspend|restart|rotate|delete|get|list|watch|logs|history|...`:
// the client of the REST API (docs/api.md); exit codes from exit_codes.h (docs/cli.md).
void AddProjectCommand(CLI::App& app);

// `steward agent put|start|stop|restart|delete|get|list|history|status|command`: MQTT schema
// agents through the REST API (project_command.cc), with the same exit codes; a token is read
// from --agent-token-file only.
void AddAgentCommand(CLI::App& app);

// `steward migrate --from driver-k8s`: takes over the instances FlowFuse's driver-k8s created
// (docs/migration.md); --dry-run prints the plan. Exit 0 when all are migrated, 1 when some could
// not be, 2 for usage or configuration errors, and the code of exit_codes.h's table when the
// cluster or the API refuses or cannot be reached before anything changed.
void AddMigrateCommand(CLI::App& app);

// `steward completion bash|zsh|fish`: prints a shell completion script generated from `root`'s
// command tree (subcommands, flags, enumerated values; project and agent names for NAME).
void AddCompletionCommand(CLI::App& root);

// `steward serve`: the REST API, the store and the engine (app::App) from --config and flags,
// against a kubeconfig, in-cluster or embedded cluster, until SIGINT/SIGTERM. Exit 0 after a
// clean stop, 2 when it cannot start (configuration, cluster, store, listen address).
void AddServeCommand(CLI::App& app);

// `steward torture`: the torture run with its invariant oracle (docs/torture.md); exit 0 when
// no violation was found, 1 when some were, 2 when the run could not start.
void AddTortureCommand(CLI::App& app);

// The exit code recorded by the command that ran.
int ExitCode();
void SetExitCode(int code);

}  // namespace steward::cli
