// Client: generic Kubernetes resource calls over a Transport, JSON in and out. Every call returns
// the object the server answered or an ApiError typed from the Status body. Writes are
// conditional where Kubernetes allows: Update always sends the resourceVersion it was given and
// refuses an object without one; Delete takes uid/resourceVersion preconditions and tells "gone"
// from "terminating" by the body. Thread-safe (the transport is).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "kube/client/api_error.h"
#include "kube/client/list_scan.h"
#include "kube/client/resource.h"
#include "kube/client/watch.h"
#include "kube/transport/transport.h"

namespace steward::kube {

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  int64_t limit = 0;           // page size; 0 = no limit
  std::string continue_token;  // from the previous page
  std::string resource_version;
  std::string resource_version_match;  // "NotOlderThan" | "Exact" | ""
  // Watch only:
  int timeout_seconds = 0;  // server-side watch timeout; 0 = server default
  bool allow_bookmarks = true;
  bool send_initial_events = false;
};

struct ObjectList {
  std::string resource_version;  // metadata.resourceVersion of the list
  std::string continue_token;    // "" on the last page
  std::vector<Json> items;       // each with apiVersion/kind filled in
};

enum class PatchType {
  kMerge,      // application/merge-patch+json
  kJson,       // application/json-patch+json
  kStrategic,  // application/strategic-merge-patch+json
  kApply,      // application/apply-patch+yaml (server-side apply; needs field_manager)
};

struct WriteOptions {
  std::string field_manager;     // fieldManager=...
  bool dry_run = false;          // dryRun=All
  std::string field_validation;  // "Strict" | "Warn" | "Ignore" | "" (server default)
  bool force = false;            // apply only: force=true (refused locally on other calls)
  std::shared_ptr<CancelToken> cancel;
  Millis timeout{0};
};

struct DeleteOptions {
  std::optional<std::string> precondition_uid;
  std::optional<std::string> precondition_resource_version;
  std::string propagation_policy;  // "Background" | "Foreground" | "Orphan" | "" (default)
  std::optional<int64_t> grace_period_seconds;
  bool dry_run = false;
  std::shared_ptr<CancelToken> cancel;
};

// The answer to a delete. The HTTP status does not tell these apart (200 for both, 202 for some
// foreground deletes); the body does: a Status object (success) or an object without a
// deletionTimestamp means gone; an object with deletionTimestamp means terminating (finalizers
// or graceful pod termination pending). One refinement, as a real API server answers a pod
// deleted with grace period 0 (`--force`, or an unscheduled pod) with the removed pod, marked
// but gone: an object with deletionTimestamp but no metadata.finalizers, no
// deletionGracePeriodSeconds > 0 and nothing a Namespace still waits for (spec.finalizers,
// status.phase Terminating) was removed at once, so it is gone.
struct DeleteResult {
  bool gone = false;
  // The terminating object when !gone; the last state when the server returned it; null when
  // the server answered with a Status.
  Json object;
};

struct WatchOptions : ListOptions {
  std::shared_ptr<CancelToken> cancel;  // stops the stream from another thread
};

// How a watch stream ended (when no ApiError): the server closed it (timeout, cut) or the
// handler asked to stop. Either way the caller resumes from the last resourceVersion it saw.
struct WatchEnd {
  bool stopped_by_handler = false;
  uint64_t events = 0;
};

class Client {
 public:
  explicit Client(std::shared_ptr<Transport> transport);

  Result<Json> Get(const ResourceType& type, std::string_view ns, std::string_view name,
                   const std::shared_ptr<CancelToken>& cancel = nullptr) const;
  // One page (honours limit/continue).
  Result<ObjectList> List(const ResourceType& type, std::string_view ns,
                          const ListOptions& options = {}) const;
  // The same page, scanned rather than parsed (list_scan.h): each item's text as sent and its
  // metadata, no document built. What an informer's cache needs, at a fraction of the cost.
  Result<ScannedList> ListScanned(const ResourceType& type, std::string_view ns,
                                  const ListOptions& options = {}) const;
  // Every page, following continue tokens; items concatenated, resource_version of the first
  // page. If a continue token expires (410) the whole list restarts once from the beginning
  // (same limit and selectors). Pages after the first send no resourceVersion (the token pins
  // the snapshot; a server refuses both).
  Result<ObjectList> ListAll(const ResourceType& type, std::string_view ns,
                             ListOptions options = {}) const;
  // `ns` wins over the object's metadata.namespace (which may be absent) and is written into the
  // body. Calls on a namespaced type without a namespace, or without a name where one is
  // needed, are refused locally (kInvalidArgument, ApiError::local). apiVersion/kind are filled
  // in from the type when the object lacks them (Create, Update, UpdateStatus, Apply).
  Result<Json> Create(const ResourceType& type, std::string_view ns, const Json& object,
                      const WriteOptions& options = {}) const;
  // PUT with the object's metadata.resourceVersion as precondition. An object without
  // metadata.name or metadata.resourceVersion is refused locally (kInvalidArgument, no request).
  Result<Json> Update(const ResourceType& type, const Json& object,
                      const WriteOptions& options = {}) const;
  // PUT to the status subresource, with the same resourceVersion rule.
  Result<Json> UpdateStatus(const ResourceType& type, const Json& object,
                            const WriteOptions& options = {}) const;
  Result<Json> Patch(const ResourceType& type, std::string_view ns, std::string_view name,
                     PatchType patch_type, std::string_view body, const WriteOptions& options = {},
                     std::string_view subresource = "") const;
  // Server-side apply of `object` (serialised as JSON, which is valid YAML) with a field manager.
  Result<Json> Apply(const ResourceType& type, const Json& object,
                     const WriteOptions& options) const;
  // NotFound is returned as an error (the caller decides whether absent is fine).
  Result<DeleteResult> Delete(const ResourceType& type, std::string_view ns, std::string_view name,
                              const DeleteOptions& options = {}) const;

  // Opens a watch (watch=1, allowWatchBookmarks, resourceVersion, timeoutSeconds, selectors)
  // and calls `on_event` for every event in order until the server ends the stream, `on_event`
  // returns false, or `options.cancel` fires. ERROR events are delivered to `on_event` like the
  // others (the caller sees the Status, e.g. 410 Expired, and decides). Blocks the calling thread.
  // Errors: a non-2xx answer (ApiError from its body); a malformed line (kInvalidArgument,
  // naming it) or a line over the framer's limit (kResourceExhausted); a connection cut or
  // timeout mid-stream, or a stream ending inside a line (transport ApiError, kUnavailable /
  // kDeadlineExceeded); `options.cancel` firing (transport ApiError, kCancelled). The request's
  // own deadline is timeoutSeconds + 30 s (2 h without timeoutSeconds). With
  // send_initial_events and no resource_version_match, NotOlderThan is sent (required).
  Result<WatchEnd> Watch(const ResourceType& type, std::string_view ns, const WatchOptions& options,
                         const std::function<bool(const WatchEvent&)>& on_event) const;

  Transport& transport() const { return *transport_; }

 private:
  std::shared_ptr<Transport> transport_;
};

}  // namespace steward::kube
