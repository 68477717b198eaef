#include <cerrno>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>

#include "app/app.h"
#include "common/duration.h"
#include "common/host_port.h"
#include "common/yaml.h"

namespace steward::app {
namespace {

std::string Join(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : std::string(path) + "." + std::string(key);
}

Status Invalid(std::string_view path, std::string_view what) {
  return InvalidArgument(std::string(path) + ": " + std::string(what));
}

std::string_view TypeName(const Json& j) {
  if (j.is_string()) return "string";
  if (j.is_number_integer()) return "integer";
  if (j.is_number()) return "number";
  if (j.is_boolean()) return "boolean";
  if (j.is_object()) return "object";
  if (j.is_array()) return "array";
  return "null";
}

// The keys of one mapping of the document. A null section reads as empty (a bare "instance:"
// line in YAML), as the engine section does.
class Section {
 public:
  static StatusOr<Section> Of(const Json* j, std::string path) {
    if (j != nullptr && !j->is_null() && !j->is_object()) {
      return Invalid(path.empty() ? "config" : path,
                     "must be a mapping (got " + std::string(TypeName(*j)) + ")");
    }
    return Section(j != nullptr && j->is_object() ? j : nullptr, std::move(path));
  }

  Status OnlyKnown(std::initializer_list<std::string_view> known) const {
    if (obj_ == nullptr) return Status::Ok();
    for (const auto& [key, value] : obj_->items()) {
      bool found = false;
      for (std::string_view k : known) found = found || key == k;
      if (!found) return Invalid(Join(path_, key), "unknown key");
    }
    return Status::Ok();
  }

  const Json* Find(std::string_view name) const {
    if (obj_ == nullptr) return nullptr;
    auto it = obj_->find(std::string(name));
    return it == obj_->end() || it->is_null() ? nullptr : &*it;
  }
  std::string PathOf(std::string_view name) const { return Join(path_, name); }

  Status String(std::string_view name, std::string* out) const {
    const Json* v = Find(name);
    if (v == nullptr) return Status::Ok();
    if (!v->is_string()) {
      return Invalid(PathOf(name), "must be a string (got " + std::string(TypeName(*v)) + ")");
    }
    *out = v->get<std::string>();
    return Status::Ok();
  }
  Status NonEmptyString(std::string_view name, std::string* out) const {
    RETURN_IF_ERROR(String(name, out));
    if (out->empty()) return Invalid(PathOf(name), "must not be empty");
    return Status::Ok();
  }
  Status Int(std::string_view name, int64_t lo, int64_t hi, int64_t* out) const {
    const Json* v = Find(name);
    if (v == nullptr) return Status::Ok();
    if (!v->is_number_integer()) {
      return Invalid(PathOf(name), "must be an integer (got " + std::string(TypeName(*v)) + ")");
    }
    // Unsigned values above int64 would wrap; compare as unsigned first.
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(hi)) {
      return Invalid(PathOf(name), "must be between " + std::to_string(lo) + " and " +
                                       std::to_string(hi) + " (got " + v->dump() + ")");
    }
    int64_t n = v->get<int64_t>();
    if (n < lo || n > hi) {
      return Invalid(PathOf(name), "must be between " + std::to_string(lo) + " and " +
                                       std::to_string(hi) + " (got " + std::to_string(n) + ")");
    }
    *out = n;
    return Status::Ok();
  }
  Status OneOf(std::string_view name, std::initializer_list<std::string_view> allowed,
               std::string* out) const {
    RETURN_IF_ERROR(String(name, out));
    std::string list;
    for (std::string_view a : allowed) {
      if (*out == a) return Status::Ok();
      list += list.empty() ? "" : ", ";
      list += a;
    }
    return Invalid(PathOf(name),
                   "must be one of " + list + " (got \"" + out->substr(0, 64) + "\")");
  }

 private:
  Section(const Json* obj, std::string path) : obj_(obj), path_(std::move(path)) {}
  const Json* obj_;
  std::string path_;
};

// HOST:PORT or [v6]:PORT with a port in 0..65535 (0 = any free port).
Status CheckListen(std::string_view text, std::string_view path) {
  std::string host;
  uint16_t port = 0;
  if (!SplitHostPort(std::string(text), &host, &port)) {
    return Invalid(path, "expected HOST:PORT (got \"" + std::string(text) + "\")");
  }
  return Status::Ok();
}

Status ParseDatabase(const Section& s, std::string* out) {
  RETURN_IF_ERROR(s.String("database", out));
  const std::string& d = *out;
  if (d.empty() || d.rfind("postgres://", 0) == 0 || d.rfind("postgresql://", 0) == 0) {
    return Status::Ok();
  }
  if (d.rfind("sqlite:", 0) == 0 && d.size() > 7) return Status::Ok();
  return Invalid(s.PathOf("database"),
                 "must be sqlite:PATH or postgres://... (got \"" + d.substr(0, 64) + "\")");
}

Status ParseEmbedded(const Json* j, ServeConfig* out) {
  ASSIGN_OR_RETURN(Section s, Section::Of(j, "kubernetes.embedded"));
  RETURN_IF_ERROR(s.OnlyKnown({"profile", "listen", "ingressListen", "seed", "kubeconfigOut"}));
  RETURN_IF_ERROR(s.NonEmptyString("profile", &out->embedded_profile));
  RETURN_IF_ERROR(s.String("listen", &out->embedded_listen));
  RETURN_IF_ERROR(CheckListen(out->embedded_listen, s.PathOf("listen")));
  RETURN_IF_ERROR(s.String("ingressListen", &out->ingress_listen));
  RETURN_IF_ERROR(CheckListen(out->ingress_listen, s.PathOf("ingressListen")));
  if (const Json* seed = s.Find("seed")) {
    if (!seed->is_number_integer() || (!seed->is_number_unsigned() && seed->get<int64_t>() < 0)) {
      return Invalid(s.PathOf("seed"),
                     "must be a non-negative integer (got " +
                         (seed->is_number_integer() ? seed->dump() : std::string(TypeName(*seed))) +
                         ")");
    }
    out->seed = seed->get<uint64_t>();
  }
  return s.String("kubeconfigOut", &out->kubeconfig_out);
}

Status ParseKubernetes(const Json* j, ServeConfig* out) {
  ASSIGN_OR_RETURN(Section s, Section::Of(j, "kubernetes"));
  RETURN_IF_ERROR(s.OnlyKnown({"source", "kubeconfig", "context", "embedded"}));
  std::string source = "kubeconfig";
  RETURN_IF_ERROR(s.OneOf("source", {"kubeconfig", "in-cluster", "embedded"}, &source));
  out->cluster = source == "embedded"     ? ClusterSource::kEmbedded
                 : source == "in-cluster" ? ClusterSource::kInCluster
                                          : ClusterSource::kKubeconfig;
  RETURN_IF_ERROR(s.String("kubeconfig", &out->kubeconfig));
  RETURN_IF_ERROR(s.String("context", &out->context));
  if (out->cluster == ClusterSource::kInCluster &&
      (!out->kubeconfig.empty() || !out->context.empty())) {
    return Invalid(s.PathOf(out->kubeconfig.empty() ? "context" : "kubeconfig"),
                   "not used with source: in-cluster");
  }
  return ParseEmbedded(s.Find("embedded"), out);
}

Status ParseTls(const Json* j, ServeConfig* out) {
  ASSIGN_OR_RETURN(Section s, Section::Of(j, "tls"));
  RETURN_IF_ERROR(s.OnlyKnown({"certFile", "keyFile"}));
  RETURN_IF_ERROR(s.String("certFile", &out->tls_cert_file));
  RETURN_IF_ERROR(s.String("keyFile", &out->tls_key_file));
  if (out->tls_cert_file.empty() != out->tls_key_file.empty()) {
    return Invalid(
        s.PathOf(out->tls_cert_file.empty() ? "certFile" : "keyFile"),
        "required with " + s.PathOf(out->tls_cert_file.empty() ? "keyFile" : "certFile"));
  }
  return Status::Ok();
}

// A duration key of `s` within [lo, hi]; left as it is when absent.
Status BoundedDuration(const Section& s, std::string_view name, std::chrono::milliseconds lo,
                       std::chrono::milliseconds hi, std::string_view range,
                       std::chrono::milliseconds* out) {
  const Json* t = s.Find(name);
  if (t == nullptr) return Status::Ok();
  auto d = ParseDuration(*t, s.PathOf(name));
  if (!d.ok()) return d.status();
  if (*d < lo || *d > hi) {
    return Invalid(s.PathOf(name),
                   "must be between " + std::string(range) + " (got " + t->dump() + ")");
  }
  *out = *d;
  return Status::Ok();
}

Status ParseApi(const Json* j, ServeConfig* out) {
  ASSIGN_OR_RETURN(Section s, Section::Of(j, "api"));
  RETURN_IF_ERROR(s.OnlyKnown({"maxConnections", "readHeaderTimeout", "readTimeout"}));
  int64_t max_connections = static_cast<int64_t>(out->api_max_connections);
  RETURN_IF_ERROR(s.Int("maxConnections", 1, 1000000, &max_connections));
  out->api_max_connections = static_cast<size_t>(max_connections);
  RETURN_IF_ERROR(BoundedDuration(s, "readHeaderTimeout", std::chrono::milliseconds(1),
                                  std::chrono::hours(1), "1ms and 1h",
                                  &out->api_read_header_timeout));
  RETURN_IF_ERROR(BoundedDuration(s, "readTimeout", std::chrono::milliseconds(1),
                                  std::chrono::hours(1), "1ms and 1h", &out->api_read_timeout));
  return Status::Ok();
}

Status ParseInstance(const Json* j, ServeConfig* out) {
  ASSIGN_OR_RETURN(Section s, Section::Of(j, "instance"));
  RETURN_IF_ERROR(s.OnlyKnown({"access", "timeout"}));
  std::string access = "auto";
  RETURN_IF_ERROR(s.OneOf("access", {"auto", "direct", "proxy"}, &access));
  out->instance_access = access == "direct"  ? InstanceAccess::kDirect
                         : access == "proxy" ? InstanceAccess::kProxy
                                             : InstanceAccess::kAuto;
  if (const Json* t = s.Find("timeout")) {
    auto d = ParseDuration(*t, s.PathOf("timeout"));
    if (!d.ok()) return d.status();
    if (*d < std::chrono::milliseconds(1) || *d > std::chrono::minutes(10)) {
      return Invalid(s.PathOf("timeout"), "must be between 1ms and 10m (got " + t->dump() + ")");
    }
    out->instance_timeout = *d;
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::chrono::milliseconds> ParseDuration(const Json& j, std::string_view path) {
  if (j.is_number_integer()) {
    if (!j.is_number_unsigned() && j.get<int64_t>() < 0) {
      return Invalid(path, "must be a non-negative duration (got " + j.dump() + ")");
    }
    if (j.get<uint64_t>() > 999999999) {
      return Invalid(path,
                     "must be a duration of at most 999999999 seconds (got " + j.dump() + ")");
    }
    return std::chrono::milliseconds(j.get<int64_t>() * 1000);
  }
  if (!j.is_string()) {
    return Invalid(path, "must be a duration " + std::string(kDurationForms) + " (got " +
                             std::string(TypeName(j)) + ")");
  }
  const std::string s = j.get<std::string>();
  auto d = steward::ParseDuration(s);
  if (!d) {
    return Invalid(path, "must be a duration " + std::string(kDurationForms) + " (got \"" +
                             s.substr(0, 64) + "\")");
  }
  return *d;
}

StatusOr<ServeConfig> ParseServeConfig(std::string_view text) {
  ASSIGN_OR_RETURN(Json doc, ParseYaml(text));
  ServeConfig config;
  ASSIGN_OR_RETURN(Section s, Section::Of(&doc, ""));
  RETURN_IF_ERROR(
      s.OnlyKnown({"listen", "probeListen", "dataDir", "database", "apiTokenFile", "apiWorkers",
                   "logLevel", "api", "tls", "kubernetes", "instance", "engine"}));
  RETURN_IF_ERROR(s.String("listen", &config.listen));
  RETURN_IF_ERROR(CheckListen(config.listen, "listen"));
  RETURN_IF_ERROR(s.String("probeListen", &config.probe_listen));
  if (!config.probe_listen.empty()) {
    RETURN_IF_ERROR(CheckListen(config.probe_listen, "probeListen"));
  }
  RETURN_IF_ERROR(s.NonEmptyString("dataDir", &config.data_dir));
  RETURN_IF_ERROR(ParseDatabase(s, &config.database));
  RETURN_IF_ERROR(s.String("apiTokenFile", &config.api_token_file));
  int64_t workers = config.api_workers;
  RETURN_IF_ERROR(s.Int("apiWorkers", 1, 256, &workers));
  config.api_workers = static_cast<int>(workers);
  RETURN_IF_ERROR(s.OneOf("logLevel",
                          {"trace", "debug", "info", "warn", "error", "critical", "off"},
                          &config.log_level));
  RETURN_IF_ERROR(ParseApi(s.Find("api"), &config));
  RETURN_IF_ERROR(ParseTls(s.Find("tls"), &config));
  RETURN_IF_ERROR(ParseKubernetes(s.Find("kubernetes"), &config));
  RETURN_IF_ERROR(ParseInstance(s.Find("instance"), &config));
  const Json* engine = s.Find("engine");
  ASSIGN_OR_RETURN(config.engine, engine::ParseEngineConfig(engine ? *engine : Json(), "engine"));
  return config;
}

StatusOr<ServeConfig> LoadServeConfig(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return Status(err == ENOENT ? StatusCode::kNotFound : StatusCode::kFailedPrecondition,
                  "config file " + path + ": " + std::strerror(err));
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto config = ParseServeConfig(text.str());
  if (!config.ok()) {
    return Status(config.error().code(), "config file " + path + ": " + config.error().message());
  }
  return config;
}

}  // namespace steward::app
