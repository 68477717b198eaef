#include "cluster/apiserver/rbac.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <functional>

#include "cluster/apiserver/validation.h"
#include "cluster/model/resource_types.h"
#include "common/ascii.h"
#include "common/base64.h"
#include "common/json.h"
#include "common/json_access.h"
#include "common/secure_random.h"
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

// The rules of the bootstrap ClusterRoles bound to system:authenticated on every cluster
// (system:basic-user, system:discovery, system:public-info-viewer, in their bindings' order).
const Json& BootstrapRules() {
  static const Json kRules = Json::array(
      {{{"verbs", {"create"}},
        {"apiGroups", {"authorization.k8s.io"}},
        {"resources", {"selfsubjectaccessreviews", "selfsubjectrulesreviews"}}},
       {{"verbs", {"create"}},
        {"apiGroups", {"authentication.k8s.io"}},
        {"resources", {"selfsubjectreviews"}}},
       {{"verbs", {"get"}},
        {"nonResourceURLs",
         {"/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*",
          "/readyz", "/version", "/version/"}}},
       {{"verbs", {"get"}},
        {"nonResourceURLs", {"/healthz", "/livez", "/readyz", "/version", "/version/"}}}});
  return kRules;
}

// What system:masters may do: everything (the API server's privileged-group authorizer).
const Json& MastersRules() {
  static const Json kRules =
      Json::array({{{"verbs", {"*"}}, {"apiGroups", {"*"}}, {"resources", {"*"}}},
                   {{"verbs", {"*"}}, {"nonResourceURLs", {"*"}}}});
  return kRules;
}

// One rule granted to the user through a binding.
struct GrantedRule {
  const Json& binding;
  const std::string& binding_ns;  // empty for a ClusterRoleBinding
  const Json& subject;            // the binding's subject that names the user
  const Json& rule;
};

// How a missing role is worded: as the authorizer's listers say it (`role.rbac.authorization.k8s.io
// "x" not found`), or as the RBAC registry's storage, which the escalation checks resolve
// through, does (`roles.rbac.authorization.k8s.io "x" not found`).
enum class MissingRoleWords { kLister, kRegistry };

// RBAC's VisitRulesFor: every rule that the bindings naming `user` grant in `ns` —
// ClusterRoleBindings first, then (ns not empty) the RoleBindings of `ns` — until `visit`
// returns false. Roles that bindings name but that do not exist are added to `errors`.
// Returns false when `visit` stopped the walk.
bool VisitRulesFor(const Storage& storage, const UserInfo& user, const std::string& ns,
                   const std::function<bool(const GrantedRule&)>& visit,
                   std::vector<std::string>& errors,
                   MissingRoleWords words = MissingRoleWords::kLister) {
  auto visit_binding = [&](const Json& binding, const std::string& binding_ns) {
    const Json& subjects = MemberOrNull(binding, "subjects");
    if (!subjects.is_array()) return true;
    const Json* matched = nullptr;
    for (const Json& s : subjects) {
      if (SubjectMatches(s, user, binding_ns)) {
        matched = &s;
        break;
      }
    }
    if (matched == nullptr) return true;
    const Json& ref = MemberOrNull(binding, "roleRef");
    const std::string name = GetString(ref, "name");
    const bool cluster = GetString(ref, "kind") == "ClusterRole";
    auto role = storage.Get(
        cluster ? "clusterroles.rbac.authorization.k8s.io" : "roles.rbac.authorization.k8s.io",
        cluster ? "" : binding_ns, name);
    if (!role) {
      const char* resource = words == MissingRoleWords::kLister
                                 ? (cluster ? "clusterrole" : "role")
                                 : (cluster ? "clusterroles" : "roles");
      errors.push_back(std::string(resource) + ".rbac.authorization.k8s.io \"" + name +
                       "\" not found");
      return true;
    }
    const Json role_object = role->Parse();
    const Json& rules = MemberOrNull(role_object, "rules");
    if (!rules.is_array()) return true;
    for (const Json& rule : rules) {
      if (!visit(GrantedRule{binding, binding_ns, *matched, rule})) return false;
    }
    return true;
  };
  for (const auto& rec : storage.List("clusterrolebindings.rbac.authorization.k8s.io", "").items) {
    if (!visit_binding(rec.Parse(), "")) return false;
  }
  if (ns.empty()) return true;
  for (const auto& rec : storage.List("rolebindings.rbac.authorization.k8s.io", ns).items) {
    if (!visit_binding(rec.Parse(), ns)) return false;
  }
  return true;
}

// An aggregate of errors as apimachinery words it: one alone, or "[a, b]".
std::string JoinErrors(const std::vector<std::string>& errors) {
  if (errors.size() == 1) return errors[0];
  std::string out = "[";
  for (size_t i = 0; i < errors.size(); ++i) out += (i ? ", " : "") + errors[i];
  return out + "]";
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &len);
  return std::string(reinterpret_cast<const char*>(mac), len);
}

int64_t UnixSeconds(SystemTime t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

constexpr char kIssuer[] = "https://kubernetes.default.svc.cluster.local";

// go-jose's jwt.DefaultLeeway, which Kubernetes' token validation allows on nbf and iat (and on
// exp, which here has none: a token is refused from its exp on).
constexpr int64_t kLeewaySeconds = 60;

// Whether a token's `aud` claim (a string or a list of strings, as go-jose reads it) names one
// of the server's audiences.
bool ForThisServer(const Json& aud) {
  const std::vector<std::string>& mine = TokenAuthority::ApiAudiences();
  auto ours = [&](const Json& a) {
    return a.is_string() &&
           std::find(mine.begin(), mine.end(), a.get_ref<const std::string&>()) != mine.end();
  };
  if (aud.is_string()) return ours(aud);
  if (!aud.is_array()) return false;
  return std::any_of(aud.begin(), aud.end(), ours);
}

// go-jose's ValidateWithLeeway for a claim that may not lie ahead of `now` (nbf: not valid yet;
// iat: issued in the future): false when it is more than the leeway ahead. The claim is
// optional; a NumericDate that is not a number makes the token invalid.
bool NotAhead(const Json& claims, const char* field, SystemTime now) {
  const Json& v = MemberOrNull(claims, field);
  if (v.is_null()) return true;
  if (!v.is_number()) return false;
  const int64_t at =
      v.is_number_integer() ? v.get<int64_t>() : static_cast<int64_t>(v.get<double>());
  return UnixSeconds(now) + kLeewaySeconds >= at;
}

}  // namespace

bool UserInfo::InGroup(std::string_view group) const {
  return std::find(groups.begin(), groups.end(), group) != groups.end();
}

AccessDecision Authorize(const Storage& storage, const UserInfo& user, const AccessAttributes& a) {
  if (user.InGroup("system:masters")) return {true, ""};
  if (user.InGroup("system:authenticated")) {
    for (const Json& rule : BootstrapRules()) {
      if (RuleAllows(rule, a)) {
        return {true, "allowed by the bootstrap policy for system:authenticated"};
      }
    }
  }
  std::string allowed_by;
  std::vector<std::string> errors;
  const bool stopped = !VisitRulesFor(
      storage, user, a.resource_request ? a.ns : "",
      [&](const GrantedRule& g) {
        if (!RuleAllows(g.rule, a)) return true;
        const bool cluster = g.binding_ns.empty();
        const std::string name = GetString(MemberOrNull(g.binding, "metadata"), "name");
        const Json& ref = MemberOrNull(g.binding, "roleRef");
        allowed_by = std::string("RBAC: allowed by ") +
                     (cluster ? "ClusterRoleBinding" : "RoleBinding") + " \"" +
                     (cluster ? name : g.binding_ns + "/" + name) + "\" of " +
                     GetString(ref, "kind") + " \"" + GetString(ref, "name") + "\" to " +
                     SubjectText(g.subject, g.binding_ns);
        return false;
      },
      errors);
  if (stopped) return {true, allowed_by};
  if (errors.empty()) return {false, ""};
  return {false, "RBAC: " + JoinErrors(errors)};
}

Json RulesFor(const Storage& storage, const UserInfo& user, const std::string& ns,
              std::string* resolution_error) {
  Json rules = Json::array();
  if (user.InGroup("system:authenticated")) {
    for (const Json& rule : BootstrapRules()) rules.push_back(rule);
  }
  std::vector<std::string> errors;
  VisitRulesFor(
      storage, user, ns,
      [&](const GrantedRule& g) {
        rules.push_back(g.rule);
        return true;
      },
      errors, MissingRoleWords::kRegistry);
  *resolution_error = errors.empty() ? "" : JoinErrors(errors);
  return rules;
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

ApiResult<Json> ReviewSelfSubjectRules(const Storage& storage, const UserInfo& user,
                                       const Json& review) {
  const std::string ns = GetString(MemberOrNull(review, "spec"), "namespace");
  if (ns.empty()) return BadRequestError("no namespace on request");
  Json resource_rules = Json::array();
  Json non_resource_rules = Json::array();
  // A PolicyRule becomes a ResourceRule when it names resources and a NonResourceRule when it
  // names URLs (rbac's RulesFor); empty lists are left out, as their omitempty tags say.
  auto add = [&](const Json& rule) {
    auto copy_list = [&](Json& to, const char* field) {
      const Json& list = MemberOrNull(rule, field);
      if (list.is_array() && !list.empty()) to[field] = list;
    };
    if (!ArrayMemberOrEmpty(rule, "resources").empty()) {
      Json r = {{"verbs", ArrayMemberOrEmpty(rule, "verbs")}};
      for (const char* field : {"apiGroups", "resources", "resourceNames"}) copy_list(r, field);
      resource_rules.push_back(std::move(r));
    }
    if (!ArrayMemberOrEmpty(rule, "nonResourceURLs").empty()) {
      Json r = {{"verbs", ArrayMemberOrEmpty(rule, "verbs")}};
      copy_list(r, "nonResourceURLs");
      non_resource_rules.push_back(std::move(r));
    }
    return true;
  };
  if (user.InGroup("system:masters")) {
    for (const Json& rule : MastersRules()) add(rule);
  }
  if (user.InGroup("system:authenticated")) {
    for (const Json& rule : BootstrapRules()) add(rule);
  }
  std::vector<std::string> errors;
  VisitRulesFor(
      storage, user, ns, [&](const GrantedRule& g) { return add(g.rule); }, errors);
  Json status = {{"resourceRules", std::move(resource_rules)},
                 {"nonResourceRules", std::move(non_resource_rules)},
                 {"incomplete", false}};
  if (!errors.empty()) status["evaluationError"] = JoinErrors(errors);
  return Json{{"kind", "SelfSubjectRulesReview"},
              {"apiVersion", "authorization.k8s.io/v1"},
              {"metadata", {{"creationTimestamp", nullptr}}},
              {"spec", Json::object()},
              {"status", std::move(status)}};
}

Json ReviewSelfSubject(const UserInfo& user, SystemTime now) {
  Json info = {{"username", user.name}};
  if (!user.uid.empty()) info["uid"] = user.uid;
  info["groups"] = user.groups;
  return Json{{"kind", "SelfSubjectReview"},
              {"apiVersion", "authentication.k8s.io/v1"},
              {"metadata", {{"creationTimestamp", FormatRfc3339(now)}}},
              {"status", {{"userInfo", std::move(info)}}}};
}

ApiResult<Json> RequestServiceAccountToken(const TokenAuthority& tokens, const Storage& storage,
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
    spec["audiences"] = TokenAuthority::ApiAudiences();
  }
  if (!spec.contains("boundObjectRef")) spec["boundObjectRef"] = nullptr;
  const SystemTime expires = now + std::chrono::seconds(ttl);
  const std::string uid = GetString(MemberOrNull(sa->Parse(), "metadata"), "uid");
  std::vector<std::string> audiences;
  for (const Json& a : spec["audiences"]) {
    if (a.is_string()) audiences.push_back(a.get<std::string>());
  }
  request["status"] = {{"token", tokens.Issue(ns, name, uid, audiences, now, expires)},
                       {"expirationTimestamp", FormatRfc3339(expires)}};
  request["apiVersion"] = "authentication.k8s.io/v1";
  request["kind"] = "TokenRequest";
  request["metadata"] = {{"name", name}, {"namespace", ns}, {"creationTimestamp", nullptr}};
  return request;
}

UserInfo TokenAuthority::Admin() { return {"admin", {"system:masters", "system:authenticated"}}; }

const std::vector<std::string>& TokenAuthority::ApiAudiences() {
  static const std::vector<std::string> kAudiences = {kIssuer};
  return kAudiences;
}

TokenAuthority::TokenAuthority(std::string admin_token, std::string signing_key)
    : admin_token_(std::move(admin_token)),
      signing_key_(signing_key.empty() ? SecureRandomBytes(32) : std::move(signing_key)) {}

std::optional<UserInfo> TokenAuthority::Authenticate(std::string_view header,
                                                     const Storage& storage, SystemTime now) const {
  if (!Enabled()) return Admin();
  // As kube-apiserver's bearertoken authenticator: trimmed, split at single spaces, the scheme
  // "bearer" in any case, the token the second part (an empty one is no token).
  header = TrimAsciiWhitespace(header);
  const size_t space = header.find(' ');
  if (space == std::string_view::npos ||
      !AsciiEqualsIgnoreCase(header.substr(0, space), "bearer")) {
    return std::nullopt;
  }
  std::string_view token = header.substr(space + 1);
  token = token.substr(0, token.find(' '));
  if (token.empty()) return std::nullopt;
  if (token.size() == admin_token_.size() &&
      CRYPTO_memcmp(token.data(), admin_token_.data(), token.size()) == 0) {
    return Admin();
  }
  // header.payload.signature, the signature over "header.payload".
  const size_t last_dot = token.rfind('.');
  if (last_dot == std::string_view::npos || token.find('.') == last_dot) return std::nullopt;
  const std::string want = Base64UrlEncode(HmacSha256(signing_key_, token.substr(0, last_dot)));
  const std::string_view got = token.substr(last_dot + 1);
  if (got.size() != want.size() || CRYPTO_memcmp(got.data(), want.data(), want.size()) != 0) {
    return std::nullopt;
  }
  const size_t first_dot = token.find('.');
  auto payload = Base64UrlDecode(token.substr(first_dot + 1, last_dot - first_dot - 1));
  if (!payload) return std::nullopt;
  auto claims = ParseJson(*payload);
  if (!claims.ok() || !claims->is_object()) return std::nullopt;
  const Json& exp = MemberOrNull(*claims, "exp");
  if (!exp.is_number_integer() || UnixSeconds(now) >= exp.get<int64_t>()) return std::nullopt;
  // Not yet valid, or meant for another server (a token for Vault must not work here).
  if (!NotAhead(*claims, "nbf", now) || !NotAhead(*claims, "iat", now)) return std::nullopt;
  if (!ForThisServer(MemberOrNull(*claims, "aud"))) return std::nullopt;
  const Json& k8s = MemberOrNull(*claims, "kubernetes.io");
  const std::string ns = GetString(k8s, "namespace");
  const Json& sa_claim = MemberOrNull(k8s, "serviceaccount");
  const std::string name = GetString(sa_claim, "name");
  const std::string uid = GetString(sa_claim, "uid");
  auto sa = storage.Get("serviceaccounts", ns, name);
  if (!sa || GetString(MemberOrNull(sa->Parse(), "metadata"), "uid") != uid) {
    return std::nullopt;  // deleted (or deleted and created again): its tokens die with it
  }
  return UserInfo{
      std::string(kServiceAccountPrefix) + ns + ":" + name,
      {"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
      uid};
}

std::string TokenAuthority::Issue(const std::string& ns, const std::string& name,
                                  const std::string& uid, const std::vector<std::string>& audiences,
                                  SystemTime now, SystemTime expires) const {
  const Json header = {{"alg", "HS256"}, {"typ", "JWT"}};
  Json claims = {
      {"aud", audiences},
      {"exp", UnixSeconds(expires)},
      {"iat", UnixSeconds(now)},
      {"iss", kIssuer},
      {"jti", SecureRandomUuid()},
      {"kubernetes.io", {{"namespace", ns}, {"serviceaccount", {{"name", name}, {"uid", uid}}}}},
      {"nbf", UnixSeconds(now)},
      {"sub", std::string(kServiceAccountPrefix) + ns + ":" + name}};
  const std::string signed_part =
      Base64UrlEncode(DumpJson(header)) + "." + Base64UrlEncode(DumpJson(claims));
  return signed_part + "." + Base64UrlEncode(HmacSha256(signing_key_, signed_part));
}

}  // namespace steward::cluster
