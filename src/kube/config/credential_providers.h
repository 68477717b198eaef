// Credential providers behind RestConfig::credentials (see rest_config.h for the interface):
//
//   - static:     a fixed bearer token and/or client certificate (kubeconfig token,
//                 client-certificate[-data] + client-key[-data]).
//   - token file: a bearer token read from a file and re-read when it may have rotated: at most
//                 every `token_reread_interval` (1 min, as client-go) and at once after
//                 Invalidate(). A failed re-read keeps the last good token (client-go does the
//                 same); in-cluster bound service-account tokens rotate this way.
//   - exec:       a client.authentication.k8s.io/v1 or v1beta1 ExecCredential plugin, run
//                 without a shell, cached until its expirationTimestamp (minus a margin), re-run
//                 after Invalidate().
//
// All providers are thread-safe. Get() on a cached value takes one mutex and copies strings; the
// exec provider runs its plugin once however many threads ask at the same time.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/json.h"
#include "common/mutex.h"
#include "common/status.h"
#include "kube/config/rest_config.h"

namespace steward::kube {

// Timing knobs for the providers (tests shorten them). The clock must outlive the providers.
struct CredentialOptions {
  const Clock* clock = nullptr;  // nullptr = RealClock::Get()
  // How long a token read from a file is used before the file is read again.
  Millis token_reread_interval = std::chrono::minutes(1);
  // How long an exec plugin may run before it is killed and Get() fails.
  Millis exec_timeout = std::chrono::seconds(30);
  // An exec credential is refreshed this long before its expirationTimestamp (capped at half
  // its lifetime, so short-lived credentials are still used).
  Millis exec_refresh_margin = std::chrono::seconds(10);
};

// A provider that always returns `creds`. Invalidate() does nothing (there is nothing to reload).
std::shared_ptr<CredentialProvider> MakeStaticCredentialProvider(Credentials creds,
                                                                 std::string description);

class TokenFileCredentialProvider final : public CredentialProvider {
 public:
  // Reads `path` now. `base` supplies the client certificate/key sent with every request (may be
  // empty) and, in base.bearer_token, a fallback token used while the file cannot be read
  // (kubeconfig `token` next to `tokenFile`). Fails when the file cannot be read (or holds only
  // whitespace) and there is no fallback token.
  static StatusOr<std::shared_ptr<TokenFileCredentialProvider>> Create(
      std::string path, Credentials base, const CredentialOptions& options = {});

  StatusOr<Credentials> Get() override;
  void Invalidate() override;
  std::string Describe() const override { return "token file " + path_; }

 private:
  TokenFileCredentialProvider(std::string path, Credentials base, const CredentialOptions& options);
  // Re-reads the file if due.
  Status RefreshLocked(SteadyTime now) REQUIRES(mu_);

  const std::string path_;
  const Credentials base_;
  const Clock& clock_;
  const Millis interval_;
  Mutex mu_;
  std::string token_ GUARDED_BY(mu_);  // last good token (file, or the fallback)
  bool have_token_ GUARDED_BY(mu_) = false;
  bool invalidated_ GUARDED_BY(mu_) = false;
  SteadyTime next_read_ GUARDED_BY(mu_){};
};

// An exec credential plugin as a kubeconfig `user.exec` describes it.
struct ExecEnvVar {
  std::string name;
  std::string value;
};
struct ExecPluginConfig {
  std::string command;  // a program in PATH, or a path (relative ones already resolved)
  std::vector<std::string> args;
  std::vector<ExecEnvVar> env;   // added to (and overriding) the process environment
  std::string api_version;       // client.authentication.k8s.io/v1 or /v1beta1
  std::string install_hint;      // shown when the command is not found
  std::string interactive_mode;  // Never | IfAvailable | Always ("" = default for v1beta1)
  bool provide_cluster_info = false;
  // ExecCredential spec.cluster (server, certificate-authority-data, ...), sent only when
  // provide_cluster_info is set.
  Json cluster = Json::object();
};

inline constexpr std::string_view kExecApiV1 = "client.authentication.k8s.io/v1";
inline constexpr std::string_view kExecApiV1Beta1 = "client.authentication.k8s.io/v1beta1";

// Checks a plugin configuration as kubectl does: command and apiVersion set, a supported
// apiVersion, env names non-empty, interactiveMode set for v1 and not "Always" (Steward never has
// a terminal). The message names the offending field.
Status ValidateExecPluginConfig(const ExecPluginConfig& config);

// The ExecCredential request passed in KUBERNETES_EXEC_INFO.
std::string ExecCredentialRequest(const ExecPluginConfig& config);

// Parses a plugin's stdout. Errors name `command` and say what is wrong (not JSON, apiVersion or
// kind mismatch, no status, neither token nor certificate+key, a bad expirationTimestamp).
StatusOr<Credentials> ParseExecCredential(std::string_view output, const ExecPluginConfig& config);

class ExecCredentialProvider final : public CredentialProvider {
 public:
  // Validates `config`; does not run the plugin yet (the first Get() does).
  static StatusOr<std::shared_ptr<ExecCredentialProvider>> Create(
      ExecPluginConfig config, const CredentialOptions& options = {});

  StatusOr<Credentials> Get() override;
  void Invalidate() override;
  std::string Describe() const override { return "exec plugin " + config_.command; }

 private:
  ExecCredentialProvider(ExecPluginConfig config, const CredentialOptions& options);
  // The cached credentials if still fresh.
  std::optional<Credentials> FreshLocked() const REQUIRES(mu_);
  StatusOr<Credentials> Run() const REQUIRES(run_mu_);

  const ExecPluginConfig config_;
  const Clock& clock_;
  const Millis timeout_;
  const Millis margin_;
  Mutex run_mu_ ACQUIRED_BEFORE(mu_);  // held while the plugin runs: one run at a time
  mutable Mutex mu_;
  std::optional<Credentials> cached_ GUARDED_BY(mu_);
  SystemTime refresh_at_
      GUARDED_BY(mu_){};  // when cached_ has an expiry: refresh from this wall time on
};

}  // namespace steward::kube
