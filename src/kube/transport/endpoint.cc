#include "kube/transport/endpoint.h"

#include <arpa/inet.h>

#include <array>
#include <cstdlib>
#include <cstring>

#include "common/ascii.h"
#include "common/base64.h"
#include "common/host_port.h"
#include "net/http.h"

namespace steward::kube {
namespace {

// An IP address in binary form: family and 4 or 16 bytes.
struct Ip {
  int family = 0;
  std::array<unsigned char, 16> bytes{};
  size_t size() const { return family == AF_INET ? 4 : 16; }
  bool operator==(const Ip&) const = default;
};

std::optional<Ip> ParseIp(std::string_view text) {
  std::string s(text);
  Ip ip;
  if (inet_pton(AF_INET, s.c_str(), ip.bytes.data()) == 1) {
    ip.family = AF_INET;
    return ip;
  }
  if (inet_pton(AF_INET6, s.c_str(), ip.bytes.data()) == 1) {
    ip.family = AF_INET6;
    return ip;
  }
  return std::nullopt;
}

bool IsLoopback(const Ip& ip) {
  if (ip.family == AF_INET) return ip.bytes[0] == 127;
  static const std::array<unsigned char, 16> kV6Loopback = {0, 0, 0, 0, 0, 0, 0, 0,
                                                            0, 0, 0, 0, 0, 0, 0, 1};
  return ip.bytes == kV6Loopback;
}

bool InCidr(const Ip& ip, const Ip& net, int prefix) {
  if (ip.family != net.family) return false;
  for (size_t i = 0; i < ip.size() && prefix > 0; ++i, prefix -= 8) {
    int bits = prefix >= 8 ? 8 : prefix;
    auto mask = static_cast<unsigned char>(0xFF << (8 - bits));
    if ((ip.bytes[i] & mask) != (net.bytes[i] & mask)) return false;
  }
  return true;
}

// The authority of a URL or a no_proxy entry, as Go's net/url and httpproxy split them: "host",
// "host:port", "[v6]", "[v6]:port", a bare IPv6 address (no port), and "host:" (no port). The
// host is not yet checked for being non-empty, and the port text not at all.
std::optional<HostPortText> SplitAuthority(std::string_view s) {
  auto parts = SplitHostPortText(s, /*bare_ipv6=*/true);
  if (!parts.ok()) return std::nullopt;
  if (parts->port && parts->port->empty()) parts->port.reset();
  return *parts;
}

bool MatchesEntry(std::string_view entry, const ServerUrl& server, const std::optional<Ip>& ip) {
  if (entry == "*") return true;
  if (size_t slash = entry.find('/'); slash != std::string_view::npos) {
    auto net = ParseIp(entry.substr(0, slash));
    auto bits = entry.substr(slash + 1);
    char* end = nullptr;
    std::string bits_text(bits);
    long prefix = std::strtol(bits_text.c_str(), &end, 10);
    if (!net || bits.empty() || *end != '\0' || prefix < 0 ||
        prefix > static_cast<long>(net->size() * 8)) {
      return false;  // unparsable entries are ignored, as Go does
    }
    return ip && InCidr(*ip, *net, static_cast<int>(prefix));
  }
  auto hp = SplitAuthority(entry);
  if (!hp || hp->host.empty()) return false;
  if (hp->port) {
    auto port = ParsePort(*hp->port);
    if (!port || *port != server.port) return false;
  }
  if (auto entry_ip = ParseIp(hp->host)) return ip && *ip == *entry_ip;
  std::string suffix(hp->host);
  if (suffix.rfind("*.", 0) == 0) suffix.erase(0, 1);
  bool match_host = suffix.front() != '.';
  if (match_host) suffix.insert(0, ".");
  const std::string& host = server.host;
  if (match_host && host == std::string_view(suffix).substr(1)) return true;
  return host.size() > suffix.size() &&
         host.compare(host.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::optional<std::string> FirstSet(const EnvLookup& env, const char* upper, const char* lower,
                                    std::string* which) {
  for (const char* name : {upper, lower}) {
    auto v = env(name);
    if (v && !v->empty()) {
      *which = name;
      return v;
    }
  }
  return std::nullopt;
}

}  // namespace

std::string ServerUrl::Authority() const { return JoinHostPort(host, port); }

std::string ServerUrl::HostHeader() const {
  if (port == (tls ? 443 : 80)) {
    return host.find(':') != std::string::npos ? "[" + host + "]" : host;
  }
  return Authority();
}

std::string ServerUrl::ToString() const {
  return std::string(tls ? "https://" : "http://") + Authority() + path_prefix;
}

StatusOr<ServerUrl> ParseServerUrl(std::string_view url) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("server URL \"" + std::string(url) + "\": " + why);
  };
  size_t sep = url.find("://");
  if (sep == std::string_view::npos) return bad("missing scheme (expected https://host[:port])");
  std::string scheme = AsciiLower(url.substr(0, sep));
  ServerUrl out;
  if (scheme == "https") {
    out.tls = true;
  } else if (scheme == "http") {
    out.tls = false;
  } else {
    return bad("unsupported scheme \"" + scheme + "\" (expected https or http)");
  }
  std::string_view rest = url.substr(sep + 3);
  size_t path_start = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, path_start);
  std::string_view path =
      path_start == std::string_view::npos ? std::string_view() : rest.substr(path_start);
  if (path.find_first_of("?#") != std::string_view::npos) {
    return bad("a query or fragment is not allowed");
  }
  if (authority.find('@') != std::string_view::npos) return bad("user info is not allowed");
  auto hp = SplitAuthority(authority);
  if (!hp || hp->host.empty()) return bad("missing or malformed host");
  out.host = AsciiLower(hp->host);
  out.port = out.tls ? 443 : 80;
  if (hp->port) {
    auto port = ParsePort(*hp->port);
    if (!port) return bad("bad port \"" + std::string(*hp->port) + "\"");
    out.port = *port;
  }
  auto ip = ParseIp(out.host);
  if (hp->bracketed && (!ip || ip->family != AF_INET6)) return bad("bad IPv6 address");
  if (!hp->bracketed && out.host.find(':') != std::string::npos) return bad("bad host");
  out.host_is_ip = ip.has_value();
  std::string prefix(path);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  out.path_prefix = prefix;
  return out;
}

std::string ProxyUrl::Authority() const { return JoinHostPort(host, port); }

StatusOr<ProxyUrl> ParseProxyUrl(std::string_view url) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("proxy URL \"" + std::string(url) + "\": " + why);
  };
  std::string_view rest = url;
  if (size_t sep = url.find("://"); sep != std::string_view::npos) {
    std::string scheme = AsciiLower(url.substr(0, sep));
    if (scheme != "http") {
      return bad("unsupported scheme \"" + scheme + "\" (only http:// proxies are supported)");
    }
    rest = url.substr(sep + 3);
  }
  std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  ProxyUrl out;
  if (size_t at = authority.rfind('@'); at != std::string_view::npos) {
    std::string userinfo = net::PercentDecode(authority.substr(0, at));
    out.authorization = "Basic " + Base64Encode(userinfo);
    authority = authority.substr(at + 1);
  }
  auto hp = SplitAuthority(authority);
  if (!hp || hp->host.empty()) return bad("missing or malformed host");
  out.host = AsciiLower(hp->host);
  if (hp->port) {
    auto port = ParsePort(*hp->port);
    if (!port) return bad("bad port \"" + std::string(*hp->port) + "\"");
    out.port = *port;
  }
  return out;
}

bool NoProxyMatches(std::string_view no_proxy, const ServerUrl& server) {
  auto ip = ParseIp(server.host);
  while (!no_proxy.empty()) {
    size_t comma = no_proxy.find(',');
    std::string entry = AsciiLower(TrimHttpWhitespace(no_proxy.substr(0, comma)));
    no_proxy = comma == std::string_view::npos ? std::string_view() : no_proxy.substr(comma + 1);
    if (!entry.empty() && MatchesEntry(entry, server, ip)) return true;
  }
  return false;
}

EnvLookup ProcessEnv() {
  return [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read-only use
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

StatusOr<std::optional<ProxyUrl>> SelectProxy(const ServerUrl& server,
                                              std::string_view explicit_proxy,
                                              const EnvLookup& env) {
  if (!explicit_proxy.empty()) {
    ASSIGN_OR_RETURN(ProxyUrl proxy, ParseProxyUrl(explicit_proxy));
    return std::optional<ProxyUrl>(std::move(proxy));
  }
  std::string which;
  auto value = server.tls ? FirstSet(env, "HTTPS_PROXY", "https_proxy", &which)
                          : FirstSet(env, "HTTP_PROXY", "http_proxy", &which);
  if (!value) return std::optional<ProxyUrl>();
  if (server.host == "localhost") return std::optional<ProxyUrl>();
  if (auto ip = ParseIp(server.host); ip && IsLoopback(*ip)) return std::optional<ProxyUrl>();
  std::string no_proxy_var;
  if (auto no_proxy = FirstSet(env, "NO_PROXY", "no_proxy", &no_proxy_var)) {
    if (NoProxyMatches(*no_proxy, server)) return std::optional<ProxyUrl>();
  }
  auto proxy = ParseProxyUrl(*value);
  if (!proxy.ok()) {
    return InvalidArgument("environment variable " + which + ": " + proxy.error().message());
  }
  return std::optional<ProxyUrl>(std::move(proxy).value());
}

}  // namespace steward::kube
