#include "engine/workqueue/workqueue.h"

#include <algorithm>
#include <cmath>

#include "common/log.h"

namespace steward::engine {

using std::chrono::nanoseconds;

namespace {

// How often the timer thread drops what it remembers of idle keys: at least once per window.
nanoseconds PruneInterval(const WorkQueueOptions& o) {
  return std::max<nanoseconds>(o.resume_window, std::chrono::seconds(10));
}

std::string Ms(nanoseconds d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + "ms";
}

}  // namespace

Status ValidateWorkQueueOptions(const WorkQueueOptions& o) {
  if (o.base_delay <= nanoseconds::zero()) {
    return InvalidArgument("workqueue.base_delay: must be > 0, got " + Ms(o.base_delay));
  }
  if (o.max_delay < o.base_delay) {
    return InvalidArgument("workqueue.max_delay: must be >= base_delay (" + Ms(o.base_delay) +
                           "), got " + Ms(o.max_delay));
  }
  if (!(o.jitter >= 0 && o.jitter <= 1)) {
    return InvalidArgument("workqueue.jitter: must be within [0, 1], got " +
                           std::to_string(o.jitter));
  }
  if (std::isnan(o.retry_qps) || std::isinf(o.retry_qps)) {
    return InvalidArgument("workqueue.retry_qps: must be a finite number (<= 0 disables)");
  }
  if (o.retry_qps > 0 && o.retry_burst < 1) {
    return InvalidArgument("workqueue.retry_burst: must be >= 1 when retry_qps > 0, got " +
                           std::to_string(o.retry_burst));
  }
  if (o.max_timer_wait <= nanoseconds::zero()) {
    return InvalidArgument("workqueue.max_timer_wait: must be > 0, got " + Ms(o.max_timer_wait));
  }
  if (o.resume_window < nanoseconds::zero()) {
    return InvalidArgument("workqueue.resume_window: must be >= 0, got " + Ms(o.resume_window));
  }
  if (o.resumed_run < 1) {
    return InvalidArgument("workqueue.resumed_run: must be >= 1, got " +
                           std::to_string(o.resumed_run));
  }
  return Status::Ok();
}

void DurationHistogram::Observe(nanoseconds d) {
  d = std::max(d, nanoseconds::zero());
  size_t i = 0;
  while (i < kBounds.size() && d > kBounds[i]) ++i;
  ++buckets[i];
  ++count;
  sum += d;
  max = std::max(max, d);
}

StatusOr<std::unique_ptr<WorkQueue>> WorkQueue::Create(WorkQueueOptions options,
                                                       const Clock& clock) {
  RETURN_IF_ERROR(ValidateWorkQueueOptions(options));
  return std::unique_ptr<WorkQueue>(new WorkQueue(std::move(options), clock));
}

WorkQueue::WorkQueue(WorkQueueOptions options, const Clock& clock)
    : options_(std::move(options)),
      clock_(clock),
      random_(options_.jitter_seed),
      next_prune_(clock.Now() + PruneInterval(options_)),
      bucket_(options_.retry_qps, options_.retry_burst, clock) {
  timer_ = std::thread([this] { TimerLoop(); });
}

WorkQueue::~WorkQueue() {
  ShutDown();
  timer_.join();
}

void WorkQueue::Add(const std::string& key) {
  MutexLock lock(mu_);
  if (shutting_down_) return;
  RemoveWaitingLocked(key);
  AddLocked(key, clock_.Now());
}

void WorkQueue::Add(const std::string& key, std::string_view group) {
  MutexLock lock(mu_);
  if (shutting_down_) return;
  known_[key].group = group;
  RemoveWaitingLocked(key);
  AddLocked(key, clock_.Now());
}

void WorkQueue::AddAfter(const std::string& key, nanoseconds delay) {
  MutexLock lock(mu_);
  if (shutting_down_) return;
  ++delayed_adds_;
  const SteadyTime now = clock_.Now();
  if (delay <= nanoseconds::zero()) {
    RemoveWaitingLocked(key);
    AddLocked(key, now);
    return;
  }
  AddWaitingLocked(key, now + delay);
}

void WorkQueue::AddRateLimited(const std::string& key) {
  MutexLock lock(mu_);
  if (shutting_down_) return;
  ++retries_;
  ++delayed_adds_;
  const int failures = failures_[key]++;
  // Both limiters are consulted every time (client-go's MaxOfRateLimiter): the bucket token is
  // spent even when the per-key backoff is the longer delay.
  const SteadyTime now = clock_.Now();
  const nanoseconds delay = std::max(BackoffLocked(failures), bucket_.Reserve());
  if (delay <= nanoseconds::zero()) {
    RemoveWaitingLocked(key);
    AddLocked(key, now);
    return;
  }
  AddWaitingLocked(key, now + delay);
}

void WorkQueue::Forget(const std::string& key) {
  MutexLock lock(mu_);
  failures_.erase(key);
}

int WorkQueue::NumRequeues(const std::string& key) const {
  MutexLock lock(mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

std::optional<std::string> WorkQueue::Get() {
  MutexLock lock(mu_);
  if (ready_ == 0 && !shutting_down_) {
    ++blocked_getters_;
    getters_cv_.Wait(mu_, [this]() REQUIRES(mu_) { return shutting_down_ || ready_ > 0; });
    --blocked_getters_;
  }
  if (shutting_down_) return std::nullopt;
  std::string key = PopLocked();
  const SteadyTime now = clock_.Now();
  known_[key].handed_out = now;
  processing_[key] = now;
  dirty_.erase(key);
  if (auto it = ready_since_.find(key); it != ready_since_.end()) {
    queue_latency_.Observe(now - it->second);
    ready_since_.erase(it);
  }
  return key;
}

void WorkQueue::Done(const std::string& key) {
  MutexLock lock(mu_);
  auto it = processing_.find(key);
  if (it == processing_.end()) {
    LOG_WARN("workqueue {}: Done({}) for a key that is not being processed; ignored", options_.name,
             key);
    return;
  }
  const SteadyTime now = clock_.Now();
  work_duration_.Observe(now - it->second);
  processing_.erase(it);
  if (dirty_.contains(key)) PushLocked(key, now);  // parked while it ran: run once more
  if (processing_.empty()) drain_cv_.NotifyAll();
}

void WorkQueue::ShutDown() {
  {
    MutexLock lock(mu_);
    shutting_down_ = true;
    lanes_.clear();
    turns_.clear();
    ready_ = 0;
    known_.clear();
    dirty_.clear();
    ready_since_.clear();
    waiting_.clear();
    waiting_by_due_.clear();
  }
  getters_cv_.NotifyAll();
  timer_cv_.NotifyAll();
}

void WorkQueue::ShutDownWithDrain() {
  ShutDown();
  MutexLock lock(mu_);
  drain_cv_.Wait(mu_, [this]() REQUIRES(mu_) { return processing_.empty(); });
}

bool WorkQueue::ShuttingDown() const {
  MutexLock lock(mu_);
  return shutting_down_;
}

void WorkQueue::Kick() {
  {
    MutexLock lock(mu_);
    if (!shutting_down_) TickLocked(clock_.Now());
  }
  timer_cv_.NotifyAll();
}

size_t WorkQueue::Len() const {
  MutexLock lock(mu_);
  return ready_;
}

std::string WorkQueue::GroupOf(const std::string& key) const {
  MutexLock lock(mu_);
  auto it = known_.find(key);
  return it == known_.end() ? "" : it->second.group;
}

std::optional<SteadyTime> WorkQueue::WaitingUntil(const std::string& key) const {
  MutexLock lock(mu_);
  auto it = waiting_.find(key);
  if (it == waiting_.end()) return std::nullopt;
  return it->second->first.first;
}

WorkQueueStats WorkQueue::Stats() const {
  MutexLock lock(mu_);
  WorkQueueStats s;
  s.depth = ready_;
  s.ready_groups = lanes_.size();
  s.known_keys = known_.size();
  s.waiting = waiting_.size();
  s.processing = processing_.size();
  s.blocked_getters = blocked_getters_;
  s.adds = adds_;
  s.deduped = deduped_;
  s.delayed_adds = delayed_adds_;
  s.retries = retries_;
  s.resumed = resumed_;
  const SteadyTime now = clock_.Now();
  for (const auto& [key, since] : processing_) {
    const nanoseconds age = std::max(now - since, SteadyTime::duration::zero());
    s.longest_running = std::max(s.longest_running, age);
    s.unfinished_work += age;
  }
  s.queue_latency = queue_latency_;
  s.work_duration = work_duration_;
  s.timer_wakeups = timer_wakeups_;
  s.shutting_down = shutting_down_;
  return s;
}

void WorkQueue::AddLocked(const std::string& key, SteadyTime now) {
  if (dirty_.contains(key)) {
    ++deduped_;
    return;
  }
  ++adds_;
  dirty_.insert(key);
  if (processing_.contains(key)) return;  // parked: Done() queues it
  PushLocked(key, now);
}

void WorkQueue::PushLocked(const std::string& key, SteadyTime now) {
  static const std::string kNoGroup;
  const std::string* group = &kNoGroup;
  bool resumed = false;
  if (auto it = known_.find(key); it != known_.end()) {
    group = &it->second.group;
    const std::optional<SteadyTime>& last = it->second.handed_out;
    resumed = last && now - *last < options_.resume_window;
  }
  // lanes_ holds only lanes with ready keys, each of them once in turns_.
  auto [lane, inserted] = lanes_.try_emplace(*group);
  if (inserted) turns_.push_back(*group);
  (resumed ? lane->second.resumed : lane->second.fresh).push_back(key);
  ++ready_;
  ready_since_[key] = now;
  getters_cv_.NotifyOne();
}

std::string WorkQueue::PopLocked() {
  std::string group = std::move(turns_.front());
  turns_.pop_front();
  auto it = lanes_.find(group);
  Lane& lane = it->second;
  const bool take_resumed =
      !lane.resumed.empty() && (lane.fresh.empty() || lane.resumed_in_a_row < options_.resumed_run);
  std::deque<std::string>& from = take_resumed ? lane.resumed : lane.fresh;
  std::string key = std::move(from.front());
  from.pop_front();
  if (take_resumed) {
    ++lane.resumed_in_a_row;
    ++resumed_;
  } else {
    lane.resumed_in_a_row = 0;
  }
  --ready_;
  if (lane.resumed.empty() && lane.fresh.empty()) {
    lanes_.erase(it);
  } else {
    turns_.push_back(std::move(group));  // its next key waits for the other groups' turns
  }
  return key;
}

void WorkQueue::TickLocked(SteadyTime now) {
  ReleaseDueLocked(now);
  if (now >= next_prune_) {
    PruneLocked(now);
    next_prune_ = now + PruneInterval(options_);
  }
}

void WorkQueue::PruneLocked(SteadyTime now) {
  for (auto it = known_.begin(); it != known_.end();) {
    const std::optional<SteadyTime>& last = it->second.handed_out;
    const bool recent = last && now - *last < options_.resume_window;
    const std::string& key = it->first;
    if (recent || dirty_.contains(key) || processing_.contains(key) || waiting_.contains(key)) {
      ++it;
    } else {
      it = known_.erase(it);
    }
  }
}

void WorkQueue::AddWaitingLocked(const std::string& key, SteadyTime due) {
  if (auto it = waiting_.find(key); it != waiting_.end()) {
    if (it->second->first.first <= due) return;  // the earlier entry wins
    waiting_by_due_.erase(it->second);
    waiting_.erase(it);
  }
  auto pos = waiting_by_due_.emplace(DueKey{due, waiting_seq_++}, key).first;
  waiting_.emplace(key, pos);
  // A new earliest due time: the timer thread must shorten its wait.
  if (pos == waiting_by_due_.begin()) timer_cv_.NotifyAll();
}

void WorkQueue::RemoveWaitingLocked(const std::string& key) {
  auto it = waiting_.find(key);
  if (it == waiting_.end()) return;
  waiting_by_due_.erase(it->second);
  waiting_.erase(it);
}

void WorkQueue::ReleaseDueLocked(SteadyTime now) {
  while (!waiting_by_due_.empty() && waiting_by_due_.begin()->first.first <= now) {
    auto node = waiting_by_due_.extract(waiting_by_due_.begin());
    waiting_.erase(node.mapped());
    AddLocked(node.mapped(), now);
  }
}

nanoseconds WorkQueue::BackoffLocked(int failures) {
  const double base = static_cast<double>(options_.base_delay.count());
  const double cap = static_cast<double>(options_.max_delay.count());
  // 2^62 overflows nothing in double and is far beyond any cap.
  double d = std::min(base * std::pow(2.0, std::min(failures, 62)), cap);
  if (options_.jitter > 0) {
    constexpr int64_t kSteps = 1'000'000;
    const double u = static_cast<double>(random_.Uniform(-kSteps, kSteps)) / kSteps;
    d = std::min(d * (1.0 + options_.jitter * u), cap);
  }
  return nanoseconds(static_cast<int64_t>(d));
}

void WorkQueue::TimerLoop() {
  MutexLock lock(mu_);
  while (!shutting_down_) {
    ++timer_wakeups_;
    const SteadyTime now = clock_.Now();
    TickLocked(now);
    nanoseconds wait = options_.max_timer_wait;
    if (!waiting_by_due_.empty()) {
      wait = std::min(wait, nanoseconds(waiting_by_due_.begin()->first.first - now));
    }
    // Woken early by a new earliest entry, Kick() or ShutDown(); otherwise re-reads the clock
    // when the next entry is due (or after the heartbeat).
    timer_cv_.WaitFor(mu_, wait);
  }
}

}  // namespace steward::engine
