// Instance routes: launcher info, logs, flow commands and logout through instance::InstanceOps.
#include "api/api_internal.h"
#include "engine/manifests/manifests.h"

namespace steward::api {
namespace {

ErrorAnswer FromInstanceStatus(const Status& s) {
  switch (s.code()) {
    case StatusCode::kFailedPrecondition:
      return MakeError(409, "ProjectNotRunning", s.message());
    case StatusCode::kAborted:
      return MakeError(502, "InstanceError", s.message());
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
      return MakeError(503, "Unavailable", s.message());
    default:
      return FromStatus(s);
  }
}

std::string ServiceOf(const store::ProjectRecord& r) {
  return engine::NamesFor(r.id, r.name).service;
}

}  // namespace

std::optional<store::ProjectRecord> Server::RunningProject(const CallPtr& call) {
  auto rec = deps_.intents->Find(call->params[0]);
  if (!rec.ok()) {
    ReplyError(call, FromStatus(rec.error()));
    return std::nullopt;
  }
  const std::string phase = PhaseOf(*rec);
  if (phase != "Running" && phase != "Updating" && phase != "Degraded") {
    ReplyError(call, MakeError(409, "ProjectNotRunning",
                               "project " + rec->name + " is " + phase +
                                   "; instance operations need Running, Updating or Degraded"));
    return std::nullopt;
  }
  if (deps_.instance == nullptr) {
    ReplyError(call, MakeError(503, "Unavailable", "instance operations are not configured"));
    return std::nullopt;
  }
  return std::move(*rec);
}

void Server::HandleInstanceInfo(const CallPtr& call) {
  auto rec = RunningProject(call);
  if (!rec) return;
  auto info = deps_.instance->Info(ServiceOf(*rec));
  if (!info.ok()) {
    ReplyError(call, FromInstanceStatus(info.error()));
    return;
  }
  Reply(call, 200, Json{{"project", ProjectJson(*rec)}, {"instance", std::move(*info)}});
}

void Server::HandleInstanceLogs(const CallPtr& call) {
  auto rec = RunningProject(call);
  if (!rec) return;
  auto logs = deps_.instance->Logs(ServiceOf(*rec));
  if (!logs.ok()) {
    ReplyError(call, FromInstanceStatus(logs.error()));
    return;
  }
  Json items = logs->is_array() ? std::move(*logs) : Json::array();
  if (logs->is_object() && logs->contains("items")) items = (*logs)["items"];
  Reply(call, 200, Json{{"items", std::move(items)}});
}

void Server::HandleFlowsCommand(const CallPtr& call, const std::string& cmd) {
  auto body = ReadJsonBody(call, false);
  if (!body) return;
  Json command = {{"cmd", cmd}};
  Status bad = Status::Ok();
  if (cmd == "logout") {
    auto token = TokenOf(*body);
    if (token.ok()) command["token"] = *token;
    bad = token.status();
  } else {
    bad = NoFields(*body);
  }
  if (!bad.ok()) {
    ReplyError(call, FromStatus(bad));
    return;
  }
  auto rec = RunningProject(call);
  if (!rec) return;
  auto answers = deps_.instance->Command(ServiceOf(*rec), command);
  if (!answers.ok()) {
    ReplyError(call, FromInstanceStatus(answers.error()));
    return;
  }
  Json pods = Json::array();
  std::string unreachable, refused;
  for (const auto& a : *answers) {
    Json p = {{"pod", a.pod}, {"status", a.status}, {"body", a.body}};
    if (!a.error.empty()) {
      p["error"] = a.error;
      unreachable += (unreachable.empty() ? "" : "; ") + a.pod + ": " + a.error;
    } else if (a.status < 200 || a.status > 299) {
      std::string why = a.body.is_object() ? GetString(a.body, "error") : "";
      refused += (refused.empty() ? "" : "; ") + a.pod + " answered " + std::to_string(a.status) +
                 (why.empty() ? "" : ": " + why);
    }
    pods.push_back(std::move(p));
  }
  if (!unreachable.empty()) {
    ReplyError(call, MakeError(503, "Unavailable", cmd + ": pod unreachable: " + unreachable));
  } else if (!refused.empty()) {
    ReplyError(call, MakeError(502, "InstanceError", cmd + ": " + refused));
  } else {
    Reply(call, 200, Json{{"pods", std::move(pods)}});
  }
}

void Server::HandleFlowsStart(const CallPtr& call) { HandleFlowsCommand(call, "start"); }
void Server::HandleFlowsStop(const CallPtr& call) { HandleFlowsCommand(call, "stop"); }
void Server::HandleFlowsRestart(const CallPtr& call) { HandleFlowsCommand(call, "restart"); }
void Server::HandleLogout(const CallPtr& call) { HandleFlowsCommand(call, "logout"); }

}  // namespace steward::api
