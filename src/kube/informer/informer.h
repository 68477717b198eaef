// Informer: one list + watch per (kind, namespace, label selector) feeding an in-memory cache with
// indexes and calling handlers on add, update and delete. It survives a hostile API server: a cut
// watch resumes from the last resourceVersion (bookmarks keep it fresh); a 410 Expired relists,
// and the relist's difference with the cache is delivered as updates and as deletes with
// `final_state_unknown` (tombstones) for objects that vanished while the watch was down.
// Reconnects back off exponentially (0.8 s doubling to 30 s, as client-go), reset after a watch
// that delivered events. One informer per kind serves the whole process (InformerFactory).
//
// Reflector rules (client-go's, where it has one):
//   - Lists are paginated (page_size) consistent reads (resourceVersion ""); a 410 on a continue
//     token restarts the list. A failed list is retried after the backoff.
//   - The watch starts at the list's resourceVersion with bookmarks on and a server timeout
//     drawn from [watch_timeout_seconds, 2 × watch_timeout_seconds). resourceVersions are opaque:
//     only remembered and compared for equality, never ordered.
//   - ADDED/MODIFIED upsert (ADDED for a cached key is an update); an event carrying the cached
//     resourceVersion of its key is a replay and changes nothing. DELETED of an unknown key is
//     ignored. BOOKMARK only moves the resourceVersion. Every event moves it.
//   - A watch the server closes cleanly is reopened at once from the last resourceVersion,
//     unless it delivered nothing within 1 s ("very short watch": backoff). 410 (at open or as
//     an ERROR event) relists, at once after a healthy watch, else after the backoff. Any other
//     error reopens the watch from the last resourceVersion after the backoff.
//   - A relist compares by resourceVersion: new keys → on_add, changed → on_update, missing →
//     on_delete(last cached state, final_state_unknown = true). Unchanged objects notify no one.
//
// Threads: a reflector thread (list/watch, cache writes) and a dispatch thread that calls the
// handlers in event order, so a slow handler never stalls the watch. Handlers must not block for
// long (enqueue a key and return); they may read the cache. The cache is updated before the
// handler for that change runs. Every public method is thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/json.h"
#include "kube/client/client.h"

namespace steward::kube {

// What the informer needs from the API server; MakeListerWatcher adapts a Client, tests use
// fakes. Implementations are called from the reflector thread only.
class ListerWatcher {
 public:
  virtual ~ListerWatcher() = default;
  virtual Result<ObjectList> List(const ListOptions& options) = 0;
  // The same page scanned (Client::ListScanned). The default serialises List()'s items and
  // scans each; MakeListerWatcher's scans the response body itself, building no document.
  virtual Result<ScannedList> ListScanned(const ListOptions& options);
  virtual Result<WatchEnd> Watch(const WatchOptions& options,
                                 const std::function<bool(const WatchEvent&)>& on_event) = 0;
  // "deployments.apps in namespace steward, selector app=x", for logs.
  virtual std::string Describe() const = 0;
};

// `ns` empty = all namespaces. The selectors are sent to the server.
std::unique_ptr<ListerWatcher> MakeListerWatcher(std::shared_ptr<Client> client, ResourceType type,
                                                 std::string ns, std::string label_selector,
                                                 std::string field_selector = "");

// The cache key of an object: "namespace/name", or "name" for cluster-scoped objects (as
// client-go's MetaNamespaceKeyFunc).
std::string ObjectKey(std::string_view ns, std::string_view name);

// An object as the cache holds it: key fields and labels parsed out, the object itself kept as
// JSON text (a parsed nlohmann::json is several times larger): compact from FromJson, as the
// server sent it from FromScanned. Immutable once built.
class CachedObject {
 public:
  // Fails with kInvalidArgument, naming the field, when `object` is not an object or its
  // metadata.name / metadata.resourceVersion is missing or not a non-empty string, or a label
  // value is not a string.
  static StatusOr<std::shared_ptr<const CachedObject>> FromJson(const Json& object);
  // The same from a scanned list item (its text kept as sent, not serialised again); fails
  // as FromJson does, or with the item's own error.
  static StatusOr<std::shared_ptr<const CachedObject>> FromScanned(ScannedItem item);

  const std::string& ns() const { return ns_; }
  const std::string& name() const { return name_; }
  const std::string& uid() const { return uid_; }
  const std::string& resource_version() const { return resource_version_; }
  // Label value or "" when absent.
  std::string_view label(std::string_view key) const;
  bool has_label(std::string_view key) const;
  // Sorted by key.
  const std::vector<std::pair<std::string, std::string>>& labels() const { return labels_; }
  std::string key() const { return ObjectKey(ns_, name_); }
  bool terminating() const { return terminating_; }  // metadata.deletionTimestamp set
  const std::string& json() const { return json_; }
  // Parses json() (about as costly as the original decode).
  Json Parse() const;

 private:
  std::string ns_, name_, uid_, resource_version_, json_;
  std::vector<std::pair<std::string, std::string>> labels_;
  bool terminating_ = false;
};
using ObjectRef = std::shared_ptr<const CachedObject>;

struct InformerHandlers {
  std::function<void(const ObjectRef& object)> on_add;
  std::function<void(const ObjectRef& old_object, const ObjectRef& new_object)> on_update;
  // `final_state_unknown`: the object vanished while the watch was down (seen by a relist);
  // `last_known` is the cache's last state of it.
  std::function<void(const ObjectRef& last_known, bool final_state_unknown)> on_delete;
};

struct InformerOptions {
  std::string name;  // for logs and metrics: "deployments"
  int64_t page_size = 500;
  // Every `resync` the handlers get on_update(obj, obj) for every cached object (0 = never).
  Millis resync{0};
  Millis backoff_initial{800};
  Millis backoff_max{30000};
  // Server-side watch timeout per request (the server may end sooner); the watch is reopened.
  int watch_timeout_seconds = 300;
  // Applied to every listed or watched object before it is cached and handed to handlers
  // (client-go's SetTransform): e.g. to drop fields no reader needs. It must keep metadata's
  // name, namespace, resourceVersion, uid, labels and deletionTimestamp. Null: objects as sent.
  std::function<void(Json& object)> transform;
  // Label keys indexed (ByLabel); namespace/name is always indexed.
  std::vector<std::string> label_indexes = {"steward.io/project"};
  Clock* clock = nullptr;  // null = RealClock
  uint64_t seed = 0;       // jitter of reconnect delays (0 = random)
};

struct InformerStats {
  uint64_t lists = 0;         // full lists (initial + relists)
  uint64_t relists_gone = 0;  // relists caused by 410 Expired
  uint64_t watches = 0;       // watch requests opened
  uint64_t watch_errors = 0;  // watches ended by an error (not a clean server close)
  uint64_t events = 0;        // watch events applied
  uint64_t tombstones = 0;    // deletes delivered with final_state_unknown
  size_t objects = 0;
  std::string resource_version;  // last synced
};

class Informer {
 public:
  Informer(std::unique_ptr<ListerWatcher> lister_watcher, InformerOptions options);
  ~Informer();  // Stop()s
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Handlers added after objects are cached get an on_add for each of them first (as
  // client-go does for late registrations). Returns an id for RemoveHandlers.
  int AddHandlers(InformerHandlers handlers);
  // After it returns, the handlers are not called again (it waits for a call in progress,
  // unless called from a handler).
  void RemoveHandlers(int id);

  void Start();  // idempotent; a stopped informer does not start again
  // Idempotent, blocking; no handler runs after it returns (a handler running at that moment
  // finishes first; queued notifications are dropped). Called from a handler, it cannot wait
  // for the dispatch thread itself: handlers stop after the calling one returns.
  void Stop();

  // True once the first list is in the cache (and its adds have been dispatched).
  bool HasSynced() const;
  // Waits until HasSynced() or `timeout`; false on timeout or Stop.
  bool WaitForSync(Millis timeout) const;

  // Reads of the cache. Results are sorted by ObjectKey.
  ObjectRef Get(std::string_view ns, std::string_view name) const;  // null when absent
  std::vector<ObjectRef> List() const;
  // Objects in namespace `ns` ("" = the cluster-scoped objects).
  std::vector<ObjectRef> ByNamespace(std::string_view ns) const;
  // Objects whose label `key` equals `value`. Indexed for options.label_indexes; any other key
  // is answered by a scan of the cache.
  std::vector<ObjectRef> ByLabel(std::string_view key, std::string_view value) const;
  size_t size() const;

  InformerStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One informer per (kind, namespace, label selector, field selector) for the whole process.
class InformerFactory {
 public:
  InformerFactory(std::shared_ptr<Client> client, InformerOptions defaults = {});
  ~InformerFactory();
  // The shared informer, created (not started) on first use. `transform` replaces the
  // defaults' (InformerOptions::transform) for an informer this call creates; a later call for
  // the same (kind, namespace, selectors) shares the informer as it was made. The field
  // selector is one the server supports for the kind (Secrets: "type=kubernetes.io/tls").
  std::shared_ptr<Informer> For(const ResourceType& type, const std::string& ns = "",
                                const std::string& label_selector = "",
                                std::function<void(Json&)> transform = {},
                                const std::string& field_selector = "");
  void StartAll();
  void StopAll();
  bool WaitForAllSynced(Millis timeout);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace steward::kube
