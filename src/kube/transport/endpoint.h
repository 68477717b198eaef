// Endpoint: where the transport connects — the API server from RestConfig::server, and the
// HTTP proxy to tunnel through (RestConfig::proxy_url, else HTTPS_PROXY / NO_PROXY from the
// environment, with Go's net/http rules). Pure functions over strings; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace steward::kube {

struct ServerUrl {
  bool tls = true;          // https (true) or http
  std::string host;         // without brackets for IPv6: "10.0.0.1", "::1", "api.example.com"
  uint16_t port = 443;      // explicit, else 443 / 80
  std::string path_prefix;  // "" or "/prefix" (no trailing '/')
  bool host_is_ip = false;
  // "host:port" as used in messages and CONNECT ("[::1]:6443").
  std::string Authority() const;
  // The Host header: the authority without the scheme's default port.
  std::string HostHeader() const;
  // "https://host:port/prefix", for messages.
  std::string ToString() const;
};

// Parses an API server URL: scheme http or https, a host, an optional port and path prefix. No
// user info, query or fragment. Fails with kInvalidArgument naming the URL and the problem.
StatusOr<ServerUrl> ParseServerUrl(std::string_view url);

struct ProxyUrl {
  std::string host;
  uint16_t port = 80;
  // "Basic <base64(user:password)>" when the URL carries user info, else "".
  std::string authorization;
  std::string Authority() const;
};

// Parses a proxy URL: "http://[user[:password]@]host[:port]" (a missing scheme means http).
// https and socks5 proxies are not supported: kInvalidArgument naming the URL.
StatusOr<ProxyUrl> ParseProxyUrl(std::string_view url);

// True when NO_PROXY-style `no_proxy` (comma-separated: "*", IP addresses, CIDR blocks, domain
// names matching themselves and their subdomains, ".domain" matching subdomains only, each
// optionally with ":port") excludes `server` from proxying.
bool NoProxyMatches(std::string_view no_proxy, const ServerUrl& server);

// Reads an environment variable; returns nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const char*)>;
EnvLookup ProcessEnv();

// The proxy to reach `server` through, or nullopt for a direct connection:
//  - `explicit_proxy` (the kubeconfig's proxy-url) when not empty, for every host;
//  - else HTTPS_PROXY / https_proxy (HTTP_PROXY / http_proxy for an http server), unless
//    NO_PROXY / no_proxy matches or the host is localhost or a loopback address (as Go's
//    http.ProxyFromEnvironment, which client-go uses).
// Fails with kInvalidArgument naming the variable when a proxy URL is unusable.
StatusOr<std::optional<ProxyUrl>> SelectProxy(const ServerUrl& server,
                                              std::string_view explicit_proxy,
                                              const EnvLookup& env);

}  // namespace steward::kube
