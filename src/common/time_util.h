// Time formatting as Kubernetes writes it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"

namespace steward {

// RFC 3339 in UTC with second precision: "2026-11-29T18:24:28Z" (metav1.Time).
std::string FormatRfc3339(SystemTime t);
// RFC 3339 with microseconds: "2026-11-29T18:24:28.123456Z" (metav1.MicroTime).
std::string FormatRfc3339Micro(SystemTime t);
// Parses either form (and numeric offsets); nullopt when malformed.
std::optional<SystemTime> ParseRfc3339(std::string_view s);
// Kubernetes-style short age, exactly as apimachinery's duration.HumanDuration prints it:
// "5s", "3m12s", "45m", "4h", "5h30m", "2d5h", "400d", "3y20d". A duration of -1 s reads "0s"
// (clock skew); anything earlier reads "<invalid>". Callers truncate toward zero to seconds.
std::string HumanDuration(std::chrono::seconds d);

}  // namespace steward
