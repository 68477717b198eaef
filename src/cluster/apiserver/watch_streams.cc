#include "cluster/apiserver/watch_streams.h"

#include <algorithm>
#include <atomic>
#include <string>
#include <utility>

#include "cluster/apiserver/tables.h"

namespace steward::cluster {

// One open watch stream: a storage watcher, the filter of the request and its encoding.
class WatchSession : public std::enable_shared_from_this<WatchSession> {
 public:
  WatchSession(WatchStreams& owner, WatchStreams::Filter filter,
               std::shared_ptr<net::ResponseWriter> writer)
      : owner_(owner), filter_(std::move(filter)), writer_(std::move(writer)) {
    filtered_ = !filter_.labels.Empty() || !filter_.fields.Empty();
    for (const auto& req : filter_.fields.requirements()) {
      if (req.path != "metadata.name" && req.path != "metadata.namespace") parse_fields_ = true;
    }
  }

  void Start(std::unique_ptr<Watcher> watcher, const WatchStreams::Run& run) {
    std::weak_ptr<WatchSession> weak = shared_from_this();
    {
      MutexLock lock(pump_mu_);
      if (closed_) return;  // the streams stopped before this one began
      StartLocked(std::move(watcher), run, weak);
    }
    // Outside pump_mu_: when the client has already gone, OnClose runs the callback at once,
    // on this thread, and Close() takes pump_mu_.
    writer_->OnClose([weak] {
      if (auto self = weak.lock()) self->Close(false);
    });
  }

  void StartLocked(std::unique_ptr<Watcher> watcher, const WatchStreams::Run& run,
                   const std::weak_ptr<WatchSession>& weak) REQUIRES(pump_mu_) {
    watcher_ = std::move(watcher);
    bookmarks_ = run.bookmarks;
    initial_end_revision_ = run.initial_end_revision;
    from_revision_ = run.from_revision;
    limits_ = run.limits;
    net::Headers headers;
    headers.Add("Content-Type", "application/json");
    headers.Add("Cache-Control", "no-cache, private");
    writer_->BeginStream(200, std::move(headers));
    watcher_->SetNotify([this, weak] {
      if (auto self = weak.lock()) owner_.Enqueue(self);
    });
    auto& sched = owner_.scheduler_;
    timeout_timer_ = sched.Schedule(run.timeout, [weak] {
      if (auto self = weak.lock()) self->Close(false);
    });
    if (limits_.max_age.count() > 0) {
      cut_timer_ = sched.Schedule(limits_.max_age, [weak] {
        if (auto self = weak.lock()) self->Close(true);
      });
    }
    if (bookmarks_) ScheduleBookmarkLocked();
    owner_.Enqueue(shared_from_this());  // lock order: pump_mu_, then the streams' mu_
  }

  // Drains queued events to the client. Runs on a dispatcher thread.
  void Pump() {
    MutexLock lock(pump_mu_);
    if (closed_) return;
    // Every event up to `revision` is queued before it is read (storage queues under its
    // lock), so a bookmark at max(revision, last delivered) never goes backwards.
    uint64_t revision = owner_.api_.storage().CurrentRevision();
    auto events = watcher_->Drain();
    std::string out;
    if (filter_.output == Output::kJson) {
      // One allocation for the batch instead of the string doubling its way up per event.
      size_t total = 0;
      for (const auto& ev : events) total += (ev.object.json ? ev.object.json->size() : 0) + 32;
      out.reserve(total);
    }
    for (auto& ev : events) {
      last_revision_ = std::max(last_revision_, ev.object.revision);
      AppendEvent(ev, out);
      if (limits_.max_events > 0 && sent_ >= limits_.max_events) {
        // Cut after N events: the events go out, then the stream ends (a timed cut, below,
        // drops the connection instead, losing whatever was in flight).
        if (!out.empty()) writer_->Write(std::move(out));
        CloseLocked(false);
        return;
      }
    }
    last_revision_ = std::max(last_revision_, revision);
    // The snapshot's ADDED events were all queued when the watch started, so they went out in
    // the first pump: the initial-events-end bookmark follows them.
    if (initial_end_revision_ > 0 && !initial_end_sent_) {
      out += BookmarkLine(std::max(last_revision_, initial_end_revision_), true);
      initial_end_sent_ = true;
    }
    // A watch from a resourceVersion the store has not reached yet (it waits for it) gets no
    // bookmark below it: a client resuming from one would go back in time.
    bool bookmark = bookmark_due_.exchange(false);
    if (bookmark && last_revision_ >= from_revision_) out += BookmarkLine(last_revision_, false);
    if (!out.empty() && !writer_->Write(std::move(out))) CloseLocked(false);
  }

  void Close(bool abort) {
    MutexLock lock(pump_mu_);
    CloseLocked(abort);
  }

  void RequestBookmark() {
    {
      MutexLock lock(pump_mu_);
      if (closed_) return;
      bookmark_due_ = true;
      ScheduleBookmarkLocked();
    }
    owner_.Enqueue(shared_from_this());
  }

 private:
  void ScheduleBookmarkLocked() REQUIRES(pump_mu_) {
    std::weak_ptr<WatchSession> weak = shared_from_this();
    bookmark_timer_ = owner_.scheduler_.Schedule(owner_.options_.bookmark_interval, [weak] {
      if (auto self = weak.lock()) self->RequestBookmark();
    });
  }

  void CloseLocked(bool abort) REQUIRES(pump_mu_) {
    if (closed_) return;
    closed_ = true;
    for (auto id : {timeout_timer_, cut_timer_, bookmark_timer_}) {
      if (id != 0) owner_.scheduler_.Cancel(id);
    }
    if (watcher_) watcher_->Close();
    if (abort) {
      writer_->Abort();
    } else {
      writer_->End();
    }
    owner_.Forget(this);
  }

  std::string BookmarkLine(uint64_t revision, bool initial_end) {
    Json meta = {{"resourceVersion", std::to_string(revision)}};
    if (initial_end) meta["annotations"] = {{"k8s.io/initial-events-end", "true"}};
    Json object = {{"kind", filter_.type->kind},
                   {"apiVersion", filter_.type->ApiVersion()},
                   {"metadata", meta}};
    if (filter_.output == Output::kTable) {
      object = {{"kind", "Table"},
                {"apiVersion", "meta.k8s.io/v1"},
                {"metadata", meta},
                {"columnDefinitions", nullptr},
                {"rows", nullptr}};
    } else if (filter_.output == Output::kPartialMetadata) {
      object = {
          {"kind", "PartialObjectMetadata"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", meta}};
    }
    return DumpJson(Json{{"type", "BOOKMARK"}, {"object", std::move(object)}}) + "\n";
  }

  bool MatchesLabels(const std::shared_ptr<const Labels>& labels) const {
    return filter_.labels.Empty() || filter_.labels.MatchesStored(labels);
  }

  bool MatchesFields(const ObjectRecord& rec) const {
    if (filter_.fields.Empty()) return true;
    if (parse_fields_) return filter_.fields.Matches(rec.Parse());
    Json meta = {{"metadata", {{"name", rec.name}, {"namespace", rec.ns}}}};
    return filter_.fields.Matches(meta);
  }

  // Whether the object matched the field selector before a modification.
  bool MatchesPrevFields(const WatchEvent& ev) const {
    if (filter_.fields.Empty()) return true;
    if (!parse_fields_ || !ev.prev_json) return MatchesFields(ev.object);  // name/ns never change
    auto prev = ParseJson(*ev.prev_json);
    return prev.ok() && filter_.fields.Matches(*prev);
  }

  void AppendEvent(const WatchEvent& ev, std::string& out) REQUIRES(pump_mu_) {
    const char* type = ev.type == WatchEventType::kAdded      ? "ADDED"
                       : ev.type == WatchEventType::kModified ? "MODIFIED"
                                                              : "DELETED";
    if (filtered_) {
      // As the API server does: an event is shown when the object matched before or after it;
      // leaving the selection is a DELETED, entering it an ADDED.
      bool was = false;
      bool now = false;
      switch (ev.type) {
        case WatchEventType::kAdded:
          now = MatchesLabels(ev.object.labels) && MatchesFields(ev.object);
          break;
        case WatchEventType::kDeleted:
          was = MatchesLabels(ev.object.labels) && MatchesFields(ev.object);
          break;
        case WatchEventType::kModified:
          now = MatchesLabels(ev.object.labels) && MatchesFields(ev.object);
          was = MatchesLabels(ev.prev_labels) && MatchesPrevFields(ev);
          break;
      }
      if (!was && !now) return;
      if (was && !now) type = "DELETED";
      if (!was && now) type = "ADDED";
    }
    ++sent_;
    switch (filter_.output) {
      case Output::kTable: {
        Json obj = ev.object.Parse();
        Json meta = {{"resourceVersion", std::to_string(ev.object.revision)}};
        Json table = ToTable(*filter_.type, {obj}, meta, owner_.api_.clock().WallNow(),
                             filter_.include, headers_sent_);
        headers_sent_ = true;
        out += DumpJson(Json{{"type", type}, {"object", std::move(table)}});
        break;
      }
      case Output::kPartialMetadata:
        out += DumpJson(Json{{"type", type}, {"object", PartialMetadata(ev.object.Parse())}});
        break;
      default:
        out += "{\"type\":\"";
        out += type;
        out += "\",\"object\":";
        out += *ev.object.json;
        out += "}";
        break;
    }
    out += "\n";
  }

  WatchStreams& owner_;
  const WatchStreams::Filter filter_;
  std::shared_ptr<net::ResponseWriter> writer_;
  bool filtered_ = false;
  bool parse_fields_ = false;

  Mutex pump_mu_;
  std::unique_ptr<Watcher> watcher_ GUARDED_BY(pump_mu_);
  bool closed_ GUARDED_BY(pump_mu_) = false;
  bool bookmarks_ GUARDED_BY(pump_mu_) = false;
  std::atomic<bool> bookmark_due_{false};
  uint64_t initial_end_revision_ GUARDED_BY(pump_mu_) = 0;
  uint64_t from_revision_ GUARDED_BY(pump_mu_) = 0;
  uint64_t last_revision_ GUARDED_BY(pump_mu_) = 0;
  bool initial_end_sent_ GUARDED_BY(pump_mu_) = false;
  bool headers_sent_ GUARDED_BY(pump_mu_) = false;
  FaultInjector::WatchLimits limits_ GUARDED_BY(pump_mu_);
  int sent_ GUARDED_BY(pump_mu_) = 0;
  Scheduler::TaskId timeout_timer_ GUARDED_BY(pump_mu_) = 0;
  Scheduler::TaskId cut_timer_ GUARDED_BY(pump_mu_) = 0;
  Scheduler::TaskId bookmark_timer_ GUARDED_BY(pump_mu_) = 0;
};

WatchStreams::WatchStreams(ObjectApi& api, Scheduler& scheduler, Options options)
    : api_(api), scheduler_(scheduler), options_(options) {
  for (int i = 0; i < std::max(1, options_.dispatcher_threads); ++i) {
    dispatchers_.emplace_back([this] { DispatchLoop(); });
  }
}

WatchStreams::~WatchStreams() { Stop(); }

void WatchStreams::Open(Filter filter, std::shared_ptr<net::ResponseWriter> writer,
                        std::unique_ptr<Watcher> watcher, const Run& run) {
  auto session = std::make_shared<WatchSession>(*this, std::move(filter), writer);
  {
    MutexLock lock(mu_);
    if (stopping_) {
      writer->Abort();
      return;
    }
    sessions_.insert(session);
  }
  session->Start(std::move(watcher), run);
}

void WatchStreams::Fail(net::ResponseWriter& writer, const StatusError& error) {
  net::Headers headers;
  headers.Add("Content-Type", "application/json");
  writer.BeginStream(200, std::move(headers));
  Json event = {{"type", "ERROR"}, {"object", error.ToStatus()}};
  writer.Write(DumpJson(event) + "\n");
  writer.End();
}

size_t WatchStreams::Active() const {
  MutexLock lock(mu_);
  return sessions_.size();
}

void WatchStreams::Stop() {
  std::set<std::shared_ptr<WatchSession>> sessions;
  {
    MutexLock lock(mu_);
    if (stopping_ && dispatchers_.empty()) return;
    stopping_ = true;
    sessions = sessions_;
    cv_.NotifyAll();
  }
  for (const auto& s : sessions) s->Close(true);
  for (auto& t : dispatchers_) {
    if (t.joinable()) t.join();
  }
  dispatchers_.clear();
  MutexLock lock(mu_);
  sessions_.clear();
  ready_.clear();
}

void WatchStreams::Enqueue(std::shared_ptr<WatchSession> session) {
  MutexLock lock(mu_);
  if (stopping_) return;
  ready_.push_back(std::move(session));
  cv_.NotifyOne();
}

void WatchStreams::Forget(WatchSession* session) {
  MutexLock lock(mu_);
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    if (it->get() == session) {
      sessions_.erase(it);
      break;
    }
  }
}

void WatchStreams::DispatchLoop() {
  while (true) {
    std::shared_ptr<WatchSession> session;
    {
      MutexLock lock(mu_);
      cv_.Wait(mu_, [&]() REQUIRES(mu_) { return stopping_ || !ready_.empty(); });
      if (stopping_) return;
      session = std::move(ready_.front());
      ready_.pop_front();
    }
    session->Pump();
  }
}

}  // namespace steward::cluster
