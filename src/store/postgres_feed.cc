// The PostgreSQL store's feed thread: LISTEN, read `changes` in position order, deliver to the
// store's listeners, re-synchronise after a gap, and what a committing caller waits on
// (postgres_store.h has the contract).
#include "store/postgres_feed.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>

#include "common/file.h"
#include "store/postgres_schema.h"
#include "store/postgres_store_impl.h"
#include "store/store_impl.h"

namespace steward::store::pg {

Status PostgresFeed::Start(int64_t delivered) {
  {
    MutexLock lock(delivered_mu_);
    delivered_ = delivered;
  }
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) return Internal("eventfd: " + ErrnoText(errno));
  thread_ = std::thread([this] { FeedLoop(); });
  return Status::Ok();
}

void PostgresFeed::Stop() {
  {
    MutexLock lock(delivered_mu_);
    stopping_ = true;
  }
  delivered_cv_.NotifyAll();
  stop_ = true;
  Poke();
  if (thread_.joinable()) thread_.join();
  if (wake_fd_ >= 0) close(wake_fd_);
  wake_fd_ = -1;
}

void PostgresFeed::Poke() {
  uint64_t one = 1;
  if (wake_fd_ >= 0) (void)!write(wake_fd_, &one, sizeof one);
}

// A write from a listener (on the feed thread) does not wait: its change is delivered after the
// listener returns. It is recorded in nested_max_ before that, so a caller waiting for the change
// being delivered also waits for the changes its listeners made (as SQLite's committing thread
// delivers them before it returns).
void PostgresFeed::AwaitDelivery(int64_t position) {
  if (tls_feed_thread_of == this) {
    MutexLock lock(delivered_mu_);
    nested_max_ = std::max(nested_max_, position);
    return;
  }
  Poke();
  MutexLock lock(delivered_mu_);
  if (!delivered_cv_.WaitFor(delivered_mu_, options_.delivery_wait, [&]() REQUIRES(delivered_mu_) {
        return (delivered_ >= position && delivered_ >= nested_max_) || stopping_;
      })) {
    LOG_WARN("store {}: change {} is committed but was not delivered within {} ms", params_.where,
             position, options_.delivery_wait.count());
  }
}

void PostgresFeed::DeliverChange(ProjectChange change) {
  const int64_t position = change.position;
  feed_.Deliver(feed_.TakeTicket(), std::move(change));
  {
    MutexLock lock(delivered_mu_);
    delivered_ = std::max(delivered_, position);
  }
  delivered_cv_.NotifyAll();
}

StatusOr<std::unique_ptr<PgConn>> PostgresFeed::ConnectListener() {
  ASSIGN_OR_RETURN(std::unique_ptr<PgConn> c, Connect(params_));
  RETURN_IF_ERROR(c->Exec("listen", std::string("LISTEN ") + kChannel).status());
  return c;
}

// Delivers every change after the last one delivered, in position order.
Status PostgresFeed::CatchUp(PgConn& c) {
  while (!stop_) {
    int64_t after = 0;
    {
      MutexLock lock(delivered_mu_);
      after = delivered_;
    }
    ASSIGN_OR_RETURN(PgResult r, c.Exec("read changes",
                                        "SELECT position, payload FROM changes WHERE position > "
                                        "$1 ORDER BY position LIMIT 500",
                                        {after}));
    if (r.Rows() == 0) return Status::Ok();
    // Positions are taken under the feed lock and committed with it, so a visible position
    // means every earlier one is visible too, unless it was pruned.
    if (r.Int(0, 0) != after + 1) {
      LOG_ERROR(
          "store {}: changes {} to {} were pruned before this process read them; "
          "re-delivering every record as it is now",
          params_.where, after + 1, r.Int(0, 0) - 1);
      RETURN_IF_ERROR(Resync(c));
      continue;
    }
    for (int i = 0; i < r.Rows() && !stop_; ++i) {
      ASSIGN_OR_RETURN(ProjectChange change, ChangeFromPayload(r.Text(i, 1), r.Int(i, 0)));
      DeliverChange(std::move(change));
    }
  }
  return Status::Ok();
}

// After a gap: every record as of one snapshot, at that snapshot's position (see the header).
Status PostgresFeed::Resync(PgConn& c) {
  RETURN_IF_ERROR(
      c.Exec("resynchronise", "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").status());
  auto pos = c.Exec("resynchronise", "SELECT position FROM feed");
  auto all = c.Exec("resynchronise",
                    std::string("SELECT ") + kProjectColumns + " FROM projects ORDER BY id");
  auto done = c.Exec("resynchronise", "COMMIT");
  if (!pos.ok()) return pos.error();
  if (!all.ok()) return all.error();
  if (!done.ok()) return done.error();
  const int64_t at = pos->Int(0, 0);
  for (int i = 0; i < all->Rows() && !stop_; ++i) {
    ProjectChange change;
    change.record = ReadProjectRow(PgRow{*all, i});
    change.project_id = change.record->id;
    change.position = at;
    DeliverChange(std::move(change));
  }
  MutexLock lock(delivered_mu_);
  delivered_ = std::max(delivered_, at);
  return Status::Ok();
}

// True when notifications were queued (they are dropped: the next read finds their changes).
static bool DrainNotifications(PgConn& listen) {
  bool any = false;
  while (PGnotify* n = PQnotifies(listen.raw())) {
    PQfreemem(n);
    any = true;
  }
  return any;
}

// Until a notification arrives on `listen`, a local commit pokes, or `timeout` passes.
void PostgresFeed::WaitForWork(PgConn* listen, std::chrono::milliseconds timeout) {
  pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {-1, POLLIN, 0}};
  if (listen) fds[1].fd = PQsocket(listen->raw());
  int n = poll(fds, fds[1].fd >= 0 ? 2 : 1, static_cast<int>(timeout.count()));
  if (n > 0 && (fds[0].revents & POLLIN)) {
    uint64_t count = 0;
    (void)!read(wake_fd_, &count, sizeof count);
  }
}

void PostgresFeed::FeedLoop() {
  tls_feed_thread_of = this;
  std::unique_ptr<PgConn> listen;
  std::chrono::milliseconds backoff{50};
  bool warned = false;
  while (!stop_) {
    if (!listen) {
      auto c = ConnectListener();
      if (!c.ok()) {
        if (!warned) LOG_WARN("store change feed: {}; retrying", c.error().message());
        warned = true;
        WaitForWork(nullptr, backoff);
        backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
        continue;
      }
      if (warned) LOG_INFO("store {}: change feed reconnected", params_.where);
      warned = false;
      listen = std::move(*c);
    }
    // LISTEN is in place before the read: a commit after the read is notified.
    Status s = CatchUp(*listen);
    if (!s.ok()) {
      // Backed off, so that a failure that persists (not a cut connection) does not spin.
      LOG_WARN("store change feed: {}", s.message());
      listen.reset();
      WaitForWork(nullptr, backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
      continue;
    }
    backoff = std::chrono::milliseconds(50);
    // A notification that arrived during the read is queued in libpq already, and the socket
    // will not wake poll for it: read again at once.
    if (DrainNotifications(*listen)) continue;
    WaitForWork(listen.get(), options_.poll_interval);
    if (PQconsumeInput(listen->raw()) == 0) {
      LOG_WARN("store change feed: {}: {}", params_.where, Flatten(PQerrorMessage(listen->raw())));
      listen.reset();
      continue;
    }
    DrainNotifications(*listen);
  }
}

}  // namespace steward::store::pg
