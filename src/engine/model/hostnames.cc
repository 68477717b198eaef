// Project hostnames and the custom-hostname policy.
#include <algorithm>

#include "common/ascii.h"
#include "engine/model/project.h"
#include "engine/model/validation.h"

namespace steward::engine {
namespace {

bool UnderDomain(std::string_view host, std::string_view domain) {
  return host == domain || (host.size() > domain.size() && host.ends_with(domain) &&
                            host[host.size() - domain.size() - 1] == '.');
}

// The host of an http(s) URL: between "://" and the next ':', '/', '?' or '#'.
std::string UrlHost(std::string_view url) {
  size_t start = url.find("://");
  if (start == std::string_view::npos) return "";
  url.remove_prefix(start + 3);
  return AsciiLower(url.substr(0, url.find_first_of(":/?#")));
}

}  // namespace

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

Status CheckCustomHostnamePolicy(const EngineConfig& config, const ProjectSpec& spec) {
  if (const std::optional<UrlParts> kept = SplitInstanceUrl(spec.url)) {
    // The kept URL's host: any under the platform's domain (a project renamed keeps
    // <old name>.<domain>), else as a custom hostname.
    const std::string host = AsciiLower(kept->host);
    const std::string domain = AsciiLower(config.domain);
    if (host == domain || host == UrlHost(config.forge_url)) {
      return InvalidField("spec.url", "\"" + host + "\" is the platform's own host");
    }
    const auto& allowed = config.custom_hostname.allowed_domains;
    if (!UnderDomain(host, domain) && !allowed.empty() &&
        std::none_of(allowed.begin(), allowed.end(),
                     [&](const auto& d) { return UnderDomain(host, AsciiLower(d)); })) {
      return InvalidField("spec.url", "\"" + host + "\" is neither under " + domain +
                                          " nor within engine.customHostname.allowedDomains");
    }
  }
  if (spec.custom_hostname.empty()) return Status::Ok();
  const std::string host = AsciiLower(spec.custom_hostname);
  const std::string domain = AsciiLower(config.domain);
  constexpr std::string_view kPath = "spec.customHostname";
  if (host == domain || host == UrlHost(config.forge_url)) {
    return InvalidField(kPath, "\"" + host + "\" is the platform's own host");
  }
  if (UnderDomain(host, domain) && host.find('.') == host.size() - domain.size() - 1) {
    return InvalidField(kPath, "\"" + host + "\" has the form <name>." + domain +
                                   ", which is reserved for project names");
  }
  const auto& allowed = config.custom_hostname.allowed_domains;
  if (!allowed.empty() && std::none_of(allowed.begin(), allowed.end(), [&](const auto& d) {
        return UnderDomain(host, AsciiLower(d));
      })) {
    std::string list;
    for (const auto& d : allowed) list += (list.empty() ? "" : ", ") + d;
    return InvalidField(kPath, "\"" + host +
                                   "\" is not within the domains the operator allows "
                                   "(engine.customHostname.allowedDomains: " +
                                   list + ")");
  }
  return Status::Ok();
}

}  // namespace steward::engine
