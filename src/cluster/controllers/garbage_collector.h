// GarbageCollector: pkg/controller/garbagecollector, simulated, over the cache's
// dependents-by-owner-uid index. All actions run profile.garbage_collection after the change
// that called for them.
//
//   - Background: a dependent whose owners are all gone (absent, or present with another uid)
//     is deleted with a uid precondition; with some owners still present, the dangling
//     references are removed instead.
//   - Foreground: an owner being deleted with the "foregroundDeletion" finalizer gets its
//     dependents deleted (Foreground themselves when they have dependents); once none with
//     blockOwnerDeletion=true remains, the finalizer is removed.
//   - Orphan: an owner being deleted with the "orphan" finalizer has its references removed
//     from its dependents, then the finalizer removed.
// Owner references to kinds the cluster does not serve are left alone. Worker thread only.
#pragma once

#include <string>

#include "cluster/controllers/controller.h"

namespace steward::cluster::controllers {

class GarbageCollector : public Controller {
 public:
  explicit GarbageCollector(ControllerContext& ctx);
  void Observe(const Change& change) override;
  bool Sync(Work kind, const std::string& key) override;

 private:
  enum class OwnerState { kSolid, kDangling, kWaiting, kUnknown };
  OwnerState StateOf(const CachedObject& dependent, const OwnerRef& ref) const;
  const CachedObject* FindOwner(const CachedObject& dependent, const OwnerRef& ref) const;
  bool AttemptToDelete(const std::string& key);
  bool ProcessOwner(const std::string& key);
  bool RemoveOwnerRefs(const CachedObject& obj, const std::set<std::string>& uids);
  void EnqueueAttempt(const std::string& key);
  void EnqueueOwner(const std::string& key);

  ControllerContext& ctx_;
};

}  // namespace steward::cluster::controllers
