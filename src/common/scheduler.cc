#include "common/scheduler.h"

#include <pthread.h>

namespace steward {

Scheduler::Scheduler(std::string name) {
  thread_ = std::thread([this] { Run(); });
  pthread_setname_np(thread_.native_handle(), name.substr(0, 15).c_str());
}

Scheduler::~Scheduler() { Stop(); }

Scheduler::TaskId Scheduler::Schedule(std::chrono::nanoseconds delay, std::function<void()> fn) {
  auto at = std::chrono::steady_clock::now() + delay;
  MutexLock lock(mu_);
  TaskId id = next_id_++;
  tasks_.emplace(at, std::make_pair(id, std::move(fn)));
  index_.emplace(id, at);
  cv_.NotifyOne();
  return id;
}

bool Scheduler::Cancel(TaskId id) {
  MutexLock lock(mu_);
  auto it = index_.find(id);
  if (it == index_.end()) return false;
  auto range = tasks_.equal_range(it->second);
  for (auto t = range.first; t != range.second; ++t) {
    if (t->second.first == id) {
      tasks_.erase(t);
      break;
    }
  }
  index_.erase(it);
  return true;
}

void Scheduler::Stop() {
  {
    MutexLock lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
    tasks_.clear();
    index_.clear();
    cv_.NotifyAll();
  }
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void Scheduler::Run() {
  ReleasableMutexLock lock(mu_);
  while (!stopping_) {
    if (tasks_.empty()) {
      cv_.Wait(mu_);
      continue;
    }
    auto first = tasks_.begin();
    // A copy: Stop() or Cancel() may erase the node while this thread waits.
    SteadyTime when = first->first;
    if (when > std::chrono::steady_clock::now()) {
      cv_.WaitUntil(mu_, when);
      continue;
    }
    auto fn = std::move(first->second.second);
    index_.erase(first->second.first);
    tasks_.erase(first);
    lock.Release();
    fn();
    lock.Reacquire();
  }
}

}  // namespace steward
