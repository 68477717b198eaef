// The flags that say which Steward API a command talks to (`steward project ...`,
// `steward migrate`): --server, --token-file / --token, --ca-file, --insecure-skip-tls-verify,
// --request-timeout, with $STEWARD_SERVER, $STEWARD_TOKEN and $STEWARD_TOKEN_FILE as defaults.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "api_client/api_client.h"
#include "common/status.h"

namespace steward::cli {

struct GlobalFlags {
  std::string server;
  std::string token;
  std::string token_file;
  std::string ca_file;
  bool insecure = false;
  std::string timeout = "60s";
};

void AddGlobalFlags(CLI::App& cmd, GlobalFlags& g);

// The client options the flags (and the environment) give; errors name the flag.
StatusOr<api_client::ApiClientOptions> ClientOptions(const GlobalFlags& flags);

// The text of the small file `path` a flag names; errors start with `what` (the flag).
StatusOr<std::string> ReadFlagFile(const std::string& path, const std::string& what);
// A token from the file a flag names: trimmed, refused when empty ("<what>: <path> is empty").
StatusOr<std::string> ReadTokenFile(const std::string& path, const std::string& what);

}  // namespace steward::cli
