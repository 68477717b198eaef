// RBAC escalation prevention of the embedded cluster, as the API server's RBAC registry does it
// (k8s.io/kubernetes/pkg/registry/rbac: {role,clusterrole,rolebinding,clusterrolebinding}/
// policybased, escalation_check.go, helpers.go, validation/rule.go ConfirmNoEscalation and
// validation/policy_compact.go; k8s.io/component-helpers/auth/rbac/validation Covers). Being
// allowed to create a Role or a RoleBinding does not let a user grant more than it holds:
//
//   - Role / ClusterRole create or update: allowed when the user is in system:masters, or may
//     `escalate` that resource (roles / clusterroles in rbac.authorization.k8s.io, in the
//     request's namespace, for the request's name: none on a create), or already holds every
//     permission the rules grant (its rules in the namespace; cluster-wide ones for a
//     ClusterRole). Using an aggregationRule (on the new or the old ClusterRole) needs full
//     authority (everything on every resource and URL).
//   - RoleBinding / ClusterRoleBinding create or update: allowed when the user is in
//     system:masters, or may `bind` the referenced role (roles / clusterroles, for its name, in
//     the binding's namespace; cluster-wide for a ClusterRoleBinding), or already holds every
//     permission of that role (404 NotFound when it does not exist).
//   - An update that changes nothing but metadata.ownerReferences and finalizers (the garbage
//     collector's fields) is always allowed.
//   - A refusal is the real 403: `roles.rbac.authorization.k8s.io "r" is forbidden: user
//     "system:serviceaccount:ns:sa" (groups=["system:serviceaccounts" "system:serviceaccounts:ns"
//     "system:authenticated"]) is attempting to grant RBAC permissions not currently
//     held:\n{APIGroups:["*"], Resources:["*"], Verbs:["*"]}`, one line per missing permission
//     (compacted and sorted as Kubernetes does), then `; resolution errors: [...]` when one of
//     the user's bindings names a missing role.
//
// The check belongs to the request, not to the cluster: RestHandler puts it in the
// WriteOptions of every create, update and patch (ObjectApi runs it after validation and the
// cluster's admission hooks, on the object about to be stored, so a patch is judged by what it
// produces). Writes by the simulated controllers carry none.
//
// Thread-safety: pure functions of their arguments and the storage (whose reads are
// thread-safe); safe from any thread. The check EscalationCheck returns holds a reference to
// `storage`, which must outlive it; it may be called from any thread.
#pragma once

#include <string>
#include <vector>

#include "cluster/apiserver/object_api.h"
#include "cluster/apiserver/rbac.h"
#include "cluster/model/resource_types.h"
#include "cluster/storage/storage.h"
#include "common/json.h"

namespace steward::cluster {

// The escalation check of a create, update or patch by `user` of `rt` at `ns`/`name` (the
// request's URL: `name` is empty on a create), for WriteOptions::admit; null when the request
// needs none (not a role or binding of rbac.authorization.k8s.io, or `user` is in
// system:masters).
AdmissionHook EscalationCheck(const Storage& storage, const UserInfo& user, const ResourceType& rt,
                              std::string ns, std::string name);

// Covers: the permissions of `rules` (a JSON array of PolicyRules) that `owner_rules` do not
// cover, broken down, compacted and described as the escalation message lists them
// (`{APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list"]}`,
// `{NonResourceURLs:["/metrics"], Verbs:["get"]}`), sorted; empty when every one is covered.
std::vector<std::string> UncoveredPermissions(const Json& owner_rules, const Json& rules);

}  // namespace steward::cluster
