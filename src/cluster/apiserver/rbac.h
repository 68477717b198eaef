// Authentication and RBAC authorization of the embedded cluster, as a real API server does them
// for bearer tokens:
//
//   - TokenAuthority: who a bearer token is. The cluster's admin token is the user "admin" in
//     the group system:masters (allowed everything, as on a real cluster). ServiceAccount tokens
//     are issued by TokenRequest (`kubectl create token NAME`, POST serviceaccounts/NAME/token)
//     and name "system:serviceaccount:<ns>:<name>" in the groups system:serviceaccounts,
//     system:serviceaccounts:<ns> and system:authenticated. A token is valid from its nbf until
//     it expires, only for the cluster's API audience (a token requested for another audience,
//     `kubectl create token --audience=vault`, is not this server's), and while its
//     ServiceAccount exists with the uid it was issued for. Tokens are signed JWTs, nothing is
//     kept per token: they outlive a restart of a cluster on its data dir.
//   - Authorize: RBAC evaluation (k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac) of one
//     request against the stored Roles, ClusterRoles, RoleBindings and ClusterRoleBindings, plus
//     the bootstrap policy every cluster has for authenticated users (system:discovery,
//     system:public-info-viewer, system:basic-user): discovery, version, health and OpenAPI
//     paths, and creating SelfSubjectAccessReviews, SelfSubjectRulesReviews and
//     SelfSubjectReviews.
//   - The reviews a user asks about itself: SelfSubjectAccessReview (`kubectl auth can-i`),
//     SelfSubjectRulesReview (`kubectl auth can-i --list`) and SelfSubjectReview (`kubectl auth
//     whoami`).
//   - ForbiddenError: the 403 a real server answers, word for word.
//   - RulesFor: what a user holds, for the escalation prevention on writes of roles and
//     bindings (rbac_escalation.h).
//
// Thread-safety: TokenAuthority is immutable after construction; Authorize reads the storage
// (whose reads are thread-safe). Everything here is safe from any thread.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/apiserver/status_error.h"
#include "cluster/storage/storage.h"
#include "common/clock.h"

namespace steward::cluster {

struct UserInfo {
  std::string name;
  std::vector<std::string> groups;
  std::string uid;  // a ServiceAccount's uid; empty for the admin
  bool InGroup(std::string_view group) const;
};

// What a request asks to do, as authorizer.Attributes.
struct AccessAttributes {
  bool resource_request = true;
  std::string verb;  // get, list, watch, create, update, patch, delete, deletecollection, ...
  // Resource requests.
  std::string group;
  std::string resource;
  std::string subresource;
  std::string ns;
  std::string name;
  // Non-resource requests ("/metrics", "/apis").
  std::string path;
};

struct AccessDecision {
  bool allowed = false;
  // Allowed: which binding allowed it ("RBAC: allowed by RoleBinding \"ns/b\" of Role \"r\" to
  // ServiceAccount \"ns/sa\""). Denied: why evaluation was incomplete (a binding's role is
  // missing), else empty.
  std::string reason;
};

AccessDecision Authorize(const Storage& storage, const UserInfo& user, const AccessAttributes& a);

// RBAC's RulesFor as the RBAC registry resolves it for its escalation checks
// (rbac_escalation.h): the PolicyRules (a JSON array) of the bootstrap policy for authenticated
// users, then of every ClusterRoleBinding and (`ns` not empty) every RoleBinding of `ns` that
// names `user`. system:masters' authority is no rule and is not listed. `resolution_error` is
// set to the bindings' roles that do not exist, in the registry's words and aggregated as
// apimachinery does (`roles.rbac.authorization.k8s.io "x" not found`, or "[a, b]"), or "".
Json RulesFor(const Storage& storage, const UserInfo& user, const std::string& ns,
              std::string* resolution_error);

// 403 Forbidden: `pods "x" is forbidden: User "u" cannot get resource "pods" in API group "" in
// the namespace "ns"[: reason]`, details {name, group, kind: resource}.
StatusError ForbiddenAccessError(const UserInfo& user, const AccessAttributes& a,
                                 const std::string& reason);

// POST selfsubjectaccessreviews: `review` (a SelfSubjectAccessReview) answered for `user`, its
// status filled in ({allowed, reason}); 422 unless exactly one of resourceAttributes and
// nonResourceAttributes is given.
ApiResult<Json> ReviewSelfSubjectAccess(const Storage& storage, const UserInfo& user, Json review);

// POST selfsubjectrulesreviews: the rules `user` has in the review's spec.namespace (400 "no
// namespace on request" without one), as RBAC's RulesFor lists them: everything for
// system:masters, the bootstrap policy for authenticated users, then the rules of every
// ClusterRoleBinding and of the namespace's RoleBindings that name the user. A binding to a
// missing role is reported in status.evaluationError.
ApiResult<Json> ReviewSelfSubjectRules(const Storage& storage, const UserInfo& user,
                                       const Json& review);

// POST selfsubjectreviews (authentication.k8s.io): who `user` is (status.userInfo: username,
// uid, groups), created at `now`.
Json ReviewSelfSubject(const UserInfo& user, SystemTime now);

class TokenAuthority;

// POST serviceaccounts/NAME/token: `request` (a TokenRequest) answered with a new token for the
// ServiceAccount `ns`/`name` (404 when it does not exist). expirationSeconds defaults to 3600
// and must be at least 600 (422 otherwise); audiences default to the cluster's.
ApiResult<Json> RequestServiceAccountToken(const TokenAuthority& tokens, const Storage& storage,
                                           const std::string& ns, const std::string& name,
                                           Json request, SystemTime now);

class TokenAuthority {
 public:
  // `admin_token` empty disables authentication: every request is the admin. ServiceAccount
  // tokens are signed with `signing_key` (HMAC-SHA256); an empty key is replaced by a random
  // one of this object, whose tokens then die with it. The embedded cluster derives its key
  // from its CA key, so a cluster restarted on its data dir still accepts the tokens it issued.
  TokenAuthority(std::string admin_token, std::string signing_key);

  bool Enabled() const { return !admin_token_.empty(); }

  // The user of "Authorization: <header>" at `now`; nullopt when unauthenticated (401). As
  // kube-apiserver's ServiceAccount token authenticator: the token's `aud` (a string or a list)
  // must name one of ApiAudiences(), and go-jose's one-minute leeway applies to `nbf` and `iat`
  // (a token whose nbf or iat is more than a minute ahead of `now` is refused). `exp` has no
  // leeway: a token is refused from its exp on.
  std::optional<UserInfo> Authenticate(std::string_view authorization_header,
                                       const Storage& storage, SystemTime now) const;

  // A new token for ServiceAccount `ns`/`name` (of uid `uid`) for `audiences`, issued at
  // `now`, valid until `expires`: a JWT as a real API server issues (claims iss, sub, aud, exp,
  // iat, nbf, jti and kubernetes.io's namespace and serviceaccount), signed HS256.
  std::string Issue(const std::string& ns, const std::string& name, const std::string& uid,
                    const std::vector<std::string>& audiences, SystemTime now,
                    SystemTime expires) const;

  static UserInfo Admin();

  // The audiences this API server accepts tokens for (kube-apiserver's --api-audiences, which
  // default to its issuer), and the ones a TokenRequest without audiences gets:
  // {"https://kubernetes.default.svc.cluster.local"}.
  static const std::vector<std::string>& ApiAudiences();

 private:
  const std::string admin_token_;
  const std::string signing_key_;
};

}  // namespace steward::cluster
