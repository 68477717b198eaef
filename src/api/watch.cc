// GET /v1/watch: server-sent events fed by the store listener.
#include "api/api_internal.h"
#include "common/log.h"

namespace steward::api {
namespace {

std::string ProjectEvent(const store::ProjectRecord& r) {
  return "event: project\nid: " + std::to_string(r.version) +
         "\ndata: " + DumpJson(ProjectJson(r)) + "\n\n";
}

std::string DeletedEvent(const std::string& id, const std::string& name, int64_t version) {
  std::string out = "event: deleted\n";
  if (version > 0) out += "id: " + std::to_string(version) + "\n";
  out += "data: " + DumpJson(Json{{"id", id}, {"name", name}}) + "\n\n";
  return out;
}

}  // namespace

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
  auto s = std::make_shared<Stream>();
  s->call = call;
  s->team = std::string(req.Query("team"));
  s->project = std::string(req.Query("project"));
  s->initial = initial;
  s->live = !initial;
  {
    std::lock_guard lock(s->mu);
    net::Headers h;
    h.Set("Content-Type", "text/event-stream");
    h.Set("Cache-Control", "no-cache");
    h.Set("X-Accel-Buffering", "no");
    call->answered = true;
    RecordMetrics(*call, 200);
    call->writer->BeginStream(200, std::move(h));
  }
  {
    std::lock_guard lock(streams_mu_);
    if (stopping_) {
      std::lock_guard slock(s->mu);
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
  std::vector<store::ProjectRecord> snapshot;
  if (!s->project.empty()) {
    auto rec = deps_.intents->Find(s->project);
    if (rec.ok() && (s->team.empty() || rec->team == s->team)) snapshot.push_back(*rec);
  } else {
    auto all = deps_.store->ListProjects(filter);
    if (all.ok()) snapshot = std::move(*all);
  }
  std::lock_guard lock(s->mu);
  if (s->ended) return;
  for (const auto& r : snapshot) {
    s->sent_versions[r.id] = r.version;
    if (!WriteLocked(s, ProjectEvent(r))) return;
  }
  if (!WriteLocked(
          s, "event: sync\ndata: " + DumpJson(Json{{"projects", snapshot.size()}}) + "\n\n")) {
    return;
  }
  // Changes committed while the snapshot was read: only what the snapshot does not already show.
  for (const auto& b : s->buffered) {
    if (s->ended) return;
    EmitLocked(s, b.change, b.deleted_name, b.deleted_version);
  }
  s->buffered.clear();
  s->live = true;
}

void Server::DeliverToStream(const std::shared_ptr<Stream>& s, const store::ProjectChange& change,
                             const std::string& team_of_deleted, int64_t deleted_version,
                             const std::string& name_of_deleted) {
  if (!s->project.empty() && s->project != change.project_id) {
    const std::string& name = change.record ? change.record->name : name_of_deleted;
    if (name != s->project) return;
  }
  if (!s->team.empty()) {
    const std::string& team = change.record ? change.record->team : team_of_deleted;
    if (team != s->team) return;
  }
  std::lock_guard lock(s->mu);
  if (s->ended) return;
  if (!s->live) {
    s->buffered.push_back({change, name_of_deleted, deleted_version});
    return;
  }
  EmitLocked(s, change, name_of_deleted, deleted_version);
}

void Server::EmitLocked(const std::shared_ptr<Stream>& s, const store::ProjectChange& change,
                        const std::string& deleted_name, int64_t deleted_version) {
  if (change.record) {
    auto it = s->sent_versions.find(change.project_id);
    if (it != s->sent_versions.end() && it->second >= change.record->version) return;
    s->sent_versions[change.project_id] = change.record->version;
    WriteLocked(s, ProjectEvent(*change.record));
    return;
  }
  // A purge of a project this client was never shown (gone before the snapshot) is not news.
  if (s->initial && !s->sent_versions.contains(change.project_id)) return;
  s->sent_versions.erase(change.project_id);
  WriteLocked(s, DeletedEvent(change.project_id, deleted_name, deleted_version));
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
    std::lock_guard lock(streams_mu_);
    std::erase(streams_, s);
  }
  std::lock_guard lock(s->mu);
  if (!s->ended) {
    s->ended = true;
    s->call->writer->End();
  }
}

void Server::KeepAlive() {
  std::vector<std::shared_ptr<Stream>> streams;
  {
    std::lock_guard lock(streams_mu_);
    streams = streams_;
  }
  for (const auto& s : streams) {
    std::lock_guard lock(s->mu);
    if (s->live && !s->ended) WriteLocked(s, ": keep-alive\n\n");
  }
  if (!stopping_) scheduler_->Schedule(options_.keepalive, [this] { KeepAlive(); });
}

}  // namespace steward::api
