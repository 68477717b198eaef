// Helpers shared by the simulated controllers: JSON field access, conditions, owner
// references, int-or-percent values, the pod-template hash, pod readiness.
//
// All functions are pure and thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "cluster/model/resource_types.h"
#include "common/clock.h"
#include "common/json.h"

namespace steward::cluster::controllers {

inline constexpr std::string_view kNodeName = "steward-node";
inline constexpr std::string_view kHostIp = "10.0.0.10";
inline constexpr std::string_view kPodTemplateHashLabel = "pod-template-hash";
inline constexpr std::string_view kRevisionAnnotation = "deployment.kubernetes.io/revision";
inline constexpr std::string_view kRevisionHistoryAnnotation =
    "deployment.kubernetes.io/revision-history";
inline constexpr std::string_view kDesiredReplicasAnnotation =
    "deployment.kubernetes.io/desired-replicas";
inline constexpr std::string_view kMaxReplicasAnnotation = "deployment.kubernetes.io/max-replicas";
inline constexpr std::string_view kForegroundFinalizer = "foregroundDeletion";
inline constexpr std::string_view kOrphanFinalizer = "orphan";
inline constexpr std::string_view kServiceFinalizer = "service.kubernetes.io/load-balancer-cleanup";
inline constexpr std::string_view kIngressFinalizer = "ingress.steward.io/cleanup";
inline constexpr std::string_view kPvcFinalizer = "kubernetes.io/pvc-protection";

// "ns/name" (cluster-scoped objects: "/name").
std::string NsName(std::string_view ns, std::string_view name);
std::pair<std::string, std::string> SplitNsName(std::string_view key);

// The member `key` of an object, or a static null when absent / not an object.
const Json& At(const Json& obj, std::string_view key);
// Follows a dotted path; the static null when any step is absent.
const Json& AtPath(const Json& obj, std::string_view dotted);
// An integer at a dotted path, or `fallback` when absent or not a number.
int64_t IntAt(const Json& obj, std::string_view dotted, int64_t fallback = 0);
// A string at a dotted path, or "" when absent.
std::string StrAt(const Json& obj, std::string_view dotted);
// Sets obj[key] = v, or erases it when v == 0 (Go's `omitempty`).
void SetOmitEmpty(Json& obj, const std::string& key, int64_t v);

bool IsDeleting(const Json& obj);
bool HasFinalizer(const Json& obj, std::string_view finalizer);
// Removes `finalizer` from metadata.finalizers; true when it was there.
bool RemoveFinalizer(Json& obj, std::string_view finalizer);

// metadata.ownerReferences entry with controller=true, blockOwnerDeletion=true.
Json ControllerRefTo(const Json& owner, const ResourceType& owner_type);
// The ownerReference with controller=true, or null.
const Json* ControllerRefOf(const Json& obj);

// Conditions (by "type") in a status object.
const Json* FindCondition(const Json& status, std::string_view type);
// The served type an ownerReference names (group and kind must match; version is ignored).
const ResourceType* ResolveKind(std::string_view api_version, std::string_view kind);
// A served type by group-resource; aborts when absent (a programming error).
const ResourceType& TypeOf(std::string_view group_resource);

// Time stamps as Kubernetes writes them (second precision).
std::string Rfc3339(SystemTime t);
std::optional<SystemTime> TimeAt(const Json& obj, std::string_view dotted);

// intstr.GetScaledValueFromIntOrPercent: an int as is, "25%" of `total` rounded up or down.
// Malformed values count as 0.
int64_t ScaledValue(const Json& int_or_percent, int64_t total, bool round_up);

// FNV-1a (32 bit).
uint32_t Fnv32a(std::string_view data, uint32_t h = 2166136261u);
// rand.SafeEncodeString: maps each byte to "bcdfghjklmnpqrstvwxz2456789".
std::string SafeEncodeString(std::string_view s);
// The pod-template-hash of a pod template (the label itself is ignored), at most 10 chars.
std::string ComputePodTemplateHash(const Json& pod_template, int64_t collision_count);
// Pod templates equal once the pod-template-hash label is ignored.
bool EqualIgnoreHash(const Json& a, const Json& b);

// Pods.
bool IsPodReady(const Json& pod);
bool IsPodTerminal(const Json& pod);  // phase Succeeded or Failed
// Ready for at least min_ready_seconds (podutil.IsPodAvailable).
bool IsPodAvailable(const Json& pod, int64_t min_ready_seconds, SystemTime now);

}  // namespace steward::cluster::controllers
