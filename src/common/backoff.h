// Backoff: exponential delays with jitter, for retries and reconnects. Next() returns
// initial, initial*factor, ... capped at `max`, each multiplied by a random factor in
// [1 - jitter, 1 + jitter] (and never above `max` * (1 + jitter)); Reset() starts over.
// Out-of-range options are clamped: jitter to [0, 1], factor to >= 1, max to >= initial.
// Not thread-safe: one per retry loop. The Random is shared and thread-safe.
#pragma once

#include <chrono>
#include <cstdint>

#include "common/random.h"

namespace steward {

class Backoff {
 public:
  struct Options {
    std::chrono::milliseconds initial{800};
    std::chrono::milliseconds max{30000};
    double factor = 2.0;
    double jitter = 0.1;  // fraction, 0..1
  };
  // `random` may be null (no jitter).
  Backoff(Options options, Random* random);

  std::chrono::milliseconds Next();
  void Reset();
  int attempts() const { return attempts_; }

 private:
  Options options_;
  Random* random_;
  double current_ms_;
  int attempts_ = 0;
};

}  // namespace steward
