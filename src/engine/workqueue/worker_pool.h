// WorkerPool: N threads that each loop Get() → handler(key) → map the result → Done(key) on a
// WorkQueue, as controller-runtime's reconcileHandler does:
//   Ok()               → Forget(key)
//   RequeueAfter(d)    → Forget(key), then AddAfter(key, d) (d <= 0: Add at once)
//   Error(status)      → AddRateLimited(key) (per-key backoff + global retry bucket)
//   Terminal(status)   → Forget(key), no requeue: the key runs again only when something
//                        Add()s it (an intent or cluster change)
// A handler that throws is treated as Error (logged), like controller-runtime's RecoverPanic.
// Error() with an OK status is a handler bug and is treated as an error, never as success.
// The result is applied before Done(key), so the key's next run always sees it.
//
// Thread-safety: Stop() and stats() may be called from any thread except a worker. Ownership:
// the pool borrows the queue (which must outlive it) and owns its threads; Stop() (also run by
// the destructor) shuts the queue down and joins every worker.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "engine/workqueue/workqueue.h"

namespace steward::engine {

struct WorkResult {
  enum class Kind { kOk, kRequeueAfter, kError, kTerminal };
  Kind kind = Kind::kOk;
  std::chrono::nanoseconds requeue_after{0};  // kRequeueAfter
  Status error;                               // kError, kTerminal

  static WorkResult Ok() { return {}; }
  static WorkResult RequeueAfter(std::chrono::nanoseconds d) {
    return {Kind::kRequeueAfter, d, Status::Ok()};
  }
  static WorkResult Error(Status s) { return {Kind::kError, {}, std::move(s)}; }
  static WorkResult Terminal(Status s) { return {Kind::kTerminal, {}, std::move(s)}; }
};

struct WorkerPoolStats {
  uint64_t ok = 0;
  uint64_t requeued_after = 0;
  uint64_t errors = 0;  // includes handler exceptions
  uint64_t terminal = 0;
  uint64_t exceptions = 0;  // handler threw
};

class WorkerPool {
 public:
  using Handler = std::function<WorkResult(const std::string& key)>;

  // Starts `workers` threads (>= 1) at once.
  static StatusOr<std::unique_ptr<WorkerPool>> Start(WorkQueue& queue, int workers,
                                                     Handler handler);
  ~WorkerPool();  // Stop()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Shuts the queue down (draining: waits for running handlers) and joins the workers.
  // Idempotent.
  void Stop();
  WorkerPoolStats stats() const;
  int workers() const { return static_cast<int>(threads_.size()); }

 private:
  WorkerPool(WorkQueue& queue, Handler handler);
  void Run();
  void Apply(const std::string& key, const WorkResult& result);

  WorkQueue& queue_;
  const Handler handler_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stopped_{false};
  std::atomic<uint64_t> ok_{0}, requeued_after_{0}, errors_{0}, terminal_{0}, exceptions_{0};
};

}  // namespace steward::engine
