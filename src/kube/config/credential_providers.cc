#include "kube/config/credential_providers.h"

#include "common/ascii.h"
#include "common/log.h"
#include "kube/config/file_util.h"

namespace steward::kube {

namespace {

using config_internal::ReadSmallFile;

const Clock& ClockOr(const Clock* clock) { return clock != nullptr ? *clock : RealClock::Get(); }

class StaticCredentialProvider final : public CredentialProvider {
 public:
  StaticCredentialProvider(Credentials creds, std::string description)
      : creds_(std::move(creds)), description_(std::move(description)) {}
  StatusOr<Credentials> Get() override { return creds_; }
  void Invalidate() override {}
  std::string Describe() const override { return description_; }

 private:
  const Credentials creds_;
  const std::string description_;
};

// The token in `path`, trimmed. Errors name the file.
StatusOr<std::string> ReadToken(const std::string& path) {
  auto text = ReadSmallFile(path, 1u << 20);
  if (!text.ok()) {
    return Status(StatusCode::kUnauthenticated, "token file " + text.error().message());
  }
  std::string token(TrimAsciiWhitespace(*text));
  if (token.empty()) {
    return Status(StatusCode::kUnauthenticated, "token file " + path + ": empty");
  }
  return token;
}

}  // namespace

std::shared_ptr<CredentialProvider> MakeStaticCredentialProvider(Credentials creds,
                                                                 std::string description) {
  return std::make_shared<StaticCredentialProvider>(std::move(creds), std::move(description));
}

// --- token file ---------------------------------------------------------------------------------

TokenFileCredentialProvider::TokenFileCredentialProvider(std::string path, Credentials base,
                                                         const CredentialOptions& options)
    : path_(std::move(path)),
      base_(std::move(base)),
      clock_(ClockOr(options.clock)),
      interval_(options.token_reread_interval) {}

StatusOr<std::shared_ptr<TokenFileCredentialProvider>> TokenFileCredentialProvider::Create(
    std::string path, Credentials base, const CredentialOptions& options) {
  std::shared_ptr<TokenFileCredentialProvider> p(
      new TokenFileCredentialProvider(std::move(path), std::move(base), options));
  MutexLock lock(p->mu_);
  RETURN_IF_ERROR(p->RefreshLocked(p->clock_.Now()));
  return p;
}

Status TokenFileCredentialProvider::RefreshLocked(SteadyTime now) {
  if (have_token_ && !invalidated_ && now < next_read_) return Status::Ok();
  auto token = ReadToken(path_);
  next_read_ = now + interval_;
  if (token.ok()) {
    if (have_token_ && *token != token_) LOG_INFO("{}: token changed, using the new one", path_);
    token_ = std::move(token).value();
    have_token_ = true;
    invalidated_ = false;
    return Status::Ok();
  }
  if (have_token_ && !invalidated_) {
    // client-go keeps the last good token when a periodic re-read fails.
    LOG_WARN("{}; keeping the previous token", token.error().message());
    return Status::Ok();
  }
  if (!base_.bearer_token.empty()) {
    token_ = base_.bearer_token;
    have_token_ = true;
    invalidated_ = false;
    return Status::Ok();
  }
  return token.error();
}

StatusOr<Credentials> TokenFileCredentialProvider::Get() {
  MutexLock lock(mu_);
  RETURN_IF_ERROR(RefreshLocked(clock_.Now()));
  Credentials c = base_;
  c.bearer_token = token_;
  return c;
}

void TokenFileCredentialProvider::Invalidate() {
  MutexLock lock(mu_);
  invalidated_ = true;
}

}  // namespace steward::kube
