#include "api_client/api_client.h"

#include <cmath>
#include <cstdlib>

#include "common/duration.h"
#include "common/host_port.h"

namespace steward::api_client {
namespace {

StatusCode CodeForHttpStatus(int status) {
  switch (status) {
    case 400:
    case 413:
    case 415:
      return StatusCode::kInvalidArgument;
    case 401:
      return StatusCode::kUnauthenticated;
    case 403:
      return StatusCode::kPermissionDenied;
    case 404:
      return StatusCode::kNotFound;
    case 405:
      return StatusCode::kUnimplemented;
    case 409:
      return StatusCode::kFailedPrecondition;
    case 503:
      return StatusCode::kUnavailable;
    default:
      return StatusCode::kInternal;
  }
}

}  // namespace

StatusOr<std::unique_ptr<ApiClient>> ApiClient::Create(const ApiClientOptions& options) {
  std::string_view url = options.server;
  net::HttpClient::Options http;
  uint16_t default_port = 80;
  if (url.starts_with("http://")) {
    url.remove_prefix(7);
  } else if (url.starts_with("https://")) {
    url.remove_prefix(8);
    http.tls = true;
    default_port = 443;
  } else {
    return InvalidArgument("--server: \"" + options.server +
                           "\" is not an http:// or https:// URL");
  }
  while (url.ends_with('/')) url.remove_suffix(1);
  if (url.find('/') != std::string_view::npos || url.empty()) {
    return InvalidArgument("--server: \"" + options.server +
                           "\" must be scheme://host[:port] without a path");
  }
  auto hp = ParseHostPort(url, {.port_optional = true});
  if (!hp.ok()) {
    return InvalidArgument("--server: " + hp.error().message() + " in \"" + options.server + "\"");
  }
  http.host = std::move(hp->host);
  http.port = hp->port.value_or(default_port);
  http.ca_pem = options.ca_pem;
  http.insecure_skip_verify = options.insecure_skip_verify;
  http.bearer_token = options.token;
  http.timeout = options.timeout;
  auto client = net::HttpClient::Create(http);
  if (client == nullptr) return Internal("cannot create an HTTP client for " + options.server);
  std::string server(options.server);
  while (server.ends_with('/')) server.pop_back();
  return std::unique_ptr<ApiClient>(new ApiClient(std::move(server), std::move(client)));
}

Status ApiClient::NoAnswer(const Status& status) {
  last_error_ = ServerError{};
  return Status(status.code(),
                "cannot reach the Steward API at " + server_ + ": " + status.message());
}

Status ApiClient::ErrorFromAnswer(const net::HttpResponse& response) {
  last_error_ = ServerError{};
  last_error_.http_status = response.status;
  auto body = ParseJson(response.body);
  const Json* error = body.ok() ? FindPath(*body, "error") : nullptr;
  if (error != nullptr && error->is_object()) {
    last_error_.reason = GetString(*error, "reason");
    last_error_.message = GetString(*error, "message");
    last_error_.field = GetString(*error, "field");
  }
  if (last_error_.reason.empty()) {
    // Not Steward's error shape (a proxy, another server): show what came back.
    last_error_.reason = "HTTP" + std::to_string(response.status);
    std::string text = response.body.substr(0, 200);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    last_error_.message = text.empty() ? "the server answered without an error body" : text;
  }
  return Status(CodeForHttpStatus(response.status),
                last_error_.reason + ": " + last_error_.message);
}

StatusOr<Json> ApiClient::Call(const std::string& method, const std::string& target,
                               const Json* body) {
  net::Headers headers;
  headers.Add("Accept", "application/json");
  std::string text;
  if (body != nullptr) {
    text = DumpJson(*body);
    headers.Add("Content-Type", "application/json");
  }
  auto response = http_->Request(method, target, text, headers);
  if (!response.ok()) return NoAnswer(response.error());
  if (response->status < 200 || response->status >= 300) return ErrorFromAnswer(*response);
  last_error_ = ServerError{};
  if (response->body.empty()) return Json::object();
  auto json = ParseJson(response->body);
  if (!json.ok()) {
    return Internal("the server answered " + method + " " + target +
                    " with a body that is not JSON: " + json.error().message());
  }
  return std::move(json).value();
}

Status ApiClient::Watch(const std::string& query,
                        const std::function<bool(const WatchEvent&)>& on_event,
                        std::chrono::milliseconds timeout, const std::string& last_event_id) {
  SseParser parser(last_event_id);
  last_event_id_ = last_event_id;
  Status parse_status;
  bool stopped = false;
  bool streaming = false;
  std::string first;  // the answer's first bytes: all of it while it may be an error body
  net::Headers headers;
  headers.Add("Accept", "text/event-stream");
  if (!last_event_id.empty()) headers.Add("Last-Event-ID", last_event_id);
  auto feed = [&](std::string_view chunk) {
    const bool more = parser.Feed(chunk, on_event, &parse_status);
    last_event_id_ = parser.last_event_id();
    if (!more) {
      stopped = true;
      return false;
    }
    return true;
  };
  auto response = http_->Stream(
      "GET", "/v1/watch" + (query.empty() ? std::string() : "?" + query),
      [&](std::string_view chunk) {
        if (streaming) return feed(chunk);
        // The status line is not visible here. An error answer is JSON, which never starts an
        // event stream: hold it and judge it once the call returns.
        first.append(chunk);
        if (first.starts_with('{')) return true;
        streaming = true;
        return feed(first);
      },
      headers, timeout);
  if (!parse_status.ok()) return parse_status;
  if (!response.ok()) {
    if (stopped) return Status::Ok();
    if (response.error().code() == StatusCode::kDeadlineExceeded) {
      last_error_ = ServerError{};
      return Status(StatusCode::kDeadlineExceeded, "the watch stream passed its deadline");
    }
    return NoAnswer(response.error());
  }
  if (response->status < 200 || response->status >= 300) {
    net::HttpResponse copy = *response;
    if (copy.body.empty()) copy.body = first;
    return ErrorFromAnswer(copy);
  }
  if (stopped) return Status::Ok();
  last_error_ = ServerError{};
  return Unavailable("the watch stream from " + server_ + " ended");
}

bool SseParser::Feed(std::string_view chunk, const std::function<bool(const WatchEvent&)>& on_event,
                     Status* status) {
  buffer_.append(chunk);
  size_t start = 0;
  while (true) {
    size_t nl = buffer_.find('\n', start);
    if (nl == std::string::npos) break;
    std::string_view line(buffer_.data() + start, nl - start);
    start = nl + 1;
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.empty()) {
      last_event_id_ = id_buffer_;
      if (!has_fields_) continue;
      WatchEvent event = std::move(current_);
      if (event.event.empty()) event.event = "message";
      if (!data_.empty()) {
        auto json = ParseJson(data_);
        if (!json.ok()) {
          *status = InvalidArgument("watch event " + event.event + " id " + event.id +
                                    ": data is not JSON: " + json.error().message());
          buffer_.erase(0, start);
          return false;
        }
        event.data = std::move(json).value();
      }
      current_ = WatchEvent{};
      data_.clear();
      has_data_ = false;
      has_fields_ = false;
      if (!on_event(event)) {
        buffer_.erase(0, start);
        return false;
      }
      continue;
    }
    if (line[0] == ':') continue;
    size_t colon = line.find(':');
    std::string_view field = line.substr(0, colon);
    std::string_view value;
    if (colon != std::string_view::npos) {
      value = line.substr(colon + 1);
      if (value.starts_with(' ')) value.remove_prefix(1);
    }
    if (field == "event") {
      current_.event = std::string(value);
      has_fields_ = true;
    } else if (field == "id") {
      current_.id = std::string(value);
      if (value.find('\0') == std::string_view::npos) id_buffer_ = current_.id;
      has_fields_ = true;
    } else if (field == "data") {
      if (has_data_) data_ += '\n';
      data_.append(value);
      has_data_ = true;
      has_fields_ = true;
    }
  }
  buffer_.erase(0, start);
  return true;
}

StatusOr<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  auto d = steward::ParseDuration(text);
  if (!d || d->count() <= 0) {
    return InvalidArgument("\"" + std::string(text) + "\" is not a duration (" +
                           std::string(kDurationForms) + ", above zero)");
  }
  return *d;
}

}  // namespace steward::api_client
