#include "cluster/apiserver/rbac_escalation.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "cluster/apiserver/field_validation.h"
#include "common/json_access.h"

namespace steward::cluster {

namespace {

constexpr char kRbacGroup[] = "rbac.authorization.k8s.io";

// rbacv1.PolicyRule.
struct PolicyRule {
  std::vector<std::string> api_groups;
  std::vector<std::string> resources;
  std::vector<std::string> non_resource_urls;
  std::vector<std::string> resource_names;
  std::vector<std::string> verbs;
};

std::vector<std::string> Strings(const Json& rule, const char* field) {
  std::vector<std::string> out;
  for (const Json& v : ArrayMemberOrEmpty(rule, field)) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

PolicyRule RuleOf(const Json& rule) {
  return {Strings(rule, "apiGroups"), Strings(rule, "resources"), Strings(rule, "nonResourceURLs"),
          Strings(rule, "resourceNames"), Strings(rule, "verbs")};
}

bool Has(const std::vector<std::string>& set, const std::string& element) {
  return std::find(set.begin(), set.end(), element) != set.end();
}

bool HasAll(const std::vector<std::string>& set, const std::vector<std::string>& contains) {
  return std::all_of(contains.begin(), contains.end(),
                     [&](const std::string& e) { return Has(set, e); });
}

// BreakdownRule: the rule as rules of one group, resource, verb and name (or URL and verb).
std::vector<PolicyRule> BreakdownRule(const PolicyRule& rule) {
  std::vector<PolicyRule> out;
  for (const std::string& group : rule.api_groups) {
    for (const std::string& resource : rule.resources) {
      for (const std::string& verb : rule.verbs) {
        if (rule.resource_names.empty()) {
          out.push_back({{group}, {resource}, {}, {}, {verb}});
          continue;
        }
        for (const std::string& name : rule.resource_names) {
          out.push_back({{group}, {resource}, {}, {name}, {verb}});
        }
      }
    }
  }
  for (const std::string& url : rule.non_resource_urls) {
    for (const std::string& verb : rule.verbs) out.push_back({{}, {}, {url}, {}, {verb}});
  }
  return out;
}

// resourceCoversAll: "*", each resource itself, or "*/sub" for a "resource/sub".
bool ResourceCoversAll(const std::vector<std::string>& set,
                       const std::vector<std::string>& covers) {
  if (Has(set, "*") || HasAll(set, covers)) return true;
  for (const std::string& path : covers) {
    if (Has(set, path)) continue;
    const size_t slash = path.find('/');
    if (slash == std::string::npos) return false;
    if (!Has(set, "*/" + path.substr(slash + 1))) return false;
  }
  return true;
}

// nonResourceURLCovers: the URL itself, or a prefix ending in "*" (every trailing "*" trimmed).
bool NonResourceUrlCovers(const std::string& owner, const std::string& path) {
  if (owner == path) return true;
  if (owner.empty() || owner.back() != '*') return false;
  const size_t stars = owner.find_last_not_of('*');
  const std::string prefix = stars == std::string::npos ? "" : owner.substr(0, stars + 1);
  return path.compare(0, prefix.size(), prefix) == 0;
}

bool NonResourceUrlsCoverAll(const std::vector<std::string>& set,
                             const std::vector<std::string>& covers) {
  return std::all_of(covers.begin(), covers.end(), [&](const std::string& path) {
    return std::any_of(set.begin(), set.end(),
                       [&](const std::string& owner) { return NonResourceUrlCovers(owner, path); });
  });
}

// ruleCovers: whether `owner` covers `sub` (one verb, resource and name at most).
bool RuleCovers(const PolicyRule& owner, const PolicyRule& sub) {
  const bool verbs = Has(owner.verbs, "*") || HasAll(owner.verbs, sub.verbs);
  const bool groups = Has(owner.api_groups, "*") || HasAll(owner.api_groups, sub.api_groups);
  const bool resources = ResourceCoversAll(owner.resources, sub.resources);
  const bool urls = NonResourceUrlsCoverAll(owner.non_resource_urls, sub.non_resource_urls);
  const bool names =
      sub.resource_names.empty()
          ? owner.resource_names.empty()
          : owner.resource_names.empty() || HasAll(owner.resource_names, sub.resource_names);
  return verbs && groups && resources && names && urls;
}

// CompactRules: rules of one group and one resource (and at most one name) that differ only
// in their verbs become one rule with all their verbs.
std::vector<PolicyRule> CompactRules(const std::vector<PolicyRule>& rules) {
  std::vector<PolicyRule> out;
  using Key = std::tuple<std::string, std::string, bool, std::string>;
  std::map<Key, PolicyRule> simple;
  for (const PolicyRule& rule : rules) {
    const bool is_simple = rule.resource_names.size() <= 1 && rule.non_resource_urls.empty() &&
                           rule.api_groups.size() == 1 && rule.resources.size() == 1;
    if (!is_simple) {
      out.push_back(rule);
      continue;
    }
    const bool named = !rule.resource_names.empty();
    Key key{rule.api_groups[0], rule.resources[0], named, named ? rule.resource_names[0] : ""};
    auto [it, inserted] = simple.try_emplace(key, rule);
    if (!inserted) {
      it->second.verbs.insert(it->second.verbs.end(), rule.verbs.begin(), rule.verbs.end());
    }
  }
  for (auto& [key, rule] : simple) out.push_back(std::move(rule));
  return out;
}

// Go's %q of a []string: `["a" "b"]`.
std::string GoQuoteList(const std::vector<std::string>& list) {
  std::string out = "[";
  for (size_t i = 0; i < list.size(); ++i) out += (i ? " " : "") + GoQuote(list[i]);
  return out + "]";
}

// rbacv1helpers.CompactString.
std::string CompactString(const PolicyRule& r) {
  std::vector<std::string> parts;
  auto add = [&](const char* label, const std::vector<std::string>& list) {
    if (!list.empty()) parts.push_back(std::string(label) + ":" + GoQuoteList(list));
  };
  add("APIGroups", r.api_groups);
  add("Resources", r.resources);
  add("NonResourceURLs", r.non_resource_urls);
  add("ResourceNames", r.resource_names);
  add("Verbs", r.verbs);
  std::string out = "{";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out + "}";
}

// ConfirmNoEscalation: nothing when `user` holds every permission of `rules` in `ns` (cluster-
// wide when empty), else why not.
std::optional<std::string> ConfirmNoEscalation(const Storage& storage, const UserInfo& user,
                                               const std::string& ns, const Json& rules) {
  std::string resolution_error;
  const Json owner = RulesFor(storage, user, ns, &resolution_error);
  const std::vector<std::string> missing = UncoveredPermissions(owner, rules);
  if (missing.empty()) return std::nullopt;
  std::string msg = "user " + GoQuote(user.name) + " (groups=" + GoQuoteList(user.groups) +
                    ") is attempting to grant RBAC permissions not currently held:";
  for (const std::string& line : missing) msg += "\n" + line;
  // A []error of one aggregate, as %v prints it.
  if (!resolution_error.empty()) msg += "; resolution errors: [" + resolution_error + "]";
  return msg;
}

// errors.NewForbidden(groupResource, name, err).
StatusError Forbidden(const ResourceType& rt, const std::string& name, const std::string& why) {
  StatusError e = ForbiddenError(rt.GroupResource() + (name.empty() ? "" : " \"" + name + "\"") +
                                 " is forbidden: " + why);
  e.name = name;
  e.group = rt.group;
  e.kind = rt.resource;
  return e;
}

// Semantic equality of two decoded objects: a missing field equals its zero value (null, "", 0,
// false, [] or {}), as Go's Semantic.DeepEqual sees typed objects.
bool IsZero(const Json& v) {
  return v.is_null() || (v.is_string() && v.get_ref<const std::string&>().empty()) ||
         (v.is_number() && v == 0) || (v.is_boolean() && !v.get<bool>()) ||
         ((v.is_array() || v.is_object()) && v.empty());
}

bool SemanticEqual(const Json& a, const Json& b) {
  if (IsZero(a) && IsZero(b)) return true;
  if (a.is_object() && b.is_object()) {
    for (const auto& [key, value] : a.items()) {
      if (!SemanticEqual(value, MemberOrNull(b, key))) return false;
    }
    for (const auto& [key, value] : b.items()) {
      if (!a.contains(key) && !IsZero(value)) return false;
    }
    return true;
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!SemanticEqual(a[i], b[i])) return false;
    }
    return true;
  }
  return a == b;
}

// IsOnlyMutatingGCFields: whether `object` differs from `old` in nothing but
// metadata.ownerReferences and finalizers (and selfLink, managedFields).
bool OnlyGcFieldsChange(const Json& object, const Json* old) {
  if (old == nullptr || !object.is_object()) return false;
  Json copy = object;
  Json& meta = copy["metadata"];
  if (!meta.is_object()) meta = Json::object();
  const Json& old_meta = MemberOrNull(*old, "metadata");
  for (const char* field : {"ownerReferences", "finalizers", "selfLink", "managedFields"}) {
    const Json& was = MemberOrNull(old_meta, field);
    if (was.is_null()) {
      meta.erase(field);
    } else {
      meta[field] = was;
    }
  }
  return SemanticEqual(copy, *old);
}

bool HasAggregationRule(const Json* cluster_role) {
  if (cluster_role == nullptr) return false;
  const Json& rule = MemberOrNull(*cluster_role, "aggregationRule");
  return !ArrayMemberOrEmpty(rule, "clusterRoleSelectors").empty();
}

// Everything on every resource and URL: what an aggregationRule needs.
const Json& FullAuthority() {
  static const Json kRules =
      Json::array({{{"verbs", {"*"}}, {"apiGroups", {"*"}}, {"resources", {"*"}}},
                   {{"verbs", {"*"}}, {"nonResourceURLs", {"*"}}}});
  return kRules;
}

// role/policybased and clusterrole/policybased: Create, and Update's wrapped object check.
std::optional<StatusError> CheckRole(const Storage& storage, const UserInfo& user,
                                     const ResourceType& rt, const std::string& ns,
                                     const std::string& name, const Json& object, const Json* old) {
  // RoleEscalationAuthorized: the request's own resource, namespace and name.
  AccessAttributes escalate;
  escalate.verb = "escalate";
  escalate.group = rt.group;
  escalate.resource = rt.resource;
  escalate.ns = ns;
  escalate.name = name;
  if (Authorize(storage, user, escalate).allowed) return std::nullopt;
  if (OnlyGcFieldsChange(object, old)) return std::nullopt;
  const std::string role_name = GetString(MemberOrNull(object, "metadata"), "name");
  const Json& rules = ArrayMemberOrEmpty(object, "rules");
  if (auto why = ConfirmNoEscalation(storage, user, ns, rules)) {
    return Forbidden(rt, role_name, *why);
  }
  if (rt.resource == "clusterroles" && (HasAggregationRule(&object) || HasAggregationRule(old))) {
    if (ConfirmNoEscalation(storage, user, ns, FullAuthority())) {
      return Forbidden(rt, role_name,
                       "must have cluster-admin privileges to use the aggregationRule");
    }
  }
  return std::nullopt;
}

// rolebinding/policybased and clusterrolebinding/policybased: Create, and Update's wrapped
// object check. `ns` is the binding's namespace (empty for a ClusterRoleBinding).
std::optional<StatusError> CheckBinding(const Storage& storage, const UserInfo& user,
                                        const ResourceType& rt, const std::string& ns,
                                        const Json& object, const Json* old) {
  if (OnlyGcFieldsChange(object, old)) return std::nullopt;
  const Json& ref = MemberOrNull(object, "roleRef");
  const std::string kind = GetString(ref, "kind");
  const std::string role = GetString(ref, "name");
  if (kind != "Role" && kind != "ClusterRole") {
    return InternalError("unsupported role reference kind: " + GoQuote(kind));
  }
  const std::string roles = kind == "Role" ? "roles" : "clusterroles";
  // BindingAuthorized: `bind` on the role, in the binding's namespace.
  AccessAttributes bind;
  bind.verb = "bind";
  bind.group = GetString(ref, "apiGroup");
  bind.resource = roles;
  bind.ns = ns;
  bind.name = role;
  if (Authorize(storage, user, bind).allowed) return std::nullopt;
  // GetRoleReferenceRules, through the registry: a missing role is its 404.
  const ResourceType& role_type = *FindGroupResource(roles + "." + kRbacGroup);
  auto record = storage.Get(role_type.GroupResource(), kind == "Role" ? ns : "", role);
  if (!record) return NotFoundError(role_type, role);
  const Json rules = ArrayMemberOrEmpty(record->Parse(), "rules");
  if (auto why = ConfirmNoEscalation(storage, user, ns, rules)) {
    return Forbidden(rt, GetString(MemberOrNull(object, "metadata"), "name"), *why);
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> UncoveredPermissions(const Json& owner_rules, const Json& rules) {
  std::vector<PolicyRule> owners;
  for (const Json& r : owner_rules) owners.push_back(RuleOf(r));
  std::vector<PolicyRule> uncovered;
  for (const Json& r : rules) {
    for (PolicyRule& sub : BreakdownRule(RuleOf(r))) {
      const bool covered = std::any_of(owners.begin(), owners.end(),
                                       [&](const PolicyRule& o) { return RuleCovers(o, sub); });
      if (!covered) uncovered.push_back(std::move(sub));
    }
  }
  std::set<std::string> described;  // sets.NewString(...).List(): unique and sorted
  for (const PolicyRule& r : CompactRules(uncovered)) described.insert(CompactString(r));
  return {described.begin(), described.end()};
}

AdmissionHook EscalationCheck(const Storage& storage, const UserInfo& user, const ResourceType& rt,
                              std::string ns, std::string name) {
  if (rt.group != kRbacGroup) return nullptr;
  // EscalationAllowed: system:masters may grant anything.
  if (user.InGroup("system:masters")) return nullptr;
  const bool role = rt.resource == "roles" || rt.resource == "clusterroles";
  const bool binding = rt.resource == "rolebindings" || rt.resource == "clusterrolebindings";
  if (!role && !binding) return nullptr;
  return [&storage, user, ns = std::move(ns), name = std::move(name), role](
             const ResourceType& type, const Json& object,
             const Json* old) -> std::optional<StatusError> {
    if (role) return CheckRole(storage, user, type, ns, name, object, old);
    return CheckBinding(storage, user, type, ns, object, old);
  };
}

}  // namespace steward::cluster
