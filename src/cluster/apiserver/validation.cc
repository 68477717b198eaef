#include "cluster/apiserver/validation.h"

#include <set>

#include "cluster/apiserver/selectors.h"
#include "cluster/apiserver/validation_internal.h"
#include "common/json_access.h"

namespace steward::cluster {

namespace {

using validation_internal::Causes;
using validation_internal::IsPortName;

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

bool IsDns1123Label(std::string_view v) {
  if (v.empty() || v.size() > 63) return false;
  if (!IsLowerAlnum(v.front()) || !IsLowerAlnum(v.back())) return false;
  for (char c : v) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

constexpr const char* kSubdomainMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
constexpr const char* kLabelMsg =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
constexpr const char* kDns1035Msg =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
constexpr const char* kLabelValueMsg =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
constexpr const char* kQualifiedNameMsg =
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
    "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

bool IsNamePart(std::string_view v) {
  if (v.empty() || v.size() > 63) return false;
  if (!IsAlnum(v.front()) || !IsAlnum(v.back())) return false;
  for (char c : v) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

void ValidateStringMap(Causes& c, const Json& map, const std::string& field, bool labels) {
  if (map.is_null()) return;
  if (!map.is_object()) {
    c.TypeInvalid(field, map, "map of strings");
    return;
  }
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string& key = it.key();
    std::string key_error = CheckQualifiedName(key);
    if (!key_error.empty()) c.Invalid(field, key, key_error);
    if (!it.value().is_string()) {
      c.TypeInvalid(field + "[" + key + "]", it.value(), "string");
      continue;
    }
    if (labels) {
      std::string value_error = CheckLabelValue(it.value().get<std::string>());
      if (!value_error.empty()) c.Invalid(field, it.value(), value_error);
    }
  }
}

void ValidateMetadata(Causes& c, const ResourceType& rt, const Json& meta) {
  const Json& name = MemberOrNull(meta, "name");
  if (!name.is_string() || name.get<std::string>().empty()) {
    c.Required("metadata.name", "name or generateName is required");
  } else {
    std::string n = name.get<std::string>();
    std::string err;
    if (rt.kind == "Namespace") {
      err = CheckDns1123Label(n);
    } else if (rt.group == "rbac.authorization.k8s.io") {
      err = CheckPathSegmentName(n);  // ValidateRBACName: "system:controller:x" is valid
    } else if (rt.kind == "Service") {
      err = CheckDns1035Label(n);
    } else {
      err = CheckDns1123Subdomain(n);
    }
    if (!err.empty()) c.Invalid("metadata.name", n, err);
  }
  ValidateStringMap(c, MemberOrNull(meta, "labels"), "metadata.labels", true);
  ValidateStringMap(c, MemberOrNull(meta, "annotations"), "metadata.annotations", false);
  const Json& annotations = MemberOrNull(meta, "annotations");
  if (annotations.is_object()) {
    size_t total = 0;
    for (auto it = annotations.begin(); it != annotations.end(); ++it) {
      total +=
          it.key().size() + (it.value().is_string() ? it.value().get<std::string>().size() : 0);
    }
    if (total > 256 * 1024) {
      c.TooLong("metadata.annotations", "may not be more than 262144 bytes");
    }
  }
  const Json& finalizers = MemberOrNull(meta, "finalizers");
  if (!finalizers.is_null()) {
    if (!finalizers.is_array()) {
      c.TypeInvalid("metadata.finalizers", finalizers, "array of strings");
    } else {
      for (size_t i = 0; i < finalizers.size(); ++i) {
        if (!finalizers[i].is_string()) {
          c.TypeInvalid("metadata.finalizers[" + std::to_string(i) + "]", finalizers[i], "string");
        }
      }
    }
  }
}

void ValidatePort(Causes& c, const Json& port, const std::string& field, bool required) {
  if (port.is_null()) {
    if (required) c.Required(field);
    return;
  }
  if (!port.is_number_integer()) {
    c.TypeInvalid(field, port, "integer");
    return;
  }
  int64_t p = port.get<int64_t>();
  if (p < 1 || p > 65535) c.Invalid(field, port, "must be between 1 and 65535, inclusive");
}

void ValidateContainers(Causes& c, const Json& containers, const std::string& field,
                        bool required) {
  if (containers.is_null()) {
    if (required) c.Required(field);
    return;
  }
  if (!containers.is_array()) {
    c.TypeInvalid(field, containers, "array");
    return;
  }
  if (required && containers.empty()) c.Required(field);
  std::set<std::string> names;
  for (size_t i = 0; i < containers.size(); ++i) {
    const Json& ct = containers[i];
    std::string f = field + "[" + std::to_string(i) + "]";
    if (!ct.is_object()) {
      c.TypeInvalid(f, ct, "object");
      continue;
    }
    const Json& name = MemberOrNull(ct, "name");
    if (!name.is_string() || name.get<std::string>().empty()) {
      c.Required(f + ".name");
    } else {
      std::string n = name.get<std::string>();
      std::string err = CheckDns1123Label(n);
      if (!err.empty()) c.Invalid(f + ".name", n, err);
      if (!names.insert(n).second) c.Duplicate(f + ".name", n);
    }
    const Json& image = MemberOrNull(ct, "image");
    if (!image.is_string() || image.get<std::string>().empty()) c.Required(f + ".image");
    const Json& ports = MemberOrNull(ct, "ports");
    if (ports.is_array()) {
      std::set<std::string> port_names;
      for (size_t j = 0; j < ports.size(); ++j) {
        std::string pf = f + ".ports[" + std::to_string(j) + "]";
        ValidatePort(c, MemberOrNull(ports[j], "containerPort"), pf + ".containerPort", true);
        const Json& pn = MemberOrNull(ports[j], "name");
        if (pn.is_string()) {
          std::string n = pn.get<std::string>();
          if (!IsPortName(n)) {
            c.Invalid(pf + ".name", n,
                      "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
          } else if (!port_names.insert(n).second) {
            c.Duplicate(pf + ".name", n);
          }
        }
      }
    }
    const Json& env = MemberOrNull(ct, "env");
    if (env.is_array()) {
      for (size_t j = 0; j < env.size(); ++j) {
        const Json& en = MemberOrNull(env[j], "name");
        if (!en.is_string() || en.get<std::string>().empty()) {
          c.Required(f + ".env[" + std::to_string(j) + "].name");
        }
      }
    }
  }
}

void ValidatePodSpec(Causes& c, const Json& spec, const std::string& field) {
  if (!spec.is_object()) {
    c.Required(field);
    return;
  }
  ValidateContainers(c, MemberOrNull(spec, "containers"), field + ".containers", true);
  ValidateContainers(c, MemberOrNull(spec, "initContainers"), field + ".initContainers", false);
  const Json& policy = MemberOrNull(spec, "restartPolicy");
  if (policy.is_string()) {
    std::string p = policy.get<std::string>();
    if (p != "Always" && p != "OnFailure" && p != "Never") {
      c.Unsupported(field + ".restartPolicy", policy, {"Always", "OnFailure", "Never"});
    }
  }
}

void ValidateWorkload(Causes& c, const ResourceType& rt, const Json& obj, const Json* old) {
  const Json& spec = MemberOrNull(obj, "spec");
  if (!spec.is_object()) {
    c.Required("spec");
    return;
  }
  const Json& replicas = MemberOrNull(spec, "replicas");
  if (!replicas.is_null() && (!replicas.is_number_integer() || replicas.get<int64_t>() < 0)) {
    c.Invalid("spec.replicas", replicas, "must be greater than or equal to 0");
  }
  const Json& selector = MemberOrNull(spec, "selector");
  if (selector.is_null()) {
    c.Required("spec.selector");
  } else {
    auto parsed = LabelSelector::FromJson(selector);
    if (!parsed.ok()) {
      c.Invalid("spec.selector", selector, parsed.status().message());
    } else if (parsed->Empty()) {
      c.Invalid("spec.selector", selector,
                "empty selector is invalid for " + std::string(rt.singular));
    } else {
      const Json& template_labels =
          MemberOrNull(MemberOrNull(MemberOrNull(spec, "template"), "metadata"), "labels");
      if (!parsed->MatchesJson(template_labels)) {
        c.Invalid("spec.template.metadata.labels", template_labels,
                  "`selector` does not match template `labels`");
      }
    }
    if (old != nullptr) {
      const Json& old_selector = MemberOrNull(MemberOrNull(*old, "spec"), "selector");
      if (old_selector != selector) c.Immutable("spec.selector", selector);
    }
  }
  ValidatePodSpec(c, MemberOrNull(MemberOrNull(spec, "template"), "spec"), "spec.template.spec");
  if (rt.kind == "Deployment") {
    const Json& strategy = MemberOrNull(MemberOrNull(spec, "strategy"), "type");
    if (strategy.is_string()) {
      std::string t = strategy.get<std::string>();
      if (t != "RollingUpdate" && t != "Recreate") {
        c.Unsupported("spec.strategy.type", strategy, {"Recreate", "RollingUpdate"});
      }
    }
  }
}

void ValidateService(Causes& c, const Json& obj, const Json* old) {
  const Json& spec = MemberOrNull(obj, "spec");
  if (!spec.is_object()) {
    c.Required("spec");
    return;
  }
  std::string type = GetString(spec, "type", "ClusterIP");
  static const std::vector<std::string> kTypes = {"ClusterIP", "ExternalName", "LoadBalancer",
                                                  "NodePort"};
  if (std::find(kTypes.begin(), kTypes.end(), type) == kTypes.end()) {
    c.Unsupported("spec.type", MemberOrNull(spec, "type"), kTypes);
  }
  bool headless = GetString(spec, "clusterIP") == "None";
  const Json& ports = MemberOrNull(spec, "ports");
  if (type != "ExternalName" && !headless && (!ports.is_array() || ports.empty())) {
    c.Required("spec.ports");
  }
  if (ports.is_array()) {
    std::set<std::string> names;
    for (size_t i = 0; i < ports.size(); ++i) {
      std::string f = "spec.ports[" + std::to_string(i) + "]";
      ValidatePort(c, MemberOrNull(ports[i], "port"), f + ".port", true);
      const Json& name = MemberOrNull(ports[i], "name");
      if (ports.size() > 1 && (!name.is_string() || name.get<std::string>().empty())) {
        c.Required(f + ".name");
      } else if (name.is_string() && !name.get<std::string>().empty()) {
        std::string n = name.get<std::string>();
        std::string err = CheckDns1123Label(n);
        if (!err.empty()) c.Invalid(f + ".name", n, err);
        if (!names.insert(n).second) c.Duplicate(f + ".name", n);
      }
      const Json& protocol = MemberOrNull(ports[i], "protocol");
      if (protocol.is_string()) {
        std::string p = protocol.get<std::string>();
        if (p != "TCP" && p != "UDP" && p != "SCTP") {
          c.Unsupported(f + ".protocol", protocol, {"SCTP", "TCP", "UDP"});
        }
      }
    }
  }
  if (old != nullptr) {
    const Json& old_ip = MemberOrNull(MemberOrNull(*old, "spec"), "clusterIP");
    const Json& new_ip = MemberOrNull(spec, "clusterIP");
    if (!old_ip.is_null() && old_ip != new_ip) c.Immutable("spec.clusterIP", new_ip);
  }
}

void ValidateBackend(Causes& c, const Json& backend, const std::string& field) {
  const Json& service = MemberOrNull(backend, "service");
  const Json& resource = MemberOrNull(backend, "resource");
  if (service.is_null() && resource.is_null()) {
    c.Invalid(field, backend, "one backend type must be specified");
    return;
  }
  if (!service.is_null()) {
    if (GetString(service, "name").empty()) c.Required(field + ".service.name");
    const Json& port = MemberOrNull(service, "port");
    bool has_number = MemberOrNull(port, "number").is_number_integer();
    bool has_name = MemberOrNull(port, "name").is_string();
    if (has_number == has_name) {
      c.Invalid(field + ".service.port", port, "port name or number is required");
    } else if (has_number) {
      ValidatePort(c, MemberOrNull(port, "number"), field + ".service.port.number", true);
    }
  }
}

void ValidateIngress(Causes& c, const Json& obj) {
  const Json& spec = MemberOrNull(obj, "spec");
  if (!spec.is_object()) return;
  const Json& default_backend = MemberOrNull(spec, "defaultBackend");
  const Json& rules = MemberOrNull(spec, "rules");
  if (default_backend.is_null() && (!rules.is_array() || rules.empty())) {
    c.Invalid("spec", spec, "either `defaultBackend` or `rules` must be specified");
  }
  if (!default_backend.is_null()) ValidateBackend(c, default_backend, "spec.defaultBackend");
  if (!rules.is_array()) return;
  for (size_t i = 0; i < rules.size(); ++i) {
    std::string f = "spec.rules[" + std::to_string(i) + "]";
    const Json& host = MemberOrNull(rules[i], "host");
    if (host.is_string() && !host.get<std::string>().empty()) {
      std::string h = host.get<std::string>();
      std::string check = h.rfind("*.", 0) == 0 ? h.substr(2) : h;
      std::string err = CheckDns1123Subdomain(check);
      if (!err.empty()) c.Invalid(f + ".host", host, err);
    }
    const Json& paths = MemberOrNull(MemberOrNull(rules[i], "http"), "paths");
    if (MemberOrNull(rules[i], "http").is_null()) continue;
    if (!paths.is_array() || paths.empty()) {
      c.Required(f + ".http.paths");
      continue;
    }
    for (size_t j = 0; j < paths.size(); ++j) {
      std::string pf = f + ".http.paths[" + std::to_string(j) + "]";
      const Json& path_type = MemberOrNull(paths[j], "pathType");
      if (path_type.is_null()) {
        c.Required(pf + ".pathType", "pathType must be specified");
      } else if (path_type != "Exact" && path_type != "Prefix" &&
                 path_type != "ImplementationSpecific") {
        c.Unsupported(pf + ".pathType", path_type, {"Exact", "ImplementationSpecific", "Prefix"});
      }
      std::string path = GetString(paths[j], "path");
      if (!path.empty() && path[0] != '/') {
        c.Invalid(pf + ".path", path, "must be an absolute path");
      }
      ValidateBackend(c, MemberOrNull(paths[j], "backend"), pf + ".backend");
    }
  }
}

void ValidatePvc(Causes& c, const Json& obj, const Json* old) {
  const Json& spec = MemberOrNull(obj, "spec");
  if (!spec.is_object()) {
    c.Required("spec");
    return;
  }
  const Json& modes = MemberOrNull(spec, "accessModes");
  if (!modes.is_array() || modes.empty()) {
    c.Required("spec.accessModes", "at least 1 access mode is required");
  } else {
    for (const auto& m : modes) {
      if (m != "ReadWriteOnce" && m != "ReadOnlyMany" && m != "ReadWriteMany" &&
          m != "ReadWriteOncePod") {
        c.Unsupported("spec.accessModes", m,
                      {"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"});
      }
    }
  }
  const Json& storage =
      MemberOrNull(MemberOrNull(MemberOrNull(spec, "resources"), "requests"), "storage");
  if (storage.is_null()) c.Required("spec.resources[storage]");
  if (old != nullptr) {
    const Json& old_spec = MemberOrNull(*old, "spec");
    if (MemberOrNull(old_spec, "storageClassName") != MemberOrNull(spec, "storageClassName") &&
        !MemberOrNull(old_spec, "storageClassName").is_null()) {
      c.Forbidden("spec",
                  "spec is immutable after creation except resources.requests and "
                  "volumeAttributesClassName for bound claims");
    }
  }
}

bool IsConfigKey(std::string_view k) {
  if (k.empty() || k.size() > 253) return false;
  for (char ch : k) {
    if (!IsAlnum(ch) && ch != '-' && ch != '_' && ch != '.') return false;
  }
  return true;
}

void ValidateDataKeys(Causes& c, const Json& data, const std::string& field, bool base64) {
  if (data.is_null()) return;
  if (!data.is_object()) {
    c.TypeInvalid(field, data, "map");
    return;
  }
  for (auto it = data.begin(); it != data.end(); ++it) {
    if (!IsConfigKey(it.key())) {
      c.Invalid(field, it.key(),
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
                "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
                "'[-._a-zA-Z0-9]+')");
    }
    if (!it.value().is_string()) {
      c.TypeInvalid(field + "[" + it.key() + "]", it.value(), base64 ? "base64 string" : "string");
    }
  }
}

}  // namespace

std::string CheckDns1123Subdomain(std::string_view value) {
  if (value.size() > 253) return "must be no more than 253 characters";
  // Dot-separated parts, each [a-z0-9]([-a-z0-9]*[a-z0-9])? (no per-part length limit).
  size_t start = 0;
  while (true) {
    size_t dot = value.find('.', start);
    std::string_view part = value.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (part.empty() || !IsLowerAlnum(part.front()) || !IsLowerAlnum(part.back())) {
      return kSubdomainMsg;
    }
    for (char ch : part) {
      if (!IsLowerAlnum(ch) && ch != '-') return kSubdomainMsg;
    }
    if (dot == std::string_view::npos) return "";
    start = dot + 1;
  }
}

namespace validation_internal {

bool IsPortName(std::string_view v) {
  // IANA_SVC_NAME: at most 15 characters, lower case alphanumeric or '-', at least one letter,
  // no leading, trailing or double hyphens.
  if (v.empty() || v.size() > 15) return false;
  bool letter = false;
  for (size_t i = 0; i < v.size(); ++i) {
    char c = v[i];
    if (c >= 'a' && c <= 'z') letter = true;
    if (!IsLowerAlnum(c) && c != '-') return false;
    if (c == '-' && (i == 0 || i + 1 == v.size() || v[i - 1] == '-')) return false;
  }
  return letter;
}

}  // namespace validation_internal

std::string CheckPathSegmentName(std::string_view value) {
  if (value == ".") return "may not be '.'";
  if (value == "..") return "may not be '..'";
  if (value.find('/') != std::string_view::npos) return "may not contain '/'";
  if (value.find('%') != std::string_view::npos) return "may not contain '%'";
  return "";
}

std::string CheckDns1123Label(std::string_view value) {
  if (value.size() > 63) return "must be no more than 63 characters";
  return IsDns1123Label(value) ? "" : kLabelMsg;
}

std::string CheckDns1035Label(std::string_view value) {
  if (value.size() > 63) return "must be no more than 63 characters";
  if (!IsDns1123Label(value) || !(value.front() >= 'a' && value.front() <= 'z')) {
    return kDns1035Msg;
  }
  return "";
}

std::string CheckLabelValue(std::string_view value) {
  if (value.empty()) return "";
  if (value.size() > 63) return "must be no more than 63 characters";
  return IsNamePart(value) ? "" : kLabelValueMsg;
}

std::string CheckQualifiedName(std::string_view value) {
  std::string_view name = value;
  size_t slash = value.find('/');
  if (slash != std::string_view::npos) {
    std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) return "prefix part must be non-empty";
    std::string err = CheckDns1123Subdomain(prefix);
    if (!err.empty()) return "prefix part " + err;
    if (name.find('/') != std::string_view::npos) {
      return "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and "
             "must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
             "or '123-abc', regex used for validation is "
             "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
             " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
    }
  }
  if (name.empty()) return "name part must be non-empty";
  if (name.size() > 63) return "name part must be no more than 63 characters";
  return IsNamePart(name) ? "" : kQualifiedNameMsg;
}

std::string RenderValue(const Json& value) {
  if (value.is_string()) return "\"" + value.get<std::string>() + "\"";
  if (value.is_null()) return "\"null\"";
  return DumpJson(value);
}

std::vector<StatusCause> ValidateObject(const ResourceType& rt, const Json& object,
                                        const Json* old_object) {
  Causes c;
  ValidateMetadata(c, rt, MemberOrNull(object, "metadata"));
  if (rt.kind == "Deployment" || rt.kind == "ReplicaSet") {
    ValidateWorkload(c, rt, object, old_object);
  } else if (rt.kind == "Pod") {
    ValidatePodSpec(c, MemberOrNull(object, "spec"), "spec");
  } else if (rt.kind == "Service") {
    ValidateService(c, object, old_object);
  } else if (rt.kind == "Ingress") {
    ValidateIngress(c, object);
  } else if (rt.kind == "PersistentVolumeClaim") {
    ValidatePvc(c, object, old_object);
  } else if (rt.kind == "Secret") {
    ValidateDataKeys(c, MemberOrNull(object, "data"), "data", true);
    if (old_object != nullptr &&
        MemberOrNull(*old_object, "type") != MemberOrNull(object, "type")) {
      c.Immutable("type", MemberOrNull(object, "type"));
    }
  } else if (rt.kind == "ConfigMap") {
    ValidateDataKeys(c, MemberOrNull(object, "data"), "data", false);
  } else if (rt.kind == "Lease") {
    // As ValidateLeaseSpec (pkg/apis/coordination/validation).
    const Json& spec = MemberOrNull(object, "spec");
    const Json& duration = MemberOrNull(spec, "leaseDurationSeconds");
    if (duration.is_number_integer() && duration.get<int64_t>() <= 0) {
      c.Invalid("spec.leaseDurationSeconds", duration, "must be greater than 0");
    }
    const Json& transitions = MemberOrNull(spec, "leaseTransitions");
    if (transitions.is_number_integer() && transitions.get<int64_t>() < 0) {
      c.Invalid("spec.leaseTransitions", transitions, "must be greater than or equal to 0");
    }
  } else if (rt.kind == "Role" || rt.kind == "ClusterRole") {
    validation_internal::ValidateRbacRules(c, object, rt.namespaced);
  } else if (rt.kind == "RoleBinding" || rt.kind == "ClusterRoleBinding") {
    validation_internal::ValidateRbacBinding(c, object, old_object, rt.namespaced);
  } else if (rt.kind == "PodDisruptionBudget") {
    validation_internal::ValidatePodDisruptionBudget(c, object);
  } else if (rt.kind == "NetworkPolicy") {
    validation_internal::ValidateNetworkPolicy(c, object);
  } else if (rt.kind == "EndpointSlice") {
    const Json& t = MemberOrNull(object, "addressType");
    if (t.is_null()) {
      c.Required("addressType");
    } else if (t != "IPv4" && t != "IPv6" && t != "FQDN") {
      c.Unsupported("addressType", t, {"FQDN", "IPv4", "IPv6"});
    }
  }
  return c.Take();
}

namespace {

void DefaultContainer(Json& ct) {
  if (!ct.is_object()) return;
  if (!ct.contains("imagePullPolicy")) {
    std::string image = GetString(ct, "image");
    size_t slash = image.rfind('/');
    std::string last = slash == std::string::npos ? image : image.substr(slash + 1);
    bool has_tag = last.find(':') != std::string::npos;
    bool latest = !has_tag || (last.size() >= 7 && last.substr(last.size() - 7) == ":latest");
    if (image.find('@') != std::string::npos) latest = false;
    ct["imagePullPolicy"] = latest ? "Always" : "IfNotPresent";
  }
  if (!ct.contains("terminationMessagePath")) {
    ct["terminationMessagePath"] = "/dev/termination-log";
  }
  if (!ct.contains("terminationMessagePolicy")) ct["terminationMessagePolicy"] = "File";
  if (!ct.contains("resources")) ct["resources"] = Json::object();
  if (ct.contains("ports") && ct["ports"].is_array()) {
    for (auto& p : ct["ports"]) {
      if (p.is_object() && !p.contains("protocol")) p["protocol"] = "TCP";
    }
  }
}

void DefaultPodSpec(Json& spec) {
  if (!spec.is_object()) return;
  if (!spec.contains("restartPolicy")) spec["restartPolicy"] = "Always";
  if (!spec.contains("terminationGracePeriodSeconds")) spec["terminationGracePeriodSeconds"] = 30;
  if (!spec.contains("dnsPolicy")) spec["dnsPolicy"] = "ClusterFirst";
  if (!spec.contains("securityContext")) spec["securityContext"] = Json::object();
  if (!spec.contains("schedulerName")) spec["schedulerName"] = "default-scheduler";
  for (const char* list : {"containers", "initContainers"}) {
    if (spec.contains(list) && spec[list].is_array()) {
      for (auto& ct : spec[list]) DefaultContainer(ct);
    }
  }
}

}  // namespace

void ApplyDefaults(const ResourceType& rt, Json& obj) {
  if (!obj.is_object()) return;
  if (rt.kind == "Deployment" || rt.kind == "ReplicaSet") {
    Json& spec = obj["spec"];
    if (!spec.is_object()) return;
    if (!spec.contains("replicas")) spec["replicas"] = 1;
    if (rt.kind == "Deployment") {
      if (!spec.contains("strategy")) spec["strategy"] = Json::object();
      Json& strategy = spec["strategy"];
      if (strategy.is_object()) {
        if (!strategy.contains("type")) strategy["type"] = "RollingUpdate";
        if (strategy["type"] == "RollingUpdate") {
          if (!strategy.contains("rollingUpdate")) strategy["rollingUpdate"] = Json::object();
          Json& ru = strategy["rollingUpdate"];
          if (ru.is_object()) {
            if (!ru.contains("maxUnavailable")) ru["maxUnavailable"] = "25%";
            if (!ru.contains("maxSurge")) ru["maxSurge"] = "25%";
          }
        }
      }
      if (!spec.contains("revisionHistoryLimit")) spec["revisionHistoryLimit"] = 10;
      if (!spec.contains("progressDeadlineSeconds")) spec["progressDeadlineSeconds"] = 600;
    }
    if (spec.contains("template") && spec["template"].is_object()) {
      Json& tmpl = spec["template"];
      if (!tmpl.contains("metadata")) tmpl["metadata"] = Json::object();
      if (tmpl.contains("spec")) DefaultPodSpec(tmpl["spec"]);
    }
  } else if (rt.kind == "Pod") {
    if (obj.contains("spec")) DefaultPodSpec(obj["spec"]);
  } else if (rt.kind == "Service") {
    Json& spec = obj["spec"];
    if (!spec.is_object()) return;
    if (!spec.contains("type")) spec["type"] = "ClusterIP";
    if (!spec.contains("sessionAffinity")) spec["sessionAffinity"] = "None";
    if (spec["type"] != "ExternalName") {
      if (!spec.contains("ipFamilies")) spec["ipFamilies"] = Json::array({"IPv4"});
      if (!spec.contains("ipFamilyPolicy")) spec["ipFamilyPolicy"] = "SingleStack";
      if (!spec.contains("internalTrafficPolicy")) spec["internalTrafficPolicy"] = "Cluster";
    }
    if (spec.contains("ports") && spec["ports"].is_array()) {
      for (auto& p : spec["ports"]) {
        if (!p.is_object()) continue;
        if (!p.contains("protocol")) p["protocol"] = "TCP";
        if (!p.contains("targetPort") && p.contains("port")) p["targetPort"] = p["port"];
      }
    }
  } else if (rt.kind == "Secret") {
    if (!obj.contains("type")) obj["type"] = "Opaque";
  } else if (rt.kind == "PersistentVolumeClaim") {
    Json& spec = obj["spec"];
    if (spec.is_object() && !spec.contains("volumeMode")) spec["volumeMode"] = "Filesystem";
  } else if (rt.kind == "Namespace") {
    if (!obj.contains("spec")) obj["spec"] = Json::object();
    if (obj["spec"].is_object() && !obj["spec"].contains("finalizers")) {
      obj["spec"]["finalizers"] = Json::array({"kubernetes"});
    }
    Json& meta = obj["metadata"];
    if (meta.is_object() && meta.contains("name") && meta["name"].is_string()) {
      meta["labels"]["kubernetes.io/metadata.name"] = meta["name"];
    }
  } else if (rt.kind == "Ingress") {
    // No defaults beyond status (set by the API layer).
  } else if (rt.kind == "RoleBinding" || rt.kind == "ClusterRoleBinding") {
    validation_internal::DefaultRbacBinding(obj);
  } else if (rt.kind == "NetworkPolicy") {
    validation_internal::DefaultNetworkPolicy(obj);
  }
}

}  // namespace steward::cluster
