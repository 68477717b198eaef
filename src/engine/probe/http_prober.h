// HttpProber: how the engine asks whether a project's URL answers (through the ingress) before it
// calls the project Running (config.httpProbe); MakeHttpProber: one over HTTP/1.1.
//
// A probe of (host, url) sends `GET <url's path and query>` with `Host: <host>` and answers
// OK when the response status is below 500 and not 404: the ingress in front of the project
// answers 404 when no rule matches the host yet and 503 (or 502) while the backend has no
// ready endpoint; anything else means a Node-RED instance answered. Every other status is
// kUnavailable with a message naming the URL, the address and the status ("HTTP 404"); a
// connection error or timeout keeps the client's code (kUnavailable / kDeadlineExceeded) with
// the URL and address added; a URL that is not http(s)://authority[/path] is kInvalidArgument.
//
// Where it connects: `address` ("host:port", "[v6]:port") when non-empty — e.g. the ingress
// controller's Service — else the URL's own host and port (default 80 / 443). An https URL is
// probed over TLS to that address with SNI and certificate verification for `host`, trusting
// the system's root certificates, or only `ca_pem` when given (no insecure mode).
//
// Each call opens its own connection (HttpClient is not thread-safe; the engine probes from
// several workers at once) and is bounded by `timeout`. The returned function is thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <utility>

#include "common/status.h"

namespace steward::engine {

// OK when the project answers at `url` (sent with Host: `host`). Must be thread-safe.
using HttpProber = std::function<Status(const std::string& host, const std::string& url)>;

HttpProber MakeHttpProber(std::string address, std::chrono::milliseconds timeout);

struct HttpProberOptions {
  std::string address;  // "host:port"; "" = the URL's host and port
  std::chrono::milliseconds timeout{2000};
  std::string ca_pem;  // https trust anchors; "" = the system's roots
};
HttpProber MakeHttpProber(HttpProberOptions options);

// The parts of a probe URL; exposed for tests.
struct ProbeTarget {
  bool tls = false;
  std::string host;  // without brackets for IPv6
  uint16_t port = 0;
  std::string target;  // path and query, at least "/"; no fragment
};
// Parses "http(s)://authority[/path][?query][#fragment]" (kInvalidArgument naming the URL and
// the problem: scheme, empty host, bad port, user info).
StatusOr<ProbeTarget> ParseProbeUrl(const std::string& url);
// Parses "host:port" or "[v6]:port" (kInvalidArgument naming the address).
StatusOr<std::pair<std::string, uint16_t>> ParseProbeAddress(const std::string& address);

}  // namespace steward::engine
