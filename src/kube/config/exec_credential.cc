// The exec credential plugin provider (declared in credential_providers.h).
#include <algorithm>

#include "common/ascii.h"
#include "common/log.h"
#include "common/mutex.h"
#include "common/time_util.h"
#include "kube/config/credential_providers.h"
#include "kube/config/file_util.h"
#include "kube/config/subprocess.h"

namespace steward::kube {

namespace {

constexpr std::string_view kExecInfoEnv = "KUBERNETES_EXEC_INFO";
constexpr size_t kMaxStderrInError = 2048;

Status Unauthenticated(std::string m) { return {StatusCode::kUnauthenticated, std::move(m)}; }

// Replaces (or adds) NAME=value in `env`.
void SetEnv(std::vector<std::string>& env, const std::string& name, const std::string& value) {
  std::string prefix = name + "=";
  std::erase_if(env, [&](const std::string& e) { return e.starts_with(prefix); });
  env.push_back(prefix + value);
}

// The last part of a plugin's stderr, for an error message.
std::string StderrTail(const std::string& err) {
  std::string s(TrimAsciiWhitespace(err));
  if (s.size() > kMaxStderrInError) s = "..." + s.substr(s.size() - kMaxStderrInError);
  return s.empty() ? "(no output on stderr)" : "stderr: " + s;
}

// A string field of the plugin's status: absent/null = "", anything but a string = error.
StatusOr<std::string> StatusString(const Json& status, const char* key, const std::string& who) {
  auto it = status.find(key);
  if (it == status.end() || it->is_null()) return std::string();
  if (!it->is_string()) {
    return Unauthenticated(who + ": status." + key + " is not a string");
  }
  return it->get<std::string>();
}

}  // namespace

Status ValidateExecPluginConfig(const ExecPluginConfig& c) {
  if (c.command.empty()) return InvalidArgument("exec: command: missing");
  if (c.api_version.empty()) return InvalidArgument("exec: apiVersion: missing");
  if (c.api_version != kExecApiV1 && c.api_version != kExecApiV1Beta1) {
    return InvalidArgument("exec: apiVersion: \"" + c.api_version + "\" is not supported (use " +
                           std::string(kExecApiV1) + " or " + std::string(kExecApiV1Beta1) + ")");
  }
  for (size_t i = 0; i < c.env.size(); ++i) {
    if (c.env[i].name.empty()) {
      return InvalidArgument("exec: env[" + std::to_string(i) + "]: name: missing");
    }
  }
  const std::string& mode = c.interactive_mode;
  if (mode.empty() && c.api_version == kExecApiV1) {
    return InvalidArgument("exec: interactiveMode: missing (required with " +
                           std::string(kExecApiV1) +
                           "; Steward needs \"Never\" or \"IfAvailable\")");
  }
  if (mode == "Always") {
    return InvalidArgument(
        "exec: interactiveMode: \"Always\" needs a terminal, and Steward runs without one (use "
        "\"Never\" or \"IfAvailable\")");
  }
  if (!mode.empty() && mode != "Never" && mode != "IfAvailable") {
    return InvalidArgument("exec: interactiveMode: \"" + mode +
                           "\" is not one of Never, IfAvailable, Always");
  }
  return Status::Ok();
}

std::string ExecCredentialRequest(const ExecPluginConfig& config) {
  Json spec = {{"interactive", false}};
  if (config.provide_cluster_info) spec["cluster"] = config.cluster;
  Json req = {{"apiVersion", config.api_version}, {"kind", "ExecCredential"}, {"spec", spec}};
  return DumpJson(req);
}

StatusOr<Credentials> ParseExecCredential(std::string_view output, const ExecPluginConfig& config) {
  const std::string who = "exec plugin " + config.command;
  auto parsed = ParseJson(output);
  if (!parsed.ok()) {
    return Unauthenticated(who + ": output is not an ExecCredential: " + parsed.error().message());
  }
  const Json& j = *parsed;
  if (!j.is_object()) return Unauthenticated(who + ": output is not a JSON object");
  std::string api_version = GetString(j, "apiVersion");
  if (api_version != config.api_version) {
    return Unauthenticated(who + ": returned apiVersion \"" + api_version + "\", configured \"" +
                           config.api_version + "\"");
  }
  if (GetString(j, "kind") != "ExecCredential") {
    return Unauthenticated(who + ": returned kind \"" + GetString(j, "kind") +
                           "\", expected \"ExecCredential\"");
  }
  auto st = j.find("status");
  if (st == j.end() || !st->is_object()) return Unauthenticated(who + ": returned no status");
  Credentials c;
  ASSIGN_OR_RETURN(c.bearer_token, StatusString(*st, "token", who));
  ASSIGN_OR_RETURN(c.client_cert_pem, StatusString(*st, "clientCertificateData", who));
  ASSIGN_OR_RETURN(c.client_key_pem, StatusString(*st, "clientKeyData", who));
  ASSIGN_OR_RETURN(std::string expiry, StatusString(*st, "expirationTimestamp", who));
  if (c.client_cert_pem.empty() != c.client_key_pem.empty()) {
    return Unauthenticated(who + ": returned only one of clientCertificateData and clientKeyData");
  }
  if (c.bearer_token.empty() && c.client_cert_pem.empty()) {
    return Unauthenticated(who + ": returned neither a token nor a client certificate and key");
  }
  if (!expiry.empty()) {
    c.expiry = ParseRfc3339(expiry);
    if (!c.expiry) {
      return Unauthenticated(who + ": status.expirationTimestamp \"" + expiry +
                             "\" is not an RFC 3339 time");
    }
  }
  return c;
}

// --- provider -----------------------------------------------------------------------------------

ExecCredentialProvider::ExecCredentialProvider(ExecPluginConfig config,
                                               const CredentialOptions& options)
    : config_(std::move(config)),
      clock_(options.clock != nullptr ? *options.clock : RealClock::Get()),
      timeout_(options.exec_timeout),
      margin_(options.exec_refresh_margin) {}

StatusOr<std::shared_ptr<ExecCredentialProvider>> ExecCredentialProvider::Create(
    ExecPluginConfig config, const CredentialOptions& options) {
  RETURN_IF_ERROR(ValidateExecPluginConfig(config));
  return std::shared_ptr<ExecCredentialProvider>(
      new ExecCredentialProvider(std::move(config), options));
}

std::optional<Credentials> ExecCredentialProvider::FreshLocked() const {
  if (!cached_) return std::nullopt;
  if (cached_->expiry && clock_.WallNow() >= refresh_at_) return std::nullopt;
  return cached_;
}

StatusOr<Credentials> ExecCredentialProvider::Run() const {
  const std::string who = "exec plugin " + config_.command;
  std::vector<std::string> env = config_internal::CurrentEnvironment();
  for (const auto& v : config_.env) SetEnv(env, v.name, v.value);
  SetEnv(env, std::string(kExecInfoEnv), ExecCredentialRequest(config_));
  config_internal::SubprocessOptions opts;
  opts.timeout = timeout_;
  auto run = config_internal::RunSubprocess(config_.command, config_.args, env, opts);
  if (!run.ok()) {
    std::string msg = who + ": " + run.error().message();
    if (run.error().code() == StatusCode::kNotFound && !config_.install_hint.empty()) {
      msg += "\n\n" + config_.install_hint;
    }
    return Unauthenticated(std::move(msg));
  }
  if (run->term_signal != 0) {
    return Unauthenticated(who + ": killed by signal " + std::to_string(run->term_signal) + "; " +
                           StderrTail(run->stderr_data));
  }
  if (run->exit_code != 0) {
    return Unauthenticated(who + ": exited with status " + std::to_string(run->exit_code) + "; " +
                           StderrTail(run->stderr_data));
  }
  if (run->stdout_truncated) return Unauthenticated(who + ": output too large");
  return ParseExecCredential(run->stdout_data, config_);
}

StatusOr<Credentials> ExecCredentialProvider::Get() {
  {
    MutexLock lock(mu_);
    if (auto fresh = FreshLocked()) return *std::move(fresh);
  }
  MutexLock run_lock(run_mu_);
  {
    // Another thread may have run the plugin while this one waited.
    MutexLock lock(mu_);
    if (auto fresh = FreshLocked()) return *std::move(fresh);
  }
  auto creds = Run();
  if (!creds.ok()) return creds;
  MutexLock lock(mu_);
  cached_.reset();
  if (!creds->expiry) {
    cached_ = *creds;
    return creds;
  }
  SystemTime now = clock_.WallNow();
  auto lifetime = *creds->expiry - now;
  if (lifetime <= SystemTime::duration::zero()) {
    // Already expired: use it for this call (as client-go does) but run again next time.
    LOG_WARN("{} returned a credential that expired already", Describe());
    return creds;
  }
  auto margin = std::min<SystemTime::duration>(margin_, lifetime / 2);
  refresh_at_ = *creds->expiry - margin;
  cached_ = *creds;
  return creds;
}

void ExecCredentialProvider::Invalidate() {
  MutexLock lock(mu_);
  cached_.reset();
}

}  // namespace steward::kube
