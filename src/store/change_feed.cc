// ChangeFeed: tickets in commit order, one delivery at a time, parked changes from listeners.
#include "store/change_feed.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <utility>
#include <vector>

#include "common/log.h"

namespace steward::store {
namespace {

// The feeds whose listeners the current thread is running (a listener may write to another
// store whose listener writes back).
thread_local std::vector<const ChangeFeed*> tls_delivering;

}  // namespace

uint64_t ChangeFeed::TakeTicket() {
  MutexLock lock(ticket_mu_);
  return next_ticket_++;
}

int ChangeFeed::AddListener(Listener listener) {
  MutexLock lock(listeners_mu_);
  int handle = ++next_handle_;
  listeners_.emplace(handle, std::make_shared<const Listener>(std::move(listener)));
  return handle;
}

void ChangeFeed::RemoveListener(int handle) {
  MutexLock lock(listeners_mu_);
  listeners_.erase(handle);
  const std::thread::id self = std::this_thread::get_id();
  called_.Wait(listeners_mu_, [&]() REQUIRES(listeners_mu_) {
    return calling_ != handle || calling_thread_ == self;
  });
}

// A committer waits for its turn and delivers its own change; a change committed from inside a
// listener (this thread already delivering) cannot wait for its turn, so it is parked and
// delivered by whichever thread finishes the ticket before it. Its ticket was taken before that
// listener returns, so it is always parked before its turn comes.
void ChangeFeed::Deliver(uint64_t ticket, ProjectChange change) {
  ReleasableMutexLock lock(turn_mu_);
  if (std::find(tls_delivering.begin(), tls_delivering.end(), this) != tls_delivering.end()) {
    parked_.emplace(ticket, std::move(change));
    return;
  }
  turn_cv_.Wait(turn_mu_, [&]() REQUIRES(turn_mu_) { return serving_ == ticket; });
  std::optional<ProjectChange> next = std::move(change);
  while (next) {
    lock.Release();
    tls_delivering.push_back(this);
    CallListeners(*next);
    tls_delivering.pop_back();
    lock.Reacquire();
    next.reset();
    auto it = parked_.find(++serving_);
    if (it != parked_.end()) {
      next = std::move(it->second);
      parked_.erase(it);
    }
  }
  turn_cv_.NotifyAll();
}

void ChangeFeed::CallListeners(const ProjectChange& change) {
  std::vector<std::pair<int, std::shared_ptr<const Listener>>> listeners;
  {
    MutexLock lock(listeners_mu_);
    listeners.reserve(listeners_.size());
    for (const auto& [handle, l] : listeners_) listeners.emplace_back(handle, l);
  }
  for (const auto& [handle, l] : listeners) {
    {
      MutexLock lock(listeners_mu_);
      if (!listeners_.contains(handle)) continue;  // removed since: never called again
      calling_ = handle;
      calling_thread_ = std::this_thread::get_id();
    }
    // A throwing listener must not stall delivery for every later commit.
    try {
      (*l)(change);
    } catch (const std::exception& e) {
      LOG_ERROR("store listener threw on project {}: {}", change.project_id, e.what());
    } catch (...) {
      LOG_ERROR("store listener threw on project {}", change.project_id);
    }
    MutexLock lock(listeners_mu_);
    calling_ = 0;
    called_.NotifyAll();
  }
}

}  // namespace steward::store
