#include "common/time_util.h"

#include <cstdio>
#include <ctime>
#include <string>

namespace steward {

namespace {
std::tm ToUtc(SystemTime t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  return tm;
}
}  // namespace

std::string FormatRfc3339(SystemTime t) {
  std::tm tm = ToUtc(t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string FormatRfc3339Micro(SystemTime t) {
  std::tm tm = ToUtc(t);
  auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count() % 1000000;
  if (micros < 0) micros += 1000000;
  char buf[48];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[64];
  std::snprintf(out, sizeof out, "%s.%06lldZ", buf, static_cast<long long>(micros));
  return out;
}

std::optional<SystemTime> ParseRfc3339(std::string_view s) {
  std::tm tm{};
  int year, mon, day, hour, min, sec;
  std::string str(s);
  int consumed = 0;
  if (std::sscanf(str.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &mon, &day, &hour, &min, &sec,
                  &consumed) != 6) {
    return std::nullopt;
  }
  tm.tm_year = year - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = min;
  tm.tm_sec = sec;
  std::time_t tt = timegm(&tm);
  auto t = std::chrono::system_clock::from_time_t(tt);
  std::string_view rest = s.substr(static_cast<size_t>(consumed));
  if (!rest.empty() && rest[0] == '.') {
    size_t i = 1;
    long long frac = 0;
    int digits = 0;
    while (i < rest.size() && rest[i] >= '0' && rest[i] <= '9') {
      if (digits < 9) {
        frac = frac * 10 + (rest[i] - '0');
        ++digits;
      }
      ++i;
    }
    while (digits < 9) {
      frac *= 10;
      ++digits;
    }
    t += std::chrono::duration_cast<SystemTime::duration>(std::chrono::nanoseconds(frac));
    rest.remove_prefix(i);
  }
  if (rest == "Z" || rest == "z") return t;
  if (rest.size() == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':') {
    int oh = (rest[1] - '0') * 10 + (rest[2] - '0');
    int om = (rest[4] - '0') * 10 + (rest[5] - '0');
    auto off = std::chrono::hours(oh) + std::chrono::minutes(om);
    return rest[0] == '+' ? t - off : t + off;
  }
  return std::nullopt;
}

std::string HumanDuration(std::chrono::seconds d) {
  // Mirrors apimachinery's duration.HumanDuration: ~2-3 significant figures, and a skew of up to
  // one second into the future still reads as "0s".
  const long long s = d.count();
  if (s < -1) return "<invalid>";
  if (s < 0) return "0s";
  if (s < 120) return std::to_string(s) + "s";
  const long long minutes = s / 60;
  if (minutes < 10) {
    const long long rest = s % 60;
    return rest == 0 ? std::to_string(minutes) + "m"
                     : std::to_string(minutes) + "m" + std::to_string(rest) + "s";
  }
  if (minutes < 3 * 60) return std::to_string(minutes) + "m";
  const long long hours = s / 3600;
  if (hours < 8) {
    const long long rest = minutes % 60;
    return rest == 0 ? std::to_string(hours) + "h"
                     : std::to_string(hours) + "h" + std::to_string(rest) + "m";
  }
  if (hours < 48) return std::to_string(hours) + "h";
  if (hours < 24 * 8) {
    const long long rest = hours % 24;
    return rest == 0 ? std::to_string(hours / 24) + "d"
                     : std::to_string(hours / 24) + "d" + std::to_string(rest) + "h";
  }
  if (hours < 24 * 365 * 2) return std::to_string(hours / 24) + "d";
  if (hours < 24 * 365 * 8) {
    const long long rest = (hours / 24) % 365;
    return rest == 0 ? std::to_string(hours / 24 / 365) + "y"
                     : std::to_string(hours / 24 / 365) + "y" + std::to_string(rest) + "d";
  }
  return std::to_string(hours / 24 / 365) + "y";
}

}  // namespace steward
