// engine.policy (CheckSpecPolicy, project.h): the operator's keys applied to a spec. The Pod
// Security Standards' controls themselves are pod_security.cc's; this file says which apply
// (allowPrivileged, level), adds running as root (allowRunAsRoot) and annotation prefixes
// (allowedAnnotationPrefixes).
#include "common/json_access.h"
#include "engine/model/pod_security.h"
#include "engine/model/project.h"
#include "engine/model/value_rules.h"

namespace steward::engine {

namespace {

Status Refused(std::string_view path, std::string_view what, std::string_view key) {
  return InvalidField(
      path, std::string(what) + " (refused by engine.policy." + std::string(key) + ": false)");
}

// Member, with a null value counted as absent.
const Json* NonNullMember(const Json& obj, std::string_view key) {
  const Json* m = Member(obj, key);
  return m == nullptr || m->is_null() ? nullptr : m;
}

bool IsFalse(const Json* v) { return v != nullptr && v->is_boolean() && !v->get<bool>(); }

Status CheckRoot(const std::optional<Json>& context, const std::string& path) {
  if (!context) return Status::Ok();
  const Json* user = NonNullMember(*context, "runAsUser");
  if (user != nullptr && user->is_number_integer() && user->get<int64_t>() == 0) {
    return Refused(JoinPath(path, "runAsUser"), "running as root (uid 0) is not allowed",
                   "allowRunAsRoot");
  }
  if (IsFalse(NonNullMember(*context, "runAsNonRoot"))) {
    return Refused(JoinPath(path, "runAsNonRoot"), "runAsNonRoot: false is not allowed",
                   "allowRunAsRoot");
  }
  return Status::Ok();
}

Status CheckAnnotationPrefixes(const StringMap& annotations, const std::string& path,
                               const std::vector<std::string>& prefixes) {
  for (const auto& [key, value] : annotations) {
    bool ok = false;
    for (const std::string& p : prefixes) ok = ok || key.rfind(p, 0) == 0;
    if (!ok) {
      return InvalidField(KeyPath(path, key),
                          "annotation key is outside the operator's allowed prefixes (refused by "
                          "engine.policy.allowedAnnotationPrefixes)");
    }
  }
  return Status::Ok();
}

const Json* OrNull(const Json& j) { return j.is_null() ? nullptr : &j; }

}  // namespace

Status CheckSpecPolicy(const EngineConfig& config, const ProjectSpec& spec, std::string_view path) {
  const SpecPolicy& policy = config.policy;
  const std::string pod_path = JoinPath(path, "podSecurityContext");
  const std::string container_path = JoinPath(path, "containerSecurityContext");
  if (!policy.allow_privileged) {
    // The baseline, on what the spec sets: the operator's own defaults are theirs.
    const internal::PodContexts own{
        spec.pod_security_context ? &*spec.pod_security_context : nullptr,
        pod_path,
        true,
        spec.container_security_context ? &*spec.container_security_context : nullptr,
        container_path,
        true};
    RETURN_IF_ERROR(internal::CheckBaselineContexts(own, "allowPrivileged: false"));
    RETURN_IF_ERROR(internal::CheckBaselineSpec(spec, path, "allowPrivileged: false"));
  }
  if (!policy.allow_run_as_root) {
    RETURN_IF_ERROR(CheckRoot(spec.pod_security_context, pod_path));
    RETURN_IF_ERROR(CheckRoot(spec.container_security_context, container_path));
  }
  if (policy.level == PodSecurityLevel::kRestricted) {
    // What the pod runs with: a context the spec leaves out is the operator's default, which
    // ParseEngineConfig has checked at this level on its own.
    const internal::PodContexts runs{
        spec.pod_security_context ? &*spec.pod_security_context
                                  : OrNull(config.pod_security_context),
        pod_path,
        spec.pod_security_context.has_value(),
        spec.container_security_context ? &*spec.container_security_context
                                        : OrNull(config.container_security_context),
        container_path,
        spec.container_security_context.has_value()};
    RETURN_IF_ERROR(internal::CheckRestrictedContexts(runs, "level: restricted"));
  }
  if (policy.annotation_prefixes) {
    RETURN_IF_ERROR(CheckAnnotationPrefixes(spec.annotations, JoinPath(path, "annotations"),
                                            *policy.annotation_prefixes));
    RETURN_IF_ERROR(CheckAnnotationPrefixes(spec.ingress_annotations,
                                            JoinPath(JoinPath(path, "ingress"), "annotations"),
                                            *policy.annotation_prefixes));
  }
  return Status::Ok();
}

}  // namespace steward::engine
