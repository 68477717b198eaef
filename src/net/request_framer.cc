#include "net/request_framer.h"

#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <exception>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

#include "common/ascii.h"

namespace steward::net {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using boost::system::error_code;

// The non-empty members of a comma-separated list (RFC 9110 §5.6.1), without surrounding
// whitespace, appended to `out`.
void AppendListMembers(std::string_view value, std::vector<std::string_view>* out) {
  while (true) {
    size_t comma = value.find(',');
    std::string_view item = value.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (!item.empty()) out->push_back(item);
    if (comma == std::string_view::npos) return;
    value.remove_prefix(comma + 1);
  }
}

}  // namespace

struct RequestFramer::Parser {
  http::request_parser<http::string_body> p;
  // A chunked body's size as its chunk headers declare it, the request's body limit (set once
  // its head is read) and the callback that holds the one to the other.
  uint64_t declared = 0;
  uint64_t limit = 0;
  std::function<void(uint64_t, std::string_view, boost::system::error_code&)> on_chunk;
};

RequestFramer::RequestFramer(Limits limits) : limits_(limits) { Begin(); }

RequestFramer::~RequestFramer() = default;

void RequestFramer::SetPeer(std::string remote_address, bool tls) {
  remote_address_ = std::move(remote_address);
  tls_ = tls;
}

bool RequestFramer::body_follows() const {
  return head_done_ && parser_ != nullptr && !parser_->p.is_done();
}

void RequestFramer::Begin() {
  parser_ = std::make_unique<Parser>();
  // The body limit depends on the request (Limits::body_limit), so Beast holds none: a
  // Content-Length is compared with the request's limit once the head is read (Beast reserves
  // the body only on the next put, never in the call that ends the head), and a chunked body
  // by the sizes its chunk headers declare. (Beast's limit is the largest value rather than
  // none until the head is read: it compares a Content-Length with an absent limit as over it.)
  // Beast's own chunked accounting would not do either: it subtracts a chunk's size from its limit
  // before it parses the chunk's extensions, and again each time it re-parses a header whose quoted
  // extension has not arrived whole, so a body within the limit was refused (too large) or not
  // depending on how its bytes arrived (found by the http_request fuzzer). The callback runs once
  // per header, after its extensions parsed.
  parser_->p.body_limit(std::numeric_limits<std::uint64_t>::max());
  Parser* parser = parser_.get();
  // Beast keeps a reference to the callback: it lives in the Parser.
  parser->on_chunk = [parser](uint64_t size, std::string_view, boost::system::error_code& ec) {
    parser->declared += size;
    if (parser->declared > parser->limit) ec = http::error::body_limit;
  };
  parser->p.on_chunk_header(parser->on_chunk);
  // The head limit is enforced in FeedOnce; Beast's own, being split-dependent, stays out of
  // the way.
  parser_->p.header_limit(static_cast<uint32_t>(
      std::min<size_t>(2 * limits_.max_header_bytes + 1024, std::numeric_limits<uint32_t>::max())));
  state_ = State::kNeedMore;
  head_done_ = false;
  head_bytes_ = 0;
  after_line_end_ = false;
  expects_continue_ = false;
  too_large_ = false;
  request_ = HttpRequest();
  framing_ = Framing();
  error_status_ = 0;
  error_message_.clear();
}

void RequestFramer::Fail(int status, std::string message) {
  state_ = State::kError;
  error_status_ = status;
  error_message_ = std::move(message);
  parser_.reset();
}

size_t RequestFramer::Feed(std::string_view data) {
  size_t total = 0;
  while (true) {
    size_t used = FeedOnce(data.substr(total));
    total += used;
    // Beast takes one piece (the start line, a chunk) per call: go on while it progresses.
    if (state_ != State::kNeedMore || used == 0 || total == data.size()) return total;
  }
}

size_t RequestFramer::FeedOnce(std::string_view data) {
  if (state_ == State::kHead) state_ = State::kNeedMore;
  if (state_ != State::kNeedMore || parser_ == nullptr) return 0;
  auto& p = parser_->p;
  if (head_done_ && p.is_done()) {
    state_ = State::kComplete;
    return 0;
  }
  // Boost 1.74's chunk parser asserts that it is given at least 5 bytes once it has seen the
  // last chunk (Beast fixed the assertion in 2024, PR #2861); the rest of a chunked body is
  // never shorter than that ("0\r\n\r\n"), so fewer bytes wait for more (found by the
  // http_request fuzzer: "0\r\n" and then " ").
  if (head_done_ && p.chunked() && data.size() < 5) return 0;
  // Beast measures its header limit against the start line and the fields separately and
  // against what it has been given, so the limit it enforces depends on how the bytes arrive
  // (found by the http_request fuzzer). The head is held to the limit here: Beast never sees
  // more of it than the limit allows.
  const size_t allowance = head_done_ ? data.size() : limits_.max_header_bytes - head_bytes_;
  const bool capped = !head_done_ && data.size() >= allowance;
  if (capped) data = data.substr(0, allowance);
  error_code ec;
  size_t used = 0;
  // Beast throws for a field name or value over its 64 KiB field limit (length_error) and
  // the body may fail to allocate: nothing may escape into the I/O loop.
  try {
    used = p.put(boost::asio::const_buffer(data.data(), data.size()), ec);
  } catch (const std::length_error& e) {
    // Beast's field container throws it for a field over 64 KiB; after the head, that is a
    // trailer field, refused as the same field in the head is (it was a 500).
    Fail(431, std::string(head_done_ ? "request trailer fields too large: "
                                     : "request header fields too large: ") +
                  e.what());
    return 0;
  } catch (const std::exception& e) {
    Fail(head_done_ ? 500 : 400, std::string("cannot read the request: ") + e.what());
    return 0;
  }
  if (!head_done_) {
    head_bytes_ += used;
    // RFC 9112 §5.2: Beast joins an obs-fold line to the field before it; it is refused instead
    // (as is whitespace before the first field, §2.2). Beast consumes the head only in whole
    // lines, never a byte past its blank line.
    if (FoldedLine(data.substr(0, used))) {
      Fail(400, "obsolete line folding in the request head");
      return used;
    }
    if (ec == http::error::header_limit ||
        (capped && !p.is_header_done() && (!ec || ec == http::error::need_more))) {
      Fail(431, "request header fields too large");
      return used;
    }
    if (ec && ec != http::error::need_more) {
      Fail(400, "malformed HTTP request: " + ec.message());
      return used;
    }
    if (!p.is_header_done()) return used;
    head_done_ = true;
    if (p.chunked()) p.body_limit(boost::none);  // held by the chunk header callback instead
    if (!AcceptHead()) return used;
    BuildHead();
    const std::optional<size_t> limit =
        limits_.body_limit ? limits_.body_limit(request_) : std::nullopt;
    parser_->limit = limit.value_or(limits_.max_body_bytes);
    if (!p.chunked() && p.content_length().value_or(0) > parser_->limit) {
      // The body stays unread: the connection cannot be reused.
      too_large_ = true;
      request_.body_too_large = true;
      framing_.keep_alive = false;
      expects_continue_ = false;
      state_ = State::kBodyTooLarge;
      return used;
    }
    state_ = State::kHead;
    return used;
  }
  if (ec == http::error::body_limit) {
    too_large_ = true;
    request_.body_too_large = true;
    framing_.keep_alive = false;
    state_ = State::kBodyTooLarge;
    return used;
  }
  // Beast reads a chunk-size line (with its extensions) and the trailer section only whole,
  // holding them with no limit of its own: one that never ends grew the connection's buffer
  // until the read timeout. Neither may be larger than a head.
  if (used == 0 && ec == http::error::need_more && p.chunked() &&
      data.size() > limits_.max_header_bytes) {
    Fail(431, "chunk line or trailer section over the head limit");
    return 0;
  }
  if (ec && ec != http::error::need_more) {
    Fail(400, "malformed HTTP request body: " + ec.message());
    return used;
  }
  if (p.is_done()) state_ = State::kComplete;
  return used;
}

bool RequestFramer::FoldedLine(std::string_view head_bytes) {
  for (char c : head_bytes) {
    if (after_line_end_ && (c == ' ' || c == '\t')) return true;
    after_line_end_ = c == '\n';
  }
  return false;
}

namespace {

bool Hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool Unreserved(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}
bool SubDelim(char c) { return std::string_view("!$&'()*+,;=").find(c) != std::string_view::npos; }
bool Digits(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// reg-name = *( unreserved / pct-encoded / sub-delims )
bool RegName(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (Unreserved(s[i]) || SubDelim(s[i])) continue;
    if (s[i] == '%' && i + 2 < s.size() && Hex(s[i + 1]) && Hex(s[i + 2])) {
      i += 2;
      continue;
    }
    return false;
  }
  return true;
}

// The inside of an IP-literal: IPv6address (hex digits, ':' and '.' for an embedded IPv4, at
// least one ':') or IPvFuture ("v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )).
bool IpLiteral(std::string_view s) {
  if (s.empty()) return false;
  if (s[0] == 'v' || s[0] == 'V') {
    size_t dot = s.find('.');
    if (dot == std::string_view::npos || dot < 2 || dot + 1 == s.size()) return false;
    for (size_t i = 1; i < dot; ++i) {
      if (!Hex(s[i])) return false;
    }
    for (char c : s.substr(dot + 1)) {
      if (!Unreserved(c) && !SubDelim(c) && c != ':') return false;
    }
    return true;
  }
  if (s.find(':') == std::string_view::npos) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return Hex(c) || c == ':' || c == '.'; });
}

}  // namespace

bool ValidHostValue(std::string_view value) {
  if (value.empty()) return true;
  std::string_view host = value, port;
  if (value[0] == '[') {
    const size_t close = value.find(']');
    if (close == std::string_view::npos || !IpLiteral(value.substr(1, close - 1))) return false;
    std::string_view rest = value.substr(close + 1);
    if (rest.empty()) return true;
    return rest[0] == ':' && Digits(rest.substr(1));
  }
  if (const size_t colon = value.find(':'); colon != std::string_view::npos) {
    host = value.substr(0, colon);
    port = value.substr(colon + 1);
    if (!Digits(port)) return false;  // a second ':' is no digit either
  }
  return RegName(host);
}

bool RequestFramer::AcceptHead() {
  const auto& msg = parser_->p.get();
  const bool http10 = msg.version() < 11;
  std::vector<std::string_view> codings, lengths, expectations;
  bool has_te = false, has_cl = false;
  int hosts = 0, authorizations = 0;
  bool bad_host = false;
  for (const auto& field : msg) {
    std::string_view name(field.name_string().data(), field.name_string().size());
    std::string_view value(field.value().data(), field.value().size());
    if (AsciiEqualsIgnoreCase(name, "host")) {
      ++hosts;
      bad_host = bad_host || !ValidHostValue(value);
    } else if (AsciiEqualsIgnoreCase(name, "authorization")) {
      ++authorizations;
    } else if (AsciiEqualsIgnoreCase(name, "transfer-encoding")) {
      has_te = true;
      AppendListMembers(value, &codings);
    } else if (AsciiEqualsIgnoreCase(name, "content-length")) {
      has_cl = true;
      AppendListMembers(value, &lengths);
    } else if (AsciiEqualsIgnoreCase(name, "expect")) {
      AppendListMembers(value, &expectations);
    }
  }
  // RFC 9112 §3.2: exactly one Host in an HTTP/1.1 request, at most one in any. Of two
  // credentials, one part of the stack could check one and another act on the other.
  if (hosts > 1) {
    Fail(400, "more than one Host field");
    return false;
  }
  if (hosts == 0 && !http10) {
    Fail(400, "an HTTP/1.1 request without a Host field");
    return false;
  }
  if (authorizations > 1) {
    Fail(400, "more than one Authorization field");
    return false;
  }
  if (bad_host) {  // RFC 9112 §3.2: an invalid Host field value is answered 400
    Fail(400, "a Host field value that is not host[:port]");
    return false;
  }
  // RFC 9112 §6.1, §6.3: a length the server could read differently from a proxy in front of
  // it is refused, and the connection closed, so no byte of it can run as another request.
  if (has_te) {
    if (http10) {
      Fail(400, "Transfer-Encoding in an HTTP/1.0 request");
      return false;
    }
    if (has_cl) {
      Fail(400, "both Transfer-Encoding and Content-Length");
      return false;
    }
    if (codings.empty() || !AsciiEqualsIgnoreCase(codings.back(), "chunked")) {
      Fail(400, "the final transfer coding is not chunked");
      return false;
    }
    for (size_t i = 0; i + 1 < codings.size(); ++i) {
      if (AsciiEqualsIgnoreCase(codings[i], "chunked")) {
        Fail(400, "chunked applied more than once");
        return false;
      }
      Fail(501, "unsupported transfer coding \"" + std::string(codings[i].substr(0, 64)) + "\"");
      return false;
    }
  }
  // Beast already refuses differing values; this also covers a field it let through.
  for (std::string_view l : lengths) {
    if (l != lengths.front()) {
      Fail(400, "differing Content-Length values");
      return false;
    }
  }
  // HTTP/1.0 clients know no expectations; an HTTP/1.0 Expect is ignored (RFC 9110 §10.1.1).
  if (!http10 && (!expectations.empty() || msg.find(http::field::expect) != msg.end())) {
    for (std::string_view e : expectations) {
      if (!AsciiEqualsIgnoreCase(e, "100-continue")) {
        Fail(417, "unsupported expectation \"" + std::string(e.substr(0, 64)) + "\"");
        return false;
      }
    }
    if (expectations.empty()) {
      Fail(417, "empty expectation");
      return false;
    }
    expects_continue_ = !too_large_ && !parser_->p.is_done();
  }
  return true;
}

void RequestFramer::BuildHead() {
  const auto& msg = parser_->p.get();
  request_.method = std::string(msg.method_string());
  request_.target = std::string(msg.target());
  request_.version = static_cast<int>(msg.version());
  ParseTarget(request_.target, &request_.path, &request_.query);
  for (const auto& field : msg) {
    request_.headers.Add(std::string(field.name_string()), std::string(field.value()));
  }
  request_.body_too_large = too_large_;
  request_.remote_address = remote_address_;
  request_.tls = tls_;
  framing_.head_method = msg.method() == http::verb::head;
  framing_.http10 = msg.version() < 11;
  // The rest of an oversized body is still on the wire: the connection cannot be reused.
  framing_.keep_alive = msg.keep_alive() && !too_large_;
}

HttpRequest RequestFramer::TakeRequest() {
  HttpRequest out = std::move(request_);
  if (state_ == State::kComplete && parser_ != nullptr)
    out.body = std::move(parser_->p.get().body());
  parser_.reset();  // Feed() reads nothing more until Begin()
  return out;
}

}  // namespace steward::net
