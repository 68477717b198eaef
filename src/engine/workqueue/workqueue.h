// WorkQueue: the engine's keyed work queue (client-go's rate-limited delaying queue, in C++).
//
// Keys are strings (project ids). The queue guarantees, as a property of its data structures:
//   - dedup: a key is queued at most once; adding a queued key is a no-op;
//   - one worker per key: a key handed out by Get() is not handed out again until Done(key);
//     adding it meanwhile marks it dirty, and Done() re-queues it once (N adds during a run
//     collapse into exactly one more run);
//   - order: each key belongs to a group (the engine's: the project's team), remembered from the
//     last Add that named one ("" until then). Groups with ready keys take turns, one key per
//     turn, so one group's burst cannot hold back another group's single key. Within a group a
//     *resumed* key (handed out before, less than `resume_window` before it became ready again:
//     the next step of a change under way) goes before *fresh* keys, each kind in the order it
//     became ready; while fresh keys wait, at most `resumed_run` resumed keys of a group go in
//     a row, so a stream of resumed keys cannot starve them either. client-go's queue is one
//     FIFO; this order keeps its throughput and lets the first of a burst finish first.
// Delayed adds: AddAfter(key, d) keeps one pending entry per key and keeps the earliest due
// time; Add(key) supersedes (cancels) a pending delayed entry. AddRateLimited(key) is
// AddAfter(key, max(per-key backoff, global bucket delay)): the per-key backoff is
// base * 2^failures capped at `max_delay`, multiplied by a jitter factor in
// [1 - jitter, 1 + jitter] and clamped to `max_delay`; the global token bucket (client-go's
// BucketRateLimiter, "only for retry speed") caps the overall retry rate. Forget(key) resets
// the key's failure count; NumRequeues(key) reads it.
//
// Time comes from the injected Clock. A timer thread releases delayed keys when they fall due;
// it waits on a condition variable until the next due time (at most `max_timer_wait`, a
// heartbeat). With a FakeClock, call Kick() after FakeClock::Advance(): it releases every due
// key synchronously, in the caller's thread, before returning.
//
// Shutdown: ShutDown() wakes every Get() caller (they return nullopt), drops queued and delayed
// keys (the engine reconciles every project at startup, so nothing is lost) and ignores later
// adds; Done() still works. ShutDownWithDrain() also waits until every handed-out key is Done.
// (client-go instead keeps handing out already-queued keys after ShutDown; stopping at once is
// deliberate here, so a stop does not start new reconciles.)
//
// Thread-safety: every method is thread-safe. Ownership: the queue borrows the Clock, which must
// outlive it; destroy any WorkerPool using the queue before the queue.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "common/random.h"
#include "common/status.h"
#include "common/token_bucket.h"

namespace steward::engine {

struct WorkQueueOptions {
  std::string name = "projects";  // for logs
  // Per-key exponential backoff for AddRateLimited.
  std::chrono::nanoseconds base_delay = std::chrono::milliseconds(100);
  std::chrono::nanoseconds max_delay = std::chrono::minutes(5);
  double jitter = 0.1;       // fraction, 0..1; 0 disables jitter
  uint64_t jitter_seed = 1;  // seeds the jitter source, so runs can be replayed
  // Global retry bucket: qps <= 0 disables it.
  double retry_qps = 10;
  int retry_burst = 100;
  // Longest the timer thread sleeps without re-reading the clock (client-go: 10 s).
  std::chrono::nanoseconds max_timer_wait = std::chrono::seconds(10);
  // A key handed out less than this long before it is ready again is resumed (goes before
  // its group's fresh keys). 0 (this struct's default): every key is fresh, one FIFO per group.
  // The engine turns it on (EngineQueueDefaults in engine_options.h): with its provisioning
  // overlapped (issue 33) a burst's first project is Running in 2.6 s instead of 18 s. Before
  // that (issue 18) it ran each waiting project once per informer event and finished the burst
  // later (docs/performance.md).
  std::chrono::nanoseconds resume_window{0};
  // Resumed keys of one group handed out in a row while fresh keys of the group wait (>= 1).
  int resumed_run = 8;
};

// Returns the first invalid field, named as "workqueue.<field>".
Status ValidateWorkQueueOptions(const WorkQueueOptions& options);

// Durations in fixed buckets; `buckets[i]` counts observations <= kBounds[i] (and above the
// previous bound); the last bucket counts everything above the last bound.
struct DurationHistogram {
  static constexpr std::array<std::chrono::nanoseconds, 7> kBounds = {
      std::chrono::milliseconds(1), std::chrono::milliseconds(10), std::chrono::milliseconds(100),
      std::chrono::seconds(1),      std::chrono::seconds(10),      std::chrono::seconds(60),
      std::chrono::seconds(300)};
  std::array<uint64_t, kBounds.size() + 1> buckets{};
  uint64_t count = 0;
  std::chrono::nanoseconds sum{0};
  std::chrono::nanoseconds max{0};

  void Observe(std::chrono::nanoseconds d);
};

struct WorkQueueStats {
  size_t depth = 0;            // keys ready and waiting for a worker
  size_t ready_groups = 0;     // groups with ready keys (taking turns)
  size_t known_keys = 0;       // keys whose group or last hand-out the queue remembers
  size_t waiting = 0;          // delayed keys not yet due
  size_t processing = 0;       // keys handed out by Get() and not yet Done()
  size_t blocked_getters = 0;  // Get() callers blocked for lack of work
  uint64_t adds = 0;           // adds that queued or parked a key (dedup'd adds excluded)
  uint64_t deduped = 0;        // adds that were no-ops: the key was already dirty
  uint64_t delayed_adds = 0;   // AddAfter calls (including those made by AddRateLimited)
  uint64_t retries = 0;        // AddRateLimited calls
  uint64_t resumed = 0;        // hand-outs of resumed keys (the rest were fresh)
  std::chrono::nanoseconds longest_running{0};  // age of the oldest handed-out key
  std::chrono::nanoseconds unfinished_work{0};  // summed age of every handed-out key
  DurationHistogram queue_latency;              // ready → handed out by Get()
  DurationHistogram work_duration;              // handed out → Done()
  uint64_t timer_wakeups = 0;  // timer thread iterations (a busy timer shows up here)
  bool shutting_down = false;
};

class WorkQueue {
 public:
  static StatusOr<std::unique_ptr<WorkQueue>> Create(WorkQueueOptions options, const Clock& clock);
  ~WorkQueue();  // ShutDown() and join the timer thread.
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Marks `key` ready now; cancels its pending delayed entry, if any. With `group`, the key
  // belongs to that group from now on (it takes effect at the key's next push).
  void Add(const std::string& key);
  void Add(const std::string& key, std::string_view group);
  // Marks `key` ready after `delay` (<= 0: Add). An earlier pending entry for the key wins.
  void AddAfter(const std::string& key, std::chrono::nanoseconds delay);
  // AddAfter(key, max(per-key backoff, global bucket delay)); counts a failure for the key.
  void AddRateLimited(const std::string& key);
  // Resets the key's failure count (call after a successful run).
  void Forget(const std::string& key);
  // Failures counted for `key` since the last Forget.
  int NumRequeues(const std::string& key) const;

  // Blocks until a key is ready (returns it, now being processed) or the queue shuts down
  // (returns nullopt).
  std::optional<std::string> Get();
  // Marks the key handed out by Get() as processed; re-queues it if it was added meanwhile.
  void Done(const std::string& key);

  void ShutDown();
  void ShutDownWithDrain();
  bool ShuttingDown() const;

  // Releases every delayed key that is due by the clock (and forgets idle keys when their
  // time has come), before returning; for FakeClock tests.
  void Kick();

  size_t Len() const;  // ready keys
  // The group the queue files `key` under ("" when none was named or it was forgotten).
  std::string GroupOf(const std::string& key) const;
  // When `key`'s pending delayed entry falls due, if it has one.
  std::optional<SteadyTime> WaitingUntil(const std::string& key) const;
  WorkQueueStats Stats() const;
  const WorkQueueOptions& options() const { return options_; }

 private:
  WorkQueue(WorkQueueOptions options, const Clock& clock);

  using DueKey = std::pair<SteadyTime, uint64_t>;  // due time, insertion order
  using WaitingMap = std::map<DueKey, std::string>;

  // What the queue remembers of a key beyond its queue state: its group and when it was last
  // handed out. Entries of idle keys are dropped once their window has passed (PruneLocked).
  struct KeyInfo {
    std::string group;
    std::optional<SteadyTime> handed_out;
  };
  // The ready keys of one group.
  struct Lane {
    std::deque<std::string> resumed, fresh;
    int resumed_in_a_row = 0;
  };

  void AddLocked(const std::string& key, SteadyTime now) REQUIRES(mu_);
  void PushLocked(const std::string& key, SteadyTime now) REQUIRES(mu_);
  std::string PopLocked() REQUIRES(mu_);
  void TickLocked(SteadyTime now) REQUIRES(mu_);  // release due keys, prune when it is time
  void PruneLocked(SteadyTime now) REQUIRES(mu_);
  void AddWaitingLocked(const std::string& key, SteadyTime due) REQUIRES(mu_);
  void RemoveWaitingLocked(const std::string& key) REQUIRES(mu_);
  void ReleaseDueLocked(SteadyTime now) REQUIRES(mu_);
  std::chrono::nanoseconds BackoffLocked(int failures) REQUIRES(mu_);
  void TimerLoop() EXCLUDES(mu_);

  const WorkQueueOptions options_;
  const Clock& clock_;
  Random random_;  // thread-safe itself

  mutable Mutex mu_;
  CondVar getters_cv_;  // a key became ready, or shutdown
  CondVar timer_cv_;    // an earlier due time, Kick, or shutdown
  CondVar drain_cv_;    // processing became empty
  bool shutting_down_ GUARDED_BY(mu_) = false;

  std::unordered_map<std::string, Lane> lanes_ GUARDED_BY(mu_);  // group → its ready keys
  std::deque<std::string> turns_ GUARDED_BY(mu_);  // groups with ready keys, next turn first
  size_t ready_ GUARDED_BY(mu_) = 0;               // ready keys in every lane
  std::unordered_map<std::string, KeyInfo> known_ GUARDED_BY(mu_);
  SteadyTime next_prune_ GUARDED_BY(mu_);
  std::unordered_set<std::string> dirty_ GUARDED_BY(mu_);                    // need processing
  std::unordered_map<std::string, SteadyTime> processing_ GUARDED_BY(mu_);   // handed out → since
  std::unordered_map<std::string, SteadyTime> ready_since_ GUARDED_BY(mu_);  // queued → since
  WaitingMap waiting_by_due_ GUARDED_BY(mu_);
  std::unordered_map<std::string, WaitingMap::iterator> waiting_ GUARDED_BY(mu_);
  uint64_t waiting_seq_ GUARDED_BY(mu_) = 0;
  std::unordered_map<std::string, int> failures_ GUARDED_BY(mu_);
  TokenBucket bucket_;  // thread-safe itself (used under mu_ all the same)

  size_t blocked_getters_ GUARDED_BY(mu_) = 0;
  uint64_t adds_ GUARDED_BY(mu_) = 0;
  uint64_t deduped_ GUARDED_BY(mu_) = 0;
  uint64_t delayed_adds_ GUARDED_BY(mu_) = 0;
  uint64_t retries_ GUARDED_BY(mu_) = 0;
  uint64_t resumed_ GUARDED_BY(mu_) = 0;
  uint64_t timer_wakeups_ GUARDED_BY(mu_) = 0;
  DurationHistogram queue_latency_ GUARDED_BY(mu_);
  DurationHistogram work_duration_ GUARDED_BY(mu_);

  std::thread timer_;  // last: started after every member above is constructed
};

}  // namespace steward::engine
