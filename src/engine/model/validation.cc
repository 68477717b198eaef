#include "engine/model/validation.h"

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

// Keys and values quoted in messages are cut short so a hostile input cannot bloat them.
std::string Quote(std::string_view s) {
  constexpr size_t kMax = 80;
  std::string out = "\"";
  out += s.substr(0, kMax);
  if (s.size() > kMax) out += "...";
  out += "\"";
  return out;
}

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
  if (key.empty()) return Invalid(path, "key must not be empty");
  std::string_view name = key;
  size_t slash = key.find('/');
  if (slash != std::string_view::npos) {
    std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (prefix.empty() || !IsDns1123Subdomain(prefix)) {
      return Invalid(path, "key prefix " + Quote(prefix) +
                               " must be a DNS-1123 subdomain (lowercase letters, digits, '-' "
                               "and '.', at most 253 characters)");
    }
  }
  if (name.empty() || name.size() > 63) {
    return Invalid(path, "key name part must be 1 to 63 characters");
  }
  if (!IsQualifiedNamePart(name)) {
    return Invalid(path,
                   "key name part must consist of letters, digits, '-', '_' and '.', and start "
                   "and end with a letter or digit");
  }
  return Status::Ok();
}

Status CheckNotReserved(std::string_view key, std::string_view path) {
  for (std::string_view prefix : kReservedPrefixes) {
    if (key.substr(0, prefix.size()) == prefix) {
      return Invalid(
          path, "the " + std::string(prefix) + " prefix is reserved for keys Steward sets itself");
    }
  }
  return Status::Ok();
}

Status CheckLabelValue(std::string_view value, std::string_view path) {
  if (value.empty()) return Status::Ok();
  if (value.size() > 63) return Invalid(path, "label value must be at most 63 characters");
  if (!IsQualifiedNamePart(value)) {
    return Invalid(path,
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
    return Invalid(path, "must be an object, got " + std::string(TypeName(probe)));
  }
  RETURN_IF_ERROR(CheckKubeObject(probe, "core.Probe", path));
  constexpr std::array<std::string_view, 4> kHandlers = {"httpGet", "tcpSocket", "exec", "grpc"};
  int handlers = 0;
  for (std::string_view h : kHandlers) {
    auto it = probe.find(h);
    if (it == probe.end()) continue;
    ++handlers;
    if (!it->is_object()) {
      return Invalid(Join(path, h), "must be an object, got " + std::string(TypeName(*it)));
    }
  }
  if (handlers != 1) {
    return Invalid(path, "must have exactly one of httpGet, tcpSocket, exec, grpc (has " +
                             std::to_string(handlers) + ")");
  }
  return Status::Ok();
}

}  // namespace

std::string Join(std::string_view path, std::string_view field) {
  if (path.empty()) return std::string(field);
  std::string out(path);
  out += '.';
  out += field;
  return out;
}

std::string KeyPath(std::string_view path, std::string_view key) {
  return std::string(path) + "[" + Quote(key) + "]";
}

std::string IndexPath(std::string_view path, size_t index) {
  return std::string(path) + "[" + std::to_string(index) + "]";
}

Status Invalid(std::string_view path, std::string_view what) {
  std::string m(path);
  m += ": ";
  m += what;
  return InvalidArgument(std::move(m));
}

std::string_view TypeName(const Json& j) {
  switch (j.type()) {
    case Json::value_t::string:
      return "string";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "integer";
    case Json::value_t::number_float:
      return "number";
    case Json::value_t::object:
      return "object";
    case Json::value_t::array:
      return "array";
    case Json::value_t::null:
      return "null";
    default:
      return "binary";
  }
}

StatusOr<int64_t> AsInt(const Json& v, std::string_view path, int64_t lo, int64_t hi) {
  int64_t n = 0;
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Invalid(path, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                               " (got " + std::to_string(u) + ")");
    }
    n = static_cast<int64_t>(u);
  } else if (v.is_number_integer()) {
    n = v.get<int64_t>();
  } else if (v.is_number_float()) {
    return Invalid(path, "must be an integer, got " + v.dump());
  } else {
    return Invalid(path, "must be an integer, got " + std::string(TypeName(v)));
  }
  if (n < lo || n > hi) {
    return Invalid(path, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                             " (got " + std::to_string(n) + ")");
  }
  return n;
}

StatusOr<std::string> AsString(const Json& v, std::string_view path) {
  if (!v.is_string()) return Invalid(path, "must be a string, got " + std::string(TypeName(v)));
  return v.get<std::string>();
}

StatusOr<bool> AsBool(const Json& v, std::string_view path) {
  if (!v.is_boolean()) return Invalid(path, "must be a boolean, got " + std::string(TypeName(v)));
  return v.get<bool>();
}

StatusOr<StringMap> AsStringMap(const Json& v, std::string_view path) {
  if (!v.is_object()) return Invalid(path, "must be an object, got " + std::string(TypeName(v)));
  StringMap out;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!it.value().is_string()) {
      return Invalid(KeyPath(path, it.key()),
                     "must be a string, got " + std::string(TypeName(it.value())));
    }
    out.emplace(it.key(), it.value().get<std::string>());
  }
  return out;
}

StatusOr<Fields> Fields::Of(const Json& j, std::string path) {
  if (j.is_null()) return Fields(nullptr, std::move(path));
  if (!j.is_object()) return Invalid(path, "must be an object, got " + std::string(TypeName(j)));
  return Fields(&j, std::move(path));
}

Status Fields::OnlyKnown(std::initializer_list<std::string_view> known) const {
  if (obj_ == nullptr) return Status::Ok();
  for (auto it = obj_->begin(); it != obj_->end(); ++it) {
    bool found = false;
    for (std::string_view k : known) found = found || k == it.key();
    if (found) continue;
    // A key that is not an identifier ("x: y", "a.b", 10 KB of text) is quoted and cut short,
    // so the message's leading path stays the field (the API's "field") and stays small.
    const std::string& key = it.key();
    bool identifier = !key.empty() && !IsDigit(key[0]);
    for (char c : key) identifier = identifier && (IsAlnum(c) || c == '_');
    return Invalid(identifier ? Join(path_, key) : KeyPath(path_, key), "unknown field");
  }
  return Status::Ok();
}

const Json* Fields::Find(std::string_view name) const {
  if (obj_ == nullptr) return nullptr;
  auto it = obj_->find(name);
  if (it == obj_->end() || it->is_null()) return nullptr;
  return &*it;
}

Status Fields::String(std::string_view name, std::string* out) const {
  const Json* v = Find(name);
  if (v == nullptr) return Status::Ok();
  ASSIGN_OR_RETURN(*out, AsString(*v, PathOf(name)));
  return Status::Ok();
}

Status Fields::Bool(std::string_view name, bool* out) const {
  const Json* v = Find(name);
  if (v == nullptr) return Status::Ok();
  ASSIGN_OR_RETURN(*out, AsBool(*v, PathOf(name)));
  return Status::Ok();
}

Status Fields::Int(std::string_view name, int64_t lo, int64_t hi, int* out) const {
  const Json* v = Find(name);
  if (v == nullptr) return Status::Ok();
  ASSIGN_OR_RETURN(int64_t n, AsInt(*v, PathOf(name), lo, hi));
  *out = static_cast<int>(n);
  return Status::Ok();
}

Status Fields::Map(std::string_view name, StringMap* out) const {
  const Json* v = Find(name);
  if (v == nullptr) return Status::Ok();
  ASSIGN_OR_RETURN(*out, AsStringMap(*v, PathOf(name)));
  return Status::Ok();
}

Status Fields::Object(std::string_view name, std::optional<Json>* out) const {
  const Json* v = Find(name);
  if (v == nullptr) return Status::Ok();
  if (!v->is_object()) {
    return Invalid(PathOf(name), "must be an object, got " + std::string(TypeName(*v)));
  }
  *out = *v;
  return Status::Ok();
}

Status Fields::ObjectArray(std::string_view name, std::optional<Json>* out) const {
  const Json* v = Find(name);
  if (v == nullptr) return Status::Ok();
  std::string path = PathOf(name);
  if (!v->is_array()) {
    return Invalid(path, "must be an array of objects, got " + std::string(TypeName(*v)));
  }
  for (size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_object()) {
      return Invalid(IndexPath(path, i),
                     "must be an object, got " + std::string(TypeName((*v)[i])));
    }
  }
  *out = *v;
  return Status::Ok();
}

Status Fields::NameList(std::string_view name, std::optional<std::vector<std::string>>* out) const {
  const Json* v = Find(name);
  if (v == nullptr) return Status::Ok();
  std::string path = PathOf(name);
  if (!v->is_array()) {
    return Invalid(path, "must be an array of names, got " + std::string(TypeName(*v)));
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < v->size(); ++i) {
    std::string item_path = IndexPath(path, i);
    ASSIGN_OR_RETURN(std::string n, AsString((*v)[i], item_path));
    RETURN_IF_ERROR(CheckSubdomain(n, item_path, /*allow_empty=*/false));
    names.push_back(std::move(n));
  }
  *out = std::move(names);
  return Status::Ok();
}

Status CheckSubdomain(std::string_view s, std::string_view path, bool allow_empty) {
  if (s.empty() && allow_empty) return Status::Ok();
  if (!IsDns1123Subdomain(s)) {
    return Invalid(path, Quote(s) +
                             " must be a DNS-1123 subdomain (lowercase letters, digits, '-' "
                             "and '.', labels starting and ending with a letter or digit, at "
                             "most 253 characters)");
  }
  return Status::Ok();
}

Status CheckImage(std::string_view ref, std::string_view path) {
  if (ref.empty()) return Invalid(path, "image reference must not be empty");
  if (ref.size() > 255) {
    return Invalid(path, "image reference must be at most 255 characters (got " +
                             std::to_string(ref.size()) + ")");
  }
  for (unsigned char c : ref) {
    if (c <= ' ' || c >= 0x7f) {
      return Invalid(path, "image reference must not contain whitespace or control characters");
    }
  }
  std::string_view name = ref;
  size_t at = ref.find('@');
  if (at != std::string_view::npos) {
    if (!IsDigest(ref.substr(at + 1))) {
      return Invalid(path, "image digest must be algorithm:hex, e.g. sha256:<64 hex digits>");
    }
    name = ref.substr(0, at);
  }
  size_t last_slash = name.rfind('/');
  size_t colon = name.rfind(':');
  if (colon != std::string_view::npos &&
      (last_slash == std::string_view::npos || colon > last_slash)) {
    if (!IsTag(name.substr(colon + 1))) {
      return Invalid(path,
                     "image tag must be 1 to 128 of letters, digits, '_', '.' and '-', not "
                     "starting with '.' or '-'");
    }
    name = name.substr(0, colon);
  }
  if (name.empty()) return Invalid(path, "image reference has no repository name");
  size_t first_slash = name.find('/');
  if (first_slash != std::string_view::npos) {
    std::string_view first = name.substr(0, first_slash);
    bool is_domain = first.find_first_of(".:") != std::string_view::npos || first == "localhost" ||
                     first.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") != std::string_view::npos;
    if (is_domain) {
      if (!IsRegistryHost(first)) {
        return Invalid(path, "image registry " + Quote(first) + " is not a valid host[:port]");
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
      return Invalid(path,
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
  if (q.empty()) return Invalid(path, "must not be empty");
  if (q.size() > 64) return Invalid(path, "must be at most 64 characters");
  size_t i = 0;
  if (q[i] == '+' || q[i] == '-') {
    if (q[i] == '-') return Invalid(path, "must be positive");
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
  if (digits == 0) return Invalid(path, Quote(q) + rule);
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
  if (!ok) return Invalid(path, Quote(q) + rule);
  if (!nonzero) return Invalid(path, "must be greater than zero");
  return Status::Ok();
}

namespace {

Status FromMismatch(const std::optional<kube::schema::Mismatch>& m) {
  if (!m) return Status::Ok();
  return Invalid(m->path, m->what);
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
      return Invalid(p,
                     "environment variable names must match [A-Za-z_][A-Za-z0-9_]* (letters, "
                     "digits and '_', not starting with a digit)");
    }
    if (name.rfind("FORGE_", 0) == 0) {
      return Invalid(p,
                     "FORGE_* variables are reserved: Steward sets them for the Node-RED "
                     "launcher (credentials, URLs, limits)");
    }
    for (std::string_view reserved : kStewardEnv) {
      if (name == reserved) {
        return Invalid(p,
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
    return Invalid(path, "total size " + std::to_string(total) + " bytes exceeds the " +
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
    return Invalid(path, "must be an http:// or https:// URL");
  }
  for (unsigned char c : url) {
    if (c <= ' ' || c >= 0x7f) {
      return Invalid(path, "must not contain whitespace or control characters");
    }
  }
  std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  std::string_view host = authority.substr(
      authority.rfind('@') == std::string_view::npos ? 0 : authority.rfind('@') + 1);
  if (host.empty() || host[0] == ':') return Invalid(path, "URL has no host");
  return Status::Ok();
}

Status CheckHostPort(std::string_view address, std::string_view path) {
  // The rule of ParseProbeAddress, which reads the address: a port is required, port 0 is
  // refused, an IPv6 host is in brackets.
  auto parts = SplitHostPortText(address);
  if (!parts.ok() || parts->host.empty() || !parts->port) {
    return Invalid(path, "must be host:port");
  }
  for (unsigned char c : parts->host) {
    if (c <= ' ' || c >= 0x7f || c == '/') return Invalid(path, "must be host:port");
  }
  if (!ParsePort(*parts->port, /*allow_zero=*/false)) {
    return Invalid(path, "port must be a number between 1 and 65535");
  }
  return Status::Ok();
}

Status ParseStack(const Json& j, std::string path, Stack* out) {
  ASSIGN_OR_RETURN(Fields f, Fields::Of(j, std::move(path)));
  RETURN_IF_ERROR(f.OnlyKnown({"image", "cpu", "memory", "env"}));
  if (f.Find("image") != nullptr) {
    RETURN_IF_ERROR(f.String("image", &out->image));
    RETURN_IF_ERROR(CheckImage(out->image, f.PathOf("image")));
  }
  RETURN_IF_ERROR(f.Int("cpu", 1, 1000, &out->cpu));
  RETURN_IF_ERROR(f.Int("memory", 128, 65536, &out->memory_mb));
  if (f.Find("env") != nullptr) {
    RETURN_IF_ERROR(f.Map("env", &out->env));
    RETURN_IF_ERROR(CheckEnv(out->env, f.PathOf("env")));
  }
  return Status::Ok();
}

Status ParseStorage(const Json& j, std::string path, bool size_required, StorageSpec* out) {
  ASSIGN_OR_RETURN(Fields f, Fields::Of(j, std::move(path)));
  RETURN_IF_ERROR(f.OnlyKnown({"size", "storageClass", "accessMode"}));
  if (f.Find("size") == nullptr) {
    if (size_required) return Invalid(f.PathOf("size"), "is required");
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
    return Invalid(f.PathOf("accessMode"),
                   "must be one of ReadWriteOnce, ReadWriteMany, ReadWriteOncePod (got " +
                       Quote(out->access_mode) + ")");
  }
  return Status::Ok();
}

Status ParseProbes(const Json& j, std::string path, std::optional<Json>* liveness,
                   std::optional<Json>* readiness, std::optional<Json>* startup) {
  ASSIGN_OR_RETURN(Fields f, Fields::Of(j, std::move(path)));
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
