#include "cluster/apiserver/rbac.h"

#include <openssl/rand.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "cluster/apiserver/validation.h"
#include "cluster/model/resource_types.h"
#include "common/json.h"
#include "common/json_access.h"
#include "common/time_util.h"

namespace steward::cluster {

namespace {

constexpr std::string_view kServiceAccountPrefix = "system:serviceaccount:";

bool Contains(const Json& list, std::string_view value) {
  if (!list.is_array()) return false;
  for (const Json& v : list) {
    if (v.is_string() && v.get_ref<const std::string&>() == value) return true;
  }
  return false;
}

bool AnyOrContains(const Json& list, std::string_view value) {
  return Contains(list, "*") || Contains(list, value);
}

// RuleAllows (rbac/v1 helpers): verbs, groups, resources ("*", "pods", "pods/log", "*/scale")
// and names (an empty list allows every name).
bool RuleAllows(const Json& rule, const AccessAttributes& a) {
  if (!AnyOrContains(MemberOrNull(rule, "verbs"), a.verb)) return false;
  if (!a.resource_request) {
    const Json& urls = MemberOrNull(rule, "nonResourceURLs");
    if (!urls.is_array()) return false;
    for (const Json& u : urls) {
      if (!u.is_string()) continue;
      const std::string& url = u.get_ref<const std::string&>();
      if (url == "*" || url == a.path) return true;
      if (!url.empty() && url.back() == '*' &&
          a.path.compare(0, url.size() - 1, url, 0, url.size() - 1) == 0) {
        return true;
      }
    }
    return false;
  }
  if (!AnyOrContains(MemberOrNull(rule, "apiGroups"), a.group)) return false;
  const std::string combined =
      a.subresource.empty() ? a.resource : a.resource + "/" + a.subresource;
  bool resource = false;
  const Json& resources = MemberOrNull(rule, "resources");
  if (!resources.is_array()) return false;
  for (const Json& r : resources) {
    if (!r.is_string()) continue;
    const std::string& s = r.get_ref<const std::string&>();
    if (s == "*" || s == combined ||
        (!a.subresource.empty() && s.size() > 2 && s.compare(0, 2, "*/") == 0 &&
         s.substr(2) == a.subresource)) {
      resource = true;
      break;
    }
  }
  if (!resource) return false;
  const Json& names = MemberOrNull(rule, "resourceNames");
  if (!names.is_array() || names.empty()) return true;
  return Contains(names, a.name);
}

bool SubjectMatches(const Json& subject, const UserInfo& user, const std::string& binding_ns) {
  const std::string kind = GetString(subject, "kind");
  const std::string name = GetString(subject, "name");
  if (kind == "User") return name == user.name;
  if (kind == "Group") return user.InGroup(name);
  if (kind != "ServiceAccount") return false;
  std::string ns = GetString(subject, "namespace");
  if (ns.empty()) ns = binding_ns;
  return user.name == std::string(kServiceAccountPrefix) + ns + ":" + name;
}

std::string SubjectText(const Json& subject, const std::string& binding_ns) {
  const std::string kind = GetString(subject, "kind");
  std::string name = GetString(subject, "name");
  if (kind == "ServiceAccount") {
    std::string ns = GetString(subject, "namespace");
    name = (ns.empty() ? binding_ns : ns) + "/" + name;
  }
  return kind + " \"" + name + "\"";
}

// The bootstrap policy for system:authenticated (system:discovery, system:public-info-viewer,
// system:basic-user), which every cluster has as ClusterRoles bound to that group.
bool BootstrapAllows(const UserInfo& user, const AccessAttributes& a) {
  if (!user.InGroup("system:authenticated")) return false;
  if (!a.resource_request) {
    if (a.verb != "get") return false;
    static const char* const kExact[] = {"/api",    "/apis",    "/healthz", "/livez",
                                         "/readyz", "/openapi", "/version", "/version/"};
    for (const char* p : kExact) {
      if (a.path == p) return true;
    }
    for (const char* prefix : {"/api/", "/apis/", "/openapi/"}) {
      if (a.path.rfind(prefix, 0) == 0) return true;
    }
    return false;
  }
  return a.verb == "create" && a.group == "authorization.k8s.io" &&
         (a.resource == "selfsubjectaccessreviews" || a.resource == "selfsubjectrulesreviews");
}

struct Evaluation {
  const Storage& storage;
  const UserInfo& user;
  const AccessAttributes& a;
  std::vector<std::string> errors;  // roles that bindings name but that do not exist
  std::string allowed_by;

  // The rules of a binding's roleRef; nullopt (and an error noted) when the role is missing.
  std::optional<Json> RulesOf(const Json& role_ref, const std::string& binding_ns) {
    const std::string kind = GetString(role_ref, "kind");
    const std::string name = GetString(role_ref, "name");
    const bool cluster = kind == "ClusterRole";
    auto rec = storage.Get(
        cluster ? "clusterroles.rbac.authorization.k8s.io" : "roles.rbac.authorization.k8s.io",
        cluster ? "" : binding_ns, name);
    if (!rec) {
      errors.push_back(std::string(cluster ? "clusterrole" : "role") +
                       ".rbac.authorization.k8s.io \"" + name + "\" not found");
      return std::nullopt;
    }
    return MemberOrNull(rec->Parse(), "rules");
  }

  // Whether one binding grants the request (and if so, says which).
  bool BindingAllows(const Json& binding, const std::string& binding_ns, const char* what) {
    const Json& subjects = MemberOrNull(binding, "subjects");
    if (!subjects.is_array()) return false;
    const Json* matched = nullptr;
    for (const Json& s : subjects) {
      if (SubjectMatches(s, user, binding_ns)) {
        matched = &s;
        break;
      }
    }
    if (matched == nullptr) return false;
    const Json& ref = MemberOrNull(binding, "roleRef");
    auto rules = RulesOf(ref, binding_ns);
    if (!rules || !rules->is_array()) return false;
    for (const Json& rule : *rules) {
      if (!RuleAllows(rule, a)) continue;
      const std::string name = GetString(MemberOrNull(binding, "metadata"), "name");
      allowed_by = std::string("RBAC: allowed by ") + what + " \"" +
                   (binding_ns.empty() ? name : binding_ns + "/" + name) + "\" of " +
                   GetString(ref, "kind") + " \"" + GetString(ref, "name") + "\" to " +
                   SubjectText(*matched, binding_ns);
      return true;
    }
    return false;
  }

  bool Run() {
    for (const auto& rec :
         storage.List("clusterrolebindings.rbac.authorization.k8s.io", "").items) {
      if (BindingAllows(rec.Parse(), "", "ClusterRoleBinding")) return true;
    }
    if (a.resource_request && !a.ns.empty()) {
      for (const auto& rec : storage.List("rolebindings.rbac.authorization.k8s.io", a.ns).items) {
        if (BindingAllows(rec.Parse(), a.ns, "RoleBinding")) return true;
      }
    }
    return false;
  }
};

std::string RandomToken() {
  unsigned char raw[32];
  if (RAND_bytes(raw, sizeof(raw)) != 1) {
    std::fprintf(stderr, "steward: RAND_bytes failed\n");
    std::abort();
  }
  static const char kHex[] = "0123456789abcdef";
  std::string out = "steward-sa.";
  for (unsigned char c : raw) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

}  // namespace

bool UserInfo::InGroup(std::string_view group) const {
  return std::find(groups.begin(), groups.end(), group) != groups.end();
}

AccessDecision Authorize(const Storage& storage, const UserInfo& user, const AccessAttributes& a) {
  if (user.InGroup("system:masters")) return {true, ""};
  if (BootstrapAllows(user, a))
    return {true, "allowed by the bootstrap policy for system:authenticated"};
  Evaluation e{storage, user, a, {}, {}};
  if (e.Run()) return {true, e.allowed_by};
  if (e.errors.empty()) return {false, ""};
  std::string reason = "RBAC: ";
  if (e.errors.size() == 1) {
    reason += e.errors[0];
  } else {
    reason += "[";
    for (size_t i = 0; i < e.errors.size(); ++i) reason += (i ? ", " : "") + e.errors[i];
    reason += "]";
  }
  return {false, reason};
}

StatusError ForbiddenAccessError(const UserInfo& user, const AccessAttributes& a,
                                 const std::string& reason) {
  std::string msg;
  if (!a.resource_request) {
    msg = "User \"" + user.name + "\" cannot " + a.verb + " path \"" + a.path + "\"";
  } else {
    const std::string resource =
        a.subresource.empty() ? a.resource : a.resource + "/" + a.subresource;
    msg = "User \"" + user.name + "\" cannot " + a.verb + " resource \"" + resource +
          "\" in API group \"" + a.group + "\"" +
          (a.ns.empty() ? " at the cluster scope" : " in the namespace \"" + a.ns + "\"");
  }
  if (!reason.empty()) msg += ": " + reason;
  StatusError e = ForbiddenError("");
  if (!a.resource_request) {
    e.message = "forbidden: " + msg;
    return e;
  }
  const std::string qualified = a.group.empty() ? a.resource : a.resource + "." + a.group;
  e.message = a.name.empty() ? qualified + " is forbidden: " + msg
                             : qualified + " \"" + a.name + "\" is forbidden: " + msg;
  e.name = a.name;
  e.group = a.group;
  e.kind = a.resource;
  return e;
}

ApiResult<Json> ReviewSelfSubjectAccess(const Storage& storage, const UserInfo& user, Json review) {
  const ResourceType* rt = FindResource("authorization.k8s.io", "v1", "selfsubjectaccessreviews");
  const Json& spec = MemberOrNull(review, "spec");
  const Json& resource = MemberOrNull(spec, "resourceAttributes");
  const Json& non_resource = MemberOrNull(spec, "nonResourceAttributes");
  if (resource.is_null() == non_resource.is_null()) {
    return InvalidError(
        *rt, "",
        {{"FieldValueInvalid",
          "Invalid value: " + RenderValue(resource) +
              ": exactly one of nonResourceAttributes or resourceAttributes must be specified",
          "spec.resourceAttributes"}});
  }
  AccessAttributes a;
  if (!resource.is_null()) {
    a.verb = GetString(resource, "verb");
    a.group = GetString(resource, "group");
    a.resource = GetString(resource, "resource");
    a.subresource = GetString(resource, "subresource");
    a.ns = GetString(resource, "namespace");
    a.name = GetString(resource, "name");
  } else {
    a.resource_request = false;
    a.verb = GetString(non_resource, "verb");
    a.path = GetString(non_resource, "path");
  }
  const AccessDecision d = Authorize(storage, user, a);
  Json status = {{"allowed", d.allowed}};
  if (!d.reason.empty()) status["reason"] = d.reason;
  review["status"] = std::move(status);
  if (!review.contains("metadata") || !review["metadata"].is_object()) {
    review["metadata"] = Json::object();
  }
  review["metadata"]["creationTimestamp"] = nullptr;
  review["apiVersion"] = "authorization.k8s.io/v1";
  review["kind"] = "SelfSubjectAccessReview";
  return review;
}

ApiResult<Json> RequestServiceAccountToken(TokenAuthority& tokens, const Storage& storage,
                                           const std::string& ns, const std::string& name,
                                           Json request, SystemTime now) {
  const ResourceType* sa_type = FindResource("", "v1", "serviceaccounts");
  auto sa = storage.Get("serviceaccounts", ns, name);
  if (!sa) return NotFoundError(*sa_type, name);
  if (!request.contains("spec") || !request["spec"].is_object()) request["spec"] = Json::object();
  Json& spec = request["spec"];
  const Json& seconds = MemberOrNull(spec, "expirationSeconds");
  int64_t ttl = 3600;
  if (!seconds.is_null()) {
    ttl = seconds.is_number_integer() ? seconds.get<int64_t>() : 0;
    std::string problem;
    if (ttl < 600) problem = "may not specify a duration less than 10 minutes";
    if (ttl > (int64_t{1} << 32)) problem = "may not specify a duration larger than 2^32 seconds";
    if (!problem.empty()) {
      ResourceType token_type = *sa_type;
      token_type.group = "authentication.k8s.io";
      token_type.kind = "TokenRequest";
      return InvalidError(
          token_type, name,
          {{"FieldValueInvalid", "Invalid value: " + RenderValue(seconds) + ": " + problem,
            "spec.expirationSeconds"}});
    }
  }
  spec["expirationSeconds"] = ttl;
  if (!spec.contains("audiences") || !spec["audiences"].is_array() || spec["audiences"].empty()) {
    spec["audiences"] = Json::array({"https://kubernetes.default.svc.cluster.local"});
  }
  if (!spec.contains("boundObjectRef")) spec["boundObjectRef"] = nullptr;
  const SystemTime expires = now + std::chrono::seconds(ttl);
  const std::string uid = GetString(MemberOrNull(sa->Parse(), "metadata"), "uid");
  request["status"] = {{"token", tokens.Issue(ns, name, uid, now, expires)},
                       {"expirationTimestamp", FormatRfc3339(expires)}};
  request["apiVersion"] = "authentication.k8s.io/v1";
  request["kind"] = "TokenRequest";
  request["metadata"] = {{"name", name}, {"namespace", ns}, {"creationTimestamp", nullptr}};
  return request;
}

UserInfo TokenAuthority::Admin() { return {"admin", {"system:masters", "system:authenticated"}}; }

std::optional<UserInfo> TokenAuthority::Authenticate(std::string_view header,
                                                     const Storage& storage, SystemTime now) const {
  if (!Enabled()) return Admin();
  constexpr std::string_view kBearer = "Bearer ";
  if (header.substr(0, kBearer.size()) != kBearer) return std::nullopt;
  const std::string_view token = header.substr(kBearer.size());
  if (token == admin_token_) return Admin();
  Issued issued;
  {
    MutexLock lock(mu_);
    auto it = tokens_.find(token);
    if (it == tokens_.end()) return std::nullopt;
    issued = it->second;
  }
  if (now >= issued.expires) return std::nullopt;
  auto sa = storage.Get("serviceaccounts", issued.ns, issued.name);
  if (!sa || GetString(MemberOrNull(sa->Parse(), "metadata"), "uid") != issued.uid) {
    return std::nullopt;  // deleted (or deleted and created again): its tokens die with it
  }
  return UserInfo{
      std::string(kServiceAccountPrefix) + issued.ns + ":" + issued.name,
      {"system:serviceaccounts", "system:serviceaccounts:" + issued.ns, "system:authenticated"}};
}

std::string TokenAuthority::Issue(const std::string& ns, const std::string& name,
                                  const std::string& uid, SystemTime now, SystemTime expires) {
  std::string token = RandomToken();
  MutexLock lock(mu_);
  // Expired tokens are dropped as new ones are issued, so the map stays small.
  for (auto it = tokens_.begin(); it != tokens_.end();) {
    it = it->second.expires <= now ? tokens_.erase(it) : std::next(it);
  }
  tokens_[token] = Issued{ns, name, uid, expires};
  return token;
}

}  // namespace steward::cluster
