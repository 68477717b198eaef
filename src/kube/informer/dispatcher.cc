#include "kube/informer/dispatcher.h"

#include <exception>
#include <optional>
#include <utility>

#include "common/log.h"
#include "kube/informer/clock_wait.h"

namespace steward::kube::internal {

Dispatcher::Dispatcher(Options options)
    : options_(std::move(options)), clock_(options_.clock ? *options_.clock : RealClock::Get()) {}

Dispatcher::~Dispatcher() { Stop(); }

void Dispatcher::Start() {
  MutexLock lock(queue_mu_);
  if (thread_.joinable() || stopping_) return;
  if (options_.tick_period.count() > 0) next_tick_ = clock_.Now() + options_.tick_period;
  thread_ = std::thread([this] { Run(); });
  thread_id_.store(thread_.get_id());
}

void Dispatcher::Stop() {
  {
    MutexLock lock(queue_mu_);
    stopping_ = true;
    queue_.clear();
  }
  stop_flag_.store(true);
  queue_cv_.NotifyAll();
  if (OnDispatchThread()) return;  // called from a handler: the loop ends after it returns
  if (thread_.joinable()) thread_.join();
}

void Dispatcher::Enqueue(Item item) {
  {
    MutexLock lock(queue_mu_);
    if (stopping_) return;
    queue_.push_back(std::move(item));
  }
  queue_cv_.NotifyOne();
}

void Dispatcher::Push(Notification notification) { Enqueue(std::move(notification)); }

int Dispatcher::AddHandlers(InformerHandlers handlers, std::vector<ObjectRef> initial) {
  int id;
  {
    MutexLock lock(handlers_mu_);
    id = next_id_++;
    auto entry = std::make_shared<Entry>();
    entry->handlers = std::move(handlers);
    handlers_.emplace(id, std::move(entry));
  }
  Enqueue(Registration{id, std::move(initial)});
  return id;
}

void Dispatcher::RemoveHandlers(int id) {
  MutexLock lock(handlers_mu_);
  handlers_.erase(id);
  if (OnDispatchThread()) return;
  handlers_cv_.Wait(handlers_mu_, [&]() REQUIRES(handlers_mu_) { return running_id_ != id; });
}

void Dispatcher::PushResync(std::vector<ObjectRef> snapshot) {
  Enqueue(Resync{std::move(snapshot)});
}

void Dispatcher::PushMarker(std::function<void()> fn) { Enqueue(std::move(fn)); }

size_t Dispatcher::queued() const {
  MutexLock lock(queue_mu_);
  return queue_.size();
}

std::optional<Dispatcher::Item> Dispatcher::Next() {
  ReleasableMutexLock lock(queue_mu_);
  while (true) {
    auto ready = [&]() REQUIRES(queue_mu_) { return stopping_ || !queue_.empty(); };
    if (options_.tick_period.count() > 0) {
      if (!WaitUntil(queue_cv_, queue_mu_, clock_, next_tick_, ready)) {
        next_tick_ = clock_.Now() + options_.tick_period;
        lock.Release();
        options_.tick();  // may Enqueue
        lock.Reacquire();
        continue;
      }
    } else {
      queue_cv_.Wait(queue_mu_, ready);
    }
    if (stopping_) return std::nullopt;
    Item item = std::move(queue_.front());
    queue_.pop_front();
    return item;
  }
}

void Dispatcher::Run() {
  while (auto item = Next()) {
    std::visit(
        [this](auto& it) {
          using T = std::decay_t<decltype(it)>;
          if constexpr (std::is_same_v<T, Notification>) {
            Deliver(it);
          } else if constexpr (std::is_same_v<T, Registration>) {
            Activate(it);
          } else if constexpr (std::is_same_v<T, Resync>) {
            DeliverResync(it);
          } else {
            it();
          }
        },
        *item);
  }
}

void Dispatcher::Deliver(const Notification& n) {
  ForEachActive([&](const InformerHandlers& h) {
    switch (n.kind) {
      case Notification::Kind::kAdd:
        if (h.on_add) h.on_add(n.new_object);
        break;
      case Notification::Kind::kUpdate:
        if (h.on_update) h.on_update(n.old_object, n.new_object);
        break;
      case Notification::Kind::kDelete:
        if (h.on_delete) h.on_delete(n.old_object, n.final_state_unknown);
        break;
    }
  });
}

void Dispatcher::Activate(const Registration& r) {
  std::shared_ptr<Entry> entry;
  {
    MutexLock lock(handlers_mu_);
    auto it = handlers_.find(r.id);
    if (it == handlers_.end()) return;  // removed before it was activated
    entry = it->second;
  }
  for (const auto& object : r.initial) {
    CallOne(r.id, entry, [&](const InformerHandlers& h) {
      if (h.on_add) h.on_add(object);
    });
  }
  MutexLock lock(handlers_mu_);
  entry->active = true;
}

void Dispatcher::DeliverResync(const Resync& r) {
  for (const auto& object : r.snapshot) {
    ForEachActive([&](const InformerHandlers& h) {
      if (h.on_update) h.on_update(object, object);
    });
  }
}

void Dispatcher::ForEachActive(const std::function<void(const InformerHandlers&)>& fn) {
  std::vector<std::pair<int, std::shared_ptr<Entry>>> active;
  {
    MutexLock lock(handlers_mu_);
    for (const auto& [id, entry] : handlers_) {
      if (entry->active) active.emplace_back(id, entry);
    }
  }
  for (const auto& [id, entry] : active) CallOne(id, entry, fn);
}

void Dispatcher::CallOne(int id, const std::shared_ptr<Entry>& entry,
                         const std::function<void(const InformerHandlers&)>& fn) {
  {
    MutexLock lock(handlers_mu_);
    if (stop_flag_.load() || !handlers_.contains(id)) return;
    running_id_ = id;
  }
  try {
    fn(entry->handlers);
  } catch (const std::exception& e) {
    LOG_ERROR("informer {}: handler {} threw: {}", options_.name, id, e.what());
  }
  {
    MutexLock lock(handlers_mu_);
    running_id_ = 0;
  }
  handlers_cv_.NotifyAll();
}

}  // namespace steward::kube::internal
