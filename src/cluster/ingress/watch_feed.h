// WatchFeed: keeps an in-memory index up to date from storage watches.
//
// A feed subscribes (with an initial snapshot) to one or more group-resources and hands every
// event to an `apply` callback, in revision order per group-resource. Events are applied by a
// background thread shortly after each write, and by CatchUp(), which readers call before
// they look at the index: once CatchUp() returns, every write that completed before the call
// is reflected (read-your-writes), so tests and callers never race the background thread.
//
// Thread-safety: CatchUp() may be called from any thread. `apply` runs on one thread at a
// time (the background thread or a CatchUp() caller), never concurrently with itself; it must
// take the owner's own lock for the index it edits, and must not call CatchUp() or Stop().
// It may read Storage (it is never called under a storage lock).
//
// Lifecycle: Start() applies the initial snapshot before returning. Stop() (idempotent, also
// run by the destructor) ends the subscriptions and joins the thread; the owner must stop the
// feed before destroying what `apply` touches.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cluster/storage/storage.h"
#include "common/mutex.h"
#include "common/status.h"

namespace steward::cluster::ingress {

class WatchFeed {
 public:
  using ApplyFn = std::function<void(const WatchEvent& event)>;

  // `storage` must outlive the feed. Fails when a watch cannot be opened.
  static StatusOr<std::unique_ptr<WatchFeed>> Start(Storage& storage,
                                                    std::vector<std::string> group_resources,
                                                    ApplyFn apply);
  ~WatchFeed();
  WatchFeed(const WatchFeed&) = delete;
  WatchFeed& operator=(const WatchFeed&) = delete;

  // Applies every queued event. Cheap (two atomic loads) when nothing is queued.
  void CatchUp();
  void Stop();

 private:
  // What the watchers' notify callbacks touch; shared so that a callback still running
  // after Stop() never reaches a destroyed feed.
  struct Signal {
    // Set by notify callbacks; cleared (under apply_mu_) just before a drain.
    std::atomic<bool> pending{true};
    Mutex mu;
    CondVar cv;
    bool stopping GUARDED_BY(mu) = false;
  };

  explicit WatchFeed(ApplyFn apply);
  void DrainLocked() REQUIRES(apply_mu_);
  void Run() EXCLUDES(apply_mu_);

  ApplyFn apply_;
  std::shared_ptr<Signal> signal_ = std::make_shared<Signal>();
  // Serialises draining and applying.
  Mutex apply_mu_;
  std::vector<std::unique_ptr<Watcher>> watchers_ GUARDED_BY(apply_mu_);
  // True while a drain is being applied, so that a reader that finds `pending` already
  // cleared by someone else still waits for the events to land.
  std::atomic<bool> busy_{false};
  std::thread thread_;
};

}  // namespace steward::cluster::ingress
