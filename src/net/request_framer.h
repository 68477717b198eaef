// RequestFramer: the server side of HTTP/1.1 message framing (RFC 9112) without any I/O. It
// turns the bytes one connection receives into requests, one at a time: HttpServer's sessions
// feed it what they read, and the http_request fuzzer drives the same code from memory.
//
// Per request: Begin(), then Feed() the bytes received (it consumes a prefix of what it is
// given; hand it the rest again with more bytes appended) until state() is not kNeedMore:
//   kHead      the head is complete and acceptable; head() describes it, expects_continue()
//              says whether the client waits for "100 Continue". Feed() on for the body (also
//              with no bytes: a bodyless request then completes).
//   kComplete  TakeRequest() gives the request; bytes left over belong to the next request.
//   kBodyTooLarge  the body exceeds the request's body limit (known from Content-Length once
//              the head is read, or while reading a chunked body; see Limits::body_limit):
//              TakeRequest() gives the request with an empty body and
//              body_too_large set. The rest of the body is unread: the connection cannot be
//              reused.
//   kError     the request is refused: answer error_status() with error_message() and close
//              the connection; no further byte of it may be read as a request.
//
// Refused (kError): a head over max_header_bytes or with a field over Beast's 64 KiB field
// limit, a trailer field over that limit, and a chunk-size line or trailer section longer
// than max_header_bytes (431); malformed syntax, obs-fold (a field line
// starting with SP or HTAB), no Host in an HTTP/1.1 request, a Host value that is not
// uri-host[:port] (ValidHostValue), more than one Host or Authorization field (400);
// Transfer-Encoding whose final coding is not chunked, with Content-Length, in an HTTP/1.0 request,
// or with chunked applied twice (400); any coding besides chunked (501); differing Content-Length
// values (400); an Expect other than 100-continue (417). No exception leaves Feed().
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "net/http.h"

namespace steward::net {

// RFC 9110 §7.2 / RFC 3986 §3.2.2: a Host field value is empty, or uri-host [":" port]: a
// reg-name (unreserved, pct-encoded and sub-delims characters; an IPv4 address is one), or an
// IP-literal "[" IPv6address / IPvFuture "]"; the port, when there is a ':', only digits (maybe
// none). Whitespace, '@', '/', '?', '#', control characters and a second ':' are not.
bool ValidHostValue(std::string_view value);

class RequestFramer {
 public:
  struct Limits {
    // The body limit of a request for which body_limit is unset or answers nullopt.
    size_t max_body_bytes = 3 * 1024 * 1024;
    size_t max_header_bytes = 1024 * 1024;  // Go's default, kept by the Kubernetes API server
    // Decides one request's body limit from its accepted head (the request without its body),
    // before a body byte is read: a route that takes uploads may allow more than the rest. Must
    // not throw.
    std::function<std::optional<size_t>(const HttpRequest& head)> body_limit;
  };
  enum class State { kNeedMore, kHead, kComplete, kBodyTooLarge, kError };

  // What the response to a request must respect, fixed when its head is read.
  struct Framing {
    bool head_method = false;  // HEAD: no body in the response
    bool http10 = false;
    bool keep_alive = true;  // the request allows reuse of the connection
  };

  explicit RequestFramer(Limits limits);
  ~RequestFramer();
  RequestFramer(const RequestFramer&) = delete;
  RequestFramer& operator=(const RequestFramer&) = delete;

  // Copied into every request's remote_address and tls.
  void SetPeer(std::string remote_address, bool tls);
  // Starts the next request (discarding any unfinished one).
  void Begin();
  // Parses a prefix of `data` and returns its length. Call only in kNeedMore or kHead.
  size_t Feed(std::string_view data);

  State state() const { return state_; }
  bool head_done() const { return head_done_; }
  // Valid from kHead on: the request without its body.
  const HttpRequest& head() const { return request_; }
  const Framing& framing() const { return framing_; }
  // The head asked for "100 Continue" (HTTP/1.1, Expect: 100-continue) and a body follows.
  bool expects_continue() const { return expects_continue_; }
  // In kHead: body bytes are still to be read.
  bool body_follows() const;
  // In kComplete or kBodyTooLarge; framing() stays valid; Begin() starts the next request.
  HttpRequest TakeRequest();
  // In kError.
  int error_status() const { return error_status_; }
  const std::string& error_message() const { return error_message_; }

 private:
  struct Parser;

  size_t FeedOnce(std::string_view data);
  void Fail(int status, std::string message);
  // Checks the head once Beast has read it; false when refused (state_ is then kError).
  bool AcceptHead();
  // Scans head bytes Beast consumed (in order); true at a line starting with SP or HTAB.
  bool FoldedLine(std::string_view head_bytes);
  void BuildHead();

  const Limits limits_;
  std::unique_ptr<Parser> parser_;
  State state_ = State::kNeedMore;
  bool head_done_ = false;
  bool expects_continue_ = false;
  bool too_large_ = false;
  size_t head_bytes_ = 0;        // of the head, taken by Beast so far
  bool after_line_end_ = false;  // the last head byte taken was LF
  HttpRequest request_;
  Framing framing_;
  std::string remote_address_;
  bool tls_ = false;
  int error_status_ = 0;
  std::string error_message_;
};

}  // namespace steward::net
