// ApiClient: a small client of Steward's REST API (docs/api.md), used by `steward project ...`,
// `steward torture` and the end-to-end tests.
//
// Calls return the decoded JSON answer of a 2xx response. An error answer of the API
// ({"error": {code, reason, message, field}}) becomes a Status whose code follows the HTTP status
// (400/413/415 kInvalidArgument, 401 kUnauthenticated, 404 kNotFound, 405 kUnimplemented,
// 409 kFailedPrecondition, 503 kUnavailable, anything else kInternal) and whose message is
// "<reason>: <message>"; last_error() then holds the decoded error. A call that got no answer
// (connection refused, timeout) fails with kUnavailable / kDeadlineExceeded, the message naming
// the server, and last_error().http_status is 0.
//
// Not thread-safe (one HTTP connection): use one client per thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "common/json.h"
#include "common/status.h"
#include "net/http_client.h"

namespace steward::api_client {

struct ApiClientOptions {
  std::string server = "http://127.0.0.1:8080";  // http:// or https://, host[:port], no path
  std::string token;                             // bearer token; required by /v1
  std::string ca_pem;                            // https trust anchor; "" = system default
  bool insecure_skip_verify = false;
  std::chrono::milliseconds timeout{60000};  // per request
};

// The decoded error body of a refused request.
struct ServerError {
  int http_status = 0;  // 0: no answer (or the last call succeeded)
  std::string reason;   // "InvalidArgument", "NotFound", ...
  std::string message;
  std::string field;  // the field to blame, when there is one
};

// One server-sent event. `data` is the JSON payload (null when the data lines were empty).
struct WatchEvent {
  std::string event;  // "project", "agent", "deleted", "sync", "resumed", "reset", "error"
  std::string id;     // the event's own id field ("" when it had none): "<feed>.<position>"
  Json data;          // a project's record version is data["version"]
};

class ApiClient {
 public:
  // Fails with kInvalidArgument when `server` is not an http(s) URL with a host.
  static StatusOr<std::unique_ptr<ApiClient>> Create(const ApiClientOptions& options);

  // `target` is the path and query ("/v1/projects?team=a"); `body` (when not null) is sent as
  // JSON. A 2xx answer with an empty body yields an empty object.
  StatusOr<Json> Call(const std::string& method, const std::string& target,
                      const Json* body = nullptr);
  StatusOr<Json> Get(const std::string& target) { return Call("GET", target); }
  StatusOr<Json> Put(const std::string& target, const Json& body) {
    return Call("PUT", target, &body);
  }
  StatusOr<Json> Post(const std::string& target, const Json& body = Json::object()) {
    return Call("POST", target, &body);
  }
  StatusOr<Json> Delete(const std::string& target) { return Call("DELETE", target); }

  // GET /v1/watch?<query> and delivers each event, in order, to `on_event`; comment lines are
  // skipped. Returns OK once `on_event` returns false. A non-2xx answer fails as Call does; the
  // stream ending fails with kUnavailable; `timeout` passing fails with kDeadlineExceeded.
  // `last_event_id` (unless empty) is sent as Last-Event-ID: the server then resumes after it
  // (the missed changes, then `resumed`) or says `reset` and sends its snapshot. Afterwards
  // last_event_id() is the id to resume from next time (SSE's rule: the id of the last event
  // that carried one, else the one passed in).
  Status Watch(const std::string& query, const std::function<bool(const WatchEvent&)>& on_event,
               std::chrono::milliseconds timeout, const std::string& last_event_id = "");
  const std::string& last_event_id() const { return last_event_id_; }

  const ServerError& last_error() const { return last_error_; }
  const std::string& server() const { return server_; }

 private:
  ApiClient(std::string server, std::unique_ptr<net::HttpClient> http)
      : server_(std::move(server)), http_(std::move(http)) {}
  Status ErrorFromAnswer(const net::HttpResponse& response);
  Status NoAnswer(const Status& status);

  std::string server_;
  std::unique_ptr<net::HttpClient> http_;
  ServerError last_error_;
  std::string last_event_id_;
};

// Splits a server-sent-event stream into events. Feed it chunks as they arrive; each complete
// event (ended by a blank line) is passed to `on_event`. Lines starting with ':' are comments;
// fields other than event, id and data are ignored.
// Fails with kInvalidArgument when an event's data is not JSON.
class SseParser {
 public:
  explicit SseParser(std::string last_event_id = "")
      : id_buffer_(last_event_id), last_event_id_(std::move(last_event_id)) {}
  // Returns false when `on_event` asked to stop; `*status` receives a parse error, if any.
  bool Feed(std::string_view chunk, const std::function<bool(const WatchEvent&)>& on_event,
            Status* status);
  // The stream's last event id as the WHATWG rules keep it: an `id` field (without NUL) sets
  // it, for that event and the later ones, once its event is dispatched (a blank line); an
  // event without one leaves it as it was; `id:` with nothing clears it.
  const std::string& last_event_id() const { return last_event_id_; }

 private:
  std::string id_buffer_;
  std::string last_event_id_;
  std::string buffer_;
  WatchEvent current_;
  std::string data_;
  bool has_data_ = false;
  bool has_fields_ = false;  // an event, id or data line since the last dispatch
};

// Parses "30s", "2m", "1500ms", "1h" or a plain number of seconds (fractions allowed). Fails
// with kInvalidArgument for anything else, zero or a negative value.
StatusOr<std::chrono::milliseconds> ParseDuration(std::string_view text);

}  // namespace steward::api_client
