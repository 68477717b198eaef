// Test helpers for the work queue and the worker pool. For tests only.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "engine/workqueue/workqueue.h"

namespace steward::engine::testing {

// Options named `name` without jitter or the global retry bucket, so that every delay is exact.
inline WorkQueueOptions NoLimits(std::string name = "test") {
  WorkQueueOptions o;
  o.name = std::move(name);
  o.jitter = 0;
  o.retry_qps = 0;  // no global bucket
  return o;
}

// A queue on `clock`; a test failure (and nullptr) when `o` is refused.
inline std::unique_ptr<WorkQueue> MakeQueue(const Clock& clock, WorkQueueOptions o = NoLimits()) {
  auto q = WorkQueue::Create(std::move(o), clock);
  EXPECT_TRUE(q.ok()) << q.status().ToString();
  return q.ok() ? std::move(q).value() : nullptr;
}

}  // namespace steward::engine::testing
