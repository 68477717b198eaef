// ParseKubeconfig / ReadKubeconfigFile: one kubeconfig file's YAML to the model in kubeconfig.h.
// yaml-cpp is used directly (not through common/yaml.h) to keep line numbers for field errors and
// to walk only the known schema; every yaml-cpp exception is caught here.
#include <yaml-cpp/yaml.h>

#include <charconv>

#include "common/base64.h"
#include "kube/config/file_util.h"
#include "kube/config/kubeconfig.h"

namespace steward::kube {

namespace {

using config_internal::AbsoluteDirOf;
using config_internal::ResolveAgainst;
using YAML::Node;

constexpr size_t kMaxExtensionNodes = 10000;
constexpr int kMaxExtensionDepth = 32;

std::string LineOf(const Node& n) {
  if (!n.IsDefined() || n.Mark().is_null()) return "";
  return " (line " + std::to_string(n.Mark().line + 1) + ")";
}

std::string KindName(const Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "a scalar";
    default:
      return "null";
  }
}

bool Present(const Node& n) { return n.IsDefined() && !n.IsNull(); }

// Where a field lives, for error messages: `kubeconfig FILE: ENTRY: FIELD: MSG (line N)`.
struct Where {
  const std::string& file;
  std::string entry;  // `cluster "c1"`, or "" at the top level

  Status Error(const std::string& field, const std::string& msg, const Node& at) const {
    std::string m = "kubeconfig " + file + ": ";
    if (!entry.empty()) m += entry + ": ";
    if (!field.empty()) m += field + ": ";
    return InvalidArgument(m + msg + LineOf(at));
  }
};

StatusOr<std::string> Str(const Node& map, const std::string& key, const Where& w,
                          const std::string& field_prefix = "") {
  const Node n = map[key];
  if (!Present(n)) return std::string();
  if (!n.IsScalar()) return w.Error(field_prefix + key, "expected a string, got " + KindName(n), n);
  return n.Scalar();
}

StatusOr<bool> Bool(const Node& map, const std::string& key, const Where& w,
                    const std::string& field_prefix = "") {
  const Node n = map[key];
  if (!Present(n)) return false;
  if (n.IsScalar()) {
    // YAML 1.1 booleans, as Kubernetes' YAML decoder reads them.
    static const char* kTrue[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
    static const char* kFalse[] = {"false", "False", "FALSE", "no", "No",
                                   "NO",    "off",   "Off",   "OFF"};
    for (const char* t : kTrue) {
      if (n.Scalar() == t) return true;
    }
    for (const char* f : kFalse) {
      if (n.Scalar() == f) return false;
    }
  }
  return w.Error(field_prefix + key, "expected true or false", n);
}

// A base64 *-data field, decoded. Line breaks inside the value are ignored (as Go's decoder does).
StatusOr<std::string> Data(const Node& map, const std::string& key, const Where& w) {
  ASSIGN_OR_RETURN(std::string text, Str(map, key, w));
  std::erase_if(text, [](char c) { return c == '\r' || c == '\n'; });
  if (text.empty()) return text;
  auto decoded = Base64Decode(text);
  if (!decoded) return w.Error(key, "not valid base64", map[key]);
  return *std::move(decoded);
}

// A path field, resolved against the file's directory.
StatusOr<std::string> PathField(const Node& map, const std::string& key, const Where& w,
                                const std::string& dir) {
  ASSIGN_OR_RETURN(std::string p, Str(map, key, w));
  return ResolveAgainst(dir, p);
}

StatusOr<std::vector<std::string>> StrList(const Node& map, const std::string& key, const Where& w,
                                           const std::string& field_prefix) {
  std::vector<std::string> out;
  const Node n = map[key];
  if (!Present(n)) return out;
  if (!n.IsSequence()) return w.Error(field_prefix + key, "expected a list of strings", n);
  for (size_t i = 0; i < n.size(); ++i) {
    const Node item = n[i];
    if (!item.IsScalar()) {
      return w.Error(field_prefix + key + "[" + std::to_string(i) + "]", "expected a string", item);
    }
    out.push_back(item.Scalar());
  }
  return out;
}

// A mapping-valued field ("" when absent or null).
StatusOr<Node> MapField(const Node& map, const std::string& key, const Where& w) {
  const Node n = map[key];
  if (!Present(n)) return Node(YAML::NodeType::Map);
  if (!n.IsMap()) return w.Error(key, "expected a mapping, got " + KindName(n), n);
  return n;
}

Json ScalarJson(const Node& n) {
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted
  if (s == "true") return true;
  if (s == "false") return false;
  if (s == "null" || s == "~") return nullptr;
  int64_t i = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
  if (ec == std::errc() && ptr == s.data() + s.size()) return i;
  return s;
}

// Generic YAML -> JSON with a node budget (aliases may repeat a subtree many times).
StatusOr<Json> ToJson(const Node& n, int depth, size_t& budget, const Where& w,
                      const std::string& field) {
  if (budget == 0 || depth > kMaxExtensionDepth) return w.Error(field, "too large or too deep", n);
  --budget;
  switch (n.Type()) {
    case YAML::NodeType::Scalar:
      return ScalarJson(n);
    case YAML::NodeType::Sequence: {
      Json arr = Json::array();
      for (const auto& item : n) {
        ASSIGN_OR_RETURN(Json v, ToJson(item, depth + 1, budget, w, field));
        arr.push_back(std::move(v));
      }
      return arr;
    }
    case YAML::NodeType::Map: {
      Json obj = Json::object();
      for (const auto& kv : n) {
        if (!kv.first.IsScalar()) return w.Error(field, "mapping keys must be strings", kv.first);
        ASSIGN_OR_RETURN(Json v, ToJson(kv.second, depth + 1, budget, w, field));
        obj[kv.first.Scalar()] = std::move(v);
      }
      return obj;
    }
    default:
      return Json(nullptr);
  }
}

// Calls fn(name, body, where) for each `{name: ..., <item_key>: {...}}` of the list `list_key`.
template <typename Fn>
Status ForEachNamed(const Node& root, const std::string& list_key, const std::string& item_key,
                    const std::string& file, Fn&& fn) {
  const Where top{file, ""};
  const Node list = root[list_key];
  if (!Present(list)) return Status::Ok();
  if (!list.IsSequence())
    return top.Error(list_key, "expected a list, got " + KindName(list), list);
  for (size_t i = 0; i < list.size(); ++i) {
    const Node item = list[i];
    const Where at{file, list_key + "[" + std::to_string(i) + "]"};
    if (!item.IsMap()) return at.Error("", "expected a mapping, got " + KindName(item), item);
    ASSIGN_OR_RETURN(std::string name, Str(item, "name", at));
    if (name.empty()) return at.Error("name", "missing", item);
    const Where named{file, item_key + " \"" + name + "\""};
    ASSIGN_OR_RETURN(Node body, MapField(item, item_key, named));
    RETURN_IF_ERROR(fn(name, body, named, item));
  }
  return Status::Ok();
}

template <typename T>
Status InsertUnique(std::map<std::string, T>& m, T value, const std::string& list_key,
                    const Where& top, const Node& at) {
  std::string name = value.name;
  if (!m.emplace(name, std::move(value)).second) {
    return top.Error(list_key, "duplicate name \"" + name + "\"", at);
  }
  return Status::Ok();
}

StatusOr<Json> ExecExtension(const Node& cluster, const Where& w) {
  const Node list = cluster["extensions"];
  if (!Present(list)) return Json(nullptr);
  if (!list.IsSequence()) return w.Error("extensions", "expected a list", list);
  for (const auto& ext : list) {
    if (!ext.IsMap()) return w.Error("extensions", "expected a list of mappings", ext);
    ASSIGN_OR_RETURN(std::string name, Str(ext, "name", w, "extensions."));
    if (name != "client.authentication.k8s.io/exec") continue;
    size_t budget = kMaxExtensionNodes;
    const Node value = ext["extension"];
    if (!Present(value)) return Json(nullptr);
    return ToJson(value, 0, budget, w, "extensions[" + name + "]");
  }
  return Json(nullptr);
}

StatusOr<KubeCluster> ParseCluster(const std::string& name, const Node& c, const Where& w,
                                   const std::string& dir) {
  KubeCluster out;
  out.name = name;
  out.origin = w.file;
  ASSIGN_OR_RETURN(out.server, Str(c, "server", w));
  ASSIGN_OR_RETURN(out.certificate_authority, PathField(c, "certificate-authority", w, dir));
  ASSIGN_OR_RETURN(out.certificate_authority_data, Data(c, "certificate-authority-data", w));
  ASSIGN_OR_RETURN(out.insecure_skip_tls_verify, Bool(c, "insecure-skip-tls-verify", w));
  ASSIGN_OR_RETURN(out.tls_server_name, Str(c, "tls-server-name", w));
  ASSIGN_OR_RETURN(out.proxy_url, Str(c, "proxy-url", w));
  ASSIGN_OR_RETURN(out.exec_extension, ExecExtension(c, w));
  return out;
}

StatusOr<std::vector<ExecEnvVar>> ParseExecEnv(const Node& exec, const Where& w) {
  std::vector<ExecEnvVar> out;
  const Node env = exec["env"];
  if (!Present(env)) return out;
  if (!env.IsSequence()) return w.Error("exec.env", "expected a list of {name, value}", env);
  for (size_t i = 0; i < env.size(); ++i) {
    const Node item = env[i];
    std::string field = "exec.env[" + std::to_string(i) + "].";
    if (!item.IsMap()) return w.Error(field, "expected a mapping with name and value", item);
    ExecEnvVar v;
    ASSIGN_OR_RETURN(v.name, Str(item, "name", w, field));
    ASSIGN_OR_RETURN(v.value, Str(item, "value", w, field));
    out.push_back(std::move(v));
  }
  return out;
}

StatusOr<ExecPluginConfig> ParseExec(const Node& exec, const Where& w, const std::string& dir) {
  ExecPluginConfig out;
  const std::string p = "exec.";
  ASSIGN_OR_RETURN(out.command, Str(exec, "command", w, p));
  // kubectl resolves the command against the file's directory only when it is a path.
  if (out.command.find('/') != std::string::npos) out.command = ResolveAgainst(dir, out.command);
  ASSIGN_OR_RETURN(out.args, StrList(exec, "args", w, p));
  ASSIGN_OR_RETURN(out.env, ParseExecEnv(exec, w));
  ASSIGN_OR_RETURN(out.api_version, Str(exec, "apiVersion", w, p));
  ASSIGN_OR_RETURN(out.install_hint, Str(exec, "installHint", w, p));
  ASSIGN_OR_RETURN(out.provide_cluster_info, Bool(exec, "provideClusterInfo", w, p));
  ASSIGN_OR_RETURN(out.interactive_mode, Str(exec, "interactiveMode", w, p));
  return out;
}

Status ParseUnsupportedAuth(const Node& u, const Where& w, KubeUser& out) {
  ASSIGN_OR_RETURN(std::string username, Str(u, "username", w));
  ASSIGN_OR_RETURN(std::string password, Str(u, "password", w));
  out.has_basic_auth = !username.empty() || !password.empty();
  const Node ap = u["auth-provider"];
  if (Present(ap)) {
    out.has_auth_provider = true;
    if (!ap.IsMap()) return w.Error("auth-provider", "expected a mapping", ap);
    ASSIGN_OR_RETURN(out.auth_provider, Str(ap, "name", w, "auth-provider."));
  }
  for (const char* key : {"as", "as-uid", "as-groups", "as-user-extra"}) {
    const Node n = u[key];
    bool set = Present(n) && (n.IsScalar() ? !n.Scalar().empty() : n.size() > 0);
    if (set && out.impersonation_field.empty()) out.impersonation_field = key;
  }
  return Status::Ok();
}

StatusOr<KubeUser> ParseUser(const std::string& name, const Node& u, const Where& w,
                             const std::string& dir) {
  KubeUser out;
  out.name = name;
  out.origin = w.file;
  ASSIGN_OR_RETURN(out.token, Str(u, "token", w));
  ASSIGN_OR_RETURN(out.token_file, PathField(u, "tokenFile", w, dir));
  ASSIGN_OR_RETURN(out.client_certificate, PathField(u, "client-certificate", w, dir));
  ASSIGN_OR_RETURN(out.client_certificate_data, Data(u, "client-certificate-data", w));
  ASSIGN_OR_RETURN(out.client_key, PathField(u, "client-key", w, dir));
  ASSIGN_OR_RETURN(out.client_key_data, Data(u, "client-key-data", w));
  RETURN_IF_ERROR(ParseUnsupportedAuth(u, w, out));
  const Node exec = u["exec"];
  if (Present(exec)) {
    if (!exec.IsMap()) return w.Error("exec", "expected a mapping, got " + KindName(exec), exec);
    ASSIGN_OR_RETURN(out.exec, ParseExec(exec, w, dir));
  }
  return out;
}

StatusOr<KubeContext> ParseContext(const std::string& name, const Node& c, const Where& w) {
  KubeContext out;
  out.name = name;
  out.origin = w.file;
  ASSIGN_OR_RETURN(out.cluster, Str(c, "cluster", w));
  ASSIGN_OR_RETURN(out.user, Str(c, "user", w));
  ASSIGN_OR_RETURN(out.namespace_name, Str(c, "namespace", w));
  return out;
}

Status ParseRoot(const Node& root, const std::string& path, KubeconfigFile& out) {
  const Where top{path, ""};
  if (!root.IsMap())
    return top.Error("", "expected a mapping at the top, got " + KindName(root), root);
  ASSIGN_OR_RETURN(std::string kind, Str(root, "kind", top));
  if (!kind.empty() && kind != "Config") {
    return top.Error("kind", "\"" + kind + "\" is not a kubeconfig (kind Config)", root["kind"]);
  }
  ASSIGN_OR_RETURN(std::string api_version, Str(root, "apiVersion", top));
  if (!api_version.empty() && api_version != "v1") {
    return top.Error("apiVersion", "\"" + api_version + "\" is not supported (v1)",
                     root["apiVersion"]);
  }
  ASSIGN_OR_RETURN(out.current_context, Str(root, "current-context", top));
  const std::string dir = AbsoluteDirOf(path);
  RETURN_IF_ERROR(ForEachNamed(
      root, "clusters", "cluster", path,
      [&](const std::string& name, const Node& body, const Where& w, const Node& at) -> Status {
        ASSIGN_OR_RETURN(KubeCluster c, ParseCluster(name, body, w, dir));
        return InsertUnique(out.clusters, std::move(c), "clusters", top, at);
      }));
  RETURN_IF_ERROR(ForEachNamed(
      root, "users", "user", path,
      [&](const std::string& name, const Node& body, const Where& w, const Node& at) -> Status {
        ASSIGN_OR_RETURN(KubeUser u, ParseUser(name, body, w, dir));
        return InsertUnique(out.users, std::move(u), "users", top, at);
      }));
  return ForEachNamed(
      root, "contexts", "context", path,
      [&](const std::string& name, const Node& body, const Where& w, const Node& at) -> Status {
        ASSIGN_OR_RETURN(KubeContext c, ParseContext(name, body, w));
        return InsertUnique(out.contexts, std::move(c), "contexts", top, at);
      });
}

}  // namespace

StatusOr<KubeconfigFile> ParseKubeconfig(std::string_view text, const std::string& path) {
  KubeconfigFile out;
  out.path = path;
  try {
    const Node root = YAML::Load(std::string(text));
    if (!Present(root)) {
      out.empty = true;
      return out;
    }
    RETURN_IF_ERROR(ParseRoot(root, path, out));
    return out;
  } catch (const YAML::Exception& e) {
    std::string where = e.mark.is_null() ? "" : " at line " + std::to_string(e.mark.line + 1);
    return InvalidArgument("kubeconfig " + path + ": malformed YAML" + where + ": " + e.msg);
  } catch (const std::exception& e) {
    return InvalidArgument("kubeconfig " + path + ": cannot be read: " + e.what());
  }
}

StatusOr<KubeconfigFile> ReadKubeconfigFile(const std::string& path) {
  auto text = config_internal::ReadSmallFile(path);
  if (!text.ok()) {
    return Status(text.error().code(), "kubeconfig " + text.error().message());
  }
  return ParseKubeconfig(*text, path);
}

}  // namespace steward::kube
