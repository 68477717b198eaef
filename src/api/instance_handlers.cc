// Instance routes through instance::InstanceCalls: launcher info, logs, flow commands (the
// restart one pod at a time), logout, files and MCP. Resources and their live stream:
// resources_handlers.cc.
#include "api/instance_handlers.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <random>
#include <set>

#include "common/fields.h"
#include "engine/manifests/manifests.h"

namespace steward::api {
ErrorAnswer FromInstanceStatus(const Status& s) {
  switch (s.code()) {
    case StatusCode::kFailedPrecondition:
      return MakeError(409, "ProjectNotRunning", s.message());
    case StatusCode::kAborted:
    case StatusCode::kOutOfRange:
      return MakeError(502, "InstanceError", s.message());
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
      return MakeError(503, "Unavailable", s.message());
    default:
      return FromStatus(s);
  }
}

// As FromInstanceStatus; "no ready pod" also says what phase the project is in.
ErrorAnswer FromInstance(const store::ProjectRecord& r, const Status& s) {
  if (s.code() == StatusCode::kFailedPrecondition) {
    return MakeError(409, "ProjectNotRunning",
                     std::string(store::ToString(r.kind)) + " " + r.name + " is " + PhaseOf(r) +
                         " and no pod can answer: " + s.message());
  }
  return FromInstanceStatus(s);
}

std::string ServiceOf(const store::ProjectRecord& r) {
  return engine::NamesFor(r.id, r.name).service;
}

namespace {

// The multipart/form-data body the launcher's upload route reads (multer, field "file").
std::string MultipartUpload(const std::string& path, const std::string& content,
                            std::string* content_type) {
  std::string filename = path.substr(path.rfind('/') + 1);
  std::replace(filename.begin(), filename.end(), '"', '_');
  std::mt19937_64 rng(std::random_device{}());
  std::string boundary;
  do {
    char buf[40];
    snprintf(buf, sizeof buf, "steward-%016llx", static_cast<unsigned long long>(rng()));
    boundary = buf;
  } while (content.find(boundary) != std::string::npos);
  *content_type = "multipart/form-data; boundary=" + boundary;
  std::string body;
  body.reserve(content.size() + 256);
  body += "--" + boundary + "\r\n";
  body += "Content-Disposition: form-data; name=\"file\"; filename=\"" + filename + "\"\r\n";
  body += "Content-Type: application/octet-stream\r\n\r\n";
  body += content;
  body += "\r\n--" + boundary + "--\r\n";
  return body;
}

// A file path from a body field: a non-empty string without traversal.
Status CheckBodyPath(const Json& body, std::string_view field, std::string* out) {
  ASSIGN_OR_RETURN(FieldReader f, FieldReader::Of(body, ""));
  RETURN_IF_ERROR(f.OnlyKnown({field}));
  RETURN_IF_ERROR(f.Required(field));
  RETURN_IF_ERROR(f.NonEmptyString(field, out));
  if (std::string problem = instance::FilePathProblem(*out); !problem.empty()) {
    return InvalidField(field, problem);
  }
  return Status::Ok();
}

// The error for a launcher's non-2xx answer to a files request.
ErrorAnswer FileError(const instance::FileAnswer& a, const std::string& what,
                      const std::string& path) {
  const std::string where = " (pod " + a.pod + ")";
  switch (a.status) {
    case 404:
      return MakeError(
          404, "NotFound",
          what + ": " + (path.empty() ? "/" : path) + ": no such file or directory" + where);
    case 400:
      return BadArgument("path", "path: " + path + " is not a directory" + where);
    case 403:
      return BadArgument("path", "path: " + path + " is outside the storage directory" + where);
    default:
      return MakeError(502, "InstanceError",
                       what + ": pod " + a.pod + " answered HTTP " + std::to_string(a.status) +
                           (a.body.empty() ? "" : ": " + a.body.substr(0, 200)));
  }
}

using net::Is2xx;

// What the launcher puts in an HTTP head (a header it sends to the MCP server): a field name
// is a token (RFC 9110 §5.1), a value has no CR, LF or NUL (§5.5) — which would let a caller end
// the header and write others, or a request of its own.
Status CheckHeaderField(const std::string& path, const std::string& name,
                        const std::string& value) {
  static constexpr std::string_view kTchar = "!#$%&'*+-.^_`|~";
  if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || kTchar.find(c) != kTchar.npos;
      })) {
    return InvalidField(path, "must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~)");
  }
  if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
    return InvalidField(path, "must not contain CR, LF or NUL (it goes into an HTTP header)");
  }
  return Status::Ok();
}

// An MCP endpoint as the launcher takes it: a URL or path, or {mcpEndpoint, headers?,
// accessToken?: {scheme?, token?, scope?}} (other keys are the caller's, carried as they are).
Status CheckMcpEndpoint(const Json& v, const std::string& path) {
  if (v.is_string()) {
    if (v.get<std::string>().empty()) return InvalidField(path, "must not be empty");
    return Status::Ok();
  }
  if (!v.is_object()) {
    return InvalidField(path, "must be a string or an object with \"mcpEndpoint\", got " +
                                  std::string(JsonTypeName(v)));
  }
  ASSIGN_OR_RETURN(FieldReader f, FieldReader::Of(v, path));
  std::string endpoint;
  RETURN_IF_ERROR(f.Required("mcpEndpoint"));
  RETURN_IF_ERROR(f.NonEmptyString("mcpEndpoint", &endpoint));
  std::map<std::string, std::string> headers;
  RETURN_IF_ERROR(f.StringMap("headers", &headers));
  for (const auto& [name, value] : headers) {
    RETURN_IF_ERROR(CheckHeaderField(f.PathOf("headers") + "[\"" + name + "\"]", name, value));
  }
  const Json* token = nullptr;
  RETURN_IF_ERROR(f.Object("accessToken", &token));
  if (token != nullptr) {
    ASSIGN_OR_RETURN(FieldReader t, FieldReader::Of(*token, f.PathOf("accessToken")));
    RETURN_IF_ERROR(t.OnlyKnown({"scheme", "token", "scope"}));
    for (const char* key : {"scheme", "token"}) {  // "Authorization: <scheme> <token>"
      std::string value;
      RETURN_IF_ERROR(t.String(key, &value));
      RETURN_IF_ERROR(CheckHeaderField(t.PathOf(key), "Authorization", value));
    }
    if (const Json* scope = t.Find("scope"); scope != nullptr && !scope->is_string()) {
      bool strings = scope->is_array() && std::all_of(scope->begin(), scope->end(),
                                                      [](const Json& e) { return e.is_string(); });
      if (!strings) {
        return InvalidField(t.PathOf("scope"), "must be a string or an array of strings");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

std::optional<store::ProjectRecord> InstanceHandlers::RunningProject(const CallPtr& call,
                                                                     store::RecordKind kind) {
  auto rec = deps_.intents->Find(call->params[0], kind);
  if (!rec.ok()) {
    server_.ReplyError(call, FromStatus(rec.error()));
    return std::nullopt;
  }
  // Any phase with a ready pod can answer (a Provisioning project's pod may be up: the platform
  // asks for a starting instance's logs); InstanceOps says when none is. A project that is
  // suspended or being deleted has (or soon has) no pod: the cluster is not asked.
  const std::string phase = PhaseOf(*rec);
  const bool never_started = phase == "Pending" && rec->desired == store::DesiredState::kSuspended;
  if (phase == "Suspended" || phase == "Deleting" ||
      rec->desired == store::DesiredState::kDeleted || never_started) {
    server_.ReplyError(
        call,
        MakeError(409, "ProjectNotRunning",
                  std::string(store::ToString(kind)) + " " + rec->name + " is " + phase +
                      (rec->desired == store::DesiredState::kDeleted ? " (being deleted)" : "") +
                      "; it has no pod to answer instance operations"));
    return std::nullopt;
  }
  if (deps_.InstanceFor(*rec) == nullptr) {
    server_.ReplyError(call,
                       MakeError(503, "Unavailable", "instance operations are not configured"));
    return std::nullopt;
  }
  return std::move(*rec);
}

void InstanceHandlers::HandleInstanceInfo(const CallPtr& call) {
  auto rec = RunningProject(call);
  if (!rec) return;
  auto info = deps_.InstanceFor(*rec)->Info(ServiceOf(*rec));
  if (!info.ok()) {
    server_.ReplyError(call, FromInstance(*rec, info.error()));
    return;
  }
  server_.Reply(call, 200, Json{{"project", ProjectJson(*rec)}, {"instance", std::move(*info)}});
}

void InstanceHandlers::HandleInstanceLogs(const CallPtr& call) {
  auto rec = RunningProject(call);
  if (!rec) return;
  auto logs = deps_.InstanceFor(*rec)->Logs(ServiceOf(*rec));
  if (!logs.ok()) {
    server_.ReplyError(call, FromInstance(*rec, logs.error()));
    return;
  }
  Json items = logs->is_array() ? std::move(*logs) : Json::array();
  if (logs->is_object() && logs->contains("items")) items = (*logs)["items"];
  server_.Reply(call, 200, Json{{"items", std::move(items)}});
}

void InstanceHandlers::HandleFlowsCommand(const CallPtr& call, const std::string& cmd) {
  auto body = server_.ReadJsonBody(call, false);
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
    server_.ReplyError(call, FromStatus(bad));
    return;
  }
  auto rec = RunningProject(call);
  if (!rec) return;
  auto answers = deps_.InstanceFor(*rec)->Command(ServiceOf(*rec), command);
  if (!answers.ok()) {
    server_.ReplyError(call, FromInstance(*rec, answers.error()));
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
      // The launcher says why in "err" ({"err":"Already running"}); other servers in "error".
      std::string why = a.body.is_object() ? GetString(a.body, "err") : "";
      if (why.empty() && a.body.is_object()) why = GetString(a.body, "error");
      refused += (refused.empty() ? "" : "; ") + a.pod + " answered " + std::to_string(a.status) +
                 (why.empty() ? "" : ": " + why);
    }
    pods.push_back(std::move(p));
  }
  if (!unreachable.empty()) {
    server_.ReplyError(call,
                       MakeError(503, "Unavailable", cmd + ": pod unreachable: " + unreachable));
  } else if (!refused.empty()) {
    server_.ReplyError(call, MakeError(502, "InstanceError", cmd + ": " + refused));
  } else {
    server_.Reply(call, 200, Json{{"pods", std::move(pods)}});
  }
}

// GET /v1/agents/{agent}/status: the agent's own status (its port 3500 API).
void InstanceHandlers::HandleAgentStatus(const CallPtr& call) {
  auto rec = RunningProject(call, store::RecordKind::kAgent);
  if (!rec) return;
  auto status =
      deps_.InstanceFor(*rec)->AgentStatus(rec->name);  // the Service is named as the agent
  if (!status.ok()) {
    server_.ReplyError(call, FromInstance(*rec, status.error()));
    return;
  }
  server_.Reply(call, 200, Json{{"agent", ProjectJson(*rec)}, {"status", std::move(*status)}});
}

// POST /v1/agents/{agent}/commands/{start|stop|restart}: FlowFuse's sendBrokerAgentCommand.
void InstanceHandlers::HandleAgentCommand(const CallPtr& call) {
  auto body = server_.ReadJsonBody(call, false);
  if (!body) return;
  if (Status bad = NoFields(*body); !bad.ok()) {
    server_.ReplyError(call, FromStatus(bad));
    return;
  }
  const std::string& command = call->params[1];
  if (command != "start" && command != "stop" && command != "restart") {
    server_.ReplyError(
        call, BadArgument("command",
                          "command: must be start, stop or restart (got \"" + command + "\")"));
    return;
  }
  auto rec = RunningProject(call, store::RecordKind::kAgent);
  if (!rec) return;
  auto answer = deps_.InstanceFor(*rec)->AgentCommand(rec->name, command);
  if (!answer.ok()) {
    server_.ReplyError(call, FromInstance(*rec, answer.error()));
    return;
  }
  if (answer->status < 200 || answer->status > 299) {
    const std::string why = answer->body.is_object() ? GetString(answer->body, "message") : "";
    server_.ReplyError(
        call, MakeError(502, "InstanceError",
                        command + ": " + answer->pod + " answered " +
                            std::to_string(answer->status) + (why.empty() ? "" : ": " + why)));
    return;
  }
  server_.Reply(call, 200,
                Json{{"pod", answer->pod}, {"status", answer->status}, {"body", answer->body}});
}

void InstanceHandlers::HandleRestartEach(const CallPtr& call) {
  auto body = server_.ReadJsonBody(call, false);
  if (!body) return;
  if (Status bad = NoFields(*body); !bad.ok()) {
    server_.ReplyError(call, FromStatus(bad));
    return;
  }
  auto rec = RunningProject(call);
  if (!rec) return;
  auto steps = deps_.InstanceFor(*rec)->RestartEach(ServiceOf(*rec), options_.restart_per_pod);
  if (!steps.ok()) {
    server_.ReplyError(call, FromInstance(*rec, steps.error()));
    return;
  }
  Json pods = Json::array();
  std::string failure;
  for (const auto& st : *steps) {
    Json p = {{"pod", st.pod},
              {"outcome", st.outcome},
              {"status", st.status},
              {"body", st.body},
              {"elapsedMs", st.elapsed_ms}};
    if (!st.error.empty()) {
      p["error"] = st.error;
      failure = st.error;
    }
    pods.push_back(std::move(p));
  }
  if (failure.empty()) {
    server_.Reply(call, 200, Json{{"mode", "sequential"}, {"pods", std::move(pods)}});
    return;
  }
  // The error answer also carries every pod's step: which were restarted before the failure.
  const bool timeout = failure.find("not running again in time") != std::string::npos;
  Json answer = ErrorJson(MakeError(timeout ? 504 : 502, timeout ? "Timeout" : "InstanceError",
                                    "restart: " + failure + "; later pods were not restarted"));
  answer["mode"] = "sequential";
  answer["pods"] = std::move(pods);
  server_.Reply(call, timeout ? 504 : 502, answer);
}

void InstanceHandlers::HandleFiles(const CallPtr& call) {
  const std::string path = call->params.size() > 1 ? call->params[1] : "";
  const std::string& method = call->request.method;
  // Everything about the request is checked before the project is looked up, so nothing is
  // sent to a pod for a refused one.
  if (std::string problem = instance::FilePathProblem(path); !problem.empty()) {
    server_.ReplyError(call, BadArgument("path", "path: " + problem));
    return;
  }
  if (path.empty() && (method == "PUT" || method == "DELETE")) {
    server_.ReplyError(call, BadArgument("path",
                                         "path: must not be empty (the storage directory itself "
                                         "cannot be renamed or deleted)"));
    return;
  }
  if (method == "GET" || method == "DELETE") {
    if (!call->request.body.empty()) {
      server_.ReplyError(call, BadArgument("", method + " on a file takes no body"));
      return;
    }
  }
  auto rec = RunningProject(call);
  if (!rec) return;
  if (method == "GET") {
    FilesList(call, *rec, path);
  } else if (method == "PUT") {
    FilesRename(call, *rec, path);
  } else if (method == "DELETE") {
    FilesDelete(call, *rec, path);
  } else {
    FilesCreate(call, *rec, path);
  }
}

std::optional<instance::FileAnswer> InstanceHandlers::SendFiles(
    const CallPtr& call, const store::ProjectRecord& rec, const instance::FileRequest& req,
    const std::string& op, const std::string& path, const std::string& not_found) {
  auto answer = deps_.InstanceFor(rec)->Files(ServiceOf(rec), req, options_.max_file_bytes);
  if (!answer.ok()) {
    server_.ReplyError(call, FromInstance(rec, answer.error()));
    return std::nullopt;
  }
  if (Is2xx(answer->status)) return std::move(*answer);
  if (answer->status == 404 && !not_found.empty()) {
    server_.ReplyError(call, MakeError(404, "NotFound", not_found + " (pod " + answer->pod + ")"));
  } else {
    server_.ReplyError(call, FileError(*answer, op, path));
  }
  return std::nullopt;
}

void InstanceHandlers::FilesList(const CallPtr& call, const store::ProjectRecord& rec,
                                 const std::string& path) {
  instance::FileRequest req;
  req.method = "GET";
  req.path = path;
  auto answer = SendFiles(call, rec, req, "list", path, "");
  if (!answer) return;
  auto listing = ParseJson(answer->body);
  if (!listing.ok() || !listing->is_object() || !listing->contains("files") ||
      !(*listing)["files"].is_array()) {
    server_.ReplyError(call, MakeError(502, "InstanceError",
                                       "list: pod " + answer->pod +
                                           " answered a listing that is not {files: [...]}: " +
                                           answer->body.substr(0, 200)));
    return;
  }
  Json out = std::move(*listing);
  out["pod"] = answer->pod;
  out["path"] = path;
  if (!out.contains("count")) out["count"] = out["files"].size();
  server_.Reply(call, 200, out);
}

void InstanceHandlers::FilesRename(const CallPtr& call, const store::ProjectRecord& rec,
                                   const std::string& path) {
  auto body = server_.ReadJsonBody(call, true);
  if (!body) return;
  std::string to;
  if (Status bad = CheckBodyPath(*body, "newPath", &to); !bad.ok()) {
    server_.ReplyError(call, FromStatus(bad));
    return;
  }
  // A directory cannot go inside itself (rename(2): EINVAL); a launcher that tried would lose it.
  if (to.size() > path.size() && to.compare(0, path.size(), path) == 0 && to[path.size()] == '/') {
    server_.ReplyError(call,
                       BadArgument("newPath", "newPath: " + to + " is inside " + path +
                                                  ": a directory cannot be moved into itself"));
    return;
  }
  instance::FileRequest req;
  req.method = "PUT";
  req.path = path;
  req.body = DumpJson(Json{{"path", to}});
  req.content_type = "application/json";
  auto answer =
      SendFiles(call, rec, req, "rename", path,
                "rename: " + path + " does not exist, or the directory of " + to + " does not");
  if (!answer) return;
  server_.Reply(call, 200, Json{{"pod", answer->pod}, {"path", path}, {"newPath", to}});
}

void InstanceHandlers::FilesDelete(const CallPtr& call, const store::ProjectRecord& rec,
                                   const std::string& path) {
  instance::FileRequest req;
  req.method = "DELETE";
  req.path = path;
  auto answer = SendFiles(call, rec, req, "delete", path, "");
  if (!answer) return;
  server_.Reply(call, 200, Json{{"pod", answer->pod}, {"path", path}, {"deleted", true}});
}

void InstanceHandlers::FilesCreate(const CallPtr& call, const store::ProjectRecord& rec,
                                   const std::string& path) {
  std::string_view ct = call->request.headers.Get("Content-Type");
  std::string_view media = ct.substr(0, ct.find(';'));
  while (!media.empty() && media.back() == ' ') media.remove_suffix(1);
  instance::FileRequest req;
  req.method = "POST";
  req.path = path;
  std::string created = path;
  const bool upload = AsciiLower(media) == "application/octet-stream";
  if (upload) {
    if (path.empty()) {
      server_.ReplyError(call, BadArgument("path", "path: an upload needs the file's path"));
      return;
    }
    req.body = MultipartUpload(path, call->request.body, &req.content_type);
  } else if (AsciiLower(media) == "application/json") {
    auto body = server_.ReadJsonBody(call, true);
    if (!body) return;
    std::string dir;
    if (Status bad = CheckBodyPath(*body, "directory", &dir); !bad.ok()) {
      server_.ReplyError(call, FromStatus(bad));
      return;
    }
    req.body = DumpJson(Json{{"path", dir}});
    req.content_type = "application/json";  // the launcher compares it exactly
    created = path.empty() ? dir : path + "/" + dir;
  } else {
    server_.ReplyError(call,
                       MakeError(415, "UnsupportedMediaType",
                                 "POST on a file path takes application/octet-stream (an upload: "
                                 "the file's bytes) or application/json ({\"directory\": ...}: a "
                                 "new directory); got Content-Type \"" +
                                     std::string(ct) + "\""));
    return;
  }
  auto answer = SendFiles(call, rec, req, upload ? "upload" : "mkdir", path,
                          upload ? "upload: the directory of " + path + " does not exist" : "");
  if (!answer) return;
  Json out = {{"pod", answer->pod}, {"path", created}};
  if (upload) {
    out["size"] = call->request.body.size();
  } else {
    out["directory"] = true;
  }
  server_.Reply(call, 201, out);
}

void InstanceHandlers::McpCommand(const CallPtr& call, const std::string& cmd, Json data,
                                  const std::string& key) {
  auto rec = RunningProject(call);
  if (!rec) return;
  auto answer = deps_.InstanceFor(*rec)->CommandOne(ServiceOf(*rec),
                                                    Json{{"cmd", cmd}, {"data", std::move(data)}});
  if (!answer.ok()) {
    server_.ReplyError(call, FromInstance(*rec, answer.error()));
    return;
  }
  if (!Is2xx(answer->status)) {
    std::string why = answer->body.is_object() ? GetString(answer->body, "err") : "";
    if (why.empty() && answer->body.is_object()) why = GetString(answer->body, "error");
    if (answer->status == 404) why = "the launcher does not know " + cmd + " (an older launcher?)";
    server_.ReplyError(
        call, MakeError(502, "InstanceError",
                        cmd + ": pod " + answer->pod + " answered HTTP " +
                            std::to_string(answer->status) + (why.empty() ? "" : ": " + why)));
    return;
  }
  server_.Reply(call, 200, Json{{"pod", answer->pod}, {key, std::move(answer->body)}});
}

void InstanceHandlers::HandleMcpFeatures(const CallPtr& call) {
  auto body = server_.ReadJsonBody(call, true);
  if (!body) return;
  Status bad = [&]() -> Status {
    ASSIGN_OR_RETURN(FieldReader f, FieldReader::Of(*body, ""));
    RETURN_IF_ERROR(f.OnlyKnown({"endpoints"}));
    RETURN_IF_ERROR(f.Required("endpoints"));
    const Json& list = (*body)["endpoints"];
    if (!list.is_array()) {
      return InvalidField("endpoints", "must be an array, got " + std::string(JsonTypeName(list)));
    }
    for (size_t i = 0; i < list.size(); ++i) {
      RETURN_IF_ERROR(CheckMcpEndpoint(list[i], IndexPath("endpoints", i)));
    }
    return Status::Ok();
  }();
  if (!bad.ok()) {
    server_.ReplyError(call, FromStatus(bad));
    return;
  }
  McpCommand(call, "mcp:get-features", Json{{"endpoints", (*body)["endpoints"]}}, "features");
}

void InstanceHandlers::HandleMcpToolCall(const CallPtr& call) {
  auto body = server_.ReadJsonBody(call, true);
  if (!body) return;
  std::string name;
  Status bad = [&]() -> Status {
    ASSIGN_OR_RETURN(FieldReader f, FieldReader::Of(*body, ""));
    RETURN_IF_ERROR(f.OnlyKnown({"endpoint", "name", "input"}));
    RETURN_IF_ERROR(f.Required("endpoint"));
    RETURN_IF_ERROR(CheckMcpEndpoint((*body)["endpoint"], "endpoint"));
    RETURN_IF_ERROR(f.Required("name"));
    RETURN_IF_ERROR(f.NonEmptyString("name", &name));
    std::optional<Json> input;
    return f.Object("input", &input);
  }();
  if (!bad.ok()) {
    server_.ReplyError(call, FromStatus(bad));
    return;
  }
  Json data = {{"endpoint", (*body)["endpoint"]}, {"name", name}};
  data["input"] =
      body->contains("input") && !(*body)["input"].is_null() ? (*body)["input"] : Json::object();
  McpCommand(call, "mcp:call-tool", std::move(data), "result");
}

void InstanceHandlers::HandleMcpResourceRead(const CallPtr& call) {
  auto body = server_.ReadJsonBody(call, true);
  if (!body) return;
  std::string uri;
  Status bad = [&]() -> Status {
    ASSIGN_OR_RETURN(FieldReader f, FieldReader::Of(*body, ""));
    RETURN_IF_ERROR(f.OnlyKnown({"endpoint", "uri"}));
    RETURN_IF_ERROR(f.Required("endpoint"));
    RETURN_IF_ERROR(CheckMcpEndpoint((*body)["endpoint"], "endpoint"));
    RETURN_IF_ERROR(f.Required("uri"));
    return f.NonEmptyString("uri", &uri);
  }();
  if (!bad.ok()) {
    server_.ReplyError(call, FromStatus(bad));
    return;
  }
  McpCommand(call, "mcp:read-resource", Json{{"endpoint", (*body)["endpoint"]}, {"uri", uri}},
             "result");
}

void InstanceHandlers::HandleFlowsStart(const CallPtr& call) { HandleFlowsCommand(call, "start"); }
void InstanceHandlers::HandleFlowsStop(const CallPtr& call) { HandleFlowsCommand(call, "stop"); }
void InstanceHandlers::HandleFlowsRestart(const CallPtr& call) {
  std::string_view mode = call->request.Query("mode");
  if (mode == "parallel") {
    HandleFlowsCommand(call, "restart");
  } else if (mode.empty() || mode == "sequential") {
    HandleRestartEach(call);
  } else {
    server_.ReplyError(call, BadArgument("mode", "mode: must be sequential or parallel (got \"" +
                                                     std::string(mode) + "\")"));
  }
}
void InstanceHandlers::HandleLogout(const CallPtr& call) { HandleFlowsCommand(call, "logout"); }

}  // namespace steward::api
