// Test support: wait for a condition with a deadline (never a bare sleep as synchronisation).
// Header-only; for tests and benchmarks only.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace steward::test_support {

// Polls `condition` every `poll` until it returns true or `timeout` passes; returns its last
// value, so a caller can ASSERT_TRUE(Eventually(...)).
inline bool Eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds timeout = std::chrono::seconds(10),
                       std::chrono::milliseconds poll = std::chrono::milliseconds(10)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(poll);
  }
  return condition();
}

}  // namespace steward::test_support
