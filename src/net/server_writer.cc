#include "net/server_writer.h"

#include <boost/beast/http/status.hpp>
#include <cstdio>

#include "common/ascii.h"
#include "common/log.h"

namespace steward::net::server {
namespace {

namespace http = boost::beast::http;

// A writer that queues more than this (a peer that stopped reading) loses its connection.
constexpr size_t kMaxQueuedBytes = 64u << 20;
// Bodies larger than this are written from their own buffer instead of being copied.
constexpr size_t kCopyBodyLimit = 16u << 10;

bool BodylessStatus(int status) {
  return (status >= 100 && status < 200) || status == 204 || status == 304;
}

bool ContainsToken(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    size_t comma = value.find(',');
    std::string_view item = value.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (AsciiEqualsIgnoreCase(item, token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

bool WantsClose(const Headers& headers) {
  for (const auto& [name, value] : headers.fields()) {
    if (AsciiEqualsIgnoreCase(name, "connection") && ContainsToken(value, "close")) return true;
  }
  return false;
}

void AppendStatusLine(std::string& out, int status) {
  out += "HTTP/1.1 ";
  out += std::to_string(status);
  out += ' ';
  auto code = http::int_to_status(static_cast<unsigned>(status));
  out += code == http::status::unknown ? std::string_view("Unknown") : http::obsolete_reason(code);
  out += "\r\n";
}

// Appends the handler's fields, leaving out the framing fields the server owns.
void AppendHeaders(std::string& out, const Headers& headers) {
  for (const auto& [name, value] : headers.fields()) {
    if (AsciiEqualsIgnoreCase(name, "content-length") ||
        AsciiEqualsIgnoreCase(name, "transfer-encoding") ||
        AsciiEqualsIgnoreCase(name, "connection")) {
      continue;
    }
    out += name;
    out += ": ";
    // A CR or LF would let a value inject fields.
    for (char c : value) out += (c == '\r' || c == '\n') ? ' ' : c;
    out += "\r\n";
  }
}

void AppendConnection(std::string& out, const RequestInfo& info, bool close) {
  if (close) {
    out += "Connection: close\r\n";
  } else if (info.http10) {
    out += "Connection: keep-alive\r\n";
  }
}

// A close code as it may be sent (RFC 6455 §7.4): another becomes 1011.
uint16_t SendableCloseCode(uint16_t code) {
  const bool ok = (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) ||
                  (code >= 3000 && code <= 4999);
  return ok ? code : kWsInternalError;
}

// `reason` cut to what a close frame holds, at a UTF-8 character boundary.
std::string CloseReason(std::string reason) {
  if (reason.size() <= kWsMaxCloseReason) return reason;
  size_t n = kWsMaxCloseReason;
  while (n > 0 && (static_cast<unsigned char>(reason[n]) & 0xC0) == 0x80) --n;
  reason.resize(n);
  return reason;
}

HttpResponse RefusalResponse(const WebSocketRefusal& refusal) {
  HttpResponse r;
  r.status = refusal.status;
  r.headers = refusal.headers;
  r.headers.Set("Content-Type", "text/plain; charset=utf-8");
  r.body = refusal.message + "\n";
  return r;
}

}  // namespace

std::string SimpleResponse(int status, std::string_view text) {
  std::string out;
  AppendStatusLine(out, status);
  out += "Content-Type: text/plain; charset=utf-8\r\nContent-Length: ";
  out += std::to_string(text.size());
  out += "\r\nConnection: close\r\n\r\n";
  out += text;
  return out;
}

WebSocketImpl::~WebSocketImpl() {
  if (session_ != nullptr && !closing_) session_->WsClose(kWsGoingAway, "", false);
}

void WebSocketImpl::Close(uint16_t code, std::string reason) {
  MutexLock lock(mu_);
  if (closing_ || session_ == nullptr) return;
  closing_ = true;
  session_->WsClose(SendableCloseCode(code), CloseReason(std::move(reason)), false);
}

bool WebSocketImpl::closed() const {
  MutexLock lock(mu_);
  return closing_ || session_ == nullptr;
}

size_t WebSocketImpl::pending_bytes() const {
  MutexLock lock(mu_);
  return session_ == nullptr ? 0 : session_->queued_bytes();
}

void WebSocketImpl::OnClose(std::function<void(const WebSocketClose&)> callback) {
  ReleasableMutexLock lock(mu_);
  if (!ended_) {
    callbacks_.push_back(std::move(callback));
    return;
  }
  WebSocketClose how = how_;
  lock.Release();
  callback(how);
}

void WebSocketImpl::MarkClosed(const WebSocketClose& how) {
  std::vector<std::function<void(const WebSocketClose&)>> callbacks;
  std::shared_ptr<SessionBase> session;  // released outside the lock
  {
    MutexLock lock(mu_);
    if (ended_) return;
    ended_ = true;
    closing_ = true;
    how_ = how;
    session = std::move(session_);
    session_ = nullptr;
    callbacks.swap(callbacks_);
  }
  for (auto& cb : callbacks) cb(how);
}

void WebSocketImpl::MarkClosing() {
  MutexLock lock(mu_);
  closing_ = true;
}

bool WebSocketImpl::Queue(std::string message, bool binary) {
  MutexLock lock(mu_);
  if (closing_ || session_ == nullptr) return false;
  const size_t queued = session_->queued_bytes();
  if (queued + message.size() > max_queued_bytes_) {
    LOG_WARN("closing a WebSocket whose peer does not read ({} bytes queued)", queued);
    closing_ = true;
    session_->WsClose(kWsPolicyViolation, "send queue full: the peer does not read", true);
    return false;
  }
  session_->WsSend(std::move(message), binary);
  return true;
}

Writer::~Writer() {
  if (session_ == nullptr) return;
  // The handler dropped the request without completing it.
  if (state_ == State::kIdle) {
    session_->Enqueue(SimpleResponse(500, "the handler did not answer\n"), WriteKind::kEndClose);
  } else {
    session_->Enqueue({}, WriteKind::kAbort);
  }
}

void Writer::Send(HttpResponse response) {
  ReleasableMutexLock lock(mu_);
  if (state_ != State::kIdle || session_ == nullptr) return;
  state_ = State::kDone;
  bool close = !info_.keep_alive || WantsClose(response.headers);
  bool bodyless = BodylessStatus(response.status);
  std::string head;
  head.reserve(160 + response.body.size());
  AppendStatusLine(head, response.status);
  AppendHeaders(head, response.headers);
  if (!bodyless) {
    head += "Content-Length: ";
    head += std::to_string(response.body.size());
    head += "\r\n";
  }
  AppendConnection(head, info_, close);
  head += "\r\n";
  WriteKind end = close ? WriteKind::kEndClose : WriteKind::kEndKeepAlive;
  if (info_.head || bodyless || response.body.empty()) {
    session_->Enqueue(std::move(head), end);
  } else if (response.body.size() <= kCopyBodyLimit) {
    head += response.body;
    session_->Enqueue(std::move(head), end);
  } else {
    session_->Enqueue(std::move(head), WriteKind::kPart);
    session_->Enqueue(std::move(response.body), end);
  }
  Detach(lock, /*defer_callbacks=*/true);
}

void Writer::BeginStream(int status, Headers headers) {
  MutexLock lock(mu_);
  if (state_ != State::kIdle || session_ == nullptr) return;
  state_ = State::kStreaming;
  close_after_stream_ = !info_.keep_alive || info_.http10 || WantsClose(headers);
  std::string head;
  AppendStatusLine(head, status);
  AppendHeaders(head, headers);
  // HTTP/1.0 has no chunked coding: the body ends with the connection.
  if (!info_.http10) head += "Transfer-Encoding: chunked\r\n";
  AppendConnection(head, info_, close_after_stream_);
  head += "\r\n";
  session_->Enqueue(std::move(head), WriteKind::kPart);
}

bool Writer::Write(std::string data) {
  ReleasableMutexLock lock(mu_);
  if (state_ != State::kStreaming || session_ == nullptr) return false;
  if (data.empty() || info_.head) return true;  // an empty chunk would end the body
  if (session_->queued_bytes() > kMaxQueuedBytes) {
    LOG_WARN("closing a stream whose peer does not read ({} bytes queued)",
             session_->queued_bytes());
    state_ = State::kDone;
    session_->Enqueue({}, WriteKind::kAbort);
    Detach(lock, /*defer_callbacks=*/true);
    return false;
  }
  if (info_.http10) {
    session_->Enqueue(std::move(data), WriteKind::kPart);
    return true;
  }
  char size_line[24];
  int n = std::snprintf(size_line, sizeof size_line, "%zx\r\n", data.size());
  std::string chunk;
  chunk.reserve(static_cast<size_t>(n) + data.size() + 2);
  chunk.append(size_line, static_cast<size_t>(n));
  chunk += data;
  chunk += "\r\n";
  session_->Enqueue(std::move(chunk), WriteKind::kPart);
  return true;
}

void Writer::End() {
  ReleasableMutexLock lock(mu_);
  if (state_ != State::kStreaming || session_ == nullptr) return;
  state_ = State::kDone;
  std::string tail = (info_.http10 || info_.head) ? std::string() : std::string("0\r\n\r\n");
  session_->Enqueue(std::move(tail),
                    close_after_stream_ ? WriteKind::kEndClose : WriteKind::kEndKeepAlive);
  Detach(lock, /*defer_callbacks=*/true);
}

void Writer::Abort() {
  ReleasableMutexLock lock(mu_);
  if (state_ == State::kDone || session_ == nullptr) return;
  state_ = State::kDone;
  session_->Enqueue({}, WriteKind::kAbort);
  Detach(lock, /*defer_callbacks=*/true);
}

size_t Writer::pending_bytes() const {
  MutexLock lock(mu_);
  return session_ == nullptr ? 0 : session_->queued_bytes();
}

void Writer::OnClose(std::function<void()> callback) {
  ReleasableMutexLock lock(mu_);
  if (!closed_.load(std::memory_order_relaxed)) {
    callbacks_.push_back(std::move(callback));
    return;
  }
  lock.Release();
  callback();
}

std::shared_ptr<WebSocket> Writer::AcceptWebSocket(WebSocketOptions options) {
  ReleasableMutexLock lock(mu_);
  if (state_ != State::kIdle || session_ == nullptr) return nullptr;
  if (!info_.websocket) {
    WebSocketRefusal refusal = info_.websocket_refusal
                                   ? *info_.websocket_refusal
                                   : CheckWebSocketHandshake(HttpRequest()).value();
    lock.Release();
    Send(RefusalResponse(refusal));
    return nullptr;
  }
  state_ = State::kDone;
  auto socket = std::make_shared<WebSocketImpl>(session_, options.max_queued_bytes);
  session_->StartWebSocket(socket, std::move(options));
  Detach(lock, /*defer_callbacks=*/true);
  return socket;
}

void Writer::MarkClosed() {
  ReleasableMutexLock lock(mu_);
  if (session_ == nullptr) return;
  state_ = State::kDone;
  Detach(lock, /*defer_callbacks=*/false);
}

void Writer::Detach(ReleasableMutexLock& lock, bool defer_callbacks) {
  auto [session, callbacks] = TakeLocked();
  // Not `lock.Release()`: the analysis cannot tell that `lock` is the holder of mu_.
  ReleaseHeld(lock);
  if (callbacks.empty()) return;
  if (defer_callbacks && session != nullptr) {
    session->PostCallbacks(std::move(callbacks));
  } else {
    for (auto& cb : callbacks) cb();
  }
}

std::pair<std::shared_ptr<SessionBase>, std::vector<std::function<void()>>> Writer::TakeLocked() {
  std::shared_ptr<SessionBase> session = std::move(session_);
  closed_.store(true, std::memory_order_release);
  std::vector<std::function<void()>> callbacks = std::move(callbacks_);
  callbacks_.clear();
  return {std::move(session), std::move(callbacks)};
}

}  // namespace steward::net::server
