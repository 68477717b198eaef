// What every write path of ObjectApi (create, update, patch, delete) reads and changes in an
// object's metadata: its resourceVersion, generation, deletionTimestamp and finalizers, and
// whether a terminating object can go. Internal to the apiserver; pure functions, any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cluster/apiserver/status_error.h"
#include "cluster/model/resource_types.h"
#include "common/json.h"
#include "common/status.h"

namespace steward::cluster::objectmeta {

inline constexpr const char* kOrphanFinalizer = "orphan";
inline constexpr const char* kForegroundFinalizer = "foregroundDeletion";

// Mutate callbacks return Status; an StatusError raised inside one travels in this holder.
struct ErrorHolder {
  std::optional<StatusError> error;
  Status Raise(StatusError e) {
    error = std::move(e);
    return Aborted("api error");
  }
};

std::string ResourceVersionOf(const Json& obj);
int64_t GenerationOf(const Json& obj);  // 0 when unset
bool HasDeletionTimestamp(const Json& obj);
std::vector<std::string> Finalizers(const Json& obj);
// metadata.finalizers set to `finalizers`, or removed when they are none.
void SetFinalizers(Json& obj, const std::vector<std::string>& finalizers);
void AddFinalizer(std::vector<std::string>& f, const std::string& name);  // once
void RemoveFinalizer(std::vector<std::string>& f, const std::string& name);
// A terminating object goes once nothing holds it: no finalizers, no grace period still
// running (a pod is removed by its kubelet), and for a Namespace no spec.finalizers (removed by
// the namespace controller once the namespace is empty).
bool IsRemovable(const ResourceType& rt, const Json& obj);

}  // namespace steward::cluster::objectmeta
