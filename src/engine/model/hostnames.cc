// Project hostnames and the hostname policy (ProjectHostnames, CheckCustomHostnamePolicy and
// IsInetAtonAddress in project.h): which hosts a project answers on, and which of them a spec
// may not ask for — IP addresses in any form, the platform's own hosts and the names reserved
// for other projects.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

#include "common/ascii.h"
#include "engine/model/project.h"
#include "engine/model/value_rules.h"

namespace steward::engine {
namespace {

bool UnderDomain(std::string_view host, std::string_view domain) {
  return host == domain || (host.size() > domain.size() && host.ends_with(domain) &&
                            host[host.size() - domain.size() - 1] == '.');
}

// <label>.<domain>: the shape of a project's generated host.
bool IsProjectHostShape(std::string_view host, std::string_view domain) {
  return host != domain && UnderDomain(host, domain) &&
         host.find('.') == host.size() - domain.size() - 1;
}

// The host of an http(s) URL (the config's forgeUrl): after "://" and any "user@", up to the
// port, path, query or fragment (an IPv6 literal keeps its brackets); lower case, without a
// final dot.
std::string UrlHost(std::string_view url) {
  size_t start = url.find("://");
  if (start == std::string_view::npos) return "";
  url.remove_prefix(start + 3);
  url = url.substr(0, url.find_first_of("/?#"));
  if (size_t at = url.rfind('@'); at != std::string_view::npos) url.remove_prefix(at + 1);
  std::string_view host =
      url.starts_with('[') ? url.substr(0, url.find(']') + 1) : url.substr(0, url.find(':'));
  if (host.ends_with('.')) host.remove_suffix(1);
  return AsciiLower(host);
}

int DigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// One part of an inet_aton address, as strtoul(s, &end, 0) reads it whole: decimal, octal after
// a leading 0, hex after 0x; nullopt when it is not one or is over 2^32 - 1.
std::optional<uint64_t> InetAtonPart(std::string_view s) {
  if (s.empty() || DigitValue(s[0]) < 0 || DigitValue(s[0]) > 9) return std::nullopt;
  int base = 10;
  if (s.size() > 1 && s[0] == '0') {
    base = s[1] == 'x' || s[1] == 'X' ? 16 : 8;
    s.remove_prefix(base == 16 ? 2 : 1);
    if (s.empty()) return std::nullopt;  // "0x": strtoul stops at the x
  }
  uint64_t value = 0;
  for (char c : s) {
    const int d = DigitValue(c);
    if (d < 0 || d >= base) return std::nullopt;
    value = value * base + d;
    if (value > 0xffffffffu) return std::nullopt;
  }
  return value;
}

// The last label of a host that has a dot (every hostname a spec may carry has one).
std::string_view LastLabel(std::string_view host) { return host.substr(host.rfind('.') + 1); }

// All digits, or 0x and hex digits: what the WHATWG URL standard's "ends in a number" reads as
// an IPv4 address, which browsers then refuse (a.123) or take as one (1.2.3.0x4).
bool IsNumericLabel(std::string_view label) {
  if (label.starts_with("0x") || label.starts_with("0X")) {
    return std::all_of(label.begin() + 2, label.end(), [](char c) { return DigitValue(c) >= 0; });
  }
  return !label.empty() &&
         std::all_of(label.begin(), label.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Kubernetes refuses an IP address as an Ingress host (networking validation: "must be a DNS
// name, not an IP address"); it takes only the dotted-quad form for one, so Steward refuses
// every form a resolver or browser would read as an address too.
Status CheckDnsName(const std::string& host, std::string_view path) {
  if (host.starts_with('[') || host.find(':') != std::string::npos) {
    return InvalidField(path, QuoteShort(host) + " is an IPv6 address, not a DNS name");
  }
  if (IsInetAtonAddress(host)) {
    return InvalidField(path, QuoteShort(host) +
                                  " is an IPv4 address (as inet_aton and browsers read it), not a "
                                  "DNS name: an Ingress host must be a DNS name");
  }
  if (IsNumericLabel(LastLabel(host))) {
    return InvalidField(path, QuoteShort(host) +
                                  " ends in a numeric label, which browsers read as an IPv4 "
                                  "address and no top-level domain is: it is not a host name");
  }
  return Status::Ok();
}

// Never the platform's domain itself, nor the forge URL's host (engine.forgeUrl, the one platform
// URL of the configuration) or a name under it, where a page could set cookies for the platform.
// When the operator put the projects' domain under the forge host (or made them one), the names
// under that domain are theirs like every project's host.
Status CheckNotPlatform(const EngineConfig& config, const std::string& host,
                        std::string_view path) {
  const std::string domain = AsciiLower(config.domain);
  const std::string forge = UrlHost(config.forge_url);
  if (host == domain || host == forge) {
    return InvalidField(path, "\"" + host + "\" is the platform's own host");
  }
  if (!forge.empty() && UnderDomain(host, forge) &&
      !(UnderDomain(domain, forge) && UnderDomain(host, domain))) {
    return InvalidField(path, "\"" + host + "\" is under the platform's host " + forge +
                                  " (engine.forgeUrl): a page there could set cookies for the "
                                  "platform");
  }
  return Status::Ok();
}

bool WithinAllowed(const EngineConfig& config, const std::string& host) {
  const auto& allowed = config.custom_hostname.allowed_domains;
  return allowed.empty() || std::any_of(allowed.begin(), allowed.end(), [&](const auto& d) {
           return UnderDomain(host, AsciiLower(d));
         });
}

// The kept URL's host: under the platform's domain only as the project's own name's host or one
// it holds already (a project renamed keeps <old name>.<domain>); elsewhere as a custom hostname.
Status CheckUrlHost(const EngineConfig& config, std::string_view name, const ProjectSpec& spec,
                    const std::vector<std::string>& held_hosts) {
  const std::optional<UrlParts> url = SplitInstanceUrl(spec.url);
  if (!url) return Status::Ok();
  constexpr std::string_view kPath = "spec.url";
  const std::string host = AsciiLower(url->host);
  const std::string domain = AsciiLower(config.domain);
  RETURN_IF_ERROR(CheckDnsName(host, kPath));
  RETURN_IF_ERROR(CheckNotPlatform(config, host, kPath));
  if (IsProjectHostShape(host, domain)) {
    const std::string own = AsciiLower(DnsLabelOf(name)) + "." + domain;
    const bool held = std::any_of(held_hosts.begin(), held_hosts.end(),
                                  [&](const std::string& h) { return AsciiLower(h) == host; });
    if (host != own && !held) {
      return InvalidField(kPath, "\"" + host + "\" has the form <name>." + domain +
                                     ", which is reserved for project names: project " +
                                     std::string(name) + " may keep only " + own +
                                     " or a URL it holds already (its kept URL, a former name's)");
    }
    return Status::Ok();
  }
  if (!UnderDomain(host, domain) && !WithinAllowed(config, host)) {
    return InvalidField(kPath, "\"" + host + "\" is neither under " + domain +
                                   " nor within engine.customHostname.allowedDomains");
  }
  return Status::Ok();
}

}  // namespace

bool IsInetAtonAddress(std::string_view host) {
  // inet_aton: 1 to 4 parts; all but the last at most 255, the last filling the bytes left.
  constexpr std::array<uint64_t, 4> kLastMax = {0xffffffffu, 0xffffffu, 0xffffu, 0xffu};
  size_t parts = 0;
  while (true) {
    const size_t dot = host.find('.');
    const std::optional<uint64_t> part = InetAtonPart(host.substr(0, dot));
    if (!part) return false;
    if (dot == std::string_view::npos) return *part <= kLastMax[parts];
    if (*part > 0xff || ++parts == 4) return false;
    host.remove_prefix(dot + 1);
  }
}

std::vector<std::string> ProjectHostnames(const EngineConfig& config, std::string_view name,
                                          const ProjectSpec& spec) {
  const std::optional<UrlParts> kept = SplitInstanceUrl(spec.url);
  std::vector<std::string> out{
      AsciiLower(kept ? kept->host : DnsLabelOf(name) + "." + config.domain)};
  if (!spec.custom_hostname.empty()) {
    std::string custom = AsciiLower(spec.custom_hostname);
    if (custom != out[0]) out.push_back(std::move(custom));
  }
  return out;
}

Status CheckCustomHostnamePolicy(const EngineConfig& config, std::string_view name,
                                 const ProjectSpec& spec,
                                 const std::vector<std::string>& held_hosts) {
  RETURN_IF_ERROR(CheckUrlHost(config, name, spec, held_hosts));
  if (spec.custom_hostname.empty()) return Status::Ok();
  const std::string host = AsciiLower(spec.custom_hostname);
  const std::string domain = AsciiLower(config.domain);
  constexpr std::string_view kPath = "spec.customHostname";
  RETURN_IF_ERROR(CheckDnsName(host, kPath));
  RETURN_IF_ERROR(CheckNotPlatform(config, host, kPath));
  if (IsProjectHostShape(host, domain)) {
    return InvalidField(kPath, "\"" + host + "\" has the form <name>." + domain +
                                   ", which is reserved for project names");
  }
  if (!WithinAllowed(config, host)) {
    std::string list;
    for (const auto& d : config.custom_hostname.allowed_domains) {
      list += (list.empty() ? "" : ", ") + d;
    }
    return InvalidField(kPath, "\"" + host +
                                   "\" is not within the domains the operator allows "
                                   "(engine.customHostname.allowedDomains: " +
                                   list + ")");
  }
  return Status::Ok();
}

}  // namespace steward::engine
