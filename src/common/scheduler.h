// Scheduler: runs callbacks at given times on one background thread, in time order.
//
// Thread-safe: Schedule/Cancel may be called from any thread, including from callbacks.
// Stop() (idempotent; run by the destructor) drops pending callbacks and joins the thread;
// a callback running at that moment finishes first.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <thread>

#include "common/clock.h"
#include "common/mutex.h"

namespace steward {

class Scheduler {
 public:
  using TaskId = uint64_t;
  explicit Scheduler(std::string name = "scheduler");
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Runs `fn` after `delay` (at once if zero or negative, still on the scheduler thread).
  TaskId Schedule(std::chrono::nanoseconds delay, std::function<void()> fn);
  // Cancels a task that has not started. Returns false if it already ran or is unknown.
  bool Cancel(TaskId id);
  void Stop();

 private:
  void Run() EXCLUDES(mu_);

  Mutex mu_;
  CondVar cv_;
  std::multimap<SteadyTime, std::pair<TaskId, std::function<void()>>> tasks_ GUARDED_BY(mu_);
  std::map<TaskId, SteadyTime> index_ GUARDED_BY(mu_);
  TaskId next_id_ GUARDED_BY(mu_) = 1;
  bool stopping_ GUARDED_BY(mu_) = false;
  // Not guarded: assigned once by the constructor, afterwards only tested and joined by Stop().
  std::thread thread_;
};

}  // namespace steward
