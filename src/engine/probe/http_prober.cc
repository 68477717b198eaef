#include "engine/probe/http_prober.h"

#include <utility>

#include "common/host_port.h"
#include "net/http.h"
#include "net/http_client.h"

namespace steward::engine {
namespace {

// "host", "host:port", "[v6]", "[v6]:port" (`port_optional`: a URL's authority) or only the
// forms with a port (a probe address); port 0 is refused. Errors name `what`.
StatusOr<HostPort> ParseProbeHostPort(std::string_view text, const std::string& what,
                                      bool port_optional) {
  auto hp = ParseHostPort(text, {.port_optional = port_optional});
  if (!hp.ok()) return InvalidArgument(what + ": " + hp.error().message());
  return hp;
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
  ASSIGN_OR_RETURN(HostPort hp, ParseProbeHostPort(authority, what, /*port_optional=*/true));
  t.host = std::move(hp.host);
  t.port = hp.port.value_or(t.tls ? 443 : 80);
  t.target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (t.target.front() == '?') t.target.insert(0, "/");
  return t;
}

StatusOr<std::pair<std::string, uint16_t>> ParseProbeAddress(const std::string& address) {
  ASSIGN_OR_RETURN(HostPort hp, ParseProbeHostPort(address, "probe address \"" + address + "\"",
                                                   /*port_optional=*/false));
  return std::make_pair(std::move(hp.host), *hp.port);
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
