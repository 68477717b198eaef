// The Pod Security Standards' controls a project's spec can reach (pod_security.h). Each set and
// rule below names the admission controller's check it mirrors
// (k8s.io/pod-security-admission/policy/check_<name>.go).
#include "engine/model/pod_security.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <utility>

#include "common/fields.h"
#include "common/json_access.h"

namespace steward::engine::internal {
namespace {

// check_capabilities_baseline.go: what a container may add. Compared as written, as the
// admission controller compares them: "CAP_CHOWN" is beyond the set.
constexpr std::array<std::string_view, 13> kBaselineCapabilities = {
    "AUDIT_WRITE",      "CHOWN",   "DAC_OVERRIDE", "FOWNER",  "FSETID", "KILL",      "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID",       "SETPCAP", "SETUID", "SYS_CHROOT"};

// check_seLinuxOptions.go (policy 1.31 on): the SELinux types a pod or container may run as.
constexpr std::array<std::string_view, 5> kSeLinuxTypes = {"", "container_t", "container_init_t",
                                                           "container_kvm_t", "container_engine_t"};

// check_sysctls.go (policy 1.32 on, the set of Kubernetes 1.36): the sysctls namespaced to the
// pod and isolated from other pods.
constexpr std::array<std::string_view, 12> kSafeSysctls = {"kernel.shm_rmid_forced",
                                                           "net.ipv4.ip_local_port_range",
                                                           "net.ipv4.tcp_syncookies",
                                                           "net.ipv4.ping_group_range",
                                                           "net.ipv4.ip_unprivileged_port_start",
                                                           "net.ipv4.ip_local_reserved_ports",
                                                           "net.ipv4.tcp_keepalive_time",
                                                           "net.ipv4.tcp_fin_timeout",
                                                           "net.ipv4.tcp_keepalive_intvl",
                                                           "net.ipv4.tcp_keepalive_probes",
                                                           "net.ipv4.tcp_rmem",
                                                           "net.ipv4.tcp_wmem"};

// check_appArmorProfile.go and check_seccompProfile_baseline.go: the annotations the kubelet
// (or the API server, copying them into the fields) reads a profile from.
constexpr std::string_view kAppArmorAnnotationPrefix =
    "container.apparmor.security.beta.kubernetes.io/";
constexpr std::string_view kSeccompPodAnnotation = "seccomp.security.alpha.kubernetes.io/pod";
constexpr std::string_view kSeccompContainerAnnotationPrefix =
    "container.seccomp.security.alpha.kubernetes.io/";

template <size_t N>
bool OneOf(std::string_view s, const std::array<std::string_view, N>& set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

template <size_t N>
std::string ListOf(const std::array<std::string_view, N>& set) {
  std::string out;
  for (std::string_view s : set) {
    if (!s.empty()) out += (out.empty() ? "" : " ") + std::string(s);
  }
  return out;
}

Status Refused(std::string_view path, std::string_view what, std::string_view key) {
  return InvalidField(path,
                      std::string(what) + " (refused by engine.policy." + std::string(key) + ")");
}

// The member `key` of `obj` (which may be null), a JSON null counted as absent.
const Json* Field(const Json* obj, std::string_view key) {
  const Json* m = obj == nullptr ? nullptr : Member(*obj, key);
  return m == nullptr || m->is_null() ? nullptr : m;
}

std::string StringOf(const Json* v) {
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

bool IsTrue(const Json* v) { return v != nullptr && v->is_boolean() && v->get<bool>(); }
bool IsFalse(const Json* v) { return v != nullptr && v->is_boolean() && !v->get<bool>(); }
bool IsZero(const Json* v) {
  return v != nullptr && v->is_number_integer() && v->get<int64_t>() == 0;
}

bool IsConfinedProfile(std::string_view type) {
  return type == "RuntimeDefault" || type == "Localhost";
}

// check_windowsHostProcess.go: pod and container level.
Status CheckHostProcess(const Json* context, const std::string& path, std::string_view key) {
  if (IsTrue(Field(Field(context, "windowsOptions"), "hostProcess"))) {
    return Refused(JoinPath(JoinPath(path, "windowsOptions"), "hostProcess"),
                   "Windows host process pods and containers are not allowed", key);
  }
  return Status::Ok();
}

// check_seLinuxOptions.go: pod and container level; the level (MCS label) is free.
Status CheckSeLinux(const Json* context, const std::string& path, std::string_view key) {
  const Json* options = Field(context, "seLinuxOptions");
  if (options == nullptr) return Status::Ok();
  const std::string base = JoinPath(path, "seLinuxOptions");
  const std::string type = StringOf(Field(options, "type"));
  if (!OneOf(type, kSeLinuxTypes)) {
    return Refused(JoinPath(base, "type"),
                   "SELinux type " + QuoteShort(type) + " is not allowed (only " +
                       ListOf(kSeLinuxTypes) + ", or none)",
                   key);
  }
  for (std::string_view field : {"user", "role"}) {
    if (!StringOf(Field(options, field)).empty()) {
      return Refused(JoinPath(base, field),
                     "a custom SELinux " + std::string(field) + " is not allowed (leave it unset)",
                     key);
    }
  }
  return Status::Ok();
}

// check_seccompProfile_baseline.go, check_appArmorProfile.go: pod and container level.
Status CheckProfiles(const Json* context, const std::string& path, std::string_view key) {
  for (std::string_view profile : {"seccompProfile", "appArmorProfile"}) {
    const Json* p = Field(context, profile);
    if (p == nullptr) continue;
    const std::string type = StringOf(Field(p, "type"));
    if (!IsConfinedProfile(type)) {
      return Refused(JoinPath(JoinPath(path, profile), "type"),
                     "must be RuntimeDefault or Localhost (got " + QuoteShort(type) +
                         "): unconfined profiles are not allowed",
                     key);
    }
  }
  return Status::Ok();
}

// check_sysctls.go: pod level only (the field exists there only).
Status CheckSysctls(const Json* pod, const std::string& path, std::string_view key) {
  const Json* sysctls = Field(pod, "sysctls");
  if (sysctls == nullptr || !sysctls->is_array()) return Status::Ok();
  const std::string base = JoinPath(path, "sysctls");
  for (size_t i = 0; i < sysctls->size(); ++i) {
    const std::string name = StringOf(Field(&(*sysctls)[i], "name"));
    if (!OneOf(name, kSafeSysctls)) {
      return Refused(
          JoinPath(IndexPath(base, i), "name"),
          "sysctl " + QuoteShort(name) + " is not in the safe set (" + ListOf(kSafeSysctls) + ")",
          key);
    }
  }
  return Status::Ok();
}

Status CheckBaselineCapabilities(const Json* container, const std::string& path,
                                 std::string_view key) {
  const Json* add = Field(Field(container, "capabilities"), "add");
  if (add == nullptr || !add->is_array()) return Status::Ok();
  for (size_t i = 0; i < add->size(); ++i) {
    const std::string name = StringOf(&(*add)[i]);
    if (OneOf(name, kBaselineCapabilities)) continue;
    std::string why = "capability " + QuoteShort(name) +
                      " is beyond the baseline set a container may add (" +
                      ListOf(kBaselineCapabilities) + ")";
    if (name.starts_with("CAP_") &&
        OneOf(std::string_view(name).substr(4), kBaselineCapabilities)) {
      why += "; write it without the CAP_ prefix, as Pod Security admission compares names";
    }
    return Refused(IndexPath(JoinPath(JoinPath(path, "capabilities"), "add"), i), why, key);
  }
  return Status::Ok();
}

// The container-only fields: check_privileged.go, check_capabilities_baseline.go,
// check_procMount_baseline.go, and allowPrivilegeEscalation (restricted in the standards;
// Steward refuses `true` at its baseline too, as it always has).
Status CheckContainerFields(const Json* container, const std::string& path, std::string_view key) {
  if (IsTrue(Field(container, "privileged"))) {
    return Refused(JoinPath(path, "privileged"), "privileged containers are not allowed", key);
  }
  if (IsTrue(Field(container, "allowPrivilegeEscalation"))) {
    return Refused(JoinPath(path, "allowPrivilegeEscalation"),
                   "privilege escalation is not allowed", key);
  }
  RETURN_IF_ERROR(CheckBaselineCapabilities(container, path, key));
  if (const Json* pm = Field(container, "procMount")) {
    const std::string mount = StringOf(pm);
    if (mount != "Default") {
      return Refused(JoinPath(path, "procMount"),
                     "/proc mount type " + QuoteShort(mount) +
                         " is not allowed (only Default: the masked /proc)",
                     key);
    }
  }
  return Status::Ok();
}

// check_hostProbesAndhostLifecycle.go: a probe's httpGet.host or tcpSocket.host.
Status CheckProbeHost(const std::optional<Json>& probe, const std::string& path,
                      std::string_view key) {
  if (!probe) return Status::Ok();
  for (std::string_view handler : {"httpGet", "tcpSocket"}) {
    const std::string host = StringOf(Field(Field(&*probe, handler), "host"));
    if (!host.empty()) {
      return Refused(JoinPath(JoinPath(path, handler), "host"),
                     "a probe may not name a host (it would be sent from the node to " +
                         QuoteShort(host) + ", not to the pod)",
                     key);
    }
  }
  return Status::Ok();
}

// check_appArmorProfile.go, check_seccompProfile_baseline.go (its 1.0 form): the annotations.
Status CheckProfileAnnotations(const StringMap& annotations, const std::string& path,
                               std::string_view key) {
  for (const auto& [name, value] : annotations) {
    bool ok = true;
    if (name.starts_with(kAppArmorAnnotationPrefix)) {
      ok = value.empty() || value == "runtime/default" || value.starts_with("localhost/");
    } else if (name == kSeccompPodAnnotation ||
               name.starts_with(kSeccompContainerAnnotationPrefix)) {
      ok = value == "runtime/default" || value == "docker/default" ||
           value.starts_with("localhost/");
    }
    if (!ok) {
      return Refused(KeyPath(path, name),
                     "profile " + QuoteShort(value) +
                         " is not allowed (runtime/default or localhost/<profile> only)",
                     key);
    }
  }
  return Status::Ok();
}

// The path to name for a rule either level may meet: the spec's own context first.
const std::string& EitherPath(const PodContexts& c) {
  return c.pod_own || !c.container_own ? c.pod_path : c.container_path;
}

Status CheckRestrictedCapabilities(const Json* container, const std::string& path,
                                   std::string_view key) {
  const Json* caps = Field(container, "capabilities");
  const std::string base = JoinPath(path, "capabilities");
  const Json* drop = Field(caps, "drop");
  const bool drops_all = drop != nullptr && drop->is_array() &&
                         std::any_of(drop->begin(), drop->end(), [](const Json& d) {
                           return d.is_string() && d.get<std::string>() == "ALL";
                         });
  if (!drops_all) {
    return Refused(JoinPath(base, "drop"), "must include ALL", key);
  }
  const Json* add = Field(caps, "add");
  if (add == nullptr || !add->is_array()) return Status::Ok();
  for (size_t i = 0; i < add->size(); ++i) {
    const std::string name = StringOf(&(*add)[i]);
    if (name != "NET_BIND_SERVICE") {
      return Refused(
          IndexPath(JoinPath(base, "add"), i),
          "capability " + QuoteShort(name) + " is not allowed (only NET_BIND_SERVICE may be added)",
          key);
    }
  }
  return Status::Ok();
}

// Both contexts with their paths, pod first.
std::array<std::pair<const Json*, const std::string*>, 2> Levels(const PodContexts& c) {
  return {{{c.pod, &c.pod_path}, {c.container, &c.container_path}}};
}

// check_runAsNonRoot.go, check_runAsUser.go (no user-namespace relaxation: a spec cannot set
// hostUsers).
Status CheckRestrictedUser(const PodContexts& c, std::string_view key) {
  for (const auto& [context, path] : Levels(c)) {
    if (IsZero(Field(context, "runAsUser"))) {
      return Refused(JoinPath(*path, "runAsUser"), "running as root (uid 0) is not allowed", key);
    }
    if (IsFalse(Field(context, "runAsNonRoot"))) {
      return Refused(JoinPath(*path, "runAsNonRoot"), "must be true", key);
    }
  }
  if (!IsTrue(Field(c.pod, "runAsNonRoot")) && !IsTrue(Field(c.container, "runAsNonRoot"))) {
    return Refused(JoinPath(EitherPath(c), "runAsNonRoot"),
                   "must be true (in podSecurityContext or containerSecurityContext)", key);
  }
  return Status::Ok();
}

// check_seccompProfile_restricted.go: set, to a confined profile, at pod or container level.
Status CheckRestrictedSeccomp(const PodContexts& c, std::string_view key) {
  bool set = false;
  for (const auto& [context, path] : Levels(c)) {
    const Json* p = Field(context, "seccompProfile");
    if (p == nullptr) continue;
    const std::string type = StringOf(Field(p, "type"));
    if (!IsConfinedProfile(type)) {
      return Refused(JoinPath(JoinPath(*path, "seccompProfile"), "type"),
                     "must be RuntimeDefault or Localhost (got " + QuoteShort(type) + ")", key);
    }
    set = true;
  }
  if (!set) {
    return Refused(JoinPath(JoinPath(EitherPath(c), "seccompProfile"), "type"),
                   "must be set to RuntimeDefault or Localhost (in podSecurityContext or "
                   "containerSecurityContext)",
                   key);
  }
  return Status::Ok();
}

}  // namespace

Status CheckBaselineContexts(const PodContexts& c, std::string_view key) {
  if (c.pod != nullptr) {
    RETURN_IF_ERROR(CheckHostProcess(c.pod, c.pod_path, key));
    RETURN_IF_ERROR(CheckSeLinux(c.pod, c.pod_path, key));
    RETURN_IF_ERROR(CheckProfiles(c.pod, c.pod_path, key));
    RETURN_IF_ERROR(CheckSysctls(c.pod, c.pod_path, key));
  }
  if (c.container != nullptr) {
    RETURN_IF_ERROR(CheckContainerFields(c.container, c.container_path, key));
    RETURN_IF_ERROR(CheckHostProcess(c.container, c.container_path, key));
    RETURN_IF_ERROR(CheckSeLinux(c.container, c.container_path, key));
    RETURN_IF_ERROR(CheckProfiles(c.container, c.container_path, key));
  }
  return Status::Ok();
}

Status CheckBaselineSpec(const ProjectSpec& spec, std::string_view path, std::string_view key) {
  const std::string probes = JoinPath(path, "probes");
  RETURN_IF_ERROR(CheckProbeHost(spec.liveness_probe, JoinPath(probes, "livenessProbe"), key));
  RETURN_IF_ERROR(CheckProbeHost(spec.readiness_probe, JoinPath(probes, "readinessProbe"), key));
  RETURN_IF_ERROR(CheckProbeHost(spec.startup_probe, JoinPath(probes, "startupProbe"), key));
  return CheckProfileAnnotations(spec.annotations, JoinPath(path, "annotations"), key);
}

Status CheckRestrictedContexts(const PodContexts& c, std::string_view key) {
  if (!IsFalse(Field(c.container, "allowPrivilegeEscalation"))) {
    return Refused(JoinPath(c.container_path, "allowPrivilegeEscalation"), "must be false", key);
  }
  RETURN_IF_ERROR(CheckRestrictedUser(c, key));
  RETURN_IF_ERROR(CheckRestrictedSeccomp(c, key));
  return CheckRestrictedCapabilities(c.container, c.container_path, key);
}

}  // namespace steward::engine::internal
