// The HTTP server's request framing over raw connection bytes: net::RequestFramer, the code
// HttpServer's sessions run on every byte they read (head parsing and its limits,
// Transfer-Encoding / Content-Length / Expect checks, chunked bodies, pipelined requests).
// The loop below is the session's (Session::AdvanceUnguarded in src/net/http_server.cc) minus
// the sockets: feed what has arrived, answer at kHead, dispatch at kComplete, stop at the
// first refusal or oversized body (the session closes the connection then). Each request is
// also judged as a WebSocket handshake (CheckWebSocketHandshake), as the session does for one
// that asks for an upgrade.
//
// Input: byte 1 selects the limits (bits 0-1 the body limit 0 / 16 / 1024 / 3 MiB, bit 2 a
// 256-byte head limit instead of 1 MiB); byte 2 seeds how the bytes are split into reads; the
// rest is what one connection receives.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/ascii.h"
#include "common/base64.h"
#include "fuzz_util.h"
#include "net/request_framer.h"
#include "net/websocket.h"

namespace steward::net {
namespace {

using fuzz::AsView;

// What the server would do with one connection's bytes, as text (compared across splits).
struct Outcome {
  std::string log;
  size_t requests = 0;
};

void CheckRequest(const HttpRequest& r, const RequestFramer& framer,
                  const RequestFramer::Limits& limits, bool too_large) {
  FUZZ_CHECK(!r.method.empty());
  FUZZ_CHECK(!r.target.empty());
  const std::optional<size_t> route_limit = limits.body_limit ? limits.body_limit(r) : std::nullopt;
  FUZZ_CHECK(r.body.size() <= route_limit.value_or(limits.max_body_bytes));
  FUZZ_CHECK(r.body_too_large == too_large);
  if (too_large) {
    FUZZ_CHECK(r.body.empty());
    FUZZ_CHECK(!framer.framing().keep_alive);
  }
  // No request gets through whose length a proxy could read differently.
  bool te = false, cl = false;
  for (const auto& [name, value] : r.headers.fields()) {
    te = te || AsciiEqualsIgnoreCase(name, "transfer-encoding");
    cl = cl || AsciiEqualsIgnoreCase(name, "content-length");
  }
  FUZZ_CHECK(!(te && cl));
  FUZZ_CHECK(!(te && framer.framing().http10));
  if (te) {
    std::string codings;
    for (const auto& [name, value] : r.headers.fields()) {
      if (!AsciiEqualsIgnoreCase(name, "transfer-encoding")) continue;
      for (char c : value) {
        if (c != ' ' && c != '\t' && c != ',') codings += static_cast<char>(std::tolower(c));
      }
    }
    FUZZ_CHECK_MSG(codings == "chunked", codings);
  }
  FUZZ_CHECK((r.version < 11) == framer.framing().http10);
}

// What the server would do with the request as a WebSocket handshake (net/websocket.h), for the
// log: a handshake it accepts is one Beast's accept takes (GET, HTTP/1.1, a 16-byte key, no
// body: nothing after it can be a body read as frames).
std::string CheckHandshake(const HttpRequest& r, bool too_large) {
  auto refusal = CheckWebSocketHandshake(r);
  if (refusal) {
    FUZZ_CHECK_MSG(refusal->status == 400 || refusal->status == 426,
                   std::to_string(refusal->status));
    FUZZ_CHECK(!refusal->message.empty());
    if (refusal->status == 426) FUZZ_CHECK(refusal->headers.Get("Sec-WebSocket-Version") == "13");
    return " ws=" + std::to_string(refusal->status);
  }
  FUZZ_CHECK(IsWebSocketUpgrade(r));
  FUZZ_CHECK(r.method == "GET");
  FUZZ_CHECK(r.version == 11);
  FUZZ_CHECK(r.body.empty() && !too_large);
  FUZZ_CHECK(!r.headers.Has("transfer-encoding"));
  auto key = Base64Decode(TrimHttpWhitespace(r.headers.Get("sec-websocket-key")));
  FUZZ_CHECK(key.has_value() && key->size() == 16);
  return " ws=ok";
}

Outcome Run(std::string_view bytes, const RequestFramer::Limits& limits, uint32_t split_seed,
            int mode) {
  Outcome out;
  RequestFramer framer(limits);
  std::string buffer;  // what has been read and not consumed, as in the session's flat_buffer
  size_t pos = 0;
  uint32_t rng = split_seed * 2654435761u + 1;
  auto read_more = [&]() -> bool {
    if (pos == bytes.size()) return false;
    size_t n;
    if (mode == 0) {
      n = bytes.size() - pos;  // everything at once
    } else if (mode == 1) {
      n = 1;  // byte by byte
    } else {
      rng = rng * 1103515245u + 12345u;
      n = 1 + (rng >> 16) % 97;
    }
    n = std::min(n, bytes.size() - pos);
    buffer.append(bytes.substr(pos, n));
    pos += n;
    return true;
  };
  framer.Begin();
  while (true) {
    size_t used = framer.Feed(buffer);
    FUZZ_CHECK(used <= buffer.size());
    buffer.erase(0, used);
    switch (framer.state()) {
      case RequestFramer::State::kNeedMore:
        if (!read_more()) {
          out.log += "eof\n";  // the peer closed: nothing more is answered
          return out;
        }
        break;
      case RequestFramer::State::kHead: {
        FUZZ_CHECK(framer.head_done());
        FUZZ_CHECK(framer.head().body.empty());
        if (framer.expects_continue()) {
          FUZZ_CHECK(!framer.framing().http10);
          FUZZ_CHECK(framer.body_follows());
          FUZZ_CHECK(framer.head().headers.Has("expect"));
          out.log += "100\n";
        }
        break;
      }
      case RequestFramer::State::kComplete:
      case RequestFramer::State::kBodyTooLarge: {
        const bool too_large = framer.state() == RequestFramer::State::kBodyTooLarge;
        HttpRequest r = framer.TakeRequest();
        CheckRequest(r, framer, limits, too_large);
        ++out.requests;
        out.log += r.method + " " + r.target + (too_large ? " too-large" : "") +
                   CheckHandshake(r, too_large) +
                   " keep=" + (framer.framing().keep_alive ? "1" : "0") +
                   " body=" + std::to_string(r.body.size()) + ":" + r.body + "\n";
        for (const auto& [name, value] : r.headers.fields()) {
          out.log += "  " + name + ": " + value + "\n";
        }
        // The session closes the connection after an oversized body or a response that
        // must close it; otherwise the next request starts right after this one.
        if (too_large || !framer.framing().keep_alive) return out;
        framer.Begin();
        break;
      }
      case RequestFramer::State::kError: {
        int status = framer.error_status();
        FUZZ_CHECK_MSG(status == 400 || status == 417 || status == 431 || status == 501,
                       std::to_string(status) + " " + framer.error_message());
        FUZZ_CHECK(!framer.error_message().empty());
        out.log += "error " + std::to_string(status) + "\n";
        return out;
      }
    }
  }
}

}  // namespace
}  // namespace steward::net

namespace {

// The last line of `log` (every line ends with '\n') and the rest before it.
std::pair<std::string, std::string> SplitLast(const std::string& log) {
  size_t nl = log.size() < 2 ? std::string::npos : log.rfind('\n', log.size() - 2);
  size_t start = nl == std::string::npos ? 0 : nl + 1;
  return {log.substr(0, start), log.substr(start)};
}

// Two runs over the same bytes read the same requests. Their ends may differ in one way only:
// once Beast has needed more bytes of a head, it waits for the blank line before parsing the
// fields again, so a malformed head without its end is refused at once when it arrives whole
// and waits when it trickles in (then the header deadline or the head limit refuses it, 431
// instead of 400). Either way it is refused, never read as a request.
void CheckSameReading(const std::string& a, const std::string& b, const char* how) {
  if (a == b) return;
  auto [a_rest, a_last] = SplitLast(a);
  auto [b_rest, b_last] = SplitLast(b);
  auto refused_or_waiting = [](const std::string& last) {
    return last == "eof\n" || last.starts_with("error ");
  };
  bool ends_ok = refused_or_waiting(a_last) && refused_or_waiting(b_last);
  FUZZ_CHECK_MSG(a_rest == b_rest && ends_ok, std::string("whole:\n") + a + how + ":\n" + b);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using steward::net::RequestFramer;
  if (size < 2) return 0;
  static constexpr size_t kBodyLimits[] = {0, 16, 1024, 3 * 1024 * 1024};
  RequestFramer::Limits limits;
  limits.max_body_bytes = kBodyLimits[data[0] & 3];
  limits.max_header_bytes = (data[0] & 4) ? 256 : 1024 * 1024;
  // A route with its own body limit, as the embedded API server's pod proxy has.
  if (data[0] & 8) {
    const size_t upload = 2 * limits.max_body_bytes + 8;
    limits.body_limit = [upload](const steward::net::HttpRequest& head) -> std::optional<size_t> {
      if (head.path.starts_with("/u")) return upload;
      return std::nullopt;
    };
  }
  const uint32_t split_seed = data[1];
  std::string_view bytes = steward::fuzz::AsView(data + 2, size - 2);

  auto whole = steward::net::Run(bytes, limits, split_seed, 0);
  // How the bytes arrive must not change what is read from them.
  auto pieces = steward::net::Run(bytes, limits, split_seed, 2);
  CheckSameReading(whole.log, pieces.log, "pieces");
  if (bytes.size() <= 2048) {
    auto single = steward::net::Run(bytes, limits, split_seed, 1);
    CheckSameReading(whole.log, single.log, "byte by byte");
  }
  return 0;
}
