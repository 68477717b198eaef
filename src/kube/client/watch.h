// Watch wire format: newline-delimited JSON watch events ({"type": ..., "object": ...}), framed
// from a byte stream that may be split at any boundary. DecodeWatchEvent is a pure function;
// an NdjsonFramer belongs to one stream (one thread).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "common/json.h"
#include "common/status.h"

namespace steward::kube {

struct WatchEvent {
  enum class Type { kAdded, kModified, kDeleted, kBookmark, kError };
  Type type = Type::kAdded;
  // The object (kError: the Status object; kBookmark: an object carrying only
  // metadata.resourceVersion and, for the initial-events end, its annotation).
  Json object;

  // metadata.resourceVersion of `object` ("" for kError).
  std::string ResourceVersion() const;
};

std::string_view WatchEventTypeName(WatchEvent::Type type);

// Decodes one line. Fails with kInvalidArgument for malformed JSON, a missing/unknown type or a
// missing object, naming the problem.
StatusOr<WatchEvent> DecodeWatchEvent(std::string_view line);

// Splits a byte stream into lines ('\n', a trailing '\r' removed, empty lines skipped), holding
// an incomplete last line until more bytes arrive. A line longer than `max_line_bytes` is an
// error (kResourceExhausted) rather than unbounded memory. Not thread-safe.
class NdjsonFramer {
 public:
  explicit NdjsonFramer(size_t max_line_bytes = 64u << 20) : max_line_bytes_(max_line_bytes) {}
  // Calls `on_line` for every complete line in `chunk` (plus what was buffered). Stops and
  // returns the error if `on_line` fails or a line is too long.
  Status Feed(std::string_view chunk, const std::function<Status(std::string_view)>& on_line);
  // Bytes of the incomplete line held back.
  size_t buffered() const { return buffer_.size(); }

 private:
  size_t max_line_bytes_;
  std::string buffer_;
};

}  // namespace steward::kube
