#include "kube/client/watch.h"

#include <array>
#include <utility>

namespace steward::kube {
namespace {

constexpr std::array<std::pair<WatchEvent::Type, std::string_view>, 5> kTypeNames = {{
    {WatchEvent::Type::kAdded, "ADDED"},
    {WatchEvent::Type::kModified, "MODIFIED"},
    {WatchEvent::Type::kDeleted, "DELETED"},
    {WatchEvent::Type::kBookmark, "BOOKMARK"},
    {WatchEvent::Type::kError, "ERROR"},
}};

constexpr size_t kQuoteBytes = 120;

// The start of a line for error messages.
std::string Quote(std::string_view line) {
  std::string out(line.substr(0, kQuoteBytes));
  if (line.size() > kQuoteBytes) out += "...";
  return "\"" + out + "\"";
}

Status Malformed(std::string_view what, std::string_view line) {
  return InvalidArgument("malformed watch event (" + std::string(what) + "): " + Quote(line));
}

}  // namespace

std::string WatchEvent::ResourceVersion() const {
  if (type == Type::kError) return "";
  const Json* rv = FindPath(object, "metadata.resourceVersion");
  return rv != nullptr && rv->is_string() ? rv->get<std::string>() : "";
}

std::string_view WatchEventTypeName(WatchEvent::Type type) {
  for (const auto& [t, name] : kTypeNames) {
    if (t == type) return name;
  }
  return "UNKNOWN";
}

StatusOr<WatchEvent> DecodeWatchEvent(std::string_view line) {
  auto parsed = ParseJson(line);
  if (!parsed.ok()) return Malformed("not JSON: " + parsed.status().message(), line);
  if (!parsed->is_object()) return Malformed("not a JSON object", line);
  const Json* type = FindPath(*parsed, "type");
  if (type == nullptr || !type->is_string()) return Malformed("no \"type\" string", line);
  WatchEvent event;
  bool known = false;
  for (const auto& [t, name] : kTypeNames) {
    if (name == type->get<std::string>()) {
      event.type = t;
      known = true;
    }
  }
  if (!known) return Malformed("unknown type " + DumpJson(*type), line);
  auto object = parsed->find("object");
  if (object == parsed->end() || !object->is_object()) {
    return Malformed("no \"object\" JSON object", line);
  }
  event.object = std::move(*object);
  return event;
}

Status NdjsonFramer::Feed(std::string_view chunk,
                          const std::function<Status(std::string_view)>& on_line) {
  auto too_long = [this] {
    buffer_.clear();
    return Status(StatusCode::kResourceExhausted,
                  "watch stream line longer than " + std::to_string(max_line_bytes_) + " bytes");
  };
  size_t pos = 0;
  while (pos < chunk.size()) {
    size_t newline = chunk.find('\n', pos);
    std::string_view piece = chunk.substr(
        pos, newline == std::string_view::npos ? std::string_view::npos : newline - pos);
    if (newline == std::string_view::npos) {
      // A pending line may end in the '\r' of a CRLF, which does not count.
      size_t pending = buffer_.size() + piece.size();
      bool cr = !piece.empty() && piece.back() == '\r';
      if (pending > max_line_bytes_ + (cr ? 1 : 0)) return too_long();
      buffer_.append(piece);
      return Status::Ok();
    }
    if (buffer_.size() + piece.size() > max_line_bytes_ + 1) return too_long();
    pos = newline + 1;
    std::string_view line = piece;
    if (!buffer_.empty()) {
      buffer_.append(piece);
      line = buffer_;
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > max_line_bytes_) return too_long();
    Status status = line.empty() ? Status::Ok() : on_line(line);
    buffer_.clear();
    RETURN_IF_ERROR(status);
  }
  return Status::Ok();
}

}  // namespace steward::kube
