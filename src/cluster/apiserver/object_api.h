// ObjectApi: the Kubernetes API semantics of the embedded cluster, in process.
//
// Both the REST front end (rest_handler.h) and the simulated controllers call this class, so
// that every write, whoever makes it, gets the same rules:
//   - create: name or generateName, namespace must exist (except for Namespaces themselves),
//     validation (DNS-1123 names, required fields) as 422 with field causes; uid,
//     creationTimestamp, resourceVersion, generation = 1 (types with generation); defaults;
//     409 AlreadyExists, prefixed "object is being deleted: " while the old one terminates.
//   - update: 409 Conflict on a stale metadata.resourceVersion; an update without one is
//     unconditional; writes to the main resource ignore status changes, writes to /status
//     ignore everything but status; generation is bumped when anything outside metadata and
//     status changes; no-op writes do not change resourceVersion; uid/creationTimestamp are
//     immutable; new finalizers may not be added while the object is being deleted.
//   - delete: preconditions (uid, resourceVersion) → 409; propagationPolicy (Orphan,
//     Background, Foreground) via the "orphan" and "foregroundDeletion" finalizers; an object
//     with finalizers gets deletionTimestamp (and stays); one without is removed. A write that
//     empties the finalizers of an object with deletionTimestamp removes it. Pods are deleted
//     gracefully (deletionGracePeriodSeconds) and disappear when the kubelet finishes.
//   - list: label and field selectors; limit/continue over a consistent snapshot: every page
//     shows the objects as they were at the first page's resourceVersion (rebuilt from the
//     storage's event history), and once that revision is compacted a continue answers 410
//     Expired with etcd's "continue parameter is too old" message. resourceVersionMatch=Exact
//     reads at that revision the same way. A resourceVersion newer than the current one is a
//     504 Timeout at once (ResourceVersionTooLarge): the REST layer first waits up to 3 s for
//     it, as the API server's watch cache does.
//
// Thread-safety: all methods may be called from any thread. Hooks must be set before use.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/apiserver/patch.h"
#include "cluster/apiserver/status_error.h"
#include "cluster/model/resource_types.h"
#include "cluster/storage/storage.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/mutex.h"
#include "common/random.h"

namespace steward::cluster {

enum class Subresource { kNone, kStatus, kScale };

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  int64_t limit = 0;  // 0 = no limit
  std::string continue_token;
  std::string resource_version;        // "" | "0" | a revision
  std::string resource_version_match;  // "" | "NotOlderThan" | "Exact"
};

// Called before a create or update is stored; returning an error refuses the write (as an
// admission webhook would). `old_object` is null on create.
using AdmissionHook = std::function<std::optional<StatusError>(
    const ResourceType& rt, const Json& new_object, const Json* old_object)>;

struct WriteOptions {
  bool dry_run = false;
  std::string field_manager;
  // This request's own check (the RBAC registry's escalation prevention for its caller,
  // rbac_escalation.h): run like an AdmissionHook, after the cluster's, on creates and on
  // updates and patches of the main resource (not status or scale). Null: none.
  AdmissionHook admit;
};

struct DeleteOptions {
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
  std::string propagation_policy;  // "" (type default) | "Orphan" | "Background" | "Foreground"
  std::optional<int64_t> grace_period_seconds;
  bool dry_run = false;
};

class FieldSelector;
// A 400 naming the first field the type does not support in field selectors (metadata.name and
// metadata.namespace always; a few per kind, as on a real API server).
std::optional<StatusError> CheckFieldSelector(const ResourceType& rt,
                                              const FieldSelector& selector);

// The API server's answer to a read at a resourceVersion newer than its current one (once it has
// waited for it in vain): 504 Timeout "Timeout: Too large resource version: <requested>,
// current: <current>", cause ResourceVersionTooLarge, retryAfterSeconds 1.
StatusError TooLargeResourceVersionError(uint64_t requested, uint64_t current);

class ObjectApi {
 public:
  // `storage`, `clock` and `random` must outlive this object.
  ObjectApi(Storage& storage, const Clock& clock, Random& random);

  ApiResult<Json> Get(const ResourceType& rt, std::string_view ns, std::string_view name,
                      Subresource sub = Subresource::kNone) const;
  // The stored record, unparsed (for the REST layer, which sends the stored JSON as it is: the
  // same bytes Get() would serialise). NotFound as Get.
  ApiResult<ObjectRecord> GetRecord(const ResourceType& rt, std::string_view ns,
                                    std::string_view name) const;
  // Returns a <Kind>List with metadata.resourceVersion (and continue when truncated).
  ApiResult<Json> List(const ResourceType& rt, std::string_view ns, const ListOptions& opts) const;

  // The selected records of a list, unparsed (for the REST layer, which sends the stored JSON
  // as it is). Same rules and errors as List.
  struct RecordList {
    std::vector<ObjectRecord> items;
    uint64_t revision = 0;
    std::string continue_token;  // non-empty when truncated by limit
    int64_t remaining = 0;       // items left after this page (when truncated)
    // Whether `remaining` is a count: not for a list with selectors (Kubernetes then leaves
    // remainingItemCount out; the rest is not scanned).
    bool remaining_counted = false;
  };
  ApiResult<RecordList> ListRecords(const ResourceType& rt, std::string_view ns,
                                    const ListOptions& opts) const;

  // The create body must be a complete object of the type (apiVersion/kind may be omitted).
  ApiResult<Json> Create(const ResourceType& rt, std::string_view ns, Json object,
                         const WriteOptions& opts = {});
  ApiResult<Json> Update(const ResourceType& rt, std::string_view ns, std::string_view name,
                         Json object, Subresource sub = Subresource::kNone,
                         const WriteOptions& opts = {});
  ApiResult<Json> Patch(const ResourceType& rt, std::string_view ns, std::string_view name,
                        PatchType type, std::string_view patch,
                        Subresource sub = Subresource::kNone, const WriteOptions& opts = {});
  // Returns the object (still present, now terminating) or a Status "Success" (gone).
  ApiResult<Json> Delete(const ResourceType& rt, std::string_view ns, std::string_view name,
                         const DeleteOptions& opts = {});
  // Deletes every object that matches; returns the List of what was deleted.
  ApiResult<Json> DeleteCollection(const ResourceType& rt, std::string_view ns,
                                   const ListOptions& list_opts, const DeleteOptions& opts = {});

  // Read-modify-write for controllers: `mutate` edits a copy of the current object and
  // returns true if it changed anything (false: no write). Atomic, so never conflicts. The
  // same rules as Update apply (generation, finalizer completion). NotFound if absent.
  ApiResult<Json> Modify(const ResourceType& rt, std::string_view ns, std::string_view name,
                         const std::function<bool(Json&)>& mutate,
                         Subresource sub = Subresource::kNone);
  // Removes an object at once, whatever its finalizers (the kubelet's final pod delete, the
  // namespace controller). `uid` (when non-empty) must match. No-op when absent.
  ApiResult<bool> ForceRemove(const ResourceType& rt, std::string_view ns, std::string_view name,
                              std::string_view uid);

  void AddAdmissionHook(AdmissionHook hook);

  Storage& storage() { return storage_; }
  const Clock& clock() const { return clock_; }

 private:
  // Builds the object to store from an update/patch body; shared by Update and Patch.
  ApiResult<Storage::Mutation> PrepareUpdate(const ResourceType& rt, const Json& old, Json body,
                                             Subresource sub, bool check_resource_version,
                                             const AdmissionHook& admit);
  // Generation bump, finalizer completion and no-op detection, common to every update path.
  Storage::Mutation FinishUpdate(const ResourceType& rt, const Json& old, Json next,
                                 Subresource sub);
  // Read, compute outside the storage lock, write if unchanged (else retry).
  ApiResult<Json> GuaranteedUpdate(
      const ResourceType& rt, std::string_view ns, std::string_view name, Subresource sub,
      bool dry_run, const std::function<ApiResult<Storage::Mutation>(const Json& old)>& compute);
  // The cluster's admission hooks, then the request's own `admit` (when set).
  std::optional<StatusError> Admit(const ResourceType& rt, const Json& object, const Json* old,
                                   const AdmissionHook& admit);
  // Service cluster IPs: allocated at create, released when the Service is removed.
  std::string AllocateClusterIp();
  void ReleaseClusterIp(const Json& service);
  void OnRemoved(const ResourceType& rt, const Json& object);

  Storage& storage_;
  const Clock& clock_;
  Random& random_;
  std::vector<AdmissionHook> admission_;

  Mutex ip_mu_;
  bool ips_loaded_ GUARDED_BY(ip_mu_) = false;
  std::set<uint32_t> cluster_ips_ GUARDED_BY(ip_mu_);
  uint32_t next_ip_ GUARDED_BY(ip_mu_) = 0;
};

}  // namespace steward::cluster
