// SecretVault: the CredentialVault of a running engine — each set of supplied credentials is
// an immutable Secret "<name>-credentials-<fingerprint>" in the projects' namespace
// (RenderSuppliedSecret), written with Steward's Kubernetes client when the API accepts the
// Put, before the intent is committed. The engine references it from the pods, and deletes it
// once no pod holds it (a newer set is running, or the project is deleted).
// Thread-safe (the client is); Put blocks for at most a few API round trips.
#pragma once

#include <memory>
#include <string>

#include "engine/intents/credential_vault.h"
#include "engine/model/project.h"
#include "kube/client/client.h"

namespace steward::engine {

class SecretVault : public CredentialVault {
 public:
  // `config` (namespace, labels) must outlive this. `store_id`: the FeedId of the store the
  // intents go to, written on each Secret (kStoreAnnotation) so that the engine can remove one
  // whose intent was never committed.
  SecretVault(std::shared_ptr<kube::Client> client, const EngineConfig& config,
              std::string field_manager, std::string store_id);

  // Create; when it exists: fine if it is this project's with these values; a Steward-managed
  // leftover of another project (same name, deleted and created again) is replaced; anything
  // else is kAlreadyExists. Transient refusals (429, 5xx, transport) are retried for about
  // 1.5 s, then kUnavailable.
  StatusOr<std::string> Put(const std::string& id, const std::string& name,
                            const SuppliedCredentials& values) override;
  // A delete with the resourceVersion `version` as its precondition: a 409 (changed since)
  // keeps it.
  void Discard(const std::string& id, const std::string& fingerprint,
               const std::string& version) override;
  // A get of SuppliedSecretName(id, ref.fingerprint): Steward's, labelled with the project, its
  // data decoded and its fingerprint ref's.
  StatusOr<SuppliedCredentials> Get(const std::string& id, const CredentialsRef& ref) override;

 private:
  std::shared_ptr<kube::Client> client_;
  const EngineConfig& config_;
  std::string field_manager_;
  std::string store_id_;
};

}  // namespace steward::engine
