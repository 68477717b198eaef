#include "common/random.h"

#include <cstdio>

namespace steward {

int64_t Random::Uniform(int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  MutexLock lock(mu_);
  return std::uniform_int_distribution<int64_t>(lo, hi)(gen_);
}

bool Random::Chance(double p) {
  if (p <= 0) return false;
  if (p >= 1) return true;
  MutexLock lock(mu_);
  return std::uniform_real_distribution<double>(0.0, 1.0)(gen_) < p;
}

std::chrono::milliseconds Random::Delay(std::chrono::milliseconds fixed,
                                        std::chrono::milliseconds jitter) {
  return fixed + std::chrono::milliseconds(Uniform(0, jitter.count()));
}

std::string Random::AlnumSuffix(int n) {
  // Kubernetes avoids vowels and confusable characters in generated names.
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  MutexLock lock(mu_);
  std::uniform_int_distribution<int> d(0, sizeof(kAlphabet) - 2);
  for (int i = 0; i < n; ++i) out.push_back(kAlphabet[d(gen_)]);
  return out;
}

std::string Random::Uuid() {
  uint64_t a, b;
  {
    MutexLock lock(mu_);
    a = gen_();
    b = gen_();
  }
  a = (a & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;
  b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xffff),
                static_cast<unsigned>(b >> 48),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

}  // namespace steward
