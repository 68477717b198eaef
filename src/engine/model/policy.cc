#include <array>

#include "common/json_access.h"
#include "engine/model/project.h"
#include "engine/model/validation.h"

namespace steward::engine {

namespace {

// The Pod Security Standards' baseline: what a container may add without being privileged.
constexpr std::array<std::string_view, 13> kBaselineCapabilities = {
    "AUDIT_WRITE",      "CHOWN",   "DAC_OVERRIDE", "FOWNER",  "FSETID", "KILL",      "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID",       "SETPCAP", "SETUID", "SYS_CHROOT"};

Status Refused(std::string_view path, std::string_view what, std::string_view key) {
  return InvalidField(
      path, std::string(what) + " (refused by engine.policy." + std::string(key) + ": false)");
}

// Member, with a null value counted as absent.
const Json* NonNullMember(const Json& obj, std::string_view key) {
  const Json* m = Member(obj, key);
  return m == nullptr || m->is_null() ? nullptr : m;
}

bool IsTrue(const Json* v) { return v != nullptr && v->is_boolean() && v->get<bool>(); }
bool IsFalse(const Json* v) { return v != nullptr && v->is_boolean() && !v->get<bool>(); }

Status CheckUnconfined(const Json& context, const std::string& path) {
  for (std::string_view profile : {"seccompProfile", "appArmorProfile"}) {
    const Json* p = NonNullMember(context, profile);
    const Json* type = p == nullptr ? nullptr : NonNullMember(*p, "type");
    if (type != nullptr && type->is_string() && type->get<std::string>() == "Unconfined") {
      return Refused(JoinPath(JoinPath(path, profile), "type"),
                     "Unconfined profiles are not allowed", "allowPrivileged");
    }
  }
  return Status::Ok();
}

Status CheckPrivileged(const ProjectSpec& spec, std::string_view path) {
  if (spec.pod_security_context) {
    RETURN_IF_ERROR(
        CheckUnconfined(*spec.pod_security_context, JoinPath(path, "podSecurityContext")));
  }
  if (!spec.container_security_context) return Status::Ok();
  const Json& c = *spec.container_security_context;
  const std::string base = JoinPath(path, "containerSecurityContext");
  if (IsTrue(NonNullMember(c, "privileged"))) {
    return Refused(JoinPath(base, "privileged"), "privileged containers are not allowed",
                   "allowPrivileged");
  }
  if (IsTrue(NonNullMember(c, "allowPrivilegeEscalation"))) {
    return Refused(JoinPath(base, "allowPrivilegeEscalation"),
                   "privilege escalation is not allowed", "allowPrivileged");
  }
  if (const Json* caps = NonNullMember(c, "capabilities")) {
    if (const Json* add = NonNullMember(*caps, "add"); add != nullptr && add->is_array()) {
      for (size_t i = 0; i < add->size(); ++i) {
        const Json& cap = (*add)[i];
        std::string name = cap.is_string() ? cap.get<std::string>() : "";
        if (name.rfind("CAP_", 0) == 0) name.erase(0, 4);
        bool baseline = false;
        for (std::string_view b : kBaselineCapabilities) baseline = baseline || b == name;
        if (!baseline) {
          return Refused(IndexPath(JoinPath(JoinPath(base, "capabilities"), "add"), i),
                         "capability \"" + name.substr(0, 64) +
                             "\" is beyond the baseline set a container may add",
                         "allowPrivileged");
        }
      }
    }
  }
  if (const Json* pm = NonNullMember(c, "procMount");
      pm != nullptr && pm->is_string() && pm->get<std::string>() == "Unmasked") {
    return Refused(JoinPath(base, "procMount"), "an unmasked /proc is not allowed",
                   "allowPrivileged");
  }
  if (const Json* w = NonNullMember(c, "windowsOptions");
      w != nullptr && IsTrue(NonNullMember(*w, "hostProcess"))) {
    return Refused(JoinPath(JoinPath(base, "windowsOptions"), "hostProcess"),
                   "host process containers are not allowed", "allowPrivileged");
  }
  return CheckUnconfined(c, base);
}

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

}  // namespace

Status CheckSpecPolicy(const SpecPolicy& policy, const ProjectSpec& spec, std::string_view path) {
  if (!policy.allow_privileged) RETURN_IF_ERROR(CheckPrivileged(spec, path));
  if (!policy.allow_run_as_root) {
    RETURN_IF_ERROR(CheckRoot(spec.pod_security_context, JoinPath(path, "podSecurityContext")));
    RETURN_IF_ERROR(
        CheckRoot(spec.container_security_context, JoinPath(path, "containerSecurityContext")));
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
