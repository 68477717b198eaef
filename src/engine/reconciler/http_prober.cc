#include "engine/reconciler/http_prober.h"

#include <charconv>
#include <optional>
#include <utility>

#include "net/http.h"
#include "net/http_client.h"

namespace steward::engine {
namespace {

StatusOr<uint16_t> ParsePort(std::string_view s, const std::string& what) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || value == 0 || value > 65535) {
    return InvalidArgument(what + ": bad port \"" + std::string(s) + "\"");
  }
  return static_cast<uint16_t>(value);
}

// "host", "host:port", "[v6]", "[v6]:port".
Status SplitHostPort(std::string_view hp, const std::string& what, bool port_required,
                     std::string* host, std::optional<uint16_t>* port) {
  std::string_view rest;
  if (!hp.empty() && hp.front() == '[') {
    size_t close = hp.find(']');
    if (close == std::string_view::npos) return InvalidArgument(what + ": unclosed '['");
    *host = std::string(hp.substr(1, close - 1));
    rest = hp.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') {
      return InvalidArgument(what + ": unexpected text after ']'");
    }
  } else {
    size_t colon = hp.rfind(':');
    if (colon != std::string_view::npos && hp.find(':') != colon) {
      return InvalidArgument(what + ": an IPv6 address must be in brackets");
    }
    *host = std::string(hp.substr(0, colon));
    if (colon != std::string_view::npos) rest = hp.substr(colon);
  }
  if (host->empty()) return InvalidArgument(what + ": empty host");
  if (rest.empty()) {
    if (port_required) return InvalidArgument(what + ": missing port (want host:port)");
    return Status::Ok();
  }
  ASSIGN_OR_RETURN(uint16_t p, ParsePort(rest.substr(1), what));
  *port = p;
  return Status::Ok();
}

}  // namespace

StatusOr<ProbeTarget> ParseProbeUrl(const std::string& url) {
  const std::string what = "probe URL \"" + url + "\"";
  ProbeTarget t;
  std::string_view rest = url;
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
    t.tls = true;
  } else {
    return InvalidArgument(what + ": scheme must be http or https");
  }
  if (size_t hash = rest.find('#'); hash != std::string_view::npos) rest = rest.substr(0, hash);
  size_t slash = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, slash);
  if (authority.find('@') != std::string_view::npos) {
    return InvalidArgument(what + ": user info is not supported");
  }
  std::optional<uint16_t> port;
  RETURN_IF_ERROR(SplitHostPort(authority, what, false, &t.host, &port));
  t.port = port.value_or(t.tls ? 443 : 80);
  t.target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (t.target.front() == '?') t.target.insert(0, "/");
  return t;
}

StatusOr<std::pair<std::string, uint16_t>> ParseProbeAddress(const std::string& address) {
  std::string host;
  std::optional<uint16_t> port;
  RETURN_IF_ERROR(SplitHostPort(address, "probe address \"" + address + "\"", true, &host, &port));
  return std::make_pair(std::move(host), *port);
}

HttpProber MakeHttpProber(std::string address, std::chrono::milliseconds timeout) {
  return MakeHttpProber(HttpProberOptions{std::move(address), timeout, ""});
}

HttpProber MakeHttpProber(HttpProberOptions options) {
  return [options = std::move(options)](const std::string& host, const std::string& url) -> Status {
    const std::string& address = options.address;
    ASSIGN_OR_RETURN(ProbeTarget t, ParseProbeUrl(url));
    net::HttpClient::Options o;
    o.host = t.host;
    o.port = t.port;
    if (!address.empty()) {
      ASSIGN_OR_RETURN(auto hp, ParseProbeAddress(address));
      o.host = hp.first;
      o.port = hp.second;
    }
    o.tls = t.tls;
    o.server_name = host;  // SNI and the name the certificate must carry
    o.ca_pem = options.ca_pem;
    o.timeout = options.timeout;
    const std::string via = address.empty() ? "" : " via " + address;
    auto client = net::HttpClient::Create(o);
    net::Headers headers;
    headers.Set("Host", host);
    auto response = client->Request("GET", t.target, "", headers);
    if (!response.ok()) {
      return Status(response.error().code(),
                    "GET " + url + via + ": " + response.error().message());
    }
    const int code = response->status;
    if (code < 500 && code != 404) return Status::Ok();
    std::string why;
    if (code == 404) why = " (no ingress rule matches host " + host + ")";
    if (code == 502 || code == 503) why = " (no ready backend behind the ingress)";
    return Unavailable("GET " + url + via + ": HTTP " + std::to_string(code) + why);
  };
}

}  // namespace steward::engine
