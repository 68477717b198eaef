// Internal to the model module: the Kubernetes Pod Security Standards (PSS) as engine.policy
// applies them to what a project's spec can set (CheckSpecPolicy, policy.cc).
//
// What this file promises: every PSS control a spec can reach — the two security contexts, the
// probes (their `host`) and the annotations the pods carry (AppArmor / seccomp annotations) — is
// checked as the Pod Security admission controller checks it at the newest policy version
// (Kubernetes 1.36; `staging/src/k8s.io/pod-security-admission/policy/check_*.go`), at pod and at
// container level. The controls a spec cannot express (host namespaces, hostPath and other
// volumes, host ports, lifecycle hooks, init or ephemeral containers, `hostUsers`, `os`) are
// Steward's own rendering, which passes both levels; docs/security.md lists them all.
//
// Errors are kInvalidArgument "<path>.<field>: <why> (refused by engine.policy.<key>)", naming the
// first field refused. Stateless.
#pragma once

#include <string>
#include <string_view>

#include "common/json.h"
#include "common/status.h"
#include "engine/model/project.h"

namespace steward::engine::internal {

// The security contexts one of a project's pods runs with, each with the path errors name:
// core.PodSecurityContext and the core.SecurityContext of its one container; null = none.
// `*_own`: the context is the spec's (not the operator's default), so the one to name when a
// rule may be met at either level.
struct PodContexts {
  const Json* pod = nullptr;
  std::string pod_path;
  bool pod_own = true;
  const Json* container = nullptr;
  std::string container_path;
  bool container_own = true;
};

// The baseline level on the contexts (privileged, capabilities.add, procMount, hostProcess,
// seLinuxOptions, seccompProfile, appArmorProfile, sysctls) plus Steward's own refusal of
// allowPrivilegeEscalation: true. `key`: the policy key refusals name ("allowPrivileged: false").
Status CheckBaselineContexts(const PodContexts& c, std::string_view key);
// The baseline level on the rest of a spec: probes with a `host` (they would probe the node's
// network, not the pod's), and AppArmor / seccomp annotations (the pods carry spec.annotations)
// whose profile is not the runtime's default or a localhost one.
Status CheckBaselineSpec(const ProjectSpec& spec, std::string_view path, std::string_view key);
// The restricted level's own controls on the contexts a pod runs with (the spec's, else the
// operator's defaults): allowPrivilegeEscalation: false, runAsNonRoot: true at pod or container
// level, runAsUser not 0, a RuntimeDefault or Localhost seccomp profile at pod or container
// level, capabilities.drop with ALL and capabilities.add with NET_BIND_SERVICE only. The baseline
// is checked separately (CheckBaselineContexts).
Status CheckRestrictedContexts(const PodContexts& c, std::string_view key);

}  // namespace steward::engine::internal
