// Record routes (RecordHandlers, record_handlers.h): create/update, the lifecycle operations,
// rename, get, list, history, the stack defaults, the credential check.
#include "api/record_handlers.h"

#include <charconv>

#include "common/duration.h"
#include "common/fields.h"
#include "common/json_access.h"
#include "common/log.h"
#include "engine/intents/intents.h"
#include "engine/model/project.h"

namespace steward::api {
namespace {

// Integer query parameter in [min, max]; `fallback` when absent.
std::optional<int64_t> IntParam(const net::HttpRequest& req, std::string_view name, int64_t min,
                                int64_t max, int64_t fallback, ErrorAnswer* error) {
  if (!req.HasQuery(name)) return fallback;
  std::string_view v = req.Query(name);
  int64_t out = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || ec != std::errc() || ptr != v.data() + v.size() || out < min || out > max) {
    *error = BadArgument(std::string(name),
                         std::string(name) + ": must be an integer between " + std::to_string(min) +
                             " and " + std::to_string(max) + " (got \"" + std::string(v) + "\")");
    return std::nullopt;
  }
  return out;
}

Json HistoryJson(const store::HistoryEntry& h) {
  Json detail = nullptr;
  if (!h.detail_json.empty()) {
    if (auto j = ParseJson(h.detail_json); j.ok()) detail = std::move(*j);
  }
  return Json{{"seq", h.seq},         {"at", FormatTimeMs(h.at_ms)},
              {"kind", h.kind},       {"generation", h.generation},
              {"summary", h.summary}, {"detail", std::move(detail)}};
}

}  // namespace

bool RecordHandlers::ReadWait(const CallPtr& call, std::optional<std::chrono::milliseconds>* wait) {
  if (!call->request.HasQuery("wait")) return true;
  std::string_view v = call->request.Query("wait");
  auto d = ParseDuration(v);
  if (!d || *d > options_.max_wait) {
    server_.ReplyError(
        call, BadArgument("wait", "wait: must be a duration " + std::string(kDurationForms) +
                                      ", at most " + std::to_string(options_.max_wait.count()) +
                                      "ms (got \"" + std::string(v) + "\")"));
    return false;
  }
  *wait = *d;
  return true;
}

void RecordHandlers::HandlePut(const CallPtr& call) { PutOf(call, store::RecordKind::kProject); }

void RecordHandlers::HandleAgentPut(const CallPtr& call) { PutOf(call, store::RecordKind::kAgent); }

// A project's and an agent's PUT: the same body shape ({spec, id, start}); the name, the id and
// the spec are Intents::Put's (PutAgent's) to validate.
void RecordHandlers::PutOf(const CallPtr& call, store::RecordKind kind) {
  std::optional<std::chrono::milliseconds> wait;
  if (!ReadWait(call, &wait)) return;
  auto body = server_.ReadJsonBody(call, true);
  if (!body) return;
  std::string id;
  bool start = false;
  const Json* spec = nullptr;  // points into *body
  Status shape = [&]() -> Status {
    ASSIGN_OR_RETURN(FieldReader f, FieldReader::Of(*body, ""));
    RETURN_IF_ERROR(f.OnlyKnown({"spec", "id", "start"}));
    RETURN_IF_ERROR(f.Required("spec"));
    RETURN_IF_ERROR(f.Object("spec", &spec));
    RETURN_IF_ERROR(f.String("id", &id));
    return f.Bool("start", &start);
  }();
  if (!shape.ok()) {
    server_.ReplyError(call, FromStatus(shape));
    return;
  }
  auto commit = [this, call, kind, wait, id, start](const Json& spec_json) {
    auto put = kind == store::RecordKind::kAgent
                   ? deps_.intents->PutAgent(call->params[0], spec_json, id, start)
                   : deps_.intents->Put(call->params[0], spec_json, id, start);
    if (!put.ok()) {
      server_.ReplyError(call, FromStatus(put.error()));
      return;
    }
    const int status = put->created ? 201 : 200;
    server_.AnswerOrWait(call, put->record, status, status, wait, false);
  };
  // Supplied values (not `{}`, not the fingerprint form a GET shows): their Secret is written
  // to the cluster before the commit (Intents' CredentialVault), which may wait on a slow
  // cluster — on the credential threads, never the workers.
  const Json& credentials = MemberOrNull(*spec, "credentials");
  if (!credentials.is_object() || credentials.empty() || credentials.contains("fingerprint")) {
    commit(*spec);
    return;
  }
  auto owned = std::make_shared<const Json>(std::move((*body)["spec"]));
  OffWorkers(call, [commit, owned] { commit(*owned); });
}

void RecordHandlers::OffWorkers(const CallPtr& call, std::function<void()> work) {
  auto task = [this, call, work = std::move(work)] {
    // A stop runs what is queued here: a request that has not begun goes no further (nothing is
    // written yet), or a slow cluster would hold the stop for every queued one.
    if (stopping_) {
      server_.ReplyError(call, MakeError(503, "Unavailable", "the server is stopping"));
      return;
    }
    work();
  };
  switch (credential_pool_.Offer(std::move(task))) {
    case TaskPool::Offered::kQueued:
      return;
    case TaskPool::Offered::kFull: {
      net::Headers retry;
      retry.Set("Retry-After", "1");
      server_.ReplyError(
          call,
          MakeError(503, "Unavailable",
                    "too many requests with supplied credentials are waiting for a cluster to "
                    "take their Secrets; send the request again"),
          std::move(retry));
      return;
    }
    case TaskPool::Offered::kStopping:
      server_.ReplyError(call, MakeError(503, "Unavailable", "the server is stopping"));
      return;
  }
}

void RecordHandlers::Operation(const CallPtr& call, OpFn op, store::RecordKind kind) {
  std::optional<std::chrono::milliseconds> wait;
  if (!ReadWait(call, &wait)) return;
  auto body = server_.ReadJsonBody(call, false);
  if (!body) return;
  if (Status s = NoFields(*body); !s.ok()) {
    server_.ReplyError(call, FromStatus(s));
    return;
  }
  auto rec = (deps_.intents->*op)(call->params[0], kind);
  if (!rec.ok()) {
    server_.ReplyError(call, FromStatus(rec.error()));
    return;
  }
  server_.AnswerOrWait(call, *rec, 202, 200, wait, op == &engine::Intents::Delete);
}

void RecordHandlers::HandleAgentDelete(const CallPtr& call) {
  Operation(call, &engine::Intents::Delete, store::RecordKind::kAgent);
}
void RecordHandlers::HandleAgentStart(const CallPtr& call) {
  Operation(call, &engine::Intents::Start, store::RecordKind::kAgent);
}
void RecordHandlers::HandleAgentStop(const CallPtr& call) {
  Operation(call, &engine::Intents::Suspend, store::RecordKind::kAgent);
}
void RecordHandlers::HandleAgentRestart(const CallPtr& call) {
  Operation(call, &engine::Intents::Restart, store::RecordKind::kAgent);
}
void RecordHandlers::HandleAgentList(const CallPtr& call) {
  ListOf(call, store::RecordKind::kAgent);
}
void RecordHandlers::HandleAgentGet(const CallPtr& call) { GetOf(call, store::RecordKind::kAgent); }
void RecordHandlers::HandleAgentHistory(const CallPtr& call) {
  HistoryOf(call, store::RecordKind::kAgent);
}

void RecordHandlers::HandleStart(const CallPtr& call) { Operation(call, &engine::Intents::Start); }
void RecordHandlers::HandleSuspend(const CallPtr& call) {
  Operation(call, &engine::Intents::Suspend);
}
void RecordHandlers::HandleRestart(const CallPtr& call) {
  Operation(call, &engine::Intents::Restart);
}
void RecordHandlers::HandleRotate(const CallPtr& call) {
  Operation(call, &engine::Intents::Rotate);
}
void RecordHandlers::HandleDelete(const CallPtr& call) {
  Operation(call, &engine::Intents::Delete);
}

void RecordHandlers::HandleRename(const CallPtr& call) {
  std::optional<std::chrono::milliseconds> wait;
  if (!ReadWait(call, &wait)) return;
  auto body = server_.ReadJsonBody(call, true);
  if (!body) return;
  std::string name;
  Status shape = [&]() -> Status {
    ASSIGN_OR_RETURN(FieldReader f, FieldReader::Of(*body, ""));
    RETURN_IF_ERROR(f.OnlyKnown({"name"}));
    RETURN_IF_ERROR(f.Required("name"));
    return f.String("name", &name);
  }();
  if (!shape.ok()) {
    server_.ReplyError(call, FromStatus(shape));
    return;
  }
  auto rec = deps_.intents->Rename(call->params[0], name);
  if (!rec.ok()) {
    server_.ReplyError(call, FromStatus(rec.error()));
    return;
  }
  server_.AnswerOrWait(call, *rec, 202, 200, wait, false);
}

void RecordHandlers::HandleMove(const CallPtr& call) {
  std::optional<std::chrono::milliseconds> wait;
  if (!ReadWait(call, &wait)) return;
  auto body = server_.ReadJsonBody(call, true);
  if (!body) return;
  engine::Intents::MoveRequest move;
  Status shape = [&]() -> Status {
    ASSIGN_OR_RETURN(FieldReader f, FieldReader::Of(*body, ""));
    RETURN_IF_ERROR(f.OnlyKnown({"cluster", "order", "storage"}));
    RETURN_IF_ERROR(f.Required("cluster"));
    RETURN_IF_ERROR(f.String("cluster", &move.cluster));
    RETURN_IF_ERROR(f.String("order", &move.order));
    return f.String("storage", &move.storage);
  }();
  if (!shape.ok()) {
    server_.ReplyError(call, FromStatus(shape));
    return;
  }
  // A move may copy supplied credentials from one cluster to the other (Intents::Move): off the
  // workers, as a PUT with credentials.
  OffWorkers(call, [this, call, move, wait] {
    auto rec = deps_.intents->Move(call->params[0], move);
    if (!rec.ok()) {
      server_.ReplyError(call, FromStatus(rec.error()));
      return;
    }
    server_.AnswerOrWait(call, *rec, 202, 200, wait, false);
  });
}

void RecordHandlers::HandleStackDefaults(const CallPtr& call) {
  const engine::Stack& stack =
      deps_.config != nullptr ? deps_.config->default_stack : engine::EngineConfig{}.default_stack;
  server_.Reply(call, 200,
                Json{{"defaults", engine::DefaultStackProperties(stack)},
                     {"properties", engine::StackPropertySchema(options_.stack_placement)}});
}

void RecordHandlers::HandleGet(const CallPtr& call) { GetOf(call, store::RecordKind::kProject); }

void RecordHandlers::GetOf(const CallPtr& call, store::RecordKind kind) {
  auto rec = deps_.intents->Find(call->params[0], kind);
  if (!rec.ok()) {
    server_.ReplyError(call, FromStatus(rec.error()));
    return;
  }
  server_.Reply(call, 200, ProjectJson(*rec));
}

void RecordHandlers::HandleList(const CallPtr& call) { ListOf(call, store::RecordKind::kProject); }

void RecordHandlers::ListOf(const CallPtr& call, store::RecordKind kind) {
  const net::HttpRequest& req = call->request;
  store::ListFilter filter;
  filter.kind = kind;
  if (req.HasQuery("team")) filter.team = std::string(req.Query("team"));
  if (req.HasQuery("cluster")) filter.cluster = std::string(req.Query("cluster"));
  bool pending = false;
  if (req.HasQuery("phase")) {
    std::string_view p = req.Query("phase");
    if (!engine::ParsePhase(p)) {
      server_.ReplyError(call,
                         BadArgument("phase", "phase: unknown phase \"" + std::string(p) +
                                                  "\" (Pending, Provisioning, Running, Updating, "
                                                  "Degraded, Suspending, Suspended, Deleting, "
                                                  "Failed, Unknown)"));
      return;
    }
    filter.phase = std::string(p);
    pending = p == "Pending";
  }
  if (req.HasQuery("desiredState")) {
    std::string_view d = req.Query("desiredState");
    auto parsed = store::ParseDesiredState(d);
    if (!parsed) {
      server_.ReplyError(call, BadArgument("desiredState",
                                           "desiredState: must be running, suspended or "
                                           "deleted (got \"" +
                                               std::string(d) + "\")"));
      return;
    }
    filter.desired = *parsed;
  }
  ErrorAnswer error;
  auto limit = IntParam(req, "limit", 1, 1000, 500, &error);
  if (!limit) {
    server_.ReplyError(call, error);
    return;
  }
  if (req.HasQuery("continue") && !req.Query("continue").empty()) {
    auto after = DecodeContinue(req.Query("continue"));
    if (!after) {
      server_.ReplyError(call, BadArgument("continue", "continue: not a token this server issued"));
      return;
    }
    filter.after_id = *after;
  }
  // One more than a page tells whether another page follows.
  filter.limit = static_cast<int>(*limit) + 1;
  std::vector<ProjectView::ItemPtr> items;
  if (auto viewed = server_.ViewList(filter)) {
    items = std::move(*viewed);
  } else {
    auto read = deps_.store->ListProjects(filter);
    if (!read.ok()) {
      server_.ReplyError(call, FromStatus(read.error()));
      return;
    }
    if (pending) {
      // A project the engine has not written a status for yet is Pending too (phase column "").
      filter.phase = "";
      auto unwritten = deps_.store->ListProjects(filter);
      if (!unwritten.ok()) {
        server_.ReplyError(call, FromStatus(unwritten.error()));
        return;
      }
      read->insert(read->end(), unwritten->begin(), unwritten->end());
      std::sort(read->begin(), read->end(),
                [](const auto& a, const auto& b) { return a.id < b.id; });
    }
    for (const auto& r : *read) items.push_back(Server::Rendered(r));
  }
  std::string next;
  if (items.size() > static_cast<size_t>(*limit)) {
    items.resize(static_cast<size_t>(*limit));
    next = EncodeContinue(items.back()->id);
  }
  // {"continue": ..., "items": [...]} as DumpJson writes it (keys in order), each item's text
  // as rendered once.
  size_t bytes = 32 + next.size();
  for (const auto& item : items) bytes += item->json->size() + 1;
  std::string body;
  body.reserve(bytes);
  body += "{\"continue\":";
  body += DumpJson(Json(next));
  body += ",\"items\":[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) body += ',';
    body += *items[i]->json;
  }
  body += "]}\n";
  server_.ReplyText(call, 200, std::move(body), "application/json");
}

void RecordHandlers::HandleHistory(const CallPtr& call) {
  HistoryOf(call, store::RecordKind::kProject);
}

void RecordHandlers::HistoryOf(const CallPtr& call, store::RecordKind kind) {
  ErrorAnswer error;
  auto limit = IntParam(call->request, "limit", 1, 1000, 100, &error);
  if (!limit) {
    server_.ReplyError(call, error);
    return;
  }
  auto after = IntParam(call->request, "after", 0, INT64_MAX, 0, &error);
  if (!after) {
    server_.ReplyError(call, error);
    return;
  }
  std::string id;
  auto rec = deps_.intents->Find(call->params[0], kind);
  if (rec.ok()) {
    id = rec->id;
  } else if (rec.error().code() != StatusCode::kNotFound) {
    server_.ReplyError(call, FromStatus(rec.error()));
    return;
  } else {
    // A purged project's history stays reachable by its id.
    auto any = deps_.store->ListHistory(call->params[0], 0, 1);
    if (!any.ok()) {
      server_.ReplyError(call, FromStatus(any.error()));
      return;
    }
    if (any->empty()) {
      server_.ReplyError(call, FromStatus(rec.error()));
      return;
    }
    id = call->params[0];
  }
  auto entries = deps_.store->ListHistory(id, *after, static_cast<int>(*limit));
  if (!entries.ok()) {
    server_.ReplyError(call, FromStatus(entries.error()));
    return;
  }
  Json items = Json::array();
  for (const auto& h : *entries) items.push_back(HistoryJson(h));
  server_.Reply(call, 200, Json{{"items", std::move(items)}});
}

void RecordHandlers::HandleCredentialCheck(const CallPtr& call) {
  auto body = server_.ReadJsonBody(call, true);
  if (!body) return;
  auto token = TokenOf(*body);
  if (!token.ok()) {
    server_.ReplyError(call, FromStatus(token.error()));
    return;
  }
  auto check = deps_.intents->CheckCredential(*token);
  if (!check.ok()) {
    server_.ReplyError(call, FromStatus(check.error()));
    return;
  }
  if (check->valid) {
    server_.Reply(call, 200,
                  Json{{"valid", true},
                       {"projectId", check->project_id},
                       {"project", check->project_name},
                       {"state", check->state}});
  } else {
    server_.Reply(
        call, 200,
        Json{{"valid", false}, {"state", check->state.empty() ? "unknown" : check->state}});
  }
}

}  // namespace steward::api
