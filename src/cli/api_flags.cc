#include "cli/api_flags.h"

#include <cstdlib>

#include "api_client/api_client.h"
#include "common/ascii.h"
#include "common/file.h"

namespace steward::cli {
namespace {

using api_client::ApiClientOptions;
using api_client::ParseDuration;

}  // namespace

StatusOr<std::string> ReadFlagFile(const std::string& path, const std::string& what) {
  auto text = ReadSmallFile(path);
  if (!text.ok()) return InvalidArgument(what + ": " + text.error().message());
  return text;
}

StatusOr<std::string> ReadTokenFile(const std::string& path, const std::string& what) {
  ASSIGN_OR_RETURN(std::string text, ReadFlagFile(path, what));
  std::string token(TrimAsciiWhitespace(text));
  if (token.empty()) return InvalidArgument(what + ": " + path + " is empty");
  return token;
}

StatusOr<ApiClientOptions> ClientOptions(const GlobalFlags& flags) {
  ApiClientOptions options;
  options.server = flags.server;
  if (options.server.empty()) {
    const char* env = std::getenv("STEWARD_SERVER");
    options.server = env != nullptr && *env != '\0' ? env : "http://127.0.0.1:8080";
  }
  if (!flags.token.empty()) {
    options.token = flags.token;
  } else if (const char* env = std::getenv("STEWARD_TOKEN");
             flags.token_file.empty() && env != nullptr && *env != '\0') {
    options.token = env;
  } else {
    std::string file = flags.token_file;
    std::string what = "--token-file";
    if (const char* f = std::getenv("STEWARD_TOKEN_FILE"); file.empty() && f != nullptr) {
      file = f;
      what = "$STEWARD_TOKEN_FILE";
    }
    if (file.empty()) {
      return InvalidArgument(
          "no API token: pass --token-file FILE (steward serve prints its path) or --token, or "
          "set STEWARD_TOKEN or STEWARD_TOKEN_FILE");
    }
    ASSIGN_OR_RETURN(options.token, ReadTokenFile(file, what));
  }
  if (!flags.ca_file.empty()) {
    ASSIGN_OR_RETURN(options.ca_pem, ReadFlagFile(flags.ca_file, "--ca-file"));
  }
  options.insecure_skip_verify = flags.insecure;
  auto timeout = ParseDuration(flags.timeout);
  if (!timeout.ok()) return InvalidArgument("--request-timeout: " + timeout.error().message());
  options.timeout = *timeout;
  return options;
}

void AddGlobalFlags(CLI::App& cmd, GlobalFlags& g) {
  cmd.add_option("--server", g.server,
                 "Steward API URL (default $STEWARD_SERVER or http://127.0.0.1:8080)");
  auto* token_file = cmd.add_option("--token-file", g.token_file,
                                    "File holding the API token (default $STEWARD_TOKEN_FILE)");
  cmd.add_option("--token", g.token, "The API token (default $STEWARD_TOKEN)")
      ->excludes(token_file);
  cmd.add_option("--ca-file", g.ca_file, "PEM CA bundle to verify an https server");
  cmd.add_flag("--insecure-skip-tls-verify", g.insecure, "Do not verify the server's certificate");
  cmd.add_option("--request-timeout", g.timeout, "Time allowed for each request")
      ->capture_default_str();
}

}  // namespace steward::cli
