// ChangeFeed: the ordered delivery of committed changes to a store's listeners, shared by every
// Store implementation (SQLite, PostgreSQL), so that none of them re-implements it.
//
// Promise: changes reach the listeners one at a time, in ticket order, and tickets are taken in
// commit order (see TakeTicket). Every listener sees every change delivered while it is
// registered, in that order. Deliver(t, c) returns after `c` reached every listener, except when
// it is called from inside one of this feed's listeners (a listener that writes to the store):
// the change is then parked and delivered, in its turn, by whichever thread finishes the ticket
// before it — at the latest by the thread running that listener, after the listener returns. A
// listener that throws is logged and skipped; delivery goes on.
//
// How a store uses it:
//   {  lock the store;  ...;  COMMIT;  ticket = feed.TakeTicket();  }   // still under the lock
//   feed.Deliver(ticket, std::move(change));                           // after the unlock
// A store must take a ticket only for a commit that succeeded, and must pass every ticket it took
// to Deliver exactly once: a ticket never delivered stalls every later one.
//
// A listener may call the store, also to write (that change is parked, above); it must not wait
// for another thread's write to return (that write waits for the listener's turn to end).
//
// Ownership: the feed owns the listeners (copies of the callables). Thread-safety: every method
// may be called from any thread, also from inside a listener. The feed must outlive every
// Deliver call; destroying it while a delivery is in progress is undefined.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <thread>

#include "common/mutex.h"
#include "store/store.h"

namespace steward::store {

class ChangeFeed {
 public:
  ChangeFeed() = default;
  ChangeFeed(const ChangeFeed&) = delete;
  ChangeFeed& operator=(const ChangeFeed&) = delete;

  // The next ticket: 0, 1, 2, ... Call it under the lock that orders the store's commits, right
  // after the commit succeeded, so that ticket order is commit order.
  uint64_t TakeTicket() EXCLUDES(ticket_mu_);

  // Delivers `change` to the listeners in the turn of `ticket` (a value TakeTicket returned).
  // Call it without the store's lock. Blocks until every earlier ticket was delivered and then
  // delivers on the calling thread (and any parked change that follows); returns at once, with
  // the change parked, when the calling thread is running one of this feed's listeners.
  void Deliver(uint64_t ticket, ProjectChange change) EXCLUDES(turn_mu_);

  // Store::AddListener / RemoveListener semantics: once RemoveListener returns, the listener is
  // never called again and no call of it is under way on another thread (RemoveListener waits for
  // one to return), so a listener may capture what its remover destroys next. Called from inside
  // that very listener, it returns at once (the call under way is the caller's own). Removing an
  // unknown or removed handle does nothing. Do not hold, while removing, a lock the listener takes.
  int AddListener(Listener listener) EXCLUDES(listeners_mu_);
  void RemoveListener(int handle) EXCLUDES(listeners_mu_);

 private:
  void CallListeners(const ProjectChange& change) EXCLUDES(listeners_mu_, turn_mu_);

  Mutex ticket_mu_;
  uint64_t next_ticket_ GUARDED_BY(ticket_mu_) = 0;

  Mutex turn_mu_;
  CondVar turn_cv_;  // serving_ moved on
  // The ticket whose change is being (or is next to be) delivered.
  uint64_t serving_ GUARDED_BY(turn_mu_) = 0;
  // Changes committed from inside a listener: delivered by whichever thread reaches their turn.
  std::map<uint64_t, ProjectChange> parked_ GUARDED_BY(turn_mu_);

  Mutex listeners_mu_;
  int next_handle_ GUARDED_BY(listeners_mu_) = 0;
  std::map<int, std::shared_ptr<const Listener>> listeners_ GUARDED_BY(listeners_mu_);
  // The listener being called and the thread calling it (deliveries are one at a time, so there
  // is at most one); 0 when none. RemoveListener waits on `called_` for that call to return.
  int calling_ GUARDED_BY(listeners_mu_) = 0;
  std::thread::id calling_thread_ GUARDED_BY(listeners_mu_);
  CondVar called_;
};

}  // namespace steward::store
