// NamespaceController: pkg/controller/namespace, simulated. A Namespace with a
// deletionTimestamp gets status.phase Terminating, every object of every namespaced type in it
// is deleted (Background propagation; pods gracefully), the deletion conditions
// (NamespaceContentRemaining, NamespaceFinalizersRemaining, ...) report what is left, and once
// nothing is left the Namespace is removed (ForceRemove; spec.finalizers is emptied first when
// metadata.finalizers still holds it).
//
// Any change inside a terminating namespace re-runs its sync. Worker thread only.
#pragma once

#include <string>
#include <unordered_set>

#include "cluster/controllers/controller.h"

namespace steward::cluster::controllers {

class NamespaceController : public Controller {
 public:
  explicit NamespaceController(ControllerContext& ctx);
  void Observe(const Change& change) override;
  bool Sync(Work kind, const std::string& key) override;
  // Something (an Event, which the cache skips) changed in `ns`.
  void Touch(const std::string& ns);

 private:
  ControllerContext& ctx_;
  const ResourceType& namespaces_;
  std::unordered_set<std::string> terminating_;
};

}  // namespace steward::cluster::controllers
