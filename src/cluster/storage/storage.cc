#include "cluster/storage/storage.h"

#include <algorithm>
#include <deque>
#include <map>
#include <unordered_map>

#include "cluster/storage/sqlite_backend.h"
#include "common/mutex.h"

namespace steward::cluster {

Json ObjectRecord::Parse() const {
  if (!json) return nullptr;
  auto parsed = ParseJson(*json);
  if (!parsed.ok()) return nullptr;
  return std::move(parsed).value();
}

namespace {

using Clock = std::chrono::steady_clock;

// Queue and wake-up state of one watcher, shared by the Watcher handle and the storage's
// registry. The registry never calls back into storage from here, so the lock order is simply
// storage lock -> watcher lock.
class WatcherState {
 public:
  WatcherState(std::string group_resource, std::string ns, uint64_t after)
      : group_resource_(std::move(group_resource)), ns_(std::move(ns)), after_(after) {}

  const std::string& group_resource() const { return group_resource_; }

  bool Matches(const ObjectRecord& rec) const {
    return rec.revision > after_ && (ns_.empty() || ns_ == rec.ns) &&
           (group_resource_.empty() || group_resource_ == rec.group_resource);
  }

  // Queues an event. Returns false when the watcher is closed (the registry then drops it);
  // sets *became_ready when the queue went from empty to non-empty.
  bool Push(const WatchEvent& ev, bool* became_ready) {
    MutexLock lock(mu_);
    if (closed_) return false;
    *became_ready = queue_.empty();
    queue_.push_back(ev);
    if (*became_ready) cv_.NotifyAll();
    return true;
  }

  // Initial events pushed before the watcher is visible to anyone: no notification needed.
  void PushInitial(WatchEvent ev) {
    MutexLock lock(mu_);
    queue_.push_back(std::move(ev));
  }

  bool closed() const {
    MutexLock lock(mu_);
    return closed_;
  }

  // Runs the notify callback, if any; called without storage locks.
  void Notify() {
    std::shared_ptr<const std::function<void()>> fn;
    {
      MutexLock lock(mu_);
      if (closed_ || !notify_ || !*notify_) return;
      fn = notify_;
      ++callbacks_running_;
    }
    const WatcherState* outer = tls_in_callback;
    tls_in_callback = this;
    (*fn)();
    tls_in_callback = outer;
    MutexLock lock(mu_);
    if (--callbacks_running_ == 0) cv_.NotifyAll();
  }

  std::vector<WatchEvent> Drain() {
    MutexLock lock(mu_);
    std::vector<WatchEvent> out(std::make_move_iterator(queue_.begin()),
                                std::make_move_iterator(queue_.end()));
    queue_.clear();
    return out;
  }

  bool Wait(std::chrono::milliseconds timeout) {
    MutexLock lock(mu_);
    cv_.WaitUntil(mu_, Clock::now() + timeout,
                  [&]() REQUIRES(mu_) { return !queue_.empty() || closed_; });
    return !queue_.empty();
  }

  void SetNotify(std::function<void()> notify) {
    bool pending;
    std::shared_ptr<const std::function<void()>> fn;
    {
      MutexLock lock(mu_);
      notify_ = std::make_shared<const std::function<void()>>(std::move(notify));
      fn = notify_;
      pending = !queue_.empty() && !closed_;
    }
    if (pending && *fn) (*fn)();
  }

  // After Close() returns no callback is running on another thread, so the owner may free
  // whatever the callback touches. (A callback that closes its own watcher is not waited for.)
  void Close() {
    MutexLock lock(mu_);
    closed_ = true;
    notify_.reset();
    cv_.NotifyAll();
    int own = tls_in_callback == this ? 1 : 0;
    cv_.Wait(mu_, [&]() REQUIRES(mu_) { return callbacks_running_ <= own; });
  }

 private:
  const std::string group_resource_;
  const std::string ns_;
  const uint64_t after_;
  mutable Mutex mu_;
  CondVar cv_;
  std::deque<WatchEvent> queue_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
  std::shared_ptr<const std::function<void()>> notify_ GUARDED_BY(mu_);
  int callbacks_running_ GUARDED_BY(mu_) = 0;
  // The watcher whose callback this thread is running, if any.
  static thread_local const WatcherState* tls_in_callback;
};

thread_local const WatcherState* WatcherState::tls_in_callback = nullptr;

class WatcherHandle final : public Watcher {
 public:
  explicit WatcherHandle(std::shared_ptr<WatcherState> state) : state_(std::move(state)) {}
  ~WatcherHandle() override { state_->Close(); }
  std::vector<WatchEvent> Drain() override { return state_->Drain(); }
  bool Wait(std::chrono::milliseconds timeout) override { return state_->Wait(timeout); }
  void SetNotify(std::function<void()> notify) override { state_->SetNotify(std::move(notify)); }
  void Close() override { state_->Close(); }

 private:
  std::shared_ptr<WatcherState> state_;
};

// (ns, name) keys with heterogeneous lookup by string_views.
using Key = std::pair<std::string, std::string>;
using KeyView = std::pair<std::string_view, std::string_view>;
struct KeyLess {
  using is_transparent = void;
  static KeyView V(const Key& k) { return {k.first, k.second}; }
  static KeyView V(const KeyView& k) { return k; }
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return V(a) < V(b);
  }
};
using Bucket = std::map<Key, ObjectRecord, KeyLess>;

std::shared_ptr<const Labels> ExtractLabels(const Json& obj,
                                            const std::shared_ptr<const Labels>& previous) {
  static const auto kEmpty = std::make_shared<const Labels>();
  Labels labels;
  if (const Json* l = FindPath(obj, "metadata.labels"); l != nullptr && l->is_object()) {
    labels.reserve(l->size());
    // nlohmann objects iterate in key order, so the result is already sorted.
    for (const auto& [k, v] : l->items()) {
      if (v.is_string()) labels.emplace_back(k, v.get<std::string>());
    }
  }
  if (labels.empty()) return kEmpty;
  // Most writes keep the labels: share the old vector instead of holding a copy per revision.
  if (previous && *previous == labels) return previous;
  return std::make_shared<const Labels>(std::move(labels));
}

// The serialised object as kept for as long as it is stored: without the serialiser's growth
// slack (which averaged a third of the JSON's size).
std::shared_ptr<const std::string> StoredJson(const Json& obj) {
  std::string json = DumpJson(obj);
  json.shrink_to_fit();
  return std::make_shared<const std::string>(std::move(json));
}

// Adds `rec` to the page `out` when `page` keeps it: to its items below the limit, else to its
// remaining count. False when collecting can stop (the page is full, more follow, and the rest
// need not be counted).
template <typename Rec>
bool Offer(Rec&& rec, const Storage::Page& page, Storage::ListResult* out) {
  if (page.keep && !page.keep(rec)) return true;
  if (page.limit > 0 && out->items.size() >= page.limit) {
    ++out->remaining;
    return page.count_rest;
  }
  out->items.push_back(std::forward<Rec>(rec));
  return true;
}

class StorageImpl final : public Storage {
 public:
  explicit StorageImpl(Options options) : options_(std::move(options)) {}

  ~StorageImpl() override {
    decltype(watchers_) watchers;
    {
      WriterMutexLock lock(mu_);
      watchers.swap(watchers_);
    }
    // Outside the lock: Close() waits for running callbacks, which may read the storage.
    for (auto& [gr, list] : watchers) {
      for (auto& w : list) w->Close();
    }
  }

  Status Load() {
    if (options_.persist_path.empty()) return Status::Ok();
    ASSIGN_OR_RETURN(backend_, SqliteBackend::Open(options_.persist_path));
    WriterMutexLock lock(mu_);  // not shared yet (uncontended); taken for the analysis
    RETURN_IF_ERROR(backend_->Load([&](SqliteBackend::Row&& row) REQUIRES(mu_) -> Status {
      auto parsed = ParseJson(row.json);
      if (!parsed.ok() || !parsed->is_object()) {
        return InvalidArgument("cluster store " + options_.persist_path + ": damaged (object " +
                               row.group_resource + " " + row.ns + "/" + row.name +
                               " is not a JSON object)");
      }
      ObjectRecord rec;
      rec.group_resource = row.group_resource;
      rec.ns = row.ns;
      rec.name = row.name;
      rec.revision = row.revision;
      rec.labels = ExtractLabels(*parsed, nullptr);
      rec.json = std::make_shared<const std::string>(std::move(row.json));
      bytes_ += rec.json->size();
      ++count_;
      objects_[row.group_resource].emplace(Key{std::move(row.ns), std::move(row.name)},
                                           std::move(rec));
      return Status::Ok();
    }));
    revision_ = backend_->revision();
    // History is not persisted: nothing before the loaded revision can be replayed.
    compacted_ = revision_;
    return Status::Ok();
  }

  std::optional<ObjectRecord> Get(std::string_view group_resource, std::string_view ns,
                                  std::string_view name) const override {
    ReaderMutexLock lock(mu_);
    const ObjectRecord* rec = Find(group_resource, ns, name);
    if (rec == nullptr) return std::nullopt;
    return *rec;
  }

  ListResult List(std::string_view group_resource, std::string_view ns) const override {
    ReaderMutexLock lock(mu_);
    ListResult out;
    out.revision = revision_;
    auto git = objects_.find(group_resource);
    if (git == objects_.end()) return out;
    const Bucket& bucket = git->second;
    if (ns.empty()) {
      out.items.reserve(bucket.size());
      for (const auto& [key, rec] : bucket) out.items.push_back(rec);
      return out;
    }
    for (auto it = bucket.lower_bound(KeyView{ns, ""}); it != bucket.end() && it->first.first == ns;
         ++it) {
      out.items.push_back(it->second);
    }
    return out;
  }

  StatusOr<ListResult> ListPageAt(std::string_view group_resource, std::string_view ns,
                                  uint64_t revision, std::optional<ListFrom> after,
                                  const Page& page) const override {
    ListResult out;
    out.revision = revision;
    // Deleted objects whose JSON still carries the deletion's revision (fixed after unlocking).
    std::vector<size_t> restamp;
    {
      ReaderMutexLock lock(mu_);
      if (revision > revision_) {
        return InvalidArgument("storage: cannot list at revision " + std::to_string(revision) +
                               ": the current revision is " + std::to_string(revision_));
      }
      if (revision < compacted_) {
        return OutOfRange("too old resource version: " + std::to_string(revision) + " (" +
                          std::to_string(compacted_) + ")");
      }
      // At the current revision the page is cut while collecting; an older snapshot is built
      // whole and cut below.
      const bool current = revision == revision_;
      if (auto git = objects_.find(group_resource); git != objects_.end()) {
        CollectFrom(git->second, ns, after, current ? page : Page{}, &out);
      }
      if (current) return out;
      // The first event after `revision` on a key holds that key's state at `revision`.
      std::map<KeyView, const WatchEvent*, KeyLess> changed;
      auto first = std::upper_bound(
          history_.begin(), history_.end(), revision,
          [](uint64_t rev, const WatchEvent& ev) { return rev < ev.object.revision; });
      for (auto it = first; it != history_.end(); ++it) {
        const ObjectRecord& o = it->object;
        if (o.group_resource != group_resource || (!ns.empty() && o.ns != ns)) continue;
        KeyView key{o.ns, o.name};
        if (after && key <= KeyView{after->ns, after->name}) continue;
        changed.try_emplace(key, &*it);
      }
      if (!changed.empty()) out.items = Overlay(std::move(out.items), changed, &restamp);
    }
    for (size_t i : restamp) {
      ObjectRecord& rec = out.items[i];
      Json obj = rec.Parse();
      if (!obj.is_object()) return Internal("storage: stored object does not parse");
      obj["metadata"]["resourceVersion"] = std::to_string(rec.revision);
      rec.json = StoredJson(obj);
    }
    return CutToPage(std::move(out), page);
  }

  StatusOr<MutateResult> Mutate(std::string_view group_resource, std::string_view ns,
                                std::string_view name, const MutateFn& fn) override {
    std::vector<std::shared_ptr<WatcherState>> to_notify;
    MutateResult result;
    {
      WriterMutexLock lock(mu_);
      Bucket* bucket = nullptr;
      Bucket::iterator it;
      const ObjectRecord* current = nullptr;
      if (auto git = objects_.find(group_resource); git != objects_.end()) {
        bucket = &git->second;
        it = bucket->find(KeyView{ns, name});
        if (it != bucket->end()) current = &it->second;
      }
      ASSIGN_OR_RETURN(Mutation mutation, fn(current));
      const uint64_t rev = revision_ + 1;
      WatchEvent ev{WatchEventType::kAdded, {}, nullptr};
      switch (mutation.kind) {
        case Mutation::Kind::kNoop:
          if (current != nullptr) result.object = *current;
          return result;
        case Mutation::Kind::kPut: {
          Json& obj = mutation.object;
          if (!obj.is_object()) return InvalidArgument("storage: object must be a JSON object");
          Json& meta = obj["metadata"];
          if (meta.is_null()) meta = Json::object();
          if (!meta.is_object()) return InvalidArgument("storage: metadata must be an object");
          meta["resourceVersion"] = std::to_string(rev);
          ObjectRecord rec;
          rec.group_resource = std::string(group_resource);
          rec.ns = std::string(ns);
          rec.name = std::string(name);
          rec.revision = rev;
          rec.json = StoredJson(obj);
          rec.labels = ExtractLabels(obj, current != nullptr ? current->labels : nullptr);
          if (backend_) {
            RETURN_IF_ERROR(backend_->Put(group_resource, ns, name, rev, *rec.json));
          }
          ev.type = current != nullptr ? WatchEventType::kModified : WatchEventType::kAdded;
          ev.prev_labels = current != nullptr ? current->labels : nullptr;
          ev.prev_json = current != nullptr ? current->json : nullptr;
          ev.prev_revision = current != nullptr ? current->revision : 0;
          bytes_ += rec.json->size();
          if (current != nullptr) {
            bytes_ -= current->json->size();
            it->second = rec;
          } else {
            if (bucket == nullptr) bucket = &objects_[std::string(group_resource)];
            bucket->emplace(Key{std::string(ns), std::string(name)}, rec);
            ++count_;
          }
          ev.object = std::move(rec);
          break;
        }
        case Mutation::Kind::kDelete: {
          if (current == nullptr) return result;
          Json last = current->Parse();
          if (!last.is_object()) return Internal("storage: stored object does not parse");
          last["metadata"]["resourceVersion"] = std::to_string(rev);
          ObjectRecord rec = *current;
          rec.revision = rev;
          rec.json = StoredJson(last);
          if (backend_) RETURN_IF_ERROR(backend_->Delete(group_resource, ns, name, rev));
          ev.type = WatchEventType::kDeleted;
          ev.prev_labels = current->labels;
          ev.prev_revision = current->revision;
          bytes_ -= current->json->size();
          --count_;
          bucket->erase(it);
          ev.object = std::move(rec);
          break;
        }
      }
      revision_ = rev;
      result.applied = mutation.kind;
      result.object = ev.object;
      Publish(ev, &to_notify);
      history_.push_back(std::move(ev));
      while (history_.size() > options_.history_limit) {
        compacted_ = history_.front().object.revision;
        history_.pop_front();
      }
    }
    for (auto& w : to_notify) w->Notify();
    return result;
  }

  uint64_t CurrentRevision() const override {
    ReaderMutexLock lock(mu_);
    return revision_;
  }

  uint64_t CompactedRevision() const override {
    ReaderMutexLock lock(mu_);
    return compacted_;
  }

  void Compact() override {
    WriterMutexLock lock(mu_);
    history_.clear();
    compacted_ = revision_;
  }

  StatusOr<std::unique_ptr<Watcher>> Watch(const WatchRequest& request) override {
    WriterMutexLock lock(mu_);
    std::shared_ptr<WatcherState> state;
    if (request.initial_snapshot) {
      state = std::make_shared<WatcherState>(request.group_resource, request.ns, revision_);
      auto add_bucket = [&](const Bucket& bucket) {
        auto it = request.ns.empty() ? bucket.begin() : bucket.lower_bound(KeyView{request.ns, ""});
        for (; it != bucket.end() && (request.ns.empty() || it->first.first == request.ns); ++it) {
          state->PushInitial(WatchEvent{WatchEventType::kAdded, it->second, nullptr});
        }
      };
      if (request.group_resource.empty()) {
        for (const auto& [gr, bucket] : objects_) add_bucket(bucket);
      } else if (auto git = objects_.find(request.group_resource); git != objects_.end()) {
        add_bucket(git->second);
      }
    } else {
      if (request.from_revision < compacted_) {
        return OutOfRange("too old resource version: " + std::to_string(request.from_revision) +
                          " (" + std::to_string(compacted_) + ")");
      }
      state =
          std::make_shared<WatcherState>(request.group_resource, request.ns, request.from_revision);
      auto first = std::upper_bound(
          history_.begin(), history_.end(), request.from_revision,
          [](uint64_t rev, const WatchEvent& ev) { return rev < ev.object.revision; });
      for (auto it = first; it != history_.end(); ++it) {
        if (state->Matches(it->object)) state->PushInitial(*it);
      }
    }
    auto& list = watchers_[request.group_resource];
    std::erase_if(list, [](const auto& w) { return w->closed(); });
    list.push_back(state);
    return std::unique_ptr<Watcher>(std::make_unique<WatcherHandle>(std::move(state)));
  }

  std::pair<size_t, size_t> Size() const override {
    ReaderMutexLock lock(mu_);
    return {count_, bytes_};
  }

 private:
  const ObjectRecord* Find(std::string_view group_resource, std::string_view ns,
                           std::string_view name) const REQUIRES_SHARED(mu_) {
    auto git = objects_.find(group_resource);
    if (git == objects_.end()) return nullptr;
    auto it = git->second.find(KeyView{ns, name});
    return it == git->second.end() ? nullptr : &it->second;
  }

  // Offers the records of `bucket` in namespace `ns` (every one when empty) that sort after
  // `after` (every one when absent) to the page.
  static void CollectFrom(const Bucket& bucket, std::string_view ns,
                          const std::optional<ListFrom>& after, const Page& page, ListResult* out) {
    auto it = bucket.begin();
    if (!ns.empty()) it = bucket.lower_bound(KeyView{ns, ""});
    if (after) {
      // Start at the later of the namespace's first key and the first key after `after`.
      auto past = bucket.upper_bound(KeyView{after->ns, after->name});
      if (past == bucket.end() || (it != bucket.end() && KeyLess()(it->first, past->first))) {
        it = past;
      }
    }
    for (; it != bucket.end() && (ns.empty() || it->first.first == ns); ++it) {
      if (!Offer(it->second, page, out)) return;
    }
  }

  // The state before the event: nothing for an ADDED (the object did not exist), else the object
  // as it was. For a DELETED the JSON still carries the deletion's revision: `*needs_restamp`.
  static std::optional<ObjectRecord> StateBefore(const WatchEvent& ev, bool* needs_restamp) {
    *needs_restamp = false;
    if (ev.type == WatchEventType::kAdded) return std::nullopt;
    ObjectRecord rec = ev.object;
    rec.revision = ev.prev_revision;
    rec.labels = ev.prev_labels;
    if (ev.type == WatchEventType::kModified) {
      rec.json = ev.prev_json;
    } else {
      *needs_restamp = true;
    }
    return rec;
  }

  // Merges the current records (sorted by key) with the states before the first later event of
  // each changed key (sorted too); notes the positions of records needing a restamp.
  static std::vector<ObjectRecord> Overlay(
      std::vector<ObjectRecord> current,
      const std::map<KeyView, const WatchEvent*, KeyLess>& changed, std::vector<size_t>* restamp) {
    std::vector<ObjectRecord> merged;
    merged.reserve(current.size() + changed.size());
    auto add_before = [&](const WatchEvent& ev) {
      bool needs_restamp = false;
      if (auto rec = StateBefore(ev, &needs_restamp)) {
        if (needs_restamp) restamp->push_back(merged.size());
        merged.push_back(std::move(*rec));
      }
    };
    auto c = changed.begin();
    for (auto& rec : current) {
      KeyView key{rec.ns, rec.name};
      for (; c != changed.end() && c->first < key; ++c) add_before(*c->second);
      if (c != changed.end() && c->first == key) {
        add_before(*c->second);
        ++c;
        continue;
      }
      merged.push_back(std::move(rec));
    }
    for (; c != changed.end(); ++c) add_before(*c->second);
    return merged;
  }

  // Queues `ev` on every matching watcher (caller holds mu_ exclusively), dropping closed ones.
  void Publish(const WatchEvent& ev, std::vector<std::shared_ptr<WatcherState>>* to_notify)
      REQUIRES(mu_) {
    auto deliver = [&](std::vector<std::shared_ptr<WatcherState>>& list) {
      std::erase_if(list, [&](const std::shared_ptr<WatcherState>& w) {
        if (!w->Matches(ev.object)) return w->closed();
        bool became_ready = false;
        if (!w->Push(ev, &became_ready)) return true;
        if (became_ready) to_notify->push_back(w);
        return false;
      });
    };
    if (auto it = watchers_.find(ev.object.group_resource); it != watchers_.end()) {
      deliver(it->second);
    }
    if (auto it = watchers_.find(std::string_view()); it != watchers_.end()) deliver(it->second);
  }

  const Options options_;
  mutable SharedMutex mu_;
  std::map<std::string, Bucket, std::less<>> objects_ GUARDED_BY(mu_);
  uint64_t revision_ GUARDED_BY(mu_) = 0;
  uint64_t compacted_ GUARDED_BY(mu_) = 0;
  std::deque<WatchEvent> history_ GUARDED_BY(mu_);
  // Keyed by the watch's group_resource ("" = every group-resource).
  std::map<std::string, std::vector<std::shared_ptr<WatcherState>>, std::less<>> watchers_
      GUARDED_BY(mu_);
  size_t count_ GUARDED_BY(mu_) = 0;
  size_t bytes_ GUARDED_BY(mu_) = 0;
  // Not guarded: set by Load() before the storage is shared; written to under mu_ (exclusive).
  std::unique_ptr<SqliteBackend> backend_;
};

}  // namespace

Storage::ListResult Storage::CutToPage(ListResult all, const Page& page) {
  if (!page.keep && page.limit == 0) return all;
  ListResult cut;
  cut.revision = all.revision;
  for (auto& rec : all.items) {
    if (!Offer(std::move(rec), page, &cut)) break;
  }
  return cut;
}

StatusOr<std::unique_ptr<Storage>> Storage::Open(const Options& options) {
  auto storage = std::make_unique<StorageImpl>(options);
  RETURN_IF_ERROR(storage->Load());
  return std::unique_ptr<Storage>(std::move(storage));
}

}  // namespace steward::cluster
