#include "engine/workqueue/worker_pool.h"

#include <exception>

#include "common/log.h"

namespace steward::engine {

StatusOr<std::unique_ptr<WorkerPool>> WorkerPool::Start(WorkQueue& queue, int workers,
                                                        Handler handler) {
  if (workers < 1) {
    return InvalidArgument("workers: must be >= 1, got " + std::to_string(workers));
  }
  if (!handler) return InvalidArgument("WorkerPool::Start: handler is empty");
  std::unique_ptr<WorkerPool> pool(new WorkerPool(queue, std::move(handler)));
  pool->threads_.reserve(static_cast<size_t>(workers));
  for (int i = 0; i < workers; ++i) pool->threads_.emplace_back([p = pool.get()] { p->Run(); });
  return pool;
}

WorkerPool::WorkerPool(WorkQueue& queue, Handler handler)
    : queue_(queue), handler_(std::move(handler)) {}

WorkerPool::~WorkerPool() { Stop(); }

void WorkerPool::Stop() {
  if (stopped_.exchange(true)) return;
  queue_.ShutDownWithDrain();
  for (auto& t : threads_) t.join();
}

WorkerPoolStats WorkerPool::stats() const {
  WorkerPoolStats s;
  s.ok = ok_.load();
  s.requeued_after = requeued_after_.load();
  s.errors = errors_.load();
  s.terminal = terminal_.load();
  s.exceptions = exceptions_.load();
  return s;
}

void WorkerPool::Run() {
  while (auto key = queue_.Get()) {
    WorkResult result;
    try {
      result = handler_(*key);
    } catch (const std::exception& e) {
      ++exceptions_;
      result = WorkResult::Error(Internal("handler threw: " + std::string(e.what())));
    } catch (...) {
      ++exceptions_;
      result = WorkResult::Error(Internal("handler threw a non-standard exception"));
    }
    Apply(*key, result);
    queue_.Done(*key);
  }
}

void WorkerPool::Apply(const std::string& key, const WorkResult& result) {
  const std::string& name = queue_.options().name;
  switch (result.kind) {
    case WorkResult::Kind::kOk:
      ++ok_;
      queue_.Forget(key);
      return;
    case WorkResult::Kind::kRequeueAfter:
      ++requeued_after_;
      queue_.Forget(key);
      queue_.AddAfter(key, result.requeue_after);
      return;
    case WorkResult::Kind::kTerminal:
      ++terminal_;
      LOG_WARN("workqueue {}: key {} failed terminally (not retried until it changes): {}", name,
               key, result.error.ToString());
      queue_.Forget(key);
      return;
    case WorkResult::Kind::kError: {
      ++errors_;
      const Status error =
          result.error.ok() ? Internal("handler returned Error() with an OK status") : result.error;
      LOG_WARN("workqueue {}: key {} failed (retry #{}): {}", name, key,
               queue_.NumRequeues(key) + 1, error.ToString());
      queue_.AddRateLimited(key);
      return;
    }
  }
  // An out-of-range Kind is a bug: retry rather than report success.
  ++errors_;
  LOG_ERROR("workqueue {}: key {}: unknown result kind {}", name, key,
            static_cast<int>(result.kind));
  queue_.AddRateLimited(key);
}

}  // namespace steward::engine
