// Validation and defaults of the policy kinds: RBAC (Role, ClusterRole, RoleBinding,
// ClusterRoleBinding: pkg/apis/rbac/validation), PodDisruptionBudget (pkg/apis/policy/
// validation) and NetworkPolicy (pkg/apis/networking/validation), with the API server's field
// paths and messages. ServiceAccounts need only their name checked (validation.cc).
#include <arpa/inet.h>

#include <set>

#include "cluster/apiserver/selectors.h"
#include "cluster/apiserver/validation_internal.h"
#include "common/json_access.h"

namespace steward::cluster::validation_internal {

namespace {

constexpr const char* kRbacGroup = "rbac.authorization.k8s.io";

// The number of strings of an array field; a non-array is reported and counts as empty.
size_t StringListSize(Causes& c, const Json& list, const std::string& field) {
  if (list.is_null()) return 0;
  if (!list.is_array()) {
    c.TypeInvalid(field, list, "array of strings");
    return 0;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) {
      c.TypeInvalid(field + "[" + std::to_string(i) + "]", list[i], "string");
    }
  }
  return list.size();
}

void ValidatePolicyRule(Causes& c, const Json& rule, const std::string& field, bool namespaced) {
  if (StringListSize(c, MemberOrNull(rule, "verbs"), field + ".verbs") == 0) {
    c.Required(field + ".verbs", "verbs must contain at least one value");
  }
  const size_t urls =
      StringListSize(c, MemberOrNull(rule, "nonResourceURLs"), field + ".nonResourceURLs");
  const size_t groups = StringListSize(c, MemberOrNull(rule, "apiGroups"), field + ".apiGroups");
  const size_t resources = StringListSize(c, MemberOrNull(rule, "resources"), field + ".resources");
  StringListSize(c, MemberOrNull(rule, "resourceNames"), field + ".resourceNames");
  if (urls > 0) {
    if (namespaced) {
      c.Invalid(field + ".nonResourceURLs", MemberOrNull(rule, "nonResourceURLs"),
                "namespaced rules cannot apply to non-resource URLs");
    }
    if (groups > 0 || resources > 0) {
      c.Invalid(field + ".nonResourceURLs", MemberOrNull(rule, "nonResourceURLs"),
                "rules cannot apply to both regular resources and non-resource URLs");
    }
    return;
  }
  if (groups == 0)
    c.Required(field + ".apiGroups", "resource rules must supply at least one api group");
  if (resources == 0) {
    c.Required(field + ".resources", "resource rules must supply at least one resource");
  }
}

void ValidateSubject(Causes& c, const Json& subject, const std::string& field, bool namespaced) {
  const std::string name = GetString(subject, "name");
  const std::string kind = GetString(subject, "kind");
  const std::string group = GetString(subject, "apiGroup");
  if (name.empty()) c.Required(field + ".name");
  if (kind == "ServiceAccount") {
    if (!name.empty()) {
      std::string err = CheckDns1123Subdomain(name);
      if (!err.empty()) c.Invalid(field + ".name", name, err);
    }
    if (!group.empty()) c.Unsupported(field + ".apiGroup", group, {""});
    if (!namespaced && GetString(subject, "namespace").empty()) c.Required(field + ".namespace");
  } else if (kind == "User" || kind == "Group") {
    if (group != kRbacGroup) c.Unsupported(field + ".apiGroup", group, {kRbacGroup});
  } else {
    c.Unsupported(field + ".kind", MemberOrNull(subject, "kind"),
                  {"ServiceAccount", "User", "Group"});
  }
}

// An IntOrString that must be a count or a percentage ("10%"), as ValidateIntOrPercent with
// IsNotMoreThan100Percent and ValidatePositiveIntOrPercent.
void ValidateIntOrPercent(Causes& c, const Json& value, const std::string& field) {
  if (value.is_null()) return;
  if (value.is_number_integer()) {
    if (value.get<int64_t>() < 0) c.Invalid(field, value, "must be greater than or equal to 0");
    return;
  }
  if (!value.is_string()) {
    c.TypeInvalid(field, value, "integer or string");
    return;
  }
  const std::string s = value.get<std::string>();
  const bool percent =
      s.size() >= 2 && s.back() == '%' && s.find_first_not_of("0123456789") == s.size() - 1;
  if (!percent) {
    c.Invalid(field, value,
              "a valid percent string must be a numeric string followed by an ending '%' (e.g. "
              "'1%',  or '93%', regex used for validation is '[0-9]+%')");
    return;
  }
  if (s.size() > 4 || std::stoi(s.substr(0, s.size() - 1)) > 100) {
    c.Invalid(field, value, "must not be greater than 100%");
  }
}

void ValidateSelector(Causes& c, const Json& selector, const std::string& field) {
  if (selector.is_null()) return;
  auto parsed = LabelSelector::FromJson(selector);
  if (!parsed.ok()) c.Invalid(field, selector, parsed.status().message());
}

bool ValidCidr(const std::string& cidr) {
  const size_t slash = cidr.find('/');
  if (slash == std::string::npos || slash + 1 >= cidr.size()) return false;
  const std::string ip = cidr.substr(0, slash);
  const std::string bits = cidr.substr(slash + 1);
  if (bits.find_first_not_of("0123456789") != std::string::npos || bits.size() > 3) return false;
  const int n = std::stoi(bits);
  unsigned char buf[16];
  if (inet_pton(AF_INET, ip.c_str(), buf) == 1) return n <= 32;
  if (inet_pton(AF_INET6, ip.c_str(), buf) == 1) return n <= 128;
  return false;
}

void ValidatePeer(Causes& c, const Json& peer, const std::string& field) {
  const bool pods = !MemberOrNull(peer, "podSelector").is_null();
  const bool namespaces = !MemberOrNull(peer, "namespaceSelector").is_null();
  const Json& block = MemberOrNull(peer, "ipBlock");
  if (!pods && !namespaces && block.is_null()) {
    c.Required(field, "must specify a peer");
    return;
  }
  if (!block.is_null() && (pods || namespaces)) {
    c.Forbidden(field, "may not specify both ipBlock and another peer");
    return;
  }
  ValidateSelector(c, MemberOrNull(peer, "podSelector"), field + ".podSelector");
  ValidateSelector(c, MemberOrNull(peer, "namespaceSelector"), field + ".namespaceSelector");
  if (block.is_null()) return;
  const std::string cidr = GetString(block, "cidr");
  if (cidr.empty()) {
    c.Required(field + ".ipBlock.cidr");
  } else if (!ValidCidr(cidr)) {
    c.Invalid(field + ".ipBlock.cidr", cidr,
              "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)");
  }
}

void ValidatePolicyPort(Causes& c, const Json& port, const std::string& field) {
  const Json& protocol = MemberOrNull(port, "protocol");
  if (protocol.is_string() && protocol != "TCP" && protocol != "UDP" && protocol != "SCTP") {
    c.Unsupported(field + ".protocol", protocol, {"SCTP", "TCP", "UDP"});
  }
  const Json& number = MemberOrNull(port, "port");
  const Json& end = MemberOrNull(port, "endPort");
  if (number.is_number_integer()) {
    const int64_t p = number.get<int64_t>();
    if (p < 1 || p > 65535) {
      c.Invalid(field + ".port", number, "must be between 1 and 65535, inclusive");
    }
    if (end.is_number_integer() && end.get<int64_t>() < p) {
      c.Invalid(field + ".endPort", end, "must be greater than or equal to `port`");
    }
  } else if (number.is_string()) {
    if (!IsPortName(number.get<std::string>())) {
      c.Invalid(field + ".port", number,
                "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
    }
    if (!end.is_null())
      c.Invalid(field + ".endPort", end, "may not be specified when `port` is non-numeric");
  } else if (!end.is_null()) {
    c.Required(field + ".port", "must be specified when `endPort` is specified");
  }
}

void ValidateRuleList(Causes& c, const Json& rules, const std::string& field,
                      const char* peers_key) {
  if (rules.is_null()) return;
  if (!rules.is_array()) {
    c.TypeInvalid(field, rules, "array");
    return;
  }
  for (size_t i = 0; i < rules.size(); ++i) {
    const std::string f = field + "[" + std::to_string(i) + "]";
    const Json& ports = MemberOrNull(rules[i], "ports");
    for (size_t j = 0; ports.is_array() && j < ports.size(); ++j) {
      ValidatePolicyPort(c, ports[j], f + ".ports[" + std::to_string(j) + "]");
    }
    const Json& peers = MemberOrNull(rules[i], peers_key);
    for (size_t j = 0; peers.is_array() && j < peers.size(); ++j) {
      ValidatePeer(c, peers[j], f + "." + peers_key + "[" + std::to_string(j) + "]");
    }
  }
}

}  // namespace

void ValidateRbacRules(Causes& c, const Json& obj, bool namespaced) {
  const Json& rules = MemberOrNull(obj, "rules");
  if (!rules.is_null() && !rules.is_array()) {
    c.TypeInvalid("rules", rules, "array");
    return;
  }
  for (size_t i = 0; rules.is_array() && i < rules.size(); ++i) {
    ValidatePolicyRule(c, rules[i], "rules[" + std::to_string(i) + "]", namespaced);
  }
}

void ValidateRbacBinding(Causes& c, const Json& obj, const Json* old, bool namespaced) {
  const Json& ref = MemberOrNull(obj, "roleRef");
  const std::string group = GetString(ref, "apiGroup");
  if (group != kRbacGroup) c.Unsupported("roleRef.apiGroup", group, {kRbacGroup});
  const std::string kind = GetString(ref, "kind");
  if (namespaced && kind != "Role" && kind != "ClusterRole") {
    c.Unsupported("roleRef.kind", kind, {"ClusterRole", "Role"});
  } else if (!namespaced && kind != "ClusterRole") {
    c.Unsupported("roleRef.kind", kind, {"ClusterRole"});
  }
  const std::string name = GetString(ref, "name");
  if (name.empty()) {
    c.Required("roleRef.name");
  } else if (std::string err = CheckPathSegmentName(name); !err.empty()) {
    c.Invalid("roleRef.name", name, err);
  }
  const Json& subjects = MemberOrNull(obj, "subjects");
  for (size_t i = 0; subjects.is_array() && i < subjects.size(); ++i) {
    ValidateSubject(c, subjects[i], "subjects[" + std::to_string(i) + "]", namespaced);
  }
  if (old != nullptr && MemberOrNull(*old, "roleRef") != ref) {
    c.Invalid("roleRef", ref, "cannot change roleRef");
  }
}

void ValidatePodDisruptionBudget(Causes& c, const Json& obj) {
  const Json& spec = MemberOrNull(obj, "spec");
  const Json& min = MemberOrNull(spec, "minAvailable");
  const Json& max = MemberOrNull(spec, "maxUnavailable");
  if (!min.is_null() && !max.is_null()) {
    c.Invalid("spec", spec, "minAvailable and maxUnavailable cannot be both set");
  }
  ValidateIntOrPercent(c, min, "spec.minAvailable");
  ValidateIntOrPercent(c, max, "spec.maxUnavailable");
  ValidateSelector(c, MemberOrNull(spec, "selector"), "spec.selector");
  const Json& policy = MemberOrNull(spec, "unhealthyPodEvictionPolicy");
  if (!policy.is_null() && policy != "IfHealthyBudget" && policy != "AlwaysAllow") {
    c.Unsupported("spec.unhealthyPodEvictionPolicy", policy, {"AlwaysAllow", "IfHealthyBudget"});
  }
}

void ValidateNetworkPolicy(Causes& c, const Json& obj) {
  const Json& spec = MemberOrNull(obj, "spec");
  ValidateSelector(c, MemberOrNull(spec, "podSelector"), "spec.podSelector");
  ValidateRuleList(c, MemberOrNull(spec, "ingress"), "spec.ingress", "from");
  ValidateRuleList(c, MemberOrNull(spec, "egress"), "spec.egress", "to");
  const Json& types = MemberOrNull(spec, "policyTypes");
  if (!types.is_array()) return;
  for (size_t i = 0; i < types.size(); ++i) {
    if (types[i] != "Ingress" && types[i] != "Egress") {
      c.Unsupported("spec.policyTypes[" + std::to_string(i) + "]", types[i], {"Egress", "Ingress"});
    }
  }
  if (types.size() > 2) {
    c.Invalid("spec.policyTypes", types, "may not specify more than two policyTypes");
  }
}

void DefaultRbacBinding(Json& obj) {
  if (!obj.contains("subjects") || !obj["subjects"].is_array()) return;
  for (Json& subject : obj["subjects"]) {
    if (!subject.is_object() || subject.contains("apiGroup")) continue;
    const std::string kind = GetString(subject, "kind");
    if (kind == "User" || kind == "Group") subject["apiGroup"] = kRbacGroup;
  }
}

void DefaultNetworkPolicy(Json& obj) {
  if (!obj.contains("spec") || !obj["spec"].is_object()) return;
  Json& spec = obj["spec"];
  for (const char* key : {"ingress", "egress"}) {
    if (!spec.contains(key) || !spec[key].is_array()) continue;
    for (Json& rule : spec[key]) {
      if (!rule.is_object() || !rule.contains("ports") || !rule["ports"].is_array()) continue;
      for (Json& port : rule["ports"]) {
        if (port.is_object() && !port.contains("protocol")) port["protocol"] = "TCP";
      }
    }
  }
  if (!spec.contains("policyTypes")) {
    Json types = Json::array({"Ingress"});
    if (spec.contains("egress") && spec["egress"].is_array() && !spec["egress"].empty()) {
      types.push_back("Egress");
    }
    spec["policyTypes"] = std::move(types);
  }
}

}  // namespace steward::cluster::validation_internal
