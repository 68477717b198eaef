// WebSocket (RFC 6455) on HttpServer's connections: the opening handshake's checks, the options
// of an accepted socket and the interface a handler sends through.
//
// A handler that gets a request asking for an upgrade (IsWebSocketUpgrade) may check it with
// CheckWebSocketHandshake and answer any HTTP error it likes before the upgrade (404, 409...),
// then call ResponseWriter::AcceptWebSocket (net/http_server.h), which answers 101 Switching
// Protocols (Beast's websocket accept) and hands back a WebSocket. The request has then been
// through the same Handler::CheckHead path as any other (authentication, limits).
//
// What the server does for every accepted socket: text (Send) and binary (SendBinary) messages
// out, in the order they were given; the peer's messages read (up to max_message_bytes each: a
// larger one closes the socket with 1009 "message too big") and handed to on_message; pings
// answered; a ping sent every half of idle_timeout and a peer that does not answer it dropped; the
// peer's close frame answered and reported; every close bounded by handshake_timeout (after which
// the connection is dropped). No compression (permessage-deflate is not offered) and no subprotocol
// is selected.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "net/http.h"

namespace steward::net {

// Close codes (RFC 6455 §7.4.1); 4000-4999 are for applications.
inline constexpr uint16_t kWsNormal = 1000;
inline constexpr uint16_t kWsGoingAway = 1001;        // the server is stopping
inline constexpr uint16_t kWsPolicyViolation = 1008;  // the send queue overflowed
inline constexpr uint16_t kWsTooBig = 1009;           // the peer sent a message over the limit
inline constexpr uint16_t kWsInternalError = 1011;
// Never on the wire: reported when the connection ended without a close handshake.
inline constexpr uint16_t kWsAbnormal = 1006;
// A close frame's reason holds at most this many bytes (125 minus the code); longer ones are cut.
inline constexpr size_t kWsMaxCloseReason = 123;

// True when the request asks for a WebSocket: an Upgrade field naming "websocket" (the rest of
// the handshake may still be wrong: CheckWebSocketHandshake says).
bool IsWebSocketUpgrade(const HttpRequest& request);

// Why a request is not an acceptable opening handshake, as the answer to send instead.
struct WebSocketRefusal {
  int status = 400;  // 400, or 426 with `headers` naming what the server speaks
  std::string message;
  Headers headers;  // 426: Upgrade: websocket and/or Sec-WebSocket-Version: 13
};

// Checks the opening handshake (RFC 6455 §4.2.1): GET, HTTP/1.1, Host, Connection naming
// "upgrade", Upgrade naming "websocket" (else 426), Sec-WebSocket-Version 13 (missing: 400;
// another: 426 with Sec-WebSocket-Version: 13), exactly one Sec-WebSocket-Key whose value is
// base64 of 16 bytes, and no body (no Content-Length other than 0, no Transfer-Encoding). Repeated
// Connection and Upgrade fields are read as one list each. nullopt when it is acceptable.
std::optional<WebSocketRefusal> CheckWebSocketHandshake(const HttpRequest& request);

// How one accepted socket behaves.
struct WebSocketOptions {
  // The largest message (after reassembly of its frames) the peer may send.
  size_t max_message_bytes = 64 * 1024;
  // Bytes given to Send() and not yet written to the connection beyond which Send() refuses the
  // message, the messages still queued are dropped and the socket is closed with 1008
  // (kWsPolicyViolation) and the reason "send queue full": a peer that does not read costs the
  // server at most this much memory.
  size_t max_queued_bytes = 4u << 20;
  // Keep-alive: every half of this, a ping is sent; a peer that sends nothing (not even the
  // answer to that ping) before the next half has passed is dropped (reported as 1006 "idle
  // timeout"). So a silent peer goes after at most this long, a live one never.
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(60)};
  // The 101 answer and every closing handshake (from the moment the close is decided: the queue
  // written, the close frame sent, the peer's answered) must complete within this, else the
  // connection is dropped (reported as 1006). When the server stops, at most a second is given.
  std::chrono::milliseconds handshake_timeout{std::chrono::seconds(5)};
  // Each message the peer sends (text or binary), in order, on an I/O thread; it must not block
  // (it may call the socket's methods). Null: messages are read and dropped.
  std::function<void(std::string message, bool binary)> on_message;
};

// How a socket ended.
struct WebSocketClose {
  // The code of the close frame exchanged (the peer's when it closed first, ours when we did);
  // kWsAbnormal (1006) when the connection ended without a complete closing handshake.
  uint16_t code = kWsAbnormal;
  std::string reason;
  bool by_peer = false;  // the peer closed (a close frame or the connection) before we did
};

// An accepted WebSocket. Thread-safe: any thread may call any method. Owned by the handler
// (shared); the connection refers to it weakly, so releasing the last reference without Close()
// closes it as Close(1001, "") would (after what is queued). OnClose callbacks and on_message are
// the handler's: one that holds the socket keeps it until the connection ends. Once the
// connection closes (the peer, an error, Close() completing, the server stopping), every method
// is a harmless no-op.
class WebSocket {
 public:
  virtual ~WebSocket() = default;
  // Queues one text message. False when the socket is closed or closing (nothing more can be
  // sent; stop producing), or when this message would take the queue over max_queued_bytes (the
  // socket is then closed with 1008, see WebSocketOptions).
  virtual bool Send(std::string text) = 0;
  // Queues one binary message, under the same rules (and in the same order) as Send().
  virtual bool SendBinary(std::string bytes) = 0;
  // Starts the closing handshake: the messages already queued are written, then a close frame
  // with `code` (one an endpoint may send: 1000-1003, 1007-1014 or 3000-4999; another is sent as
  // 1011) and `reason` (cut to kWsMaxCloseReason bytes at a UTF-8 character boundary); the
  // connection closes once the peer answers or handshake_timeout passes. Later calls, and calls
  // once the peer has closed, do nothing.
  virtual void Close(uint16_t code, std::string reason) = 0;
  // True once Close() was called, the send queue overflowed or the connection is gone.
  virtual bool closed() const = 0;
  // Bytes queued by Send() and not yet written to the socket (grows while the peer does not
  // read, once the kernel's buffers are full).
  virtual size_t pending_bytes() const = 0;
  // Runs `callback` once when the connection has closed, with how; at once (on the calling thread)
  // if it already has. Otherwise on an I/O thread, never inside a call to this socket's methods;
  // it must not block.
  virtual void OnClose(std::function<void(const WebSocketClose&)> callback) = 0;
};

}  // namespace steward::net
