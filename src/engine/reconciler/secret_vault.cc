#include "engine/reconciler/secret_vault.h"

#include <utility>

#include "common/json_access.h"
#include "engine/manifests/manifests.h"

namespace steward::engine {
namespace {

Status Unreachable(const kube::ApiError& e, std::string_view what) {
  if (e.IsTransport() || e.IsRetryable()) {
    return Unavailable("spec.credentials: cannot " + std::string(what) +
                       " the credentials Secret: " + e.ToStatus().message() +
                       " (nothing was changed; send the request again)");
  }
  return Status(e.ToStatus().code(), "spec.credentials: the cluster refused to " +
                                         std::string(what) +
                                         " the credentials Secret: " + e.ToStatus().message());
}

}  // namespace

SecretVault::SecretVault(std::shared_ptr<kube::Client> client, const EngineConfig& config,
                         std::string field_manager)
    : client_(std::move(client)), config_(config), field_manager_(std::move(field_manager)) {}

Status SecretVault::Put(const std::string& id, const std::string& name,
                        const SuppliedCredentials& values) {
  const Json desired = RenderSuppliedSecret(id, name, &config_, values);
  const std::string secret_name = GetString(desired["metadata"], "name");
  const kube::ResourceType& type = kube::ResourceType::Secret();
  const std::string& ns = config_.namespace_name;
  kube::WriteOptions options{.field_manager = field_manager_, .field_validation = "Strict"};
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto created = client_->Create(type, ns, desired, options);
    if (created.ok()) return Status::Ok();
    if (!created.error().IsAlreadyExists()) return Unreachable(created.error(), "create");
    auto live = client_->Get(type, ns, secret_name);
    if (!live.ok()) {
      if (live.error().IsNotFound()) continue;  // deleted in between: create again
      return Unreachable(live.error(), "read");
    }
    const Json& meta = MemberOrNull(*live, "metadata");
    const Json& labels = MemberOrNull(meta, "labels");
    const bool managed = GetString(labels, std::string(kManagedByLabel)) == kManagedByValue &&
                         GetString(labels, std::string(kCredentialsLabel)) == kSuppliedValue;
    if (!managed) {
      return AlreadyExists("spec.credentials: Secret " + secret_name +
                           " exists and is not one Steward made; remove or rename it");
    }
    const bool same_project = GetString(labels, std::string(kProjectLabel)) == id;
    if (same_project && LiveMatchesDesired(desired, *live)) return Status::Ok();
    // A leftover of a project of the same name that is gone: replace it.
    kube::DeleteOptions del;
    del.precondition_uid = GetString(meta, "uid");
    auto deleted = client_->Delete(type, ns, secret_name, del);
    if (!deleted.ok() && !deleted.error().IsNotFound() && !deleted.error().IsConflict()) {
      return Unreachable(deleted.error(), "replace");
    }
  }
  return Unavailable("spec.credentials: the credentials Secret " + secret_name +
                     " kept changing while it was written; send the request again");
}

}  // namespace steward::engine
