// The Kubernetes client's decoding of what an API server sends back: error responses and
// `Status` objects (ApiErrorFromResponse / ApiErrorFromStatusObject), the watch stream's NDJSON
// framing (NdjsonFramer) and event decoding (DecodeWatchEvent), and the informer's compact form
// of a watched object (CachedObject::FromJson); the body is also scanned as a list page
// (ScanListPage, CachedObject::FromScanned), which must agree with ParseJson on every input.
//
// Input: line 1 the HTTP status (decimal), line 2 the Retry-After header value (empty = no
// header), the rest the response body, which is also fed to a watch stream's framer.
#include <charconv>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "kube/client/api_error.h"
#include "kube/client/list_scan.h"
#include "kube/client/watch.h"
#include "kube/informer/informer.h"
#include "net/http.h"

namespace steward::kube {
namespace {

using fuzz::AsView;
using fuzz::TakeLine;

void CheckApiError(const ApiError& e) {
  FUZZ_CHECK(e.code != StatusCode::kOk);
  FUZZ_CHECK_MSG(e.http_status >= 0 && e.http_status <= 999, std::to_string(e.http_status));
  FUZZ_CHECK(e.code == StatusCodeForReason(e.reason, e.http_status));
  FUZZ_CHECK(!e.IsTransport() || e.http_status == 0);
  if (e.retry_after) FUZZ_CHECK(e.retry_after->count() >= 0);
  FUZZ_CHECK(!e.message.empty());
  Status s = e.ToStatus();
  FUZZ_CHECK(!s.ok() && s.code() == e.code);
  (void)e.IsNotFound(), (void)e.IsConflict(), (void)e.IsGone(), (void)e.IsInvalid();
  (void)e.IsRetryable(), (void)e.IsTooManyRequests(), (void)e.IsForbidden();
}

void CheckCachedObject(const Json& object) {
  auto cached = CachedObject::FromJson(object);
  if (!cached.ok()) return;
  const CachedObject& c = **cached;
  FUZZ_CHECK(!c.name().empty() && !c.resource_version().empty());
  // The compact form gives the object back.
  FUZZ_CHECK(c.Parse() == object);
  for (const auto& [k, v] : c.labels()) {
    FUZZ_CHECK(c.has_label(k) && c.label(k) == v);
  }
  FUZZ_CHECK(c.key() == ObjectKey(c.ns(), c.name()));
}

// Feeds `stream` in pieces whose sizes come from `seed`, collecting the lines (or the error).
std::vector<std::string> Frame(std::string_view stream, size_t max_line, uint32_t seed) {
  NdjsonFramer framer(max_line);
  std::vector<std::string> lines;
  auto on_line = [&](std::string_view line) {
    lines.emplace_back(line);
    return Status::Ok();
  };
  while (!stream.empty()) {
    seed = seed * 1103515245u + 12345u;
    size_t n = seed == 0 ? stream.size() : 1 + (seed >> 16) % 17;
    if (n > stream.size()) n = stream.size();
    Status s = framer.Feed(stream.substr(0, n), on_line);
    if (!s.ok()) {
      FUZZ_CHECK(s.code() == StatusCode::kResourceExhausted);
      lines.push_back("<error>");
      return lines;
    }
    stream.remove_prefix(n);
  }
  FUZZ_CHECK(framer.buffered() <= max_line + 1);
  if (framer.buffered() > 0) lines.push_back("<pending>");
  return lines;
}

void FuzzWatchStream(std::string_view body) {
  // Framing must not depend on where the network split the stream.
  constexpr size_t kMaxLine = 256;
  std::vector<std::string> whole = Frame(body, kMaxLine, 0);
  std::vector<std::string> split = Frame(body, kMaxLine, static_cast<uint32_t>(body.size()) | 1u);
  FUZZ_CHECK(whole == split);

  NdjsonFramer framer;
  Status fed = framer.Feed(body, [](std::string_view line) {
    FUZZ_CHECK(!line.empty() && line.find('\n') == std::string_view::npos);
    auto event = DecodeWatchEvent(line);
    if (!event.ok()) {
      FUZZ_CHECK(event.status().code() == StatusCode::kInvalidArgument);
      return Status::Ok();
    }
    FUZZ_CHECK(event->object.is_object());
    FUZZ_CHECK(!WatchEventTypeName(event->type).empty());
    std::string rv = event->ResourceVersion();
    if (event->type == WatchEvent::Type::kError) {
      FUZZ_CHECK(rv.empty());
      CheckApiError(ApiErrorFromStatusObject(event->object, 500));
    } else {
      CheckCachedObject(event->object);
    }
    return Status::Ok();
  });
  FUZZ_CHECK(fed.ok());
}

// The scan of a list page accepts exactly what ParseJson accepts as a list (an object whose
// "items" is absent, null or an array of objects), and each item's text is that item.
void FuzzListScan(std::string_view body) {
  auto scanned = ScanListPage(body, "v1", "Pod");
  auto parsed = ParseJson(body);
  const Json* items = parsed.ok() && parsed->is_object() ? FindPath(*parsed, "items") : nullptr;
  bool list_shape = parsed.ok() && parsed->is_object();
  if (list_shape && items != nullptr && !items->is_null()) {
    list_shape = items->is_array();
    for (size_t i = 0; list_shape && i < items->size(); ++i) list_shape = (*items)[i].is_object();
  }
  FUZZ_CHECK_MSG(scanned.ok() == list_shape,
                 scanned.ok() ? "scan accepted" : scanned.status().message());
  if (!scanned.ok()) return;
  const size_t n = items == nullptr || items->is_null() ? 0 : items->size();
  FUZZ_CHECK(scanned->items.size() == n);
  for (size_t i = 0; i < n; ++i) {
    Json expected = (*items)[i];
    if (!expected.contains("apiVersion")) expected["apiVersion"] = "v1";
    if (!expected.contains("kind")) expected["kind"] = "Pod";
    auto item_json = ParseJson(scanned->items[i].json);
    FUZZ_CHECK(item_json.ok() && *item_json == expected);
    auto from_json = CachedObject::FromJson(expected);
    auto from_scan = CachedObject::FromScanned(scanned->items[i]);
    FUZZ_CHECK(from_json.ok() == from_scan.ok());
    if (!from_scan.ok()) continue;
    const CachedObject& a = **from_json;
    const CachedObject& b = **from_scan;
    FUZZ_CHECK(a.key() == b.key() && a.uid() == b.uid());
    FUZZ_CHECK(a.resource_version() == b.resource_version());
    FUZZ_CHECK(a.labels() == b.labels() && a.terminating() == b.terminating());
    FUZZ_CHECK(b.Parse() == expected);
  }
}

}  // namespace
}  // namespace steward::kube

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace steward;
  std::string_view in = fuzz::AsView(data, size);
  std::string_view status_line = fuzz::TakeLine(in);
  std::string_view retry_after = fuzz::TakeLine(in);
  int http_status = 0;
  auto [end, ec] =
      std::from_chars(status_line.data(), status_line.data() + status_line.size(), http_status);
  if (ec != std::errc() || http_status < 100 || http_status > 599) http_status = 500;
  net::Headers headers;
  if (!retry_after.empty()) headers.Add("Retry-After", std::string(retry_after));

  kube::ApiError e = kube::ApiErrorFromResponse(http_status, in, headers);
  kube::CheckApiError(e);
  FUZZ_CHECK(e.http_status == http_status);
  if (auto j = ParseJson(in); j.ok()) {
    kube::CheckApiError(kube::ApiErrorFromStatusObject(*j));
    kube::CheckCachedObject(*j);
  }
  kube::FuzzWatchStream(in);
  kube::FuzzListScan(in);
  return 0;
}
