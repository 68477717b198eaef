// Random: a seeded, thread-safe source of randomness, so that runs can be replayed (--seed).
#pragma once

#include <chrono>
#include <cstdint>
#include <random>
#include <string>

#include "common/mutex.h"

namespace steward {

class Random {
 public:
  explicit Random(uint64_t seed) : gen_(seed) {}
  // Uniform in [lo, hi] (inclusive).
  int64_t Uniform(int64_t lo, int64_t hi);
  // True with probability p (0..1).
  bool Chance(double p);
  // A duration of `fixed` plus a uniform jitter in [0, jitter].
  std::chrono::milliseconds Delay(std::chrono::milliseconds fixed,
                                  std::chrono::milliseconds jitter);
  // `n` lowercase alphanumeric characters (as Kubernetes' generateName suffixes).
  std::string AlnumSuffix(int n);
  // A random RFC 4122 version-4 UUID.
  std::string Uuid();

 private:
  Mutex mu_;
  std::mt19937_64 gen_ GUARDED_BY(mu_);
};

}  // namespace steward
