// CredentialVault: where a Put's supplied credentials go before its intent is committed — a
// Secret in the cluster, never the store (credentials live only in Kubernetes Secrets). Header
// only and free of Kubernetes, so that Intents (which the API links) does not link the client:
// the implementation is engine::SecretVault (engine/reconciler/secret_vault.h), wired in by the
// Engine. Implementations are thread-safe and may block (Put is called from API workers).
#pragma once

#include <string>

#include "common/status.h"
#include "engine/model/project.h"

namespace steward::engine {

class CredentialVault {
 public:
  virtual ~CredentialVault() = default;
  // Makes the Secret of `values` for project `id` (named `name`) exist (SuppliedSecretName);
  // idempotent. When this call created it: the created Secret's version (its resourceVersion),
  // for Discard; "" when it was there (the same set put again: it is marked as taken now, which
  // changes its version). kUnavailable when the cluster cannot be reached (nothing is committed
  // then); kAlreadyExists when a Secret of that name exists that is not this project's.
  virtual StatusOr<std::string> Put(const std::string& id, const std::string& name,
                                    const SuppliedCredentials& values) = 0;
  // Deletes the Secret a Put created (`version`: what that Put returned) when the intent naming
  // it was not committed after all — unless it changed since: another Put of the same set took
  // it meanwhile and its intent may be committed. Best effort: what is left is removed with the
  // project, or by the engine once its grace has passed.
  virtual void Discard(const std::string& id, const std::string& fingerprint,
                       const std::string& version) = 0;
  // The values of project `id`'s Secret of the set `ref` (what a move copies to its new
  // cluster). kNotFound when that Secret is not there or is not the project's (or does not hold
  // the set `ref` names); kUnavailable when the cluster cannot be reached. This default cannot
  // read anything back: kUnimplemented.
  virtual StatusOr<SuppliedCredentials> Get(const std::string& id, const CredentialsRef& ref) {
    (void)id;
    (void)ref;
    return Unimplemented("this credential vault cannot read credentials back");
  }
};

}  // namespace steward::engine
