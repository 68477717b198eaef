// IntentTimes: when each record's latest intent was accepted, as this process saw it committed
// (the store's operation history entries, through the engine's store listener), so that the
// status that completes an intent can say how long it took (the SLO metrics, EngineOptions::
// on_status). One entry per record with an intent this process saw; an entry goes when its
// record is purged, and is replaced by the next intent.
//
// Thread-safe: the store listener writes, the reconciler's workers read and mark.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "common/mutex.h"

namespace steward::engine {

class IntentTimes {
 public:
  struct Intent {
    int64_t generation = 0;
    std::string operation;  // as the history names it: "start", "update+start", ...
    int64_t accepted_ms = 0;
    bool completed = false;  // a done phase at this generation was reported already
  };

  // An intent committed at `generation` (a newer one replaces an older; an older is ignored).
  void Accepted(const std::string& id, int64_t generation, std::string operation,
                int64_t accepted_ms) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    auto [it, fresh] = intents_.try_emplace(id);
    if (!fresh && it->second.generation > generation) return;
    it->second = Intent{generation, std::move(operation), accepted_ms, false};
  }
  void Forget(const std::string& id) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    intents_.erase(id);
  }
  // The intent at `generation`, if this process saw it accepted. With `complete`, marks it
  // completed; the answer's `completed` says whether it already was.
  std::optional<Intent> At(const std::string& id, int64_t generation, bool complete) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    auto it = intents_.find(id);
    if (it == intents_.end() || it->second.generation != generation) return std::nullopt;
    Intent found = it->second;
    if (complete) it->second.completed = true;
    return found;
  }

 private:
  mutable Mutex mu_;
  std::map<std::string, Intent> intents_ GUARDED_BY(mu_);
};

}  // namespace steward::engine
