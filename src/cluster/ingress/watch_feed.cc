#include "cluster/ingress/watch_feed.h"

#include <chrono>
#include <utility>

namespace steward::cluster::ingress {

namespace {
// A safety net: the background thread also drains this often, in case a wake-up is missed
// (notify callbacks signal without taking the mutex, so that they never block).
constexpr auto kIdleDrain = std::chrono::milliseconds(1000);
}  // namespace

WatchFeed::WatchFeed(ApplyFn apply) : apply_(std::move(apply)) {}

StatusOr<std::unique_ptr<WatchFeed>> WatchFeed::Start(Storage& storage,
                                                      std::vector<std::string> group_resources,
                                                      ApplyFn apply) {
  std::unique_ptr<WatchFeed> feed(new WatchFeed(std::move(apply)));
  {
    // The feed is not shared yet: the lock is uncontended, taken for the analysis.
    MutexLock lock(feed->apply_mu_);
    for (auto& gr : group_resources) {
      WatchRequest request;
      request.group_resource = std::move(gr);
      request.initial_snapshot = true;
      auto watcher = storage.Watch(request);
      if (!watcher.ok()) return watcher.status();
      feed->watchers_.push_back(std::move(watcher).value());
    }
    for (auto& w : feed->watchers_) {
      w->SetNotify([signal = feed->signal_] {
        signal->pending.store(true);
        signal->cv.NotifyOne();
      });
    }
    feed->DrainLocked();
  }
  WatchFeed* raw = feed.get();
  feed->thread_ = std::thread([raw] { raw->Run(); });
  return feed;
}

WatchFeed::~WatchFeed() { Stop(); }

void WatchFeed::DrainLocked() {
  busy_.store(true);
  signal_->pending.store(false);
  for (auto& w : watchers_) {
    for (const WatchEvent& ev : w->Drain()) apply_(ev);
  }
  busy_.store(false);
}

void WatchFeed::CatchUp() {
  if (!signal_->pending.load() && !busy_.load()) return;
  MutexLock lock(apply_mu_);
  if (signal_->pending.load()) DrainLocked();
}

void WatchFeed::Run() {
  Signal& s = *signal_;
  ReleasableMutexLock lock(s.mu);
  while (!s.stopping) {
    s.cv.WaitFor(s.mu, kIdleDrain,
                 [&s]() REQUIRES(s.mu) { return s.stopping || s.pending.load(); });
    if (s.stopping) break;
    lock.Release();
    {
      MutexLock apply_lock(apply_mu_);
      DrainLocked();
    }
    lock.Reacquire();
  }
}

void WatchFeed::Stop() {
  {
    MutexLock lock(signal_->mu);
    if (signal_->stopping) return;
    signal_->stopping = true;
  }
  signal_->cv.NotifyAll();
  if (thread_.joinable()) thread_.join();
  MutexLock apply_lock(apply_mu_);
  for (auto& w : watchers_) w->Close();
  watchers_.clear();
}

}  // namespace steward::cluster::ingress
