// FakeApi: a scripted, in-memory API server for one resource, for informer tests. Objects carry
// numeric resourceVersions from one counter; every write is kept in a watch history; lists are
// paginated from a snapshot; watches replay the history from their resourceVersion and then
// follow it live. Tests cut watches, compact the history (→ 410 Expired), hold delivery, inject
// list/watch failures and ERROR events, and read back the requests the informer made.
//
// Thread-safe. FakeListerWatcher is the informer-side handle (the informer owns it; the test
// keeps the shared FakeApi).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "kube/informer/informer.h"

namespace steward::kube::testing {

inline Json StatusJson(int code, const std::string& reason, const std::string& message) {
  return Json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},       {"code", code},
              {"reason", reason}, {"message", message}, {"metadata", Json::object()}};
}

inline ApiError MakeApiError(int code, const std::string& reason, const std::string& message) {
  return ApiErrorFromStatusObject(StatusJson(code, reason, message), code);
}

inline ApiError GoneError(uint64_t rv) {
  return MakeApiError(410, "Expired", "too old resource version: " + std::to_string(rv));
}

class FakeApi {
 public:
  using Labels = std::map<std::string, std::string>;

  // Writes. Each returns the new resourceVersion.
  std::string Create(const std::string& ns, const std::string& name, const Labels& labels = {},
                     const std::string& data = "") {
    MutexLock lock(mu_);
    Json object = {{"apiVersion", "v1"},
                   {"kind", "ConfigMap"},
                   {"metadata", {{"name", name}, {"uid", "uid-" + ns + "-" + name}}},
                   {"data", {{"v", data}}}};
    if (!ns.empty()) object["metadata"]["namespace"] = ns;
    if (!labels.empty()) object["metadata"]["labels"] = labels;
    return Write(WatchEvent::Type::kAdded, ObjectKey(ns, name), std::move(object));
  }
  // Stores a complete object (metadata.name and optional metadata.namespace set).
  std::string CreateObject(Json object) {
    MutexLock lock(mu_);
    std::string key = ObjectKey(object["metadata"].value("namespace", ""),
                                object["metadata"]["name"].get<std::string>());
    return Write(WatchEvent::Type::kAdded, key, std::move(object));
  }
  // Replaces labels and data of an existing object (which must exist).
  std::string Update(const std::string& ns, const std::string& name, const Labels& labels,
                     const std::string& data) {
    MutexLock lock(mu_);
    Json object = objects_.at(ObjectKey(ns, name));
    object["metadata"].erase("labels");
    if (!labels.empty()) object["metadata"]["labels"] = labels;
    object["data"]["v"] = data;
    return Write(WatchEvent::Type::kModified, ObjectKey(ns, name), std::move(object));
  }
  std::string Delete(const std::string& ns, const std::string& name) {
    MutexLock lock(mu_);
    Json object = objects_.at(ObjectKey(ns, name));
    return Write(WatchEvent::Type::kDeleted, ObjectKey(ns, name), std::move(object));
  }
  // Writes to other resources: the revision moves on without events for this one.
  void AdvanceRevision(uint64_t n) {
    MutexLock lock(mu_);
    revision_ += n;
  }
  // A BOOKMARK at the current revision for live watchers.
  std::string Bookmark() {
    MutexLock lock(mu_);
    Json object = {{"apiVersion", "v1"},
                   {"kind", "ConfigMap"},
                   {"metadata", {{"resourceVersion", std::to_string(revision_)}}}};
    history_.push_back({WatchEvent::Type::kBookmark, std::move(object), revision_});
    cv_.NotifyAll();
    return std::to_string(revision_);
  }
  // A raw event at the next revision, without changing the stored objects (duplicates, deletes
  // of unknown objects, malformed objects). `stamp` sets metadata.resourceVersion. Returns it.
  std::string RawEvent(WatchEvent::Type type, Json object, bool stamp = true) {
    MutexLock lock(mu_);
    std::string rv = std::to_string(++revision_);
    if (stamp) object["metadata"]["resourceVersion"] = rv;
    history_.push_back({type, std::move(object), revision_});
    cv_.NotifyAll();
    return rv;
  }
  // The stored object (which must exist).
  Json Object(const std::string& ns, const std::string& name) const {
    MutexLock lock(mu_);
    return objects_.at(ObjectKey(ns, name));
  }
  // Drops the watch history up to now: watches from an older resourceVersion get 410.
  void Compact() {
    MutexLock lock(mu_);
    compacted_ = revision_;
    cv_.NotifyAll();
  }
  void CutWatches() {
    MutexLock lock(mu_);
    ++cut_generation_;
    cv_.NotifyAll();
  }
  // While held, live watches deliver nothing (the informer falls behind).
  void HoldWatches(bool hold) {
    MutexLock lock(mu_);
    hold_ = hold;
    cv_.NotifyAll();
  }
  void FailNextLists(int n, const ApiError& error) {
    MutexLock lock(mu_);
    for (int i = 0; i < n; ++i) list_failures_.push_back(error);
  }
  void FailNextWatches(int n, const ApiError& error) {
    MutexLock lock(mu_);
    for (int i = 0; i < n; ++i) watch_failures_.push_back(error);
  }
  // The next live watcher receives this ERROR event (a Status object) and the stream ends.
  void InjectErrorEvent(Json status) {
    MutexLock lock(mu_);
    error_event_ = std::move(status);
    cv_.NotifyAll();
  }
  // Continue tokens handed out so far answer 410.
  void ExpireContinueTokens() {
    MutexLock lock(mu_);
    snapshots_.clear();
  }
  // The next list request with a continue token expires every token first (→ 410).
  void ExpireNextContinue() {
    MutexLock lock(mu_);
    expire_next_continue_ = true;
  }
  // Too-old watches: true = HTTP 410 at open (etcd), false = 200 then an ERROR event (cache).
  void set_gone_at_open(bool v) {
    MutexLock lock(mu_);
    gone_at_open_ = v;
  }
  // Ends each watch cleanly after this many delivered events (0 = never).
  void set_cut_after_events(uint64_t n) {
    MutexLock lock(mu_);
    cut_after_events_ = n;
  }

  // Observations.
  std::vector<ListOptions> lists() const {
    MutexLock lock(mu_);
    return lists_;
  }
  std::vector<WatchOptions> watches() const {
    MutexLock lock(mu_);
    return watches_;
  }
  int active_watches() const {
    MutexLock lock(mu_);
    return active_;
  }
  std::string revision() const {
    MutexLock lock(mu_);
    return std::to_string(revision_);
  }
  // name → resourceVersion of what the server holds now.
  std::map<std::string, std::string> Truth() const {
    MutexLock lock(mu_);
    std::map<std::string, std::string> out;
    for (const auto& [key, object] : objects_) {
      out[key] = object["metadata"]["resourceVersion"].get<std::string>();
    }
    return out;
  }

  Result<ObjectList> List(const ListOptions& options) {
    MutexLock lock(mu_);
    lists_.push_back(options);
    if (!list_failures_.empty()) {
      ApiError error = list_failures_.front();
      list_failures_.pop_front();
      return error;
    }
    uint64_t id = 0;
    size_t offset = 0;
    if (options.continue_token.empty()) {
      id = ++next_snapshot_;
      Snapshot& s = snapshots_[id];
      s.revision = revision_;
      for (const auto& [key, object] : objects_) s.items.push_back(object);
    } else {
      if (std::exchange(expire_next_continue_, false)) snapshots_.clear();
      size_t colon = options.continue_token.find(':');
      id = std::stoull(options.continue_token.substr(0, colon));
      offset = std::stoull(options.continue_token.substr(colon + 1));
      if (!snapshots_.contains(id)) {
        return MakeApiError(410, "Expired",
                            "The provided continue parameter is too old to display a consistent "
                            "list result.");
      }
    }
    const Snapshot& s = snapshots_.at(id);
    ObjectList out;
    out.resource_version = std::to_string(s.revision);
    size_t end = s.items.size();
    if (options.limit > 0) end = std::min(end, offset + static_cast<size_t>(options.limit));
    for (size_t i = offset; i < end; ++i) out.items.push_back(s.items[i]);
    if (end < s.items.size()) out.continue_token = std::to_string(id) + ":" + std::to_string(end);
    return out;
  }

  Result<WatchEnd> Watch(const WatchOptions& options,
                         const std::function<bool(const WatchEvent&)>& on_event) {
    MutexLock lock(mu_);
    watches_.push_back(options);
    if (!watch_failures_.empty()) {
      ApiError error = watch_failures_.front();
      watch_failures_.pop_front();
      return error;
    }
    uint64_t from =
        options.resource_version.empty() ? revision_ : std::stoull(options.resource_version);
    WatchEnd end;
    if (from < compacted_) {
      if (gone_at_open_) return GoneError(from);
      return DeliverError(GoneError(from), on_event, end);
    }
    ++active_;
    Result<WatchEnd> result = Follow(options, from, on_event);
    --active_;
    return result;
  }

 private:
  struct Entry {
    WatchEvent::Type type;
    Json object;
    uint64_t revision;
  };
  struct Snapshot {
    uint64_t revision = 0;
    std::vector<Json> items;
  };

  std::string Write(WatchEvent::Type type, const std::string& key, Json object) REQUIRES(mu_) {
    std::string rv = std::to_string(++revision_);
    object["metadata"]["resourceVersion"] = rv;
    if (type == WatchEvent::Type::kDeleted) {
      objects_.erase(key);
    } else {
      objects_[key] = object;
    }
    history_.push_back({type, std::move(object), revision_});
    cv_.NotifyAll();
    return rv;
  }

  // Called with mu_ held; releases it while the handler runs.
  Result<WatchEnd> DeliverError(const ApiError& error,
                                const std::function<bool(const WatchEvent&)>& on_event,
                                WatchEnd end) REQUIRES(mu_) {
    WatchEvent event;
    event.type = WatchEvent::Type::kError;
    event.object = StatusJson(error.http_status, error.reason, error.message);
    mu_.Unlock();
    on_event(event);
    mu_.Lock();
    return end;
  }

  // Called with mu_ held; releases it while the handler runs.
  Result<WatchEnd> Follow(const WatchOptions& options, uint64_t from,
                          const std::function<bool(const WatchEvent&)>& on_event) REQUIRES(mu_) {
    WatchEnd end;
    uint64_t cut = cut_generation_;
    size_t pos = 0;
    while (pos < history_.size() && history_[pos].revision <= from) ++pos;
    while (true) {
      cv_.WaitFor(mu_, std::chrono::milliseconds(2), [&]() REQUIRES(mu_) {
        return (options.cancel && options.cancel->cancelled()) || cut != cut_generation_ ||
               (!hold_ && (pos < history_.size() || error_event_));
      });
      if (options.cancel && options.cancel->cancelled()) {
        return ApiErrorFromTransport(Cancelled("the watch was cancelled"));
      }
      if (cut != cut_generation_) return end;
      if (hold_) continue;
      if (error_event_) {
        WatchEvent event;
        event.type = WatchEvent::Type::kError;
        event.object = std::move(*error_event_);
        error_event_.reset();
        mu_.Unlock();
        on_event(event);
        mu_.Lock();
        return end;
      }
      if (pos >= history_.size()) continue;
      if (history_[pos].revision <= compacted_) {  // fell behind the compaction
        return DeliverError(GoneError(from), on_event, end);
      }
      WatchEvent event;
      event.type = history_[pos].type;
      event.object = history_[pos].object;
      ++pos;
      ++end.events;
      mu_.Unlock();
      bool go_on = on_event(event);
      mu_.Lock();
      if (!go_on) {
        end.stopped_by_handler = true;
        return end;
      }
      if (cut_after_events_ > 0 && end.events >= cut_after_events_) return end;
    }
  }

  mutable Mutex mu_;
  CondVar cv_;
  uint64_t revision_ GUARDED_BY(mu_) = 100;
  uint64_t compacted_ GUARDED_BY(mu_) = 0;
  std::map<std::string, Json> objects_ GUARDED_BY(mu_);
  std::vector<Entry> history_ GUARDED_BY(mu_);
  std::map<uint64_t, Snapshot> snapshots_ GUARDED_BY(mu_);
  uint64_t next_snapshot_ GUARDED_BY(mu_) = 0;
  uint64_t cut_generation_ GUARDED_BY(mu_) = 0;
  bool hold_ GUARDED_BY(mu_) = false;
  bool expire_next_continue_ GUARDED_BY(mu_) = false;
  bool gone_at_open_ GUARDED_BY(mu_) = true;
  uint64_t cut_after_events_ GUARDED_BY(mu_) = 0;
  std::deque<ApiError> list_failures_ GUARDED_BY(mu_);
  std::deque<ApiError> watch_failures_ GUARDED_BY(mu_);
  std::optional<Json> error_event_ GUARDED_BY(mu_);
  std::vector<ListOptions> lists_ GUARDED_BY(mu_);
  std::vector<WatchOptions> watches_ GUARDED_BY(mu_);
  int active_ GUARDED_BY(mu_) = 0;
};

class FakeListerWatcher final : public ListerWatcher {
 public:
  explicit FakeListerWatcher(std::shared_ptr<FakeApi> api) : api_(std::move(api)) {}
  Result<ObjectList> List(const ListOptions& options) override { return api_->List(options); }
  Result<WatchEnd> Watch(const WatchOptions& options,
                         const std::function<bool(const WatchEvent&)>& on_event) override {
    return api_->Watch(options, on_event);
  }
  std::string Describe() const override { return "configmaps (fake)"; }

 private:
  std::shared_ptr<FakeApi> api_;
};

}  // namespace steward::kube::testing
