// PostgresFeed: the PostgreSQL store's change feed thread — LISTENs on the store's channel,
// reads `changes` in position order and delivers each to the store's listeners (ChangeFeed),
// re-synchronises after a gap (every record as of one snapshot), and is what a committing caller
// waits on until its change was delivered (postgres_store.h has the contract).
//
// Ownership: owned by the PostgresStore; borrows its connection parameters and options, which
// outlive it. Owns the feed thread (Start/Stop) and its own LISTEN connection (not pooled).
// Threads: AddListener, RemoveListener, AwaitDelivery and Poke from any thread; Start and Stop
// from the owner, once each (the destructor stops).
// Internal to src/store.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>

#include "common/mutex.h"
#include "common/status.h"
#include "store/change_feed.h"
#include "store/postgres_connection.h"
#include "store/postgres_store.h"
#include "store/store.h"

namespace steward::store::pg {

class PostgresFeed {
 public:
  PostgresFeed(const ConnectParams& params, const PostgresOptions& options)
      : params_(params), options_(options) {}
  ~PostgresFeed() { Stop(); }
  PostgresFeed(const PostgresFeed&) = delete;
  PostgresFeed& operator=(const PostgresFeed&) = delete;

  // Starts the feed thread; changes after `delivered` (the store's position at open) are
  // delivered.
  Status Start(int64_t delivered) EXCLUDES(delivered_mu_);
  // Ends waits and joins the thread; later AwaitDelivery calls return at once.
  void Stop() EXCLUDES(delivered_mu_);

  int AddListener(Listener listener) { return feed_.AddListener(std::move(listener)); }
  void RemoveListener(int handle) { feed_.RemoveListener(handle); }

  // Wakes the feed thread to read at once (a local commit).
  void Poke();
  // Until the change at `position` (and the changes the listeners made meanwhile) was delivered,
  // bounded by options.delivery_wait (then logged). From the feed thread itself (a write from a
  // listener) it does not wait: that change is delivered after the listener returns.
  void AwaitDelivery(int64_t position) EXCLUDES(delivered_mu_);

 private:
  void FeedLoop();
  StatusOr<std::unique_ptr<PgConn>> ConnectListener();
  Status CatchUp(PgConn& c);
  Status Resync(PgConn& c);
  void DeliverChange(ProjectChange change) EXCLUDES(delivered_mu_);
  void WaitForWork(PgConn* listen, std::chrono::milliseconds timeout);

  const ConnectParams& params_;
  const PostgresOptions& options_;
  ChangeFeed feed_;  // delivered to by the feed thread only
  Mutex delivered_mu_;
  CondVar delivered_cv_;
  int64_t delivered_ GUARDED_BY(delivered_mu_) = 0;   // the last position delivered
  int64_t nested_max_ GUARDED_BY(delivered_mu_) = 0;  // the last committed by a listener
  bool stopping_ GUARDED_BY(delivered_mu_) = false;
  std::atomic<bool> stop_{false};
  int wake_fd_ = -1;  // eventfd: a local commit or Stop wakes the feed thread
  std::thread thread_;
};

}  // namespace steward::store::pg
