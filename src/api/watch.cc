// GET /v1/watch: server-sent events. The store listener (OnChange, api_server.cc) renders each
// change once; the fan-out thread (FanoutLoop) writes it to the streams it matches.
#include <utility>

#include "api/api_internal.h"
#include "common/log.h"

namespace steward::api {

std::string ProjectEvent(const store::ProjectRecord& r) {
  return std::string(r.kind == store::RecordKind::kAgent ? "event: agent" : "event: project") +
         "\nid: " + std::to_string(r.version) + "\ndata: " + DumpJson(ProjectJson(r)) + "\n\n";
}

std::string DeletedEvent(const std::string& id, const std::string& name, int64_t version) {
  std::string out = "event: deleted\n";
  if (version > 0) out += "id: " + std::to_string(version) + "\n";
  out += "data: " + DumpJson(Json{{"id", id}, {"name", name}}) + "\n\n";
  return out;
}

std::string SlowConsumerEvent(size_t pending_bytes) {
  return "event: error\ndata: " +
         DumpJson(Json{{"reason", "SlowConsumer"},
                       {"message", "the client did not keep up with the stream (" +
                                       std::to_string(pending_bytes) +
                                       " bytes unsent); reconnect with initial=true"}}) +
         "\n\n";
}

std::string FanoutBehindEvent(size_t queued_bytes) {
  return "event: error\ndata: " +
         DumpJson(Json{{"reason", "Overloaded"},
                       {"message", "the server fell behind writing watch streams (" +
                                       std::to_string(queued_bytes) +
                                       " bytes queued); reconnect with initial=true"}}) +
         "\n\n";
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

void Server::HandleWatch(const CallPtr& call) {
  const net::HttpRequest& req = call->request;
  bool initial = true;
  if (req.HasQuery("initial")) {
    std::string_view v = req.Query("initial");
    if (v == "true" || v == "1") {
      initial = true;
    } else if (v == "false" || v == "0") {
      initial = false;
    } else {
      ReplyError(call, BadArgument("initial", "initial: must be true or false (got \"" +
                                                  std::string(v) + "\")"));
      return;
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
      return;
    }
  }
  auto s = std::make_shared<Stream>();
  s->call = call;
  s->kind = kind;
  s->team = std::string(req.Query("team"));
  s->project = std::string(req.Query("project"));
  {
    MutexLock lock(s->mu);
    s->initial = initial;
    s->live = !initial;
    s->max_pending = stream_pending_limit_.load();
    BeginEventStream(call);
  }
  {
    MutexLock lock(streams_mu_);
    if (stopping_) {
      MutexLock slock(s->mu);
      s->ended = true;
      call->writer->End();
      return;
    }
    streams_.push_back(s);
  }
  // OnClose runs on an I/O thread and must not block: the removal happens on the pool.
  std::weak_ptr<Stream> weak = s;
  call->writer->OnClose([this, weak] {
    if (auto st = weak.lock()) {
      if (!pool_->Post([this, st] { DropStream(st); })) return;
    }
  });
  if (!initial) return;

  store::ListFilter filter;
  if (!s->team.empty()) filter.team = s->team;
  filter.kind = s->kind;
  std::vector<store::ProjectRecord> snapshot;
  if (!s->project.empty()) {
    auto rec = deps_.intents->Find(s->project, s->kind.value_or(store::RecordKind::kProject));
    if (!rec.ok() && !s->kind) rec = deps_.intents->Find(s->project, store::RecordKind::kAgent);
    if (rec.ok() && (s->team.empty() || rec->team == s->team)) snapshot.push_back(*rec);
  } else {
    auto all = deps_.store->ListProjects(filter);
    if (all.ok()) snapshot = std::move(*all);
  }
  // Rendered before taking the stream's lock, which the fan-out thread takes for every batch.
  std::vector<std::string> texts;
  texts.reserve(snapshot.size() + 1);
  size_t snapshot_bytes = 0;
  for (const auto& r : snapshot) {
    texts.push_back(ProjectEvent(r));
    snapshot_bytes += texts.back().size();
  }
  texts.push_back("event: sync\ndata: " + DumpJson(Json{{"projects", snapshot.size()}}) + "\n\n");
  MutexLock lock(s->mu);
  if (s->ended) return;
  s->max_pending += snapshot_bytes;
  for (size_t i = 0; i < snapshot.size(); ++i)
    s->sent_versions[snapshot[i].id] = snapshot[i].version;
  for (std::string& text : texts) {
    if (!WriteLocked(s, std::move(text))) return;
  }
  // Changes committed while the snapshot was read: only what the snapshot does not already show.
  std::string out;
  for (const auto& e : s->buffered) AppendLocked(*s, e, &out);
  s->buffered.clear();
  if (!out.empty() && !SendLocked(s, std::move(out))) return;
  s->live = true;
}

void Server::FanoutLoop() {
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

void Server::FanOut(const std::vector<StreamEvent>& batch) {
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
      if (!s->project.empty() && s->project != e.project_id && s->project != e.name) continue;
      if (!s->team.empty() && s->team != e.team) continue;
      if (s->kind && *s->kind != e.kind) continue;
      if (!s->live) {
        s->buffered.push_back(e);  // shares the text
        continue;
      }
      AppendLocked(*s, e, &out);
    }
    if (!out.empty()) SendLocked(s, std::move(out));
  }
}

void Server::EndStreamsBehind(size_t queued_bytes) {
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
    s->ended = true;
    s->call->writer->End();
    pool_->Post([this, s] { DropStream(s); });
  }
}

void Server::AppendLocked(Stream& s, const StreamEvent& e, std::string* out) {
  if (!e.purged) {
    auto it = s.sent_versions.find(e.project_id);
    if (it != s.sent_versions.end() && it->second >= e.version) return;
    s.sent_versions[e.project_id] = e.version;
    *out += *e.text;
    return;
  }
  // A purge of a project this client was never shown (gone before the snapshot) is not news.
  if (s.initial && !s.sent_versions.contains(e.project_id)) return;
  s.sent_versions.erase(e.project_id);
  *out += *e.text;
}

bool Server::SendLocked(const std::shared_ptr<Stream>& s, std::string text) {
  if (s->ended) return false;
  const size_t pending = s->call->writer->pending_bytes();
  if (pending <= s->max_pending) return WriteLocked(s, std::move(text));
  // The client does not keep up: tell it (after what it has not read yet) and end the stream,
  // rather than buffer without bound. It reconnects with initial=true.
  LOG_WARN("api: ending a watch stream whose client does not keep up ({} bytes unsent)", pending);
  if (WriteLocked(s, SlowConsumerEvent(pending))) {
    s->ended = true;
    s->call->writer->End();
    pool_->Post([this, s] { DropStream(s); });
  }
  return false;
}

bool Server::WriteLocked(const std::shared_ptr<Stream>& s, std::string text) {
  if (s->ended) return false;
  if (s->call->writer->Write(std::move(text))) return true;
  // The client is gone: never wait for it; forget the stream.
  s->ended = true;
  pool_->Post([this, s] { DropStream(s); });
  return false;
}

void Server::DropStream(const std::shared_ptr<Stream>& s) {
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

void Server::KeepAlive() {
  std::vector<std::shared_ptr<Stream>> streams;
  {
    MutexLock lock(streams_mu_);
    streams = streams_;
  }
  for (const auto& s : streams) {
    MutexLock lock(s->mu);
    if (s->live && !s->ended) SendLocked(s, ": keep-alive\n\n");
  }
  if (!stopping_) scheduler_->Schedule(options_.keepalive, [this] { KeepAlive(); });
}

}  // namespace steward::api
