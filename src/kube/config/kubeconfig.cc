#include "kube/config/kubeconfig.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <set>

#include "common/ascii.h"
#include "common/base64.h"
#include "common/log.h"
#include "kube/config/file_util.h"

namespace steward::kube {

namespace {

using config_internal::PathExists;
using config_internal::ReadSmallFile;

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

std::string HomeFromPasswd() {
  struct passwd pw {};
  struct passwd* result = nullptr;
  char buf[4096];
  if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &result) == 0 && result != nullptr &&
      result->pw_dir != nullptr) {
    return result->pw_dir;
  }
  return "";
}

bool IsDns1123Label(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return s.front() != '-' && s.back() != '-';
}

// Checks "scheme://host..." with a scheme from `schemes`. Returns an empty string when fine,
// else what is wrong.
std::string UrlProblem(const std::string& url, std::initializer_list<const char*> schemes) {
  size_t sep = url.find("://");
  if (sep == std::string::npos) return "has no scheme";
  std::string scheme = AsciiLower(url.substr(0, sep));
  bool known = false;
  for (const char* s : schemes) known = known || scheme == s;
  if (!known) return "scheme \"" + scheme + "\" is not supported";
  std::string rest = url.substr(sep + 3);
  if (rest.empty() || rest.front() == '/' || rest.front() == ':') return "has no host";
  if (rest.find_first_of(" \t\r\n?#") != std::string::npos) {
    return "must not contain spaces, a query or a fragment";
  }
  return "";
}

// "kubeconfig FILE: context "C": ENTRY: "
struct Prefix {
  std::string text;
  Status Error(const std::string& msg) const { return InvalidArgument(text + msg); }
};

// Reads a PEM file named by a kubeconfig field, or takes its inline data.
StatusOr<std::string> PemFromFileOrData(const std::string& file, const std::string& data,
                                        const std::string& field, const char* marker,
                                        const Prefix& p) {
  std::string pem = data;
  std::string which = field + "-data";
  if (!file.empty()) {
    auto text = ReadSmallFile(file, 1u << 20);
    if (!text.ok()) return p.Error(field + ": " + text.error().message());
    pem = *std::move(text);
    which = field + " " + file;
  }
  if (pem.find(marker) == std::string::npos) {
    return p.Error(which + ": no PEM block \"" + marker + "\" found");
  }
  return pem;
}

Status CheckUnsupportedAuth(const KubeUser& u, const Prefix& p) {
  if (u.has_auth_provider) {
    std::string hint = "an exec credential plugin";
    if (u.auth_provider == "gcp") hint = "the exec plugin gke-gcloud-auth-plugin";
    if (u.auth_provider == "azure") hint = "the exec plugin kubelogin (Azure/kubelogin)";
    if (u.auth_provider == "oidc") hint = "an exec plugin such as kubelogin (int128/kubelogin)";
    return p.Error("auth-provider " + Quote(u.auth_provider) +
                   ": auth providers are not supported; use " + hint + " (user.exec) instead");
  }
  if (u.has_basic_auth) {
    return p.Error(
        "username/password: basic authentication is not supported; use a token, a client "
        "certificate or an exec plugin");
  }
  if (!u.impersonation_field.empty()) {
    return p.Error(u.impersonation_field + ": impersonation is not supported");
  }
  return Status::Ok();
}

// The client certificate and key (both or neither).
Status ClientCertificate(const KubeUser& u, const Prefix& p, Credentials& creds) {
  if (!u.client_certificate.empty() && !u.client_certificate_data.empty()) {
    return p.Error("client-certificate and client-certificate-data are both set");
  }
  if (!u.client_key.empty() && !u.client_key_data.empty()) {
    return p.Error("client-key and client-key-data are both set");
  }
  bool has_cert = !u.client_certificate.empty() || !u.client_certificate_data.empty();
  bool has_key = !u.client_key.empty() || !u.client_key_data.empty();
  if (has_cert && !has_key) return p.Error("client-key: missing (client-certificate is set)");
  if (has_key && !has_cert) return p.Error("client-certificate: missing (client-key is set)");
  if (!has_cert) return Status::Ok();
  ASSIGN_OR_RETURN(creds.client_cert_pem,
                   PemFromFileOrData(u.client_certificate, u.client_certificate_data,
                                     "client-certificate", "-----BEGIN CERTIFICATE-----", p));
  ASSIGN_OR_RETURN(creds.client_key_pem, PemFromFileOrData(u.client_key, u.client_key_data,
                                                           "client-key", "PRIVATE KEY-----", p));
  return Status::Ok();
}

// spec.cluster of the ExecCredential request (empty fields omitted, as client-go does).
Json ExecClusterInfo(const RestConfig& rc, const KubeCluster& c) {
  Json j = {{"server", rc.server}};
  if (!rc.tls_server_name.empty()) j["tls-server-name"] = rc.tls_server_name;
  if (rc.insecure_skip_tls_verify) j["insecure-skip-tls-verify"] = true;
  if (!rc.ca_pem.empty()) j["certificate-authority-data"] = Base64Encode(rc.ca_pem);
  if (!rc.proxy_url.empty()) j["proxy-url"] = rc.proxy_url;
  if (!c.exec_extension.is_null()) j["config"] = c.exec_extension;
  return j;
}

StatusOr<std::shared_ptr<CredentialProvider>> BuildCredentials(const KubeUser& u,
                                                               const RestConfig& rc,
                                                               const KubeCluster& cluster,
                                                               const CredentialOptions& options,
                                                               const Prefix& p) {
  RETURN_IF_ERROR(CheckUnsupportedAuth(u, p));
  Credentials base;
  RETURN_IF_ERROR(ClientCertificate(u, p, base));
  base.bearer_token = u.token;
  if (u.exec) {
    Status st = ValidateExecPluginConfig(*u.exec);
    if (!st.ok()) return p.Error(st.message());
  }
  bool has_static = !u.token.empty() || !u.token_file.empty() || !base.client_cert_pem.empty();
  if (u.exec && has_static) {
    // client-go: a token or certificate in the kubeconfig takes precedence over the plugin.
    LOG_WARN("{}exec plugin ignored: the user also has a token or client certificate", p.text);
  }
  if (!u.token_file.empty()) {
    auto provider = TokenFileCredentialProvider::Create(u.token_file, base, options);
    if (!provider.ok()) return p.Error("tokenFile: " + provider.error().message());
    return std::shared_ptr<CredentialProvider>(*std::move(provider));
  }
  if (has_static) {
    std::string what = !base.bearer_token.empty() ? "token" : "client certificate";
    return MakeStaticCredentialProvider(std::move(base),
                                        what + " of kubeconfig user " + Quote(u.name));
  }
  if (u.exec) {
    ExecPluginConfig exec = *u.exec;
    exec.cluster = ExecClusterInfo(rc, cluster);
    auto provider = ExecCredentialProvider::Create(std::move(exec), options);
    if (!provider.ok()) return p.Error(provider.error().message());
    return std::shared_ptr<CredentialProvider>(*std::move(provider));
  }
  return std::shared_ptr<CredentialProvider>();  // anonymous
}

Status ClusterSettings(const KubeCluster& c, const Prefix& p, RestConfig& rc) {
  if (c.server.empty()) return p.Error("server: missing");
  if (std::string problem = UrlProblem(c.server, {"https", "http"}); !problem.empty()) {
    return p.Error("server: " + Quote(c.server) + " is not an http(s) URL: " + problem);
  }
  rc.server = c.server;
  while (rc.server.size() > 1 && rc.server.back() == '/') rc.server.pop_back();
  if (!c.certificate_authority.empty() && !c.certificate_authority_data.empty()) {
    return p.Error("certificate-authority and certificate-authority-data are both set");
  }
  if (!c.certificate_authority.empty() || !c.certificate_authority_data.empty()) {
    ASSIGN_OR_RETURN(rc.ca_pem,
                     PemFromFileOrData(c.certificate_authority, c.certificate_authority_data,
                                       "certificate-authority", "-----BEGIN CERTIFICATE-----", p));
    if (c.insecure_skip_tls_verify) {
      return p.Error("insecure-skip-tls-verify: cannot be combined with a certificate authority");
    }
  }
  rc.insecure_skip_tls_verify = c.insecure_skip_tls_verify;
  rc.tls_server_name = c.tls_server_name;
  if (!c.proxy_url.empty()) {
    if (std::string problem = UrlProblem(c.proxy_url, {"http", "https", "socks5"});
        !problem.empty()) {
      return p.Error("proxy-url: " + Quote(c.proxy_url) + " " + problem);
    }
  }
  rc.proxy_url = c.proxy_url;
  return Status::Ok();
}

}  // namespace

KubeconfigSources KubeconfigSourcesFromEnvironment(std::string explicit_path, std::string context) {
  KubeconfigSources s;
  s.explicit_path = std::move(explicit_path);
  s.context = std::move(context);
  if (const char* env = std::getenv("KUBECONFIG")) s.env_kubeconfig = env;
  const char* home = std::getenv("HOME");
  s.home = home != nullptr && *home != '\0' ? home : HomeFromPasswd();
  return s;
}

MergedKubeconfig MergeKubeconfigs(const std::vector<KubeconfigFile>& files) {
  MergedKubeconfig m;
  for (const auto& f : files) {
    m.files.push_back(f.path);
    m.all_empty = m.all_empty && f.empty;
    // emplace never replaces: the first file to define a name wins, with its whole entry.
    for (const auto& [name, c] : f.clusters) m.clusters.emplace(name, c);
    for (const auto& [name, u] : f.users) m.users.emplace(name, u);
    for (const auto& [name, c] : f.contexts) m.contexts.emplace(name, c);
    if (m.current_context.empty() && !f.current_context.empty()) {
      m.current_context = f.current_context;
      m.current_context_origin = f.path;
    }
  }
  return m;
}

StatusOr<std::vector<std::string>> KubeconfigFilesToLoad(const KubeconfigSources& s) {
  if (!s.explicit_path.empty()) {
    if (!PathExists(s.explicit_path)) {
      return NotFound("kubeconfig " + s.explicit_path + ": file does not exist (--kubeconfig)");
    }
    return std::vector<std::string>{s.explicit_path};
  }
  if (s.env_kubeconfig && !s.env_kubeconfig->empty()) {
    std::vector<std::string> files;
    std::set<std::string> seen;
    std::string_view rest = *s.env_kubeconfig;
    while (true) {
      size_t colon = rest.find(':');
      std::string entry(rest.substr(0, colon));
      if (!entry.empty() && seen.insert(entry).second && PathExists(entry)) files.push_back(entry);
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
    if (files.empty()) {
      return NotFound("no kubeconfig: none of the files in KUBECONFIG exist (KUBECONFIG=" +
                      *s.env_kubeconfig + ")");
    }
    return files;
  }
  if (s.home.empty()) {
    return NotFound("no kubeconfig: --kubeconfig not given, KUBECONFIG and HOME not set");
  }
  std::string path = s.home + "/.kube/config";
  if (!PathExists(path)) {
    return NotFound("no kubeconfig: " + path +
                    " does not exist (and neither --kubeconfig nor KUBECONFIG is set)");
  }
  return std::vector<std::string>{path};
}

StatusOr<ResolvedContext> ResolveContext(const MergedKubeconfig& m, const std::string& context) {
  const std::string files = "kubeconfig " + Join(m.files, ":");
  const std::string& name = context.empty() ? m.current_context : context;
  if (name.empty()) {
    if (m.all_empty) {
      return InvalidArgument(files +
                             (m.files.size() > 1 ? ": files are empty" : ": file is empty"));
    }
    return InvalidArgument(files + ": no context chosen and current-context is not set");
  }
  auto ctx = m.contexts.find(name);
  if (ctx == m.contexts.end()) {
    if (context.empty()) {
      return InvalidArgument("kubeconfig " + m.current_context_origin + ": current-context " +
                             Quote(name) + ": no such context");
    }
    return InvalidArgument(files + ": context " + Quote(name) + " not found");
  }
  ResolvedContext r;
  r.context = ctx->second;
  const Prefix p{"kubeconfig " + r.context.origin + ": context " + Quote(name) + ": "};
  if (r.context.cluster.empty()) return p.Error("cluster: missing");
  auto cluster = m.clusters.find(r.context.cluster);
  if (cluster == m.clusters.end()) {
    return p.Error("cluster " + Quote(r.context.cluster) + " not found");
  }
  r.cluster = cluster->second;
  if (r.context.user.empty()) return p.Error("user: missing");
  auto user = m.users.find(r.context.user);
  if (user == m.users.end()) return p.Error("user " + Quote(r.context.user) + " not found");
  r.user = user->second;
  if (!r.context.namespace_name.empty() && !IsDns1123Label(r.context.namespace_name)) {
    return p.Error("namespace: " + Quote(r.context.namespace_name) +
                   " is not a valid namespace name (DNS-1123 label)");
  }
  return r;
}

StatusOr<RestConfig> BuildRestConfig(const MergedKubeconfig& m, const ResolvedContext& r,
                                     const CredentialOptions& options) {
  const std::string ctx = "context " + Quote(r.context.name) + ": ";
  RestConfig rc;
  const Prefix cp{"kubeconfig " + r.cluster.origin + ": " + ctx + "cluster " +
                  Quote(r.cluster.name) + ": "};
  RETURN_IF_ERROR(ClusterSettings(r.cluster, cp, rc));
  const Prefix up{"kubeconfig " + r.user.origin + ": " + ctx + "user " + Quote(r.user.name) + ": "};
  ASSIGN_OR_RETURN(rc.credentials, BuildCredentials(r.user, rc, r.cluster, options, up));
  rc.namespace_name = r.context.namespace_name.empty() ? "default" : r.context.namespace_name;
  rc.source = "kubeconfig " + Join(m.files, ":") + ", context " + r.context.name;
  return rc;
}

StatusOr<RestConfig> LoadKubeconfig(const KubeconfigSources& sources,
                                    const CredentialOptions& options) {
  ASSIGN_OR_RETURN(std::vector<std::string> paths, KubeconfigFilesToLoad(sources));
  std::vector<KubeconfigFile> files;
  for (const auto& path : paths) {
    ASSIGN_OR_RETURN(KubeconfigFile f, ReadKubeconfigFile(path));
    files.push_back(std::move(f));
  }
  MergedKubeconfig merged = MergeKubeconfigs(files);
  ASSIGN_OR_RETURN(ResolvedContext resolved, ResolveContext(merged, sources.context));
  return BuildRestConfig(merged, resolved, options);
}

}  // namespace steward::kube
