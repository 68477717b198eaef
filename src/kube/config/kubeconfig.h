// Kubeconfig loading, as kubectl / client-go do it.
//
// Which files: --kubeconfig (only that file; it must exist), else $KUBECONFIG (a ':'-separated
// list; empty entries and duplicates ignored, missing files skipped), else $HOME/.kube/config.
// Several files are merged as kubectl merges them: for each cluster / user / context name the
// first file that defines it wins (whole entries, never field by field), and the first non-empty
// current-context wins. Relative paths (certificate-authority, client-certificate, client-key,
// tokenFile, and an exec command containing '/') are resolved against the directory of the file
// that defined them.
//
// The chosen context (--context, else current-context) is resolved to a RestConfig. Every error
// names the file, the context or entry, and the field:
//   kubeconfig /x/config: context "dev": cluster "c1" not found
//   kubeconfig /x/config: user "u": client-certificate-data: not valid base64
// Unsupported kubeconfig features (auth-provider, username/password, impersonation) are errors
// that say what to use instead; they are never silently ignored.
//
// Everything here is a pure function of its inputs plus the files it reads; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "kube/config/credential_providers.h"
#include "kube/config/rest_config.h"

namespace steward::kube {

// Where to look; see KubeconfigSourcesFromEnvironment.
struct KubeconfigSources {
  std::string explicit_path;                  // --kubeconfig ("" = not given)
  std::optional<std::string> env_kubeconfig;  // $KUBECONFIG (nullopt or "" = not set)
  std::string home;                           // $HOME
  std::string context;                        // --context ("" = current-context)
};

// Fills env_kubeconfig and home from the process environment.
KubeconfigSources KubeconfigSourcesFromEnvironment(std::string explicit_path, std::string context);

// --- the parsed model (exposed for tests and tools) ----------------------------------------------

struct KubeCluster {
  std::string name;
  std::string origin;  // the file that defined it
  std::string server;
  std::string certificate_authority;       // absolute path ("" = none)
  std::string certificate_authority_data;  // decoded PEM bytes ("" = none)
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;
  std::string proxy_url;
  // The "client.authentication.k8s.io/exec" cluster extension (passed to exec plugins as
  // spec.cluster.config); null when absent.
  Json exec_extension;
};

struct KubeUser {
  std::string name;
  std::string origin;
  std::string token;
  std::string token_file;                // absolute path
  std::string client_certificate;        // absolute path
  std::string client_certificate_data;   // decoded PEM
  std::string client_key;                // absolute path
  std::string client_key_data;           // decoded PEM
  std::optional<ExecPluginConfig> exec;  // command already resolved
  // Present only to reject them with a clear error:
  std::string auth_provider;  // auth-provider.name (see has_auth_provider)
  bool has_auth_provider = false;
  bool has_basic_auth = false;      // username or password
  std::string impersonation_field;  // "as", "as-groups", ... ("" = none)
};

struct KubeContext {
  std::string name;
  std::string origin;
  std::string cluster;
  std::string user;
  std::string namespace_name;  // "" = not set
};

// One file.
struct KubeconfigFile {
  std::string path;
  bool empty = false;  // no content at all (kubectl accepts it)
  std::map<std::string, KubeCluster> clusters;
  std::map<std::string, KubeUser> users;
  std::map<std::string, KubeContext> contexts;
  std::string current_context;
};

// Several files merged (first definition wins).
struct MergedKubeconfig {
  std::vector<std::string> files;  // in precedence order
  std::map<std::string, KubeCluster> clusters;
  std::map<std::string, KubeUser> users;
  std::map<std::string, KubeContext> contexts;
  std::string current_context;
  std::string current_context_origin;  // the file it came from
  bool all_empty = true;               // every file was empty
};

// The chosen context with the entries it names.
struct ResolvedContext {
  KubeContext context;
  KubeCluster cluster;
  KubeUser user;
};

// Parses one file's text; `path` is used in errors and to resolve relative paths. Never throws.
StatusOr<KubeconfigFile> ParseKubeconfig(std::string_view text, const std::string& path);
// Reads and parses one file (errors name the file).
StatusOr<KubeconfigFile> ReadKubeconfigFile(const std::string& path);
MergedKubeconfig MergeKubeconfigs(const std::vector<KubeconfigFile>& files);
// The files LoadKubeconfig reads, in precedence order, after the rules above (missing files in
// KUBECONFIG dropped). Fails when there is nothing to read.
StatusOr<std::vector<std::string>> KubeconfigFilesToLoad(const KubeconfigSources& sources);
// Picks `context` (or current-context) and the cluster and user it names.
StatusOr<ResolvedContext> ResolveContext(const MergedKubeconfig& merged,
                                         const std::string& context);
// Turns a resolved context into a RestConfig (reads CA / certificate / key / token files, builds
// the credential provider).
StatusOr<RestConfig> BuildRestConfig(const MergedKubeconfig& merged,
                                     const ResolvedContext& resolved,
                                     const CredentialOptions& options = {});

// All of the above.
StatusOr<RestConfig> LoadKubeconfig(const KubeconfigSources& sources,
                                    const CredentialOptions& options = {});

}  // namespace steward::kube
