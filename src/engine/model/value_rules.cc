#include "engine/model/value_rules.h"

#include <array>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "common/host_port.h"
#include "kube/schema/schema_check.h"

namespace steward::engine::internal {
namespace {

constexpr size_t kMaxAnnotationBytes = 256 * 1024;
constexpr std::array<std::string_view, 2> kReservedPrefixes = {"steward.io/", "app.kubernetes.io/"};
constexpr std::array<std::string_view, 3> kStewardEnv = {"TZ", "BASE_URL", "NODE_EXTRA_CA_CERTS"};

bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlnum(char c) { return IsLower(c) || IsUpper(c) || IsDigit(c); }
bool IsLowerAlnum(char c) { return IsLower(c) || IsDigit(c); }

// Kubernetes' qualified-name "name" part and label values share this shape:
// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9].
bool IsQualifiedNamePart(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

Status CheckQualifiedName(std::string_view key, std::string_view path) {
  if (key.empty()) return InvalidField(path, "key must not be empty");
  std::string_view name = key;
  size_t slash = key.find('/');
  if (slash != std::string_view::npos) {
    std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (prefix.empty() || !IsDns1123Subdomain(prefix)) {
      return InvalidField(path, "key prefix " + QuoteShort(prefix) +
                                    " must be a DNS-1123 subdomain (lowercase letters, digits, '-' "
                                    "and '.', at most 253 characters)");
    }
  }
  if (name.empty() || name.size() > 63) {
    return InvalidField(path, "key name part must be 1 to 63 characters");
  }
  if (!IsQualifiedNamePart(name)) {
    return InvalidField(
        path,
        "key name part must consist of letters, digits, '-', '_' and '.', and start "
        "and end with a letter or digit");
  }
  return Status::Ok();
}

Status CheckNotReserved(std::string_view key, std::string_view path) {
  for (std::string_view prefix : kReservedPrefixes) {
    if (key.substr(0, prefix.size()) == prefix) {
      return InvalidField(
          path, "the " + std::string(prefix) + " prefix is reserved for keys Steward sets itself");
    }
  }
  return Status::Ok();
}

Status CheckLabelValue(std::string_view value, std::string_view path) {
  if (value.empty()) return Status::Ok();
  if (value.size() > 63) return InvalidField(path, "label value must be at most 63 characters");
  if (!IsQualifiedNamePart(value)) {
    return InvalidField(
        path,
        "label value must consist of letters, digits, '-', '_' and '.', and start and "
        "end with a letter or digit");
  }
  return Status::Ok();
}

// One repository path component: [a-z0-9]+ (([._]|__|-+) [a-z0-9]+)*.
bool IsPathComponent(std::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  size_t i = 0;
  while (i < s.size()) {
    if (IsLowerAlnum(s[i])) {
      ++i;
      continue;
    }
    size_t start = i;
    while (i < s.size() && !IsLowerAlnum(s[i])) ++i;
    std::string_view sep = s.substr(start, i - start);
    bool dashes = sep.find_first_not_of('-') == std::string_view::npos;
    if (!(sep == "." || sep == "_" || sep == "__" || dashes)) return false;
  }
  return true;
}

// A registry host: DNS-ish labels (case-insensitive) with an optional :port.
bool IsRegistryHost(std::string_view s) {
  size_t colon = s.find(':');
  std::string_view host = s.substr(0, colon);
  if (colon != std::string_view::npos) {
    std::string_view port = s.substr(colon + 1);
    if (port.empty() || port.size() > 5) return false;
    for (char c : port) {
      if (!IsDigit(c)) return false;
    }
  }
  if (host.empty()) return false;
  size_t start = 0;
  while (start <= host.size()) {
    size_t dot = host.find('.', start);
    std::string_view label = host.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (label.empty() || !IsAlnum(label.front()) || !IsAlnum(label.back())) return false;
    for (char c : label) {
      if (!IsAlnum(c) && c != '-') return false;
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return true;
}

bool IsTag(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  if (!IsAlnum(s.front()) && s.front() != '_') return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '_' && c != '.' && c != '-') return false;
  }
  return true;
}

// algorithm ":" encoded, algorithm [a-z0-9]+([+._-][a-z0-9]+)*, encoded [A-Za-z0-9=_-]{32,}.
bool IsDigest(std::string_view s) {
  size_t colon = s.find(':');
  if (colon == std::string_view::npos) return false;
  std::string_view algo = s.substr(0, colon);
  std::string_view encoded = s.substr(colon + 1);
  if (algo.empty() || !IsLowerAlnum(algo.front()) || !IsLowerAlnum(algo.back())) return false;
  for (size_t i = 0; i < algo.size(); ++i) {
    char c = algo[i];
    if (IsLowerAlnum(c)) continue;
    if (c != '+' && c != '.' && c != '_' && c != '-') return false;
    if (!IsLowerAlnum(algo[i + 1])) return false;  // no two separators in a row
  }
  if (encoded.size() < 32) return false;
  for (char c : encoded) {
    if (!IsAlnum(c) && c != '=' && c != '_' && c != '-') return false;
  }
  return true;
}

Status CheckProbe(const Json& probe, std::string_view path) {
  if (!probe.is_object()) {
    return InvalidField(path, "must be an object, got " + std::string(JsonTypeName(probe)));
  }
  RETURN_IF_ERROR(CheckKubeObject(probe, "core.Probe", path));
  constexpr std::array<std::string_view, 4> kHandlers = {"httpGet", "tcpSocket", "exec", "grpc"};
  int handlers = 0;
  for (std::string_view h : kHandlers) {
    auto it = probe.find(h);
    if (it == probe.end()) continue;
    ++handlers;
    if (!it->is_object()) {
      return InvalidField(JoinPath(path, h),
                          "must be an object, got " + std::string(JsonTypeName(*it)));
    }
  }
  if (handlers != 1) {
    return InvalidField(path, "must have exactly one of httpGet, tcpSocket, exec, grpc (has " +
                                  std::to_string(handlers) + ")");
  }
  return Status::Ok();
}

}  // namespace

Status NameList(const FieldReader& f, std::string_view name,
                std::optional<std::vector<std::string>>* out) {
  const Json* v = f.Find(name);
  if (v == nullptr) return Status::Ok();
  std::string path = f.PathOf(name);
  if (!v->is_array()) {
    return InvalidField(path, "must be an array of names, got " + std::string(JsonTypeName(*v)));
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < v->size(); ++i) {
    std::string item_path = IndexPath(path, i);
    ASSIGN_OR_RETURN(std::string n, ReadString((*v)[i], item_path));
    RETURN_IF_ERROR(CheckSubdomain(n, item_path, /*allow_empty=*/false));
    names.push_back(std::move(n));
  }
  *out = std::move(names);
  return Status::Ok();
}

Status CheckSubdomain(std::string_view s, std::string_view path, bool allow_empty) {
  if (s.empty() && allow_empty) return Status::Ok();
  if (!IsDns1123Subdomain(s)) {
    return InvalidField(path, QuoteShort(s) +
                                  " must be a DNS-1123 subdomain (lowercase letters, digits, '-' "
                                  "and '.', labels starting and ending with a letter or digit, at "
                                  "most 253 characters)");
  }
  return Status::Ok();
}

Status CheckImage(std::string_view ref, std::string_view path) {
  if (ref.empty()) return InvalidField(path, "image reference must not be empty");
  if (ref.size() > 255) {
    return InvalidField(path, "image reference must be at most 255 characters (got " +
                                  std::to_string(ref.size()) + ")");
  }
  for (unsigned char c : ref) {
    if (c <= ' ' || c >= 0x7f) {
      return InvalidField(path,
                          "image reference must not contain whitespace or control characters");
    }
  }
  std::string_view name = ref;
  size_t at = ref.find('@');
  if (at != std::string_view::npos) {
    if (!IsDigest(ref.substr(at + 1))) {
      return InvalidField(path, "image digest must be algorithm:hex, e.g. sha256:<64 hex digits>");
    }
    name = ref.substr(0, at);
  }
  size_t last_slash = name.rfind('/');
  size_t colon = name.rfind(':');
  if (colon != std::string_view::npos &&
      (last_slash == std::string_view::npos || colon > last_slash)) {
    if (!IsTag(name.substr(colon + 1))) {
      return InvalidField(path,
                          "image tag must be 1 to 128 of letters, digits, '_', '.' and '-', not "
                          "starting with '.' or '-'");
    }
    name = name.substr(0, colon);
  }
  if (name.empty()) return InvalidField(path, "image reference has no repository name");
  size_t first_slash = name.find('/');
  if (first_slash != std::string_view::npos) {
    std::string_view first = name.substr(0, first_slash);
    bool is_domain = first.find_first_of(".:") != std::string_view::npos || first == "localhost" ||
                     first.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") != std::string_view::npos;
    if (is_domain) {
      if (!IsRegistryHost(first)) {
        return InvalidField(path,
                            "image registry " + QuoteShort(first) + " is not a valid host[:port]");
      }
      name = name.substr(first_slash + 1);
    }
  }
  size_t start = 0;
  while (true) {
    size_t slash = name.find('/', start);
    std::string_view comp =
        name.substr(start, slash == std::string_view::npos ? slash : slash - start);
    if (!IsPathComponent(comp)) {
      return InvalidField(path,
                          "image repository path must be '/'-separated components of lowercase "
                          "letters and digits joined by '.', '_', '__' or dashes");
    }
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return Status::Ok();
}

Status CheckQuantity(std::string_view q, std::string_view path) {
  const std::string rule =
      " is not a Kubernetes quantity (a number with an optional suffix Ki, Mi, Gi, Ti, Pi, Ei, "
      "m, k, M, G, T, P, E or an exponent, e.g. 1Gi, 500Mi, 10G)";
  if (q.empty()) return InvalidField(path, "must not be empty");
  if (q.size() > 64) return InvalidField(path, "must be at most 64 characters");
  size_t i = 0;
  if (q[i] == '+' || q[i] == '-') {
    if (q[i] == '-') return InvalidField(path, "must be positive");
    ++i;
  }
  size_t digits = 0;
  bool nonzero = false;
  bool seen_point = false;
  for (; i < q.size(); ++i) {
    if (IsDigit(q[i])) {
      ++digits;
      nonzero = nonzero || q[i] != '0';
    } else if (q[i] == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (digits == 0) return InvalidField(path, QuoteShort(q) + rule);
  std::string_view suffix = q.substr(i);
  static constexpr std::array<std::string_view, 14> kSuffixes = {
      "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "m", "k", "M", "G", "T", "P", "E"};
  bool ok = false;
  for (std::string_view s : kSuffixes) ok = ok || s == suffix;
  if (!ok && suffix.size() >= 2 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    std::string_view exp = suffix.substr(1);
    if (exp[0] == '+' || exp[0] == '-') exp.remove_prefix(1);
    ok = !exp.empty() && exp.find_first_not_of("0123456789") == std::string_view::npos;
  }
  if (!ok) return InvalidField(path, QuoteShort(q) + rule);
  if (!nonzero) return InvalidField(path, "must be greater than zero");
  return Status::Ok();
}

namespace {

Status FromMismatch(const std::optional<kube::schema::Mismatch>& m) {
  if (!m) return Status::Ok();
  return InvalidField(m->path, m->what);
}

const kube::schema::Message& MessageNamed(std::string_view type) {
  const kube::schema::Message* m = kube::schema::FindMessage(type);
  // The names are literals in this module; a wrong one is a programming error every test hits.
  if (m == nullptr) std::abort();
  return *m;
}

}  // namespace

Status CheckKubeObject(const Json& v, std::string_view type, std::string_view path) {
  return FromMismatch(kube::schema::CheckValue(MessageNamed(type), v, std::string(path)));
}

Status CheckKubeArray(const Json& v, std::string_view type, std::string_view path) {
  return FromMismatch(kube::schema::CheckArray(MessageNamed(type), v, std::string(path)));
}

Status CheckEnv(const StringMap& env, std::string_view path) {
  for (const auto& entry : env) {
    const std::string& name = entry.first;
    std::string p = KeyPath(path, name);
    bool ok = !name.empty() && !IsDigit(name[0]);
    for (char c : name) ok = ok && (IsAlnum(c) || c == '_');
    if (!ok) {
      return InvalidField(p,
                          "environment variable names must match [A-Za-z_][A-Za-z0-9_]* (letters, "
                          "digits and '_', not starting with a digit)");
    }
    if (name.rfind("FORGE_", 0) == 0) {
      return InvalidField(p,
                          "FORGE_* variables are reserved: Steward sets them for the Node-RED "
                          "launcher (credentials, URLs, limits)");
    }
    for (std::string_view reserved : kStewardEnv) {
      if (name == reserved) {
        return InvalidField(p,
                            "is set by Steward (from the engine config and the project URL) and "
                            "cannot be overridden");
      }
    }
  }
  return Status::Ok();
}

Status CheckLabels(const StringMap& labels, std::string_view path, bool refuse_reserved) {
  for (const auto& [key, value] : labels) {
    std::string p = KeyPath(path, key);
    RETURN_IF_ERROR(CheckQualifiedName(key, p));
    if (refuse_reserved) RETURN_IF_ERROR(CheckNotReserved(key, p));
    RETURN_IF_ERROR(CheckLabelValue(value, p));
  }
  return Status::Ok();
}

Status CheckAnnotations(const StringMap& annotations, std::string_view path) {
  size_t total = 0;
  for (const auto& [key, value] : annotations) {
    std::string p = KeyPath(path, key);
    RETURN_IF_ERROR(CheckQualifiedName(key, p));
    RETURN_IF_ERROR(CheckNotReserved(key, p));
    total += key.size() + value.size();
  }
  if (total > kMaxAnnotationBytes) {
    return InvalidField(path, "total size " + std::to_string(total) + " bytes exceeds the " +
                                  std::to_string(kMaxAnnotationBytes) + "-byte (256 KiB) limit");
  }
  return Status::Ok();
}

Status CheckHttpUrl(std::string_view url, std::string_view path) {
  std::string_view rest;
  if (url.rfind("http://", 0) == 0) {
    rest = url.substr(7);
  } else if (url.rfind("https://", 0) == 0) {
    rest = url.substr(8);
  } else {
    return InvalidField(path, "must be an http:// or https:// URL");
  }
  for (unsigned char c : url) {
    if (c <= ' ' || c >= 0x7f) {
      return InvalidField(path, "must not contain whitespace or control characters");
    }
  }
  std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  std::string_view host = authority.substr(
      authority.rfind('@') == std::string_view::npos ? 0 : authority.rfind('@') + 1);
  if (host.empty() || host[0] == ':') return InvalidField(path, "URL has no host");
  return Status::Ok();
}

Status CheckHostPort(std::string_view address, std::string_view path) {
  // The rule of ParseProbeAddress, which reads the address: a port is required, port 0 is
  // refused, an IPv6 host is in brackets.
  auto parts = SplitHostPortText(address);
  if (!parts.ok() || parts->host.empty() || !parts->port) {
    return InvalidField(path, "must be host:port");
  }
  for (unsigned char c : parts->host) {
    if (c <= ' ' || c >= 0x7f || c == '/') return InvalidField(path, "must be host:port");
  }
  if (!ParsePort(*parts->port, /*allow_zero=*/false)) {
    return InvalidField(path, "port must be a number between 1 and 65535");
  }
  return Status::Ok();
}

Status ParseStack(const Json& j, std::string path, Stack* out) {
  ASSIGN_OR_RETURN(FieldReader f, FieldReader::Of(j, std::move(path)));
  RETURN_IF_ERROR(f.OnlyKnown({"image", "cpu", "memory", "env"}));
  if (f.Find("image") != nullptr) {
    RETURN_IF_ERROR(f.String("image", &out->image));
    RETURN_IF_ERROR(CheckImage(out->image, f.PathOf("image")));
  }
  RETURN_IF_ERROR(f.Int("cpu", 1, 1000, &out->cpu));
  RETURN_IF_ERROR(f.Int("memory", 1, 1048576, &out->memory_mb));
  if (f.Find("env") != nullptr) {
    RETURN_IF_ERROR(f.StringMap("env", &out->env));
    RETURN_IF_ERROR(CheckEnv(out->env, f.PathOf("env")));
  }
  return Status::Ok();
}

Status ParseStorage(const Json& j, std::string path, bool size_required, StorageSpec* out) {
  ASSIGN_OR_RETURN(FieldReader f, FieldReader::Of(j, std::move(path)));
  RETURN_IF_ERROR(f.OnlyKnown({"size", "storageClass", "accessMode"}));
  if (f.Find("size") == nullptr) {
    if (size_required) return InvalidField(f.PathOf("size"), "is required");
  } else {
    RETURN_IF_ERROR(f.String("size", &out->size));
    RETURN_IF_ERROR(CheckQuantity(out->size, f.PathOf("size")));
  }
  RETURN_IF_ERROR(f.String("storageClass", &out->storage_class));
  RETURN_IF_ERROR(CheckSubdomain(out->storage_class, f.PathOf("storageClass"), true));
  RETURN_IF_ERROR(f.String("accessMode", &out->access_mode));
  if (out->access_mode.empty()) out->access_mode = "ReadWriteOnce";
  if (out->access_mode != "ReadWriteOnce" && out->access_mode != "ReadWriteMany" &&
      out->access_mode != "ReadWriteOncePod") {
    return InvalidField(f.PathOf("accessMode"),
                        "must be one of ReadWriteOnce, ReadWriteMany, ReadWriteOncePod (got " +
                            QuoteShort(out->access_mode) + ")");
  }
  return Status::Ok();
}

Status ParseProbes(const Json& j, std::string path, std::optional<Json>* liveness,
                   std::optional<Json>* readiness, std::optional<Json>* startup) {
  ASSIGN_OR_RETURN(FieldReader f, FieldReader::Of(j, std::move(path)));
  RETURN_IF_ERROR(f.OnlyKnown({"livenessProbe", "readinessProbe", "startupProbe"}));
  const std::array<std::pair<std::string_view, std::optional<Json>*>, 3> probes = {
      {{"livenessProbe", liveness}, {"readinessProbe", readiness}, {"startupProbe", startup}}};
  for (const auto& [name, out] : probes) {
    const Json* v = f.Find(name);
    if (v == nullptr) continue;
    RETURN_IF_ERROR(CheckProbe(*v, f.PathOf(name)));
    *out = *v;
  }
  return Status::Ok();
}

}  // namespace steward::engine::internal
