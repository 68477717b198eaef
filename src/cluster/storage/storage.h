// Storage: the embedded cluster's versioned object store (its "etcd").
//
// Holds every object as compact serialised JSON, keyed by group-resource ("deployments.apps"),
// namespace ("" for cluster-scoped) and name. Every write takes the next value of one
// cluster-wide, monotonic revision counter and stamps it into metadata.resourceVersion of the
// stored object. Writes are recorded in a bounded event history so that watches can resume from
// any revision still retained, and paginated lists can read every page at their first page's
// revision (ListAt); older revisions are "compacted" and a watch or list at them fails with
// kOutOfRange, which the API layer turns into 410 Expired.
//
// Storage knows nothing of Kubernetes semantics beyond resourceVersion: generation, finalizers,
// validation and defaults belong to the API layer (apiserver/object_api.h).
//
// Thread-safety: all methods may be called concurrently from any thread. Mutate() callbacks run
// under the storage lock and must not call back into Storage.
//
// Persistence: with a non-empty Options::persist_path every write is also written to a SQLite
// file, and Open() loads the objects and the revision counter from it. The file holds Secrets:
// it is created with mode 0600 (SQLite gives -wal/-shm its mode), and an existing one open to
// group or others loses those bits, with a warning in the log.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/json.h"
#include "common/status.h"

namespace steward::cluster {

using Labels = std::vector<std::pair<std::string, std::string>>;  // sorted by key

// One stored object. Immutable once built; cheap to copy (shared pointers).
struct ObjectRecord {
  std::string group_resource;
  std::string ns;
  std::string name;
  uint64_t revision = 0;                    // == metadata.resourceVersion
  std::shared_ptr<const std::string> json;  // the whole object, compact
  std::shared_ptr<const Labels> labels;     // metadata.labels, parsed once at write time

  // Parses `json`; never fails for stored objects.
  Json Parse() const;
};

enum class WatchEventType { kAdded, kModified, kDeleted };

struct WatchEvent {
  WatchEventType type;
  // The object after the event; for kDeleted its last state, with the deletion's revision.
  ObjectRecord object;
  // The labels before the event (nullptr for kAdded); lets label-selected watches turn a
  // modification that leaves (or enters) the selection into DELETED (or ADDED).
  std::shared_ptr<const Labels> prev_labels;
  // The whole object before a kModified event (nullptr otherwise); lets field-selected watches
  // tell whether the object matched before. Shares the string the history already holds.
  std::shared_ptr<const std::string> prev_json;
  // The object's revision before the event (0 for kAdded). With prev_json (kModified) or the
  // last state (kDeleted, whose JSON carries the deletion's revision instead) it gives the
  // object as it was before the event, which ListAt() needs.
  uint64_t prev_revision = 0;
};

// A live subscription to events. Destroying it unsubscribes. Events are queued per watcher in
// revision order; the queue is unbounded (a stuck consumer is detected by the API layer).
// Thread-safe.
class Watcher {
 public:
  virtual ~Watcher() = default;
  // Takes every queued event (possibly none); never blocks.
  virtual std::vector<WatchEvent> Drain() = 0;
  // Blocks until at least one event is queued, Close() was called, or `timeout` passes.
  // Returns true when events are queued.
  virtual bool Wait(std::chrono::milliseconds timeout) = 0;
  // Called (from the writing thread, without storage locks held) whenever the queue goes from
  // empty to non-empty. Replaces any previous callback. The callback must not block. If events
  // are already queued when it is set, it is also called immediately (once, on the calling thread)
  // so that a consumer that sets it after Watch() returns cannot miss the initial events.
  virtual void SetNotify(std::function<void()> notify) = 0;
  // Ends the subscription: no more events are queued, Wait() returns at once. When it returns
  // (or the watcher is destroyed), the notify callback is not running on any other thread and
  // is never called again; a callback may close its own watcher.
  virtual void Close() = 0;
};

struct WatchRequest {
  // Empty: every group-resource.
  std::string group_resource;
  // Empty: every namespace.
  std::string ns;
  // Deliver events with revision > from_revision. Must be >= CompactedRevision(), else the
  // watch fails with kOutOfRange.
  uint64_t from_revision = 0;
  // When true, from_revision is ignored: the watcher first receives one kAdded event per
  // object that exists now (in key order), then every later event. (What a watch without a
  // resourceVersion, or with "0", does.)
  bool initial_snapshot = false;
};

class Storage {
 public:
  struct Options {
    // Number of events kept for watch resumption. Older events are compacted away.
    size_t history_limit = 100000;
    // SQLite file for durable state; empty keeps everything in memory only.
    std::string persist_path;
  };

  // Opens (and loads, if persistent) a store. Fails with kInvalidArgument/kInternal when the
  // file cannot be opened or is not a Steward cluster store.
  static StatusOr<std::unique_ptr<Storage>> Open(const Options& options);

  virtual ~Storage() = default;

  virtual std::optional<ObjectRecord> Get(std::string_view group_resource, std::string_view ns,
                                          std::string_view name) const = 0;

  struct ListResult {
    std::vector<ObjectRecord> items;  // ordered by (ns, name)
    uint64_t revision = 0;            // the revision the snapshot was taken at
    size_t remaining = 0;             // ListPageAt: records kept past the page's limit
  };
  // Every object of a group-resource, in one namespace (or all when `ns` is empty).
  virtual ListResult List(std::string_view group_resource, std::string_view ns) const = 0;

  // Where a paginated list resumes: only keys strictly after (ns, name), in List()'s order.
  struct ListFrom {
    std::string_view ns;
    std::string_view name;
  };
  // Like List(), but the objects as they were at `revision` (the snapshot a paginated list
  // keeps across its pages, as etcd's MVCC does): rebuilt from the current objects and the event
  // history, so an object created since is left out, and one modified or deleted since appears
  // as it was at `revision` (its JSON, labels and revision then). Only keys after `after` when
  // given. Cheap when nothing of the group-resource changed since `revision` (a scan of the
  // newer events). Fails with kOutOfRange ("too old resource version: 5 (27)") when the history
  // no longer reaches back to `revision` (compacted), and kInvalidArgument when `revision` is
  // newer than CurrentRevision().
  StatusOr<ListResult> ListAt(std::string_view group_resource, std::string_view ns,
                              uint64_t revision, std::optional<ListFrom> after) const {
    return ListPageAt(group_resource, ns, revision, after, Page{});
  }
  // One page of a list: of ListAt()'s records only those `keep` accepts (every one when null),
  // at most `limit` (0: no limit); ListResult::remaining counts the accepted ones past it. At
  // the current revision only the page is copied (a paginated list of N objects in pages of P
  // costs N, not N²/2P, copies); `keep` then runs under the storage's read lock.
  // With `count_rest` false, collecting stops at the first kept record past the limit and
  // `remaining` is 1: "more follow", not how many (what a list with selectors needs: Kubernetes
  // leaves remainingItemCount out then, and counting would scan the whole rest on every page).
  struct Page {
    std::function<bool(const ObjectRecord&)> keep;
    size_t limit = 0;
    bool count_rest = true;
  };
  // `all` cut to `page` (its records in order, as ListPageAt would have cut them).
  static ListResult CutToPage(ListResult all, const Page& page);
  virtual StatusOr<ListResult> ListPageAt(std::string_view group_resource, std::string_view ns,
                                          uint64_t revision, std::optional<ListFrom> after,
                                          const Page& page) const = 0;

  // The outcome of a Mutate callback: keep the object as it is (no write, no event), replace it
  // with a new value, or delete it.
  struct Mutation {
    enum class Kind { kNoop, kPut, kDelete };
    Kind kind = Kind::kNoop;
    Json object;  // for kPut: the new object (metadata.resourceVersion is overwritten)
    static Mutation Noop() { return {}; }
    static Mutation Put(Json obj) { return {Kind::kPut, std::move(obj)}; }
    static Mutation Delete() { return {Kind::kDelete, nullptr}; }
  };
  // `current` is the stored object or nullptr when absent. Returning an error aborts with no
  // write. Runs under the storage lock: keep it quick and do not call into Storage.
  using MutateFn = std::function<StatusOr<Mutation>(const ObjectRecord* current)>;

  struct MutateResult {
    // The object after the write; for a delete, its last state stamped with the deletion's
    // revision; for a no-op, the current object (absent if there was none).
    std::optional<ObjectRecord> object;
    Mutation::Kind applied = Mutation::Kind::kNoop;
  };
  // Atomically reads the object, calls `fn`, and applies its result, emitting kAdded,
  // kModified or kDeleted. Returns the callback's error unchanged. kPut requires a JSON object
  // (kInvalidArgument otherwise); kDelete of an absent object is a no-op. With persistence, a
  // failed write to the file fails the call with kInternal and changes nothing.
  virtual StatusOr<MutateResult> Mutate(std::string_view group_resource, std::string_view ns,
                                        std::string_view name, const MutateFn& fn) = 0;

  // The revision of the latest write (0 for an empty new store).
  virtual uint64_t CurrentRevision() const = 0;
  // Watches from revisions below this fail with kOutOfRange.
  virtual uint64_t CompactedRevision() const = 0;
  // Drops the whole event history (fault injection: "history compaction").
  virtual void Compact() = 0;

  // Subscribes. Fails with kOutOfRange (the message names both revisions, as
  // "too old resource version: 5 (27)") when the history no longer covers from_revision.
  virtual StatusOr<std::unique_ptr<Watcher>> Watch(const WatchRequest& request) = 0;

  // Number of objects and total bytes of their JSON, for metrics and benchmarks.
  virtual std::pair<size_t, size_t> Size() const = 0;
};

}  // namespace steward::cluster
