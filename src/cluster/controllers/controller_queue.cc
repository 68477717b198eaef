#include "cluster/controllers/controller_queue.h"

#include <algorithm>

namespace steward::cluster::controllers {

ControllerQueue::ControllerQueue(Scheduler& scheduler) : scheduler_(scheduler) {}

ControllerQueue::~ControllerQueue() { Shutdown(); }

void ControllerQueue::Add(const WorkItem& item) {
  MutexLock lock(mu_);
  if (shutdown_) return;
  auto it = delayed_.find(item);
  if (it != delayed_.end()) {
    scheduler_.Cancel(it->second.id);
    delayed_.erase(it);
  }
  AddLocked(item);
}

void ControllerQueue::AddLocked(const WorkItem& item) {
  if (queued_.insert(item).second) {
    ready_.push_back(item);
    cv_.NotifyOne();
  }
}

void ControllerQueue::AddAfter(const WorkItem& item, std::chrono::nanoseconds delay) {
  if (delay <= std::chrono::nanoseconds::zero()) {
    Add(item);
    return;
  }
  // The scheduler measures delays with the steady clock; so do we, to compare due times.
  SteadyTime due = std::chrono::steady_clock::now() + delay;
  MutexLock lock(mu_);
  if (shutdown_ || queued_.count(item) != 0) return;  // already due sooner
  auto it = delayed_.find(item);
  if (it != delayed_.end()) {
    if (it->second.due <= due) return;
    scheduler_.Cancel(it->second.id);
    delayed_.erase(it);
  }
  // The task id is only known after Schedule returns; Fire() takes the lock, so it cannot see
  // the map before the entry below is written.
  auto holder = std::make_shared<Scheduler::TaskId>(0);
  Scheduler::TaskId id = scheduler_.Schedule(delay, [this, item, holder] { Fire(item, holder); });
  *holder = id;
  delayed_[item] = Delayed{due, id};
}

void ControllerQueue::Fire(const WorkItem& item, const std::shared_ptr<Scheduler::TaskId>& id) {
  MutexLock lock(mu_);
  if (shutdown_) return;
  auto it = delayed_.find(item);
  if (it == delayed_.end() || it->second.id != *id) return;  // superseded
  delayed_.erase(it);
  AddLocked(item);
}

void ControllerQueue::AddRateLimited(const WorkItem& item) {
  int n;
  {
    MutexLock lock(mu_);
    n = ++failures_[item];
  }
  auto delay = std::chrono::milliseconds(5) * (int64_t{1} << std::min(n - 1, 13));
  AddAfter(item, std::min<std::chrono::nanoseconds>(delay, std::chrono::seconds(30)));
}

void ControllerQueue::Forget(const WorkItem& item) {
  MutexLock lock(mu_);
  failures_.erase(item);
}

std::optional<WorkItem> ControllerQueue::TryPop() {
  MutexLock lock(mu_);
  if (ready_.empty()) return std::nullopt;
  WorkItem item = std::move(ready_.front());
  ready_.pop_front();
  queued_.erase(item);
  return item;
}

bool ControllerQueue::Wait() {
  MutexLock lock(mu_);
  cv_.Wait(mu_, [&]() REQUIRES(mu_) { return shutdown_ || kicked_ || !ready_.empty(); });
  kicked_ = false;
  return !shutdown_;
}

void ControllerQueue::Kick() {
  MutexLock lock(mu_);
  kicked_ = true;
  cv_.NotifyOne();
}

void ControllerQueue::Shutdown() {
  MutexLock lock(mu_);
  if (shutdown_) return;
  shutdown_ = true;
  for (auto& [item, d] : delayed_) scheduler_.Cancel(d.id);
  delayed_.clear();
  ready_.clear();
  queued_.clear();
  cv_.NotifyAll();
}

size_t ControllerQueue::ReadySize() const {
  MutexLock lock(mu_);
  return ready_.size();
}

size_t ControllerQueue::DelayedSize() const {
  MutexLock lock(mu_);
  return delayed_.size();
}

}  // namespace steward::cluster::controllers
