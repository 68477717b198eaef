// GET /v1/watch: server-sent events. The store listener (OnChange, api_server.cc) gives each
// change its position, renders it once and keeps it in the replay window; the fan-out thread
// (FanoutLoop) writes it to the streams it matches. A stream begins with a snapshot (then
// `sync`) or, resuming after a Last-Event-ID still in the window, with the changes it missed
// (then `resumed`).
#include <utility>

#include "api/api_internal.h"
#include "common/log.h"

namespace steward::api {
namespace {

// An id a client sent, for a message: printable ASCII only, at most 64 bytes of it.
std::string Quoted(std::string_view id) {
  std::string out = "\"";
  for (char c : id.substr(0, 64)) out += c >= 0x20 && c < 0x7f ? c : '?';
  return out + (id.size() > 64 ? "...\"" : "\"");
}

std::string ResetMessage(ResumeVerdict verdict, std::string_view from, std::string_view feed,
                         uint64_t oldest, uint64_t current) {
  const std::string id = Quoted(from);
  const std::string then = "; the stream starts over with every current record";
  switch (verdict) {
    case ResumeVerdict::kMalformed:
      return "the last event id " + id + " is not an id of this server (<feed>.<position>)" + then;
    case ResumeVerdict::kUnknownFeed:
      return "the last event id " + id + " is from another database (this one's feed is " +
             std::string(feed) + ")" + then;
    case ResumeVerdict::kExpired:
      return "the changes after " + id + " are no longer kept (the server holds those after " +
             EventId(feed, oldest - 1) + ")" + then;
    case ResumeVerdict::kAhead:
      return "the last event id " + id + " is ahead of the server (at " + EventId(feed, current) +
             ")" + then;
    case ResumeVerdict::kResume:
      break;
  }
  return "";
}

std::string ErrorEvent(std::string_view reason, const std::string& message) {
  return "event: error\ndata: " + DumpJson(Json{{"reason", reason}, {"message", message}}) + "\n\n";
}

}  // namespace

std::string ProjectEvent(store::RecordKind kind, const std::string& json, std::string_view id) {
  std::string out = kind == store::RecordKind::kAgent ? "event: agent\n" : "event: project\n";
  if (!id.empty()) out += "id: " + std::string(id) + "\n";
  out.reserve(out.size() + json.size() + 8);
  return out + "data: " + json + "\n\n";
}

std::string DeletedEvent(const std::string& project_id, const std::string& name, int64_t version,
                         std::string_view id) {
  Json data{{"id", project_id}, {"name", name}};
  if (version > 0) data["version"] = version;
  std::string out = "event: deleted\n";
  if (!id.empty()) out += "id: " + std::string(id) + "\n";
  return out + "data: " + DumpJson(data) + "\n\n";
}

std::string SyncEvent(size_t projects, std::string_view id) {
  return "event: sync\nid: " + std::string(id) +
         "\ndata: " + DumpJson(Json{{"projects", projects}}) + "\n\n";
}

std::string ResumedEvent(std::string_view from, size_t replayed, std::string_view id) {
  return "event: resumed\nid: " + std::string(id) +
         "\ndata: " + DumpJson(Json{{"from", from}, {"replayed", replayed}}) + "\n\n";
}

std::string ResetEvent(std::string_view reason, std::string_view message) {
  return "event: reset\ndata: " + DumpJson(Json{{"reason", reason}, {"message", message}}) + "\n\n";
}

std::string SlowConsumerEvent(size_t pending_bytes) {
  return ErrorEvent("SlowConsumer", "the client did not keep up with the stream (" +
                                        std::to_string(pending_bytes) +
                                        " bytes unsent); reconnect with Last-Event-ID set to the "
                                        "last id received to resume from there");
}

std::string FanoutBehindEvent(size_t queued_bytes) {
  return ErrorEvent("Overloaded", "the server fell behind writing watch streams (" +
                                      std::to_string(queued_bytes) +
                                      " bytes queued); reconnect with Last-Event-ID set to the "
                                      "last id received to resume from there");
}

void Server::BeginEventStream(const CallPtr& call) {
  net::Headers h;
  h.Set("Content-Type", "text/event-stream");
  h.Set("Cache-Control", "no-cache");
  h.Set("X-Accel-Buffering", "no");  // no buffering in an nginx in front
  call->answered = true;
  RecordMetrics(*call, 200);
  call->writer->BeginStream(200, std::move(h));
}

std::shared_ptr<Stream> Server::NewStream(const CallPtr& call, bool* initial) {
  const net::HttpRequest& req = call->request;
  *initial = true;
  if (req.HasQuery("initial")) {
    std::string_view v = req.Query("initial");
    if (v == "true" || v == "1") {
      *initial = true;
    } else if (v == "false" || v == "0") {
      *initial = false;
    } else {
      ReplyError(call, BadArgument("initial", "initial: must be true or false (got \"" +
                                                  std::string(v) + "\")"));
      return nullptr;
    }
  }
  std::optional<store::RecordKind> kind = store::RecordKind::kProject;
  if (req.HasQuery("kind")) {
    std::string_view v = req.Query("kind");
    if (v == "all") {
      kind = std::nullopt;
    } else if (auto parsed = store::ParseRecordKind(v)) {
      kind = *parsed;
    } else {
      ReplyError(call, BadArgument("kind", "kind: must be project, agent or all (got \"" +
                                               std::string(v) + "\")"));
      return nullptr;
    }
  }
  auto s = std::make_shared<Stream>();
  s->call = call;
  s->kind = kind;
  s->team = std::string(req.Query("team"));
  s->project = std::string(req.Query("project"));
  return s;
}

void Server::HandleWatch(const CallPtr& call) {
  bool initial = true;
  std::shared_ptr<Stream> s = NewStream(call, &initial);
  if (s == nullptr) return;
  // An EventSource sends the header on every reconnect, with the newest id it got: it wins over
  // a since= that stays in its URL. An id is never refused (a client resends what it got): one
  // that cannot be resumed from is a `reset`.
  std::string from(call->request.headers.Get("Last-Event-ID"));
  if (from.empty()) from = std::string(call->request.Query("since"));
  {
    MutexLock lock(s->mu);
    s->max_pending = hub_->stream_pending_limit();
    BeginEventStream(call);
  }
  hub_->Serve(s, std::move(from), initial);
}

std::vector<ProjectView::ItemPtr> Server::Snapshot(const Stream& s) {
  // Rendered once per change (the view) or per snapshot (a single project, or the store when
  // the view lags).
  std::vector<ProjectView::ItemPtr> snapshot;
  if (!s.project.empty()) {
    auto rec = deps_.intents->Find(s.project, s.kind.value_or(store::RecordKind::kProject));
    if (!rec.ok() && !s.kind) rec = deps_.intents->Find(s.project, store::RecordKind::kAgent);
    if (rec.ok() && (s.team.empty() || rec->team == s.team)) snapshot.push_back(Rendered(*rec));
    return snapshot;
  }
  store::ListFilter filter;
  if (!s.team.empty()) filter.team = s.team;
  filter.kind = s.kind;
  if (auto viewed = ViewList(filter)) return std::move(*viewed);
  auto all = deps_.store->ListProjects(filter);
  if (all.ok()) {
    for (const auto& r : *all) snapshot.push_back(Rendered(r));
  }
  return snapshot;
}

// ---- WatchHub ----

WatchHub::WatchHub(std::string feed, Options options, TaskPool& pool, Scheduler& scheduler,
                   SnapshotFn snapshot)
    : feed_(std::move(feed)),
      options_(options),
      pool_(pool),
      scheduler_(scheduler),
      snapshot_(std::move(snapshot)) {}

WatchHub::~WatchHub() { Stop(); }

void WatchHub::Start(uint64_t position) {
  {
    MutexLock lock(ring_mu_);
    if (position_ == 0) position_ = position;
  }
  fanout_thread_ = std::thread([this] { FanoutLoop(); });
  pthread_setname_np(fanout_thread_.native_handle(), "api-fanout");
  scheduler_.Schedule(options_.keepalive, [this] { KeepAlive(); });
}

void WatchHub::Serve(const std::shared_ptr<Stream>& s, std::string from, bool initial) {
  RunWatchHook("register");
  const WatchStart start = RegisterStream(s, std::move(from), initial);
  if (start.stopping) return;
  // OnClose runs on an I/O thread and must not block: the removal happens on the pool.
  std::weak_ptr<Stream> weak = s;
  s->call->writer->OnClose([this, weak] {
    if (auto st = weak.lock()) {
      if (!pool_.Post([this, st] { DropStream(st); })) return;
    }
  });
  RunWatchHook("registered");
  if (!start.from.empty() && start.verdict == ResumeVerdict::kResume) {
    SendReplay(s, start);
  } else if (initial || !start.from.empty()) {
    SendSnapshot(s, start);
  }
}

void WatchHub::Stop() {
  // The fan-out writes what the listener queued, then ends.
  if (fanout_thread_.joinable()) {
    {
      MutexLock lock(fanout_mu_);
      fanout_stop_ = true;
    }
    fanout_cv_.NotifyAll();
    fanout_thread_.join();
  }
  // Watch streams end cleanly (the last chunk), so clients see a finished response.
  std::vector<std::shared_ptr<Stream>> streams;
  {
    MutexLock lock(streams_mu_);
    stopping_ = true;
    streams.swap(streams_);
  }
  for (auto& s : streams) {
    MutexLock lock(s->mu);
    if (!s->ended) {
      s->ended = true;
      s->call->writer->End();
    }
  }
}

void WatchHub::Publish(const store::ProjectChange& change,
                       const std::shared_ptr<const std::string>& json) {
  // Streams: every change gets the next position and is rendered once, with its id, under
  // ring_mu_. The window then holds exactly what was committed, in order (also what an
  // overloaded fan-out drops below), and a stream registering under the same lock either counts
  // this change in its snapshot or replay, or is open when it is queued. With no stream open
  // and no window, there is nothing to render.
  StreamEvent e;
  e.project_id = change.project_id;
  e.kind = change.record ? change.record->kind
                         : (change.purged ? change.purged->kind : store::RecordKind::kProject);
  if (change.record) {
    e.name = change.record->name;
    e.team = change.record->team;
    e.version = change.record->version;
  } else {
    e.purged = true;
    if (change.purged) {
      e.name = change.purged->name;
      e.team = change.purged->team;
      e.version = change.purged->version + 1;
    }
  }
  const bool keep = options_.window_events > 0 && options_.window_bytes > 0;
  bool streams_open = false;
  {
    MutexLock lock(ring_mu_);
    e.position = static_cast<uint64_t>(change.position);
    // The store delivers positions one after another; the only gap is before the first change
    // after this server began to listen. The window holds consecutive positions only.
    if (e.position != position_ + 1) {
      ring_.clear();
      ring_bytes_ = 0;
    }
    position_ = e.position;
    {
      MutexLock streams_lock(streams_mu_);
      streams_open = !streams_.empty();
    }
    if (!streams_open && !keep) return;
    const std::string id = EventId(feed_, e.position);
    e.text = std::make_shared<const std::string>(
        change.record ? ProjectEvent(change.record->kind, *json, id)
                      : DeletedEvent(e.project_id, e.name, e.version, id));
    if (keep) KeepLocked(e);
  }
  if (!streams_open) return;
  std::vector<StreamEvent> dropped;  // freed outside the lock
  {
    MutexLock lock(fanout_mu_);
    if (fanout_overflow_bytes_ > 0) return;  // every stream is about to be ended
    fanout_queued_bytes_ += e.text->size();
    fanout_queue_.push_back(std::move(e));
    if (fanout_queued_bytes_ > fanout_queue_limit_.load()) {
      fanout_overflow_bytes_ = fanout_queued_bytes_;
      fanout_queued_bytes_ = 0;
      dropped.swap(fanout_queue_);
    }
  }
  fanout_cv_.NotifyOne();
}

void WatchHub::KeepLocked(StreamEvent e) {
  ring_bytes_ += e.text->size();
  ring_.push_back(std::move(e));
  while (!ring_.empty() &&
         (ring_.size() > options_.window_events || ring_bytes_ > options_.window_bytes)) {
    ring_bytes_ -= ring_.front().text->size();
    ring_.pop_front();
  }
}

WatchStart WatchHub::RegisterStream(const std::shared_ptr<Stream>& s, std::string from,
                                    bool initial) {
  WatchStart start;
  start.from = std::move(from);
  // The stream is not shared yet: its lock comes first (the order of api_internal.h), for its
  // fields. Then ring_mu_, which the listener holds while it numbers, renders and keeps a
  // change: no change can be numbered between the copy of the window (or the snapshot's
  // position) and the registration, so each one after `at` is queued for the fan-out once the
  // stream is in streams_, and the fan-out skips those up to `at` it still holds.
  MutexLock stream_lock(s->mu);
  MutexLock ring_lock(ring_mu_);
  start.at = position_;
  const uint64_t oldest = position_ + 1 - ring_.size();
  bool resume = false;
  if (!start.from.empty()) {
    start.verdict = JudgeResume(start.from, feed_, oldest, position_);
    resume = start.verdict == ResumeVerdict::kResume;
    if (resume) {
      const uint64_t after = ParseEventId(start.from)->position;
      for (size_t i = static_cast<size_t>(after + 1 - oldest); i < ring_.size(); ++i) {
        if (Matches(*s, ring_[i])) start.replay.push_back(ring_[i]);  // shares the text
      }
    } else {
      start.reset_message = ResetMessage(start.verdict, start.from, feed_, oldest, position_);
    }
  }
  MutexLock lock(streams_mu_);
  if (stopping_) {
    s->ended = true;
    s->call->writer->End();
    start.stopping = true;
    return start;
  }
  // A refused resume serves the snapshot whatever `initial` says: the client must diff.
  s->initial = !resume && (initial || !start.from.empty());
  s->live = !resume && !s->initial;
  s->after = start.at;
  streams_.push_back(s);
  return start;
}

void WatchHub::SendSnapshot(const std::shared_ptr<Stream>& s, const WatchStart& start) {
  // Read before taking the stream's lock, which the fan-out thread takes for every batch.
  const std::vector<ProjectView::ItemPtr> snapshot = snapshot_(*s);
  // The snapshot's events carry no id: a client cut before the sync keeps the id it had, and
  // reconnecting with it gets a snapshot again.
  std::vector<std::string> texts;
  texts.reserve(snapshot.size() + 2);
  if (!start.from.empty()) {
    texts.push_back(ResetEvent(ResetReason(start.verdict), start.reset_message));
  }
  size_t snapshot_bytes = 0;
  for (const auto& item : snapshot) {
    texts.push_back(ProjectEvent(item->kind, *item->json, ""));
    snapshot_bytes += texts.back().size();
  }
  texts.push_back(SyncEvent(snapshot.size(), EventId(feed_, start.at)));
  MutexLock lock(s->mu);
  if (s->ended) return;
  s->max_pending += snapshot_bytes;
  for (const auto& item : snapshot) s->sent_versions[item->id] = item->version;
  for (std::string& text : texts) {
    if (!WriteLocked(s, std::move(text))) return;
  }
  GoLiveLocked(s);
}

void WatchHub::SendReplay(const std::shared_ptr<Stream>& s, const WatchStart& start) {
  MutexLock lock(s->mu);
  if (s->ended) return;
  std::string out;
  size_t replayed = 0;
  for (const StreamEvent& e : start.replay) replayed += AppendLocked(*s, e, &out) ? 1 : 0;
  // Written at once, like a snapshot, the replay drains at the client's pace.
  s->max_pending += out.size();
  out += ResumedEvent(start.from, replayed, EventId(feed_, start.at));
  if (!WriteLocked(s, std::move(out))) return;
  GoLiveLocked(s);
}

void WatchHub::GoLiveLocked(const std::shared_ptr<Stream>& s) {
  // Changes committed while the snapshot was read or the replay written: only what the stream
  // does not already show.
  std::string out;
  for (const auto& e : s->buffered) AppendLocked(*s, e, &out);
  s->buffered.clear();
  if (!out.empty() && !SendLocked(s, std::move(out))) return;
  s->live = true;
}

bool WatchHub::Matches(const Stream& s, const StreamEvent& e) {
  if (!s.project.empty() && s.project != e.project_id && s.project != e.name) return false;
  if (!s.team.empty() && s.team != e.team) return false;
  return !s.kind || *s.kind == e.kind;
}

void WatchHub::RunWatchHook(std::string_view stage) {
  std::function<void(std::string_view)> hook;
  {
    MutexLock lock(hook_mu_);
    hook = watch_hook_;
  }
  if (hook) hook(stage);
}

void WatchHub::FanoutLoop() {
  ReleasableMutexLock lock(fanout_mu_);
  for (;;) {
    fanout_cv_.Wait(fanout_mu_, [&]() REQUIRES(fanout_mu_) {
      return fanout_stop_ || !fanout_queue_.empty() || fanout_overflow_bytes_ > 0;
    });
    const size_t overflow = std::exchange(fanout_overflow_bytes_, 0);
    if (fanout_queue_.empty() && overflow == 0) return;  // stopping, everything queued written
    std::vector<StreamEvent> batch;
    batch.swap(fanout_queue_);
    fanout_queued_bytes_ = 0;
    lock.Release();
    try {
      // The streams open now missed what was dropped: each is ended (the batch, queued after
      // the drop, then reaches only streams opened since).
      if (overflow > 0) EndStreamsBehind(overflow);
      FanOut(batch);
    } catch (const std::exception& e) {
      LOG_ERROR("api: watch fan-out failed: {}", e.what());
    }
    batch.clear();  // the texts are freed outside the lock
    lock.Reacquire();
  }
}

void WatchHub::FanOut(const std::vector<StreamEvent>& batch) {
  std::vector<std::shared_ptr<Stream>> streams;
  {
    MutexLock lock(streams_mu_);
    streams = streams_;
  }
  for (const auto& s : streams) {
    MutexLock lock(s->mu);
    if (s->ended) continue;
    std::string out;  // this stream's share of the batch, written at once
    for (const StreamEvent& e : batch) {
      // Up to `after`, the stream got the change in its snapshot or replay.
      if (e.position <= s->after || !Matches(*s, e)) continue;
      if (!s->live) {
        s->buffered.push_back(e);  // shares the text
        continue;
      }
      AppendLocked(*s, e, &out);
    }
    if (!out.empty()) SendLocked(s, std::move(out));
  }
}

void WatchHub::EndStreamsBehind(size_t queued_bytes) {
  std::vector<std::shared_ptr<Stream>> streams;
  {
    MutexLock lock(streams_mu_);
    streams = streams_;
  }
  LOG_WARN("api: the watch fan-out fell behind by {} bytes: ending {} streams", queued_bytes,
           streams.size());
  const std::string text = FanoutBehindEvent(queued_bytes);
  for (const auto& s : streams) {
    MutexLock lock(s->mu);
    if (!WriteLocked(s, text)) continue;  // gone already
    if (options_.ended != nullptr) options_.ended->Add({"fanout_behind"});
    s->ended = true;
    s->call->writer->End();
    pool_.Post([this, s] { DropStream(s); });
  }
}

bool WatchHub::AppendLocked(Stream& s, const StreamEvent& e, std::string* out) {
  if (!e.purged) {
    auto it = s.sent_versions.find(e.project_id);
    if (it != s.sent_versions.end() && it->second >= e.version) return false;
    s.sent_versions[e.project_id] = e.version;
    *out += *e.text;
    return true;
  }
  // A purge of a project this client was never shown (gone before the snapshot) is not news.
  if (s.initial && !s.sent_versions.contains(e.project_id)) return false;
  s.sent_versions.erase(e.project_id);
  *out += *e.text;
  return true;
}

bool WatchHub::SendLocked(const std::shared_ptr<Stream>& s, std::string text) {
  if (s->ended) return false;
  const size_t pending = s->call->writer->pending_bytes();
  if (pending <= s->max_pending) return WriteLocked(s, std::move(text));
  // The client does not keep up: tell it (after what it has not read yet) and end the stream,
  // rather than buffer without bound. It reconnects with its last event id.
  LOG_WARN("api: ending a watch stream whose client does not keep up ({} bytes unsent)", pending);
  if (options_.ended != nullptr) options_.ended->Add({"slow_consumer"});
  if (WriteLocked(s, SlowConsumerEvent(pending))) {
    s->ended = true;
    s->call->writer->End();
    pool_.Post([this, s] { DropStream(s); });
  }
  return false;
}

bool WatchHub::WriteLocked(const std::shared_ptr<Stream>& s, std::string text) {
  if (s->ended) return false;
  if (s->call->writer->Write(std::move(text))) return true;
  // The client is gone: never wait for it; forget the stream.
  s->ended = true;
  pool_.Post([this, s] { DropStream(s); });
  return false;
}

void WatchHub::DropStream(const std::shared_ptr<Stream>& s) {
  {
    MutexLock lock(streams_mu_);
    std::erase(streams_, s);
  }
  MutexLock lock(s->mu);
  if (!s->ended) {
    s->ended = true;
    s->call->writer->End();
  }
}

void WatchHub::KeepAlive() {
  std::vector<std::shared_ptr<Stream>> streams;
  {
    MutexLock lock(streams_mu_);
    streams = streams_;
  }
  for (const auto& s : streams) {
    MutexLock lock(s->mu);
    if (s->live && !s->ended) SendLocked(s, ": keep-alive\n\n");
  }
  {
    MutexLock lock(streams_mu_);
    if (stopping_) return;
  }
  scheduler_.Schedule(options_.keepalive, [this] { KeepAlive(); });
}

}  // namespace steward::api
