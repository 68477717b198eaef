#include "kube/transport/transport.h"

#include <boost/beast/http/error.hpp>
#include <cctype>
#include <cstdio>
#include <deque>
#include <limits>
#include <random>
#include <thread>

#include "common/backoff.h"
#include "common/random.h"
#include "common/token_bucket.h"
#include "kube/transport/connection.h"
#include "kube/transport/endpoint.h"
#include "kube/transport/tls.h"

namespace steward::kube {

// ---------------------------------------------------------------------------------------------
// CancelToken

void CancelToken::Cancel() {
  MutexLock lock(mu_);
  if (cancelled_.exchange(true)) return;
  // Callbacks run under the lock so that Unsubscribe() returns only once a running callback
  // has finished; they must not block or call back into this token.
  for (auto& [id, fn] : callbacks_) fn();
  callbacks_.clear();
}

int CancelToken::Subscribe(std::function<void()> fn) {
  {
    MutexLock lock(mu_);
    if (!cancelled_.load()) {
      int id = next_id_++;
      callbacks_.emplace(id, std::move(fn));
      return id;
    }
  }
  fn();
  return -1;
}

void CancelToken::Unsubscribe(int id) {
  MutexLock lock(mu_);
  callbacks_.erase(id);
}

namespace {

namespace http = boost::beast::http;
using Result = Connection::Result;

constexpr uint32_t kHeaderLimit = 1u << 20;
// Boost 1.74's parser mishandles a disengaged body limit (see net/http_client.cc); the
// transport enforces max_response_bytes itself.
constexpr uint64_t kNoBodyLimit = std::numeric_limits<uint64_t>::max();
constexpr size_t kReadChunk = 32 * 1024;

bool IsRead(const std::string& method) { return method == "GET" || method == "HEAD"; }

std::string MillisText(std::chrono::nanoseconds d) {
  return std::to_string(std::chrono::duration_cast<Millis>(d).count()) + " ms";
}

std::string QpsText(double qps) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", qps);
  return buf;
}

// Retry-After in seconds (the HTTP-date form is not used by Kubernetes).
std::optional<Millis> ParseRetryAfter(std::string_view value) {
  if (value.empty() || value.size() > 9) return std::nullopt;
  int64_t seconds = 0;
  for (char c : value) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    seconds = seconds * 10 + (c - '0');
  }
  return Millis(seconds * 1000);
}

// What one attempt came to.
struct Attempt {
  enum class Kind {
    kResponse,    // a complete response (or a finished stream)
    kNotSent,     // failed before the request left: safe to repeat
    kSentFailed,  // failed after (part of) the request left: may have applied
    kFinal,       // a failure that no retry can fix: `status` is returned as is
  };
  Kind kind = Kind::kResponse;
  TransportResponse response;
  bool streamed = false;  // Stream(): the 2xx body went to on_data
  std::string message;    // kNotSent / kSentFailed
  Status status;          // kFinal
};

Attempt Final(Status status) {
  Attempt a;
  a.kind = Attempt::Kind::kFinal;
  a.status = std::move(status);
  return a;
}

Attempt Failed(Attempt::Kind kind, std::string message) {
  Attempt a;
  a.kind = kind;
  a.message = std::move(message);
  return a;
}

using StreamFn = std::function<bool(std::string_view)>;

// One Do/Stream call.
struct Call {
  const TransportRequest& request;
  const StreamFn* on_data;  // null for Do
  SteadyTime deadline;
  Millis timeout;
  RetryClass retry;
  std::string what;  // "GET https://host:port/target", for messages
  int sent = 0;      // attempts that reached the wire
};

class TransportImpl final : public Transport {
 public:
  TransportImpl(RestConfig config, TransportOptions options, ServerUrl server,
                std::optional<ProxyUrl> proxy, std::unique_ptr<TlsContexts> tls)
      : config_(std::move(config)),
        options_(std::move(options)),
        clock_(options_.clock ? *options_.clock : RealClock::Get()),
        server_(std::move(server)),
        proxy_(std::move(proxy)),
        tls_(std::move(tls)),
        bucket_(options_.qps, options_.burst, clock_),
        random_(std::random_device{}()) {}

  StatusOr<TransportResponse> Do(const TransportRequest& request) override {
    return Execute(request, nullptr);
  }

  StatusOr<TransportResponse> Stream(const TransportRequest& request,
                                     const StreamFn& on_data) override {
    return Execute(request, &on_data);
  }

  TransportStats stats() const override {
    MutexLock lock(stats_mu_);
    return stats_;
  }

  void SetFailFast(bool on) override { fail_fast_.store(on, std::memory_order_relaxed); }
  std::optional<SteadyTime> failing_since() const override {
    const int64_t ns = failing_since_ns_.load(std::memory_order_relaxed);
    if (ns == 0) return std::nullopt;
    return SteadyTime(std::chrono::nanoseconds(ns));
  }

  const RestConfig& config() const override { return config_; }

 private:
  StatusOr<TransportResponse> Execute(const TransportRequest& request, const StreamFn* on_data);
  Status Throttle(Call& call);
  Status Sleep(std::chrono::nanoseconds d, Call& call, const char* why);
  Attempt RunAttempt(Call& call);
  Attempt Acquire(Call& call, const TlsContexts::Current& tls, std::unique_ptr<Connection>* out);
  Attempt Exchange(Call& call, const Credentials& credentials, std::unique_ptr<Connection> conn);
  Attempt ReadBody(Call& call, Connection& conn, Connection::Parser& parser,
                   TransportResponse response);
  Attempt Interrupted(const Call& call, const Connection::Outcome& o, const char* stage) const;
  Connection::Request BuildRequest(const TransportRequest& request,
                                   const Credentials& credentials) const;
  std::unique_ptr<Connection> TakeIdle(uint64_t generation);
  void Release(std::unique_ptr<Connection> conn);
  template <class F>
  void Count(F&& f) EXCLUDES(stats_mu_) {
    MutexLock lock(stats_mu_);
    f(stats_);
  }

  const RestConfig config_;
  const TransportOptions options_;
  const Clock& clock_;
  const ServerUrl server_;
  const std::optional<ProxyUrl> proxy_;
  const std::unique_ptr<TlsContexts> tls_;  // null for http://
  TokenBucket bucket_;
  Random random_;

  Mutex pool_mu_;
  std::deque<std::unique_ptr<Connection>> idle_ GUARDED_BY(pool_mu_);  // most recent at the back

  mutable Mutex stats_mu_;
  TransportStats stats_ GUARDED_BY(stats_mu_);
  // failing_since(): the transport clock's Now() in ns at the first failed attempt since the
  // last answered one; 0 while answered.
  std::atomic<int64_t> failing_since_ns_{0};

  std::atomic<bool> fail_fast_{false};  // SetFailFast

  void NoteAnswered() { failing_since_ns_.store(0, std::memory_order_relaxed); }
  bool FailFast() const { return fail_fast_.load(std::memory_order_relaxed); }
  void NoteFailed() {
    int64_t expected = 0;
    const int64_t now =
        std::chrono::duration_cast<std::chrono::nanoseconds>(clock_.Now().time_since_epoch())
            .count();
    failing_since_ns_.compare_exchange_strong(expected, now == 0 ? 1 : now,
                                              std::memory_order_relaxed);
  }
};

StatusOr<TransportResponse> TransportImpl::Execute(const TransportRequest& request,
                                                   const StreamFn* on_data) {
  Count([](TransportStats& s) { ++s.requests; });
  Millis timeout = request.timeout.count() > 0 ? request.timeout : options_.default_timeout;
  Call call{request,
            on_data,
            clock_.Now() + timeout,
            timeout,
            request.retry.value_or(IsRead(request.method) ? RetryClass::kRead : RetryClass::kWrite),
            request.method + " " + server_.ToString() + request.target};
  Backoff backoff(Backoff::Options{.initial = options_.backoff_initial,
                                   .max = options_.backoff_max,
                                   .factor = 2.0,
                                   .jitter = 0.2},
                  &random_);
  bool refreshed = false;
  int retries = 0;  // counted against max_retries (the 401 refresh is not)
  for (int tried = 1;; ++tried) {
    if (request.cancel && request.cancel->cancelled()) return Cancelled(call.what + ": cancelled");
    RETURN_IF_ERROR(Throttle(call));
    Attempt a = RunAttempt(call);
    std::string tries = tried > 1 ? " (" + std::to_string(tried) + " tries)" : "";
    Millis delay{0};
    if (a.kind == Attempt::Kind::kFinal) return a.status;
    if (a.kind == Attempt::Kind::kResponse) {
      TransportResponse& r = a.response;
      r.attempts = call.sent;
      if (r.status >= 500 && r.status != 501 && r.status != 505) {
        NoteFailed();
      } else {
        NoteAnswered();
      }
      if (a.streamed) return std::move(r);
      if (r.status == 429) Count([](TransportStats& s) { ++s.throttled_429; });
      if (r.status == 401 && config_.credentials && !refreshed &&
          call.retry != RetryClass::kNever) {
        // The credentials were refused: drop the provider's cache and try once more at once.
        config_.credentials->Invalidate();
        refreshed = true;
        Count([](TransportStats& s) { ++s.retries; });
        continue;
      }
      bool server_error = r.status >= 500 && r.status != 501 && r.status != 505;
      bool retryable = (r.status == 429 && call.retry != RetryClass::kNever) ||
                       (server_error && call.retry == RetryClass::kRead && !FailFast());
      if (!retryable || retries >= options_.max_retries) return std::move(r);
      auto retry_after = ParseRetryAfter(r.headers.Get("Retry-After"));
      delay = retry_after ? *retry_after : backoff.Next();
      // Waiting past the deadline is pointless: the caller gets the answer now.
      if (clock_.Now() + delay >= call.deadline) return std::move(r);
    } else {
      NoteFailed();
      bool retryable = a.kind == Attempt::Kind::kNotSent ? call.retry != RetryClass::kNever
                                                         : call.retry == RetryClass::kRead;
      std::string message = call.what + ": " + a.message + tries;
      if (a.kind == Attempt::Kind::kSentFailed && !retryable) {
        message += "; the request was sent and may have been applied, so it is not repeated";
      }
      if (retryable && FailFast()) {
        return Unavailable(message + "; not retried: the cluster is declared unreachable");
      }
      if (!retryable || retries >= options_.max_retries) return Unavailable(message);
      delay = backoff.Next();
      if (clock_.Now() + delay >= call.deadline) {
        return Unavailable(message + "; no time left for another try within " +
                           MillisText(call.timeout));
      }
    }
    RETURN_IF_ERROR(Sleep(delay, call, "before a retry"));
    if (FailFast()) {  // declared unreachable while this request waited: not tried again
      if (a.kind != Attempt::Kind::kResponse) {
        return Unavailable(call.what + ": " + a.message + tries +
                           "; not retried: the cluster is declared unreachable");
      }
      if (a.response.status != 429) return std::move(a.response);
    }
    ++retries;
    Count([](TransportStats& s) { ++s.retries; });
  }
}

Status TransportImpl::Throttle(Call& call) {
  std::chrono::nanoseconds wait = bucket_.Reserve();
  if (wait <= std::chrono::nanoseconds::zero()) return Status::Ok();
  Count([](TransportStats& s) { ++s.rate_limited_waits; });
  if (clock_.Now() + wait > call.deadline) {
    return Status(StatusCode::kDeadlineExceeded,
                  call.what + ": the client-side rate limiter (qps " + QpsText(options_.qps) +
                      ") would delay it by " + MillisText(wait) + ", past its " +
                      MillisText(call.timeout) + " deadline");
  }
  return Sleep(wait, call, "waiting for the client-side rate limiter");
}

Status TransportImpl::Sleep(std::chrono::nanoseconds d, Call& call, const char* why) {
  const auto& cancel = call.request.cancel;
  if (!cancel) {
    std::this_thread::sleep_for(d);
    return Status::Ok();
  }
  struct Waker {
    Mutex mu;
    CondVar cv;
    bool woken GUARDED_BY(mu) = false;
  };
  auto waker = std::make_shared<Waker>();
  int id = cancel->Subscribe([waker] {
    MutexLock lock(waker->mu);
    waker->woken = true;
    waker->cv.NotifyAll();
  });
  {
    MutexLock lock(waker->mu);
    waker->cv.WaitFor(waker->mu, d, [&]() REQUIRES(waker->mu) { return waker->woken; });
  }
  cancel->Unsubscribe(id);
  if (cancel->cancelled()) return Cancelled(call.what + ": cancelled " + why);
  return Status::Ok();
}

Attempt TransportImpl::RunAttempt(Call& call) {
  Credentials credentials;
  std::string provider;
  if (config_.credentials) {
    provider = config_.credentials->Describe();
    auto got = config_.credentials->Get();
    if (!got.ok()) {
      return Final(
          Status(StatusCode::kUnauthenticated,
                 call.what + ": no credentials from " + provider + ": " + got.error().message()));
    }
    credentials = std::move(got).value();
  }
  TlsContexts::Current tls;
  if (tls_) {
    auto current = tls_->For(credentials, provider);
    if (!current.ok()) {
      const Status& st = current.error();
      return Final(Status(st.code(), call.what + ": " + st.message()));
    }
    tls = std::move(current).value();
  }
  std::unique_ptr<Connection> conn;
  Attempt failed = Acquire(call, tls, &conn);
  if (!conn) return failed;
  return Exchange(call, credentials, std::move(conn));
}

Attempt TransportImpl::Acquire(Call& call, const TlsContexts::Current& tls,
                               std::unique_ptr<Connection>* out) {
  if (auto idle = TakeIdle(tls.generation)) {
    idle->Bind(call.request.cancel);
    *out = std::move(idle);
    return {};
  }
  auto conn = std::make_unique<Connection>(clock_, tls.context, tls.generation);
  Count([](TransportStats& s) { ++s.connections_opened; });
  conn->Bind(call.request.cancel);
  SteadyTime connect_deadline = std::min(call.deadline, clock_.Now() + options_.connect_timeout);
  Connection::Outcome o = conn->Connect(server_, proxy_, tls_.get(), connect_deadline);
  switch (o.result) {
    case Result::kOk:
      *out = std::move(conn);
      return {};
    case Result::kCancelled:
      return Final(Cancelled(call.what + ": cancelled while connecting"));
    case Result::kTimedOut:
      if (clock_.Now() < call.deadline) {
        return Failed(Attempt::Kind::kNotSent, "connecting to " + server_.Authority() +
                                                   ": no connection within " +
                                                   MillisText(options_.connect_timeout));
      }
      return Final(Status(StatusCode::kDeadlineExceeded,
                          call.what + ": timed out after " + MillisText(call.timeout) +
                              " while connecting to " + server_.Authority()));
    case Result::kFailed:
      break;
  }
  if (o.permanent) return Final(Unavailable(call.what + ": " + o.message));
  return Failed(Attempt::Kind::kNotSent, o.message);
}

Attempt TransportImpl::Interrupted(const Call& call, const Connection::Outcome& o,
                                   const char* stage) const {
  if (o.result == Result::kCancelled) return Final(Cancelled(call.what + ": cancelled " + stage));
  return Final(Status(StatusCode::kDeadlineExceeded,
                      call.what + ": timed out after " + MillisText(call.timeout) + " " + stage));
}

Connection::Request TransportImpl::BuildRequest(const TransportRequest& request,
                                                const Credentials& credentials) const {
  Connection::Request r;
  r.method_string(request.method);
  r.target(server_.path_prefix + request.target);
  r.version(11);
  r.set(http::field::host, server_.HostHeader());
  r.set(http::field::user_agent, options_.user_agent);
  if (!request.accept.empty()) r.set(http::field::accept, request.accept);
  if (!request.content_type.empty()) r.set(http::field::content_type, request.content_type);
  if (!credentials.bearer_token.empty()) {
    r.set(http::field::authorization, "Bearer " + credentials.bearer_token);
  }
  r.body() = request.body;
  r.prepare_payload();
  return r;
}

Attempt TransportImpl::Exchange(Call& call, const Credentials& credentials,
                                std::unique_ptr<Connection> conn) {
  Connection::Request request = BuildRequest(call.request, credentials);
  Connection::Outcome o = conn->Write(request, call.deadline);
  if (o.result == Result::kFailed && o.bytes == 0) {
    // Nothing reached the server (Go's nothingWrittenError): safe to repeat on a new connection.
    return Failed(Attempt::Kind::kNotSent,
                  "sending to " + server_.Authority() + ": " + o.ec.message());
  }
  ++call.sent;
  Count([&](TransportStats& s) {
    ++s.attempts;
    ++s.by_method[call.request.method];
  });
  if (o.result == Result::kFailed) {
    return Failed(Attempt::Kind::kSentFailed,
                  "sending to " + server_.Authority() + ": " + o.ec.message());
  }
  if (!o.ok()) return Interrupted(call, o, "sending the request");

  Connection::Parser parser;
  parser.header_limit(kHeaderLimit);
  parser.body_limit(kNoBodyLimit);
  if (call.request.method == "HEAD") parser.skip(true);
  o = conn->ReadHeader(parser, call.deadline);
  if (o.result == Result::kFailed) {
    if (o.ec == http::error::header_limit) {
      return Final(Internal(call.what + ": response header larger than " +
                            std::to_string(kHeaderLimit) + " bytes"));
    }
    return Failed(Attempt::Kind::kSentFailed,
                  "waiting for the response from " + server_.Authority() + ": " + o.ec.message() +
                      (conn->reused() ? " (on a reused connection)" : ""));
  }
  if (!o.ok()) return Interrupted(call, o, "waiting for the response");

  TransportResponse response;
  response.status = static_cast<int>(parser.get().result_int());
  for (const auto& field : parser.get()) {
    response.headers.Add(std::string(field.name_string()), std::string(field.value()));
  }
  Attempt a = ReadBody(call, *conn, parser, std::move(response));
  conn->Unbind();
  if (a.kind == Attempt::Kind::kResponse && !call.on_data && parser.is_done() &&
      parser.get().keep_alive()) {
    Release(std::move(conn));
  }
  return a;
}

Attempt TransportImpl::ReadBody(Call& call, Connection& conn, Connection::Parser& parser,
                                TransportResponse response) {
  const bool streaming = call.on_data && response.status / 100 == 2;
  // A stream's head and each piece of its body are answers as they come: noted only when it
  // ended, a quiet cluster (long watches, a failed re-watch or two) looked unreachable.
  if (streaming) NoteAnswered();
  const uint64_t limit = options_.max_response_bytes;
  auto too_large = [&] {
    return Final(FailedPrecondition(call.what + ": the response body is larger than " +
                                    std::to_string(limit) +
                                    " bytes (TransportOptions::max_response_bytes)"));
  };
  if (!streaming) {
    auto length = parser.content_length();
    if (length && *length > limit) return too_large();
    if (length) response.body.reserve(static_cast<size_t>(*length));
  }
  char buf[kReadChunk];
  while (!parser.is_done()) {
    parser.get().body().data = buf;
    parser.get().body().size = sizeof buf;
    Connection::Outcome o = conn.ReadSome(parser, call.deadline);
    size_t n = sizeof buf - parser.get().body().size;
    if (n > 0 && streaming) {
      NoteAnswered();
      if (!(*call.on_data)(std::string_view(buf, n))) {
        conn.Close();  // stopped by the caller
        break;
      }
    } else if (n > 0) {
      if (response.body.size() + n > limit) return too_large();
      response.body.append(buf, n);
    }
    if (o.result == Result::kFailed) {
      if (streaming) {
        return Final(Unavailable(call.what + ": the response stream from " + server_.Authority() +
                                 " broke: " + o.ec.message()));
      }
      return Failed(Attempt::Kind::kSentFailed, "reading the response body from " +
                                                    server_.Authority() + ": " + o.ec.message());
    }
    if (!o.ok()) return Interrupted(call, o, "reading the response body");
  }
  Attempt a;
  a.response = std::move(response);
  a.streamed = streaming;
  return a;
}

std::unique_ptr<Connection> TransportImpl::TakeIdle(uint64_t generation) {
  for (;;) {
    std::unique_ptr<Connection> conn;
    {
      MutexLock lock(pool_mu_);
      if (idle_.empty()) return nullptr;
      conn = std::move(idle_.back());
      idle_.pop_back();
    }
    if (conn->generation() != generation) continue;  // made with other client credentials
    if (conn->LooksStale()) {
      Count([](TransportStats& s) { ++s.stale_connections; });
      continue;
    }
    conn->set_reused();
    return conn;
  }
}

void TransportImpl::Release(std::unique_ptr<Connection> conn) {
  if (!conn->Reusable() || options_.max_idle_connections == 0) return;
  std::unique_ptr<Connection> evicted;
  MutexLock lock(pool_mu_);
  idle_.push_back(std::move(conn));
  if (idle_.size() > options_.max_idle_connections) {
    evicted = std::move(idle_.front());
    idle_.pop_front();
  }
}

std::string WithSource(const RestConfig& config, const std::string& message) {
  return config.source.empty() ? message : config.source + ": " + message;
}

}  // namespace

StatusOr<std::shared_ptr<Transport>> Transport::Create(const RestConfig& config,
                                                       TransportOptions options) {
  auto server = ParseServerUrl(config.server);
  if (!server.ok()) return InvalidArgument(WithSource(config, server.error().message()));
  auto proxy = SelectProxy(*server, config.proxy_url, ProcessEnv());
  if (!proxy.ok()) return InvalidArgument(WithSource(config, proxy.error().message()));
  if (options.max_retries < 0 || options.default_timeout.count() <= 0 ||
      options.connect_timeout.count() <= 0 || options.max_response_bytes == 0) {
    return InvalidArgument(
        "TransportOptions: max_retries must be >= 0 and the timeouts and max_response_bytes "
        "positive");
  }
  std::unique_ptr<TlsContexts> tls;
  if (server->tls) {
    std::string name = config.tls_server_name.empty() ? server->host : config.tls_server_name;
    auto created = TlsContexts::Create(config, std::move(name));
    if (!created.ok()) {
      return Status(created.error().code(), WithSource(config, created.error().message()));
    }
    tls = std::move(created).value();
  }
  return std::shared_ptr<Transport>(
      std::make_shared<TransportImpl>(config, std::move(options), std::move(server).value(),
                                      std::move(proxy).value(), std::move(tls)));
}

}  // namespace steward::kube
