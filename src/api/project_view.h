// ProjectView: every stored record (projects and agents) as the API renders it, in id order, kept
// current by the store's change feed, so that a list page or a watch snapshot is served from
// memory: texts rendered once per change, concatenated, with no store read and no JSON round
// trip per item.
//
// Freshness: the view counts the feed position it has applied. Load() reads the store's position
// and then every record; changes delivered meanwhile (Apply, called by a store listener added
// before Load) win over loaded records by version, and a record purged while loading stays
// purged, so the view ends as the store was at the last applied position. A reader that must
// see every commit the store had when it asked (read-your-writes across replicas, as Kubernetes'
// consistent reads from its watch cache) takes the store's LastPosition() and waits for it
// (WaitFor) before reading; when that wait runs out, it reads the store instead. A change that
// arrives after a gap in the positions (one this process was not told of: another process
// writing the same SQLite file) unloads the view until Load() runs again (needs_reload()).
//
// Thread-safety: every method may be called from any thread; Apply calls come one at a time
// (the store's delivery order), Load once. Items are immutable and shared: a page holds them
// after the view has moved on.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"
#include "store/store.h"

namespace steward::api {

class ProjectView {
 public:
  struct Item {
    store::RecordKind kind = store::RecordKind::kProject;
    std::string id;
    std::string team;
    std::string cluster;
    std::string phase;  // the status's phase column; "" before the engine wrote a status
    store::DesiredState desired = store::DesiredState::kSuspended;
    int64_t version = 0;
    std::shared_ptr<const std::string> json;  // DumpJson(ProjectJson(record))
  };
  using ItemPtr = std::shared_ptr<const Item>;

  // Reads the store's position, then every record (pages of `page` records), in place of what
  // the view held. Readers are not served meanwhile. A failure leaves the view unloaded.
  Status Load(store::Store& store, int page = 1000) EXCLUDES(mu_, position_mu_);
  bool loaded() const EXCLUDES(position_mu_);
  // A gap in the positions unloaded the view: it must be loaded again.
  bool needs_reload() const EXCLUDES(position_mu_);

  // A committed change; `json` is change.record rendered (ignored for a purge), shared with
  // whoever else sends it (the watch event).
  void Apply(const store::ProjectChange& change, std::shared_ptr<const std::string> json)
      EXCLUDES(mu_, position_mu_);

  // Whether the view is loaded and has applied `position`, waiting for that until `deadline`.
  bool WaitFor(int64_t position, std::chrono::steady_clock::time_point deadline) const
      EXCLUDES(position_mu_);
  int64_t position() const EXCLUDES(position_mu_);

  // The items matching `filter` (kind, team, phase, desired; ids after filter.after_id), in id
  // order, at most filter.limit (0: all). Phase "Pending" also matches records the engine has
  // not written a status for (phase ""), as the API's lists do.
  std::vector<ItemPtr> List(const store::ListFilter& filter) const EXCLUDES(mu_);
  // The item of record `id` (either kind); null when the view does not hold it.
  ItemPtr Find(std::string_view id) const EXCLUDES(mu_);
  size_t size() const EXCLUDES(mu_);

  // The item of a record, rendered by the caller.
  static ItemPtr MakeItem(const store::ProjectRecord& record,
                          std::shared_ptr<const std::string> json);

 private:
  void PutLocked(ItemPtr item) REQUIRES(mu_);

  // The items, read shared by every list; then the position (a change's items are in place
  // before its position is). Lock order: mu_, then position_mu_.
  mutable SharedMutex mu_;
  std::map<std::string, ItemPtr, std::less<>> items_ GUARDED_BY(mu_);
  // Ids purged while Load runs: a page read before the purge must not bring them back.
  std::set<std::string, std::less<>> purged_while_loading_ GUARDED_BY(mu_);
  bool loading_ GUARDED_BY(mu_) = false;

  mutable Mutex position_mu_;
  mutable CondVar applied_cv_;
  bool loaded_ GUARDED_BY(position_mu_) = false;
  bool needs_reload_ GUARDED_BY(position_mu_) = false;
  int64_t position_ GUARDED_BY(position_mu_) = 0;
};

}  // namespace steward::api
