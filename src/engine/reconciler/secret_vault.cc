#include "engine/reconciler/secret_vault.h"

#include <chrono>
#include <thread>
#include <utility>

#include "common/base64.h"
#include "common/json_access.h"
#include "common/log.h"
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

// `call` (a client request), sent again while the cluster refuses it for now (429, 5xx, no
// answer): about 1.5 s in all.
template <typename Call>
auto WithTransientRetries(const Call& call) {
  auto result = call();
  for (int i = 0;
       i < 4 && !result.ok() && (result.error().IsRetryable() || result.error().IsTransport());
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100 << i));
    result = call();
  }
  return result;
}

}  // namespace

SecretVault::SecretVault(std::shared_ptr<kube::Client> client, const EngineConfig& config,
                         std::string field_manager, std::string store_id)
    : client_(std::move(client)),
      config_(config),
      field_manager_(std::move(field_manager)),
      store_id_(std::move(store_id)) {}

StatusOr<std::string> SecretVault::Put(const std::string& id, const std::string& name,
                                       const SuppliedCredentials& values) {
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  const Json desired = RenderSuppliedSecret(id, name, &config_, values, now_ms, store_id_);
  const std::string secret_name = GetString(desired["metadata"], "name");
  const kube::ResourceType& type = kube::ResourceType::Secret();
  const std::string& ns = config_.namespace_name;
  kube::WriteOptions options{.field_manager = field_manager_, .field_validation = "Strict"};
  // A request the server refused for now (429, 5xx, a dropped connection) is sent again a few
  // times, about 1.5 s in all, before the PUT is answered 503: the API worker may wait that long.
  int transient = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto created = client_->Create(type, ns, desired, options);
    if (created.ok()) {
      std::string version = GetString(MemberOrNull(*created, "metadata"), "resourceVersion");
      if (version.empty()) {
        return Internal("spec.credentials: the cluster created the credentials Secret " +
                        secret_name + " without a resourceVersion");
      }
      return version;
    }
    const kube::ApiError& e = created.error();
    if ((e.IsRetryable() || e.IsTransport()) && transient < 4) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100 << transient++));
      --attempt;
      continue;
    }
    if (!e.IsAlreadyExists()) return Unreachable(e, "create");
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
    if (same_project && MemberOrNull(*live, "data") == desired["data"]) {
      // The same set again: mark it as taken now, so that the engine does not delete it as an
      // older set while this intent is being committed.
      const std::string patch = DumpJson(
          Json{{"metadata",
                {{"annotations", {{std::string(kSuppliedAtAnnotation), std::to_string(now_ms)}}},
                 {"resourceVersion", GetString(meta, "resourceVersion")}}}});
      auto patched = client_->Patch(type, ns, secret_name, kube::PatchType::kMerge, patch, options);
      if (patched.ok()) return std::string();
      if (patched.error().IsNotFound() || patched.error().IsConflict()) continue;
      if ((patched.error().IsRetryable() || patched.error().IsTransport()) && transient < 4) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100 << transient++));
        --attempt;
        continue;
      }
      return Unreachable(patched.error(), "update");
    }
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

void SecretVault::Discard(const std::string& id, const std::string& fingerprint,
                          const std::string& version) {
  const std::string secret_name = SuppliedSecretName(id, fingerprint);
  kube::DeleteOptions options;
  options.precondition_resource_version = version;
  // As Put: transient refusals are sent again for about 1.5 s.
  auto deleted = WithTransientRetries([&] {
    return client_->Delete(kube::ResourceType::Secret(), config_.namespace_name, secret_name,
                           options);
  });
  if (deleted.ok() || deleted.error().IsNotFound()) return;
  if (deleted.error().IsConflict()) {
    // Another Put of the same set took it since (its intent may be committed): it stays.
    LOG_DEBUG("credentials Secret {} changed since this PUT created it; kept", secret_name);
    return;
  }
  LOG_WARN(
      "could not remove the credentials Secret of an intent that was not committed "
      "(project {}): {}; it goes with the project or once its grace has passed",
      id, deleted.error().ToStatus().message());
}

StatusOr<SuppliedCredentials> SecretVault::Get(const std::string& id, const CredentialsRef& ref) {
  const std::string secret_name = SuppliedSecretName(id, ref.fingerprint);
  auto got = WithTransientRetries([&] {
    return client_->Get(kube::ResourceType::Secret(), config_.namespace_name, secret_name);
  });
  if (!got.ok()) {
    if (got.error().IsNotFound()) {
      return NotFound("the credentials Secret " + secret_name + " does not exist");
    }
    return Unreachable(got.error(), "read");
  }
  const Json& labels = MemberOrNull(MemberOrNull(*got, "metadata"), "labels");
  if (GetString(labels, std::string(kManagedByLabel)) != kManagedByValue ||
      GetString(labels, std::string(kProjectLabel)) != id) {
    return NotFound("the credentials Secret " + secret_name + " is not this project's");
  }
  SuppliedCredentials values;
  const Json& data = MemberOrNull(*got, "data");
  if (data.is_object()) {
    for (const auto& [key, encoded] : data.items()) {
      std::optional<std::string> value =
          encoded.is_string() ? Base64Decode(encoded.get<std::string>()) : std::nullopt;
      if (!value) return NotFound("the credentials Secret " + secret_name + " is not readable");
      values.env[key] = std::move(*value);
    }
  }
  // Never quotes a value: only says the set is not the one named.
  if (values.Ref() != ref) {
    return NotFound("the credentials Secret " + secret_name + " does not hold the set named");
  }
  return values;
}

}  // namespace steward::engine
