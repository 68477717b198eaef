// Dispatcher: the informer's dispatch thread. An unbounded FIFO of notifications delivered to
// the registered handlers in order, so a slow handler never stalls the reflector. Internal to
// kube/informer.
//
// Ordering contract with the cache: the informer pushes a change's notification while it still
// holds the cache's write lock, and AddHandlers/Resync take their snapshot of the cache and push
// it under the read lock, so the queue order is the cache's order. A late handler gets its
// synthetic adds when its registration reaches the head of the queue, before every later
// notification. Thread-safe; handlers run only on the dispatch thread.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "kube/informer/informer.h"

namespace steward::kube::internal {

struct Notification {
  enum class Kind { kAdd, kUpdate, kDelete };
  Kind kind = Kind::kAdd;
  ObjectRef old_object;  // kUpdate; kDelete: the last known state
  ObjectRef new_object;  // kAdd, kUpdate
  bool final_state_unknown = false;
};

class Dispatcher {
 public:
  struct Options {
    std::string name;
    Clock* clock = nullptr;
    // Every `tick_period` (when > 0) `tick` runs on the dispatch thread (the informer's resync).
    Millis tick_period{0};
    std::function<void()> tick;
  };
  explicit Dispatcher(Options options);
  ~Dispatcher();  // Stop()s
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  void Start();
  // Drops queued items and joins the thread (unless called on it).
  void Stop();

  void Push(Notification notification);
  // Registers handlers that first get on_add for each of `initial` (a cache snapshot).
  int AddHandlers(InformerHandlers handlers, std::vector<ObjectRef> initial);
  void RemoveHandlers(int id);
  // on_update(o, o) for each object of the snapshot, to every handler.
  void PushResync(std::vector<ObjectRef> snapshot);
  // Runs `fn` on the dispatch thread once everything queued before it was delivered.
  void PushMarker(std::function<void()> fn);

  bool OnDispatchThread() const { return std::this_thread::get_id() == thread_id_.load(); }
  size_t queued() const;

 private:
  struct Registration {
    int id;
    std::vector<ObjectRef> initial;
  };
  struct Resync {
    std::vector<ObjectRef> snapshot;
  };
  using Item = std::variant<Notification, Registration, Resync, std::function<void()>>;
  struct Entry {
    InformerHandlers handlers;
    // Set when its registration is dispatched. Guarded by the Dispatcher's handlers_mu_ (which
    // GUARDED_BY cannot name from here).
    bool active = false;
  };

  void Run();
  void Enqueue(Item item) EXCLUDES(queue_mu_);
  // The next item, or nullopt on stop; runs the tick when it is due.
  std::optional<Item> Next() EXCLUDES(queue_mu_);
  void Deliver(const Notification& n);
  void Activate(const Registration& r);
  void DeliverResync(const Resync& r);
  // Calls `fn` on every active handler (registration order), each while it is still registered.
  void ForEachActive(const std::function<void(const InformerHandlers&)>& fn);
  // Calls `fn` on one handler if still registered; marks it running so RemoveHandlers waits.
  void CallOne(int id, const std::shared_ptr<Entry>& entry,
               const std::function<void(const InformerHandlers&)>& fn);

  Options options_;
  Clock& clock_;

  mutable Mutex queue_mu_;
  CondVar queue_cv_;
  std::deque<Item> queue_ GUARDED_BY(queue_mu_);
  bool stopping_ GUARDED_BY(queue_mu_) = false;
  std::atomic<bool> stop_flag_{false};  // stopping_, readable without queue_mu_
  SteadyTime next_tick_ GUARDED_BY(queue_mu_){};

  Mutex handlers_mu_;
  CondVar handlers_cv_;
  std::map<int, std::shared_ptr<Entry>> handlers_ GUARDED_BY(handlers_mu_);
  int next_id_ GUARDED_BY(handlers_mu_) = 1;
  int running_id_ GUARDED_BY(handlers_mu_) = 0;

  // Not guarded: started by Start() (under queue_mu_), joined by Stop() from outside the
  // dispatch thread; Start and Stop are not called concurrently.
  std::thread thread_;
  std::atomic<std::thread::id> thread_id_{};
};

}  // namespace steward::kube::internal
