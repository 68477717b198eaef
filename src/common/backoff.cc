#include "common/backoff.h"

#include <algorithm>

namespace steward {
namespace {

// Resolution of the jitter draw: Random offers integers only.
constexpr int64_t kJitterSteps = 1'000'000;

}  // namespace

Backoff::Backoff(Options options, Random* random)
    : options_(options),
      random_(random),
      current_ms_(static_cast<double>(options.initial.count())) {
  options_.jitter = std::clamp(options_.jitter, 0.0, 1.0);
  if (options_.factor < 1.0) options_.factor = 1.0;
  if (options_.max < options_.initial) options_.max = options_.initial;
}

std::chrono::milliseconds Backoff::Next() {
  const double max_ms = static_cast<double>(options_.max.count());
  double base = std::min(current_ms_, max_ms);
  current_ms_ = std::min(base * options_.factor, max_ms);
  ++attempts_;
  double scale = 1.0;
  if (random_ != nullptr && options_.jitter > 0) {
    int64_t step = random_->Uniform(-kJitterSteps, kJitterSteps);
    scale += options_.jitter * static_cast<double>(step) / static_cast<double>(kJitterSteps);
  }
  double ms = std::min(base * scale, max_ms * (1.0 + options_.jitter));
  return std::chrono::milliseconds(static_cast<int64_t>(ms + 0.5));
}

void Backoff::Reset() {
  current_ms_ = static_cast<double>(options_.initial.count());
  attempts_ = 0;
}

}  // namespace steward
