#include "net/websocket.h"

#include "common/ascii.h"
#include "common/base64.h"

namespace steward::net {
namespace {

// Whether any field `name` lists `token` (RFC 9110 §5.6.1: comma-separated, case-insensitive).
bool ListsToken(const Headers& headers, std::string_view name, std::string_view token) {
  for (const auto& [n, value] : headers.fields()) {
    if (!AsciiEqualsIgnoreCase(n, name)) continue;
    std::string_view rest = value;
    while (true) {
      size_t comma = rest.find(',');
      if (AsciiEqualsIgnoreCase(TrimHttpWhitespace(rest.substr(0, comma)), token)) return true;
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return false;
}

size_t CountFields(const Headers& headers, std::string_view name) {
  size_t n = 0;
  for (const auto& field : headers.fields()) n += AsciiEqualsIgnoreCase(field.first, name) ? 1 : 0;
  return n;
}

WebSocketRefusal Refuse(int status, std::string message) {
  WebSocketRefusal r;
  r.status = status;
  r.message = std::move(message);
  return r;
}

}  // namespace

bool IsWebSocketUpgrade(const HttpRequest& request) {
  return ListsToken(request.headers, "upgrade", "websocket");
}

std::optional<WebSocketRefusal> CheckWebSocketHandshake(const HttpRequest& request) {
  if (!IsWebSocketUpgrade(request)) {
    WebSocketRefusal r = Refuse(426,
                                "this resource is served over WebSocket only (Upgrade: "
                                "websocket, RFC 6455)");
    r.headers.Set("Upgrade", "websocket");
    r.headers.Set("Sec-WebSocket-Version", "13");
    return r;
  }
  if (request.method != "GET") {
    return Refuse(
        400, "a WebSocket handshake must be a GET request, not " + request.method.substr(0, 32));
  }
  if (request.version != 11) return Refuse(400, "a WebSocket handshake must be HTTP/1.1");
  if (CountFields(request.headers, "host") != 1) {
    return Refuse(400, "a WebSocket handshake needs one Host field");
  }
  if (!ListsToken(request.headers, "connection", "upgrade")) {
    return Refuse(400, "a WebSocket handshake needs Connection: Upgrade");
  }
  const size_t versions = CountFields(request.headers, "sec-websocket-version");
  if (versions == 0) return Refuse(400, "a WebSocket handshake needs Sec-WebSocket-Version");
  if (versions > 1 || TrimHttpWhitespace(request.headers.Get("sec-websocket-version")) != "13") {
    WebSocketRefusal r = Refuse(426, "this server speaks WebSocket version 13 only");
    r.headers.Set("Sec-WebSocket-Version", "13");
    return r;
  }
  if (CountFields(request.headers, "sec-websocket-key") != 1) {
    return Refuse(400, "a WebSocket handshake needs one Sec-WebSocket-Key");
  }
  auto key = Base64Decode(TrimHttpWhitespace(request.headers.Get("sec-websocket-key")));
  if (!key || key->size() != 16) {
    return Refuse(400, "Sec-WebSocket-Key must be the base64 form of 16 bytes");
  }
  std::string_view length = request.headers.Get("content-length");
  if (request.headers.Has("transfer-encoding") || !request.body.empty() ||
      (!length.empty() && TrimHttpWhitespace(length) != "0")) {
    return Refuse(400, "a WebSocket handshake has no body");
  }
  return std::nullopt;
}

}  // namespace steward::net
