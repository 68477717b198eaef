// RestHandler's verbs: get, list, watch, create, update, patch, delete and deletecollection of
// a resource, with the shared prelude (faults, Accept, dryRun, list options) and the decoding and
// field validation of bodies and patches. Routing, answers and authorization are in
// rest_handler.cc.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cluster/apiserver/field_validation.h"
#include "cluster/apiserver/protobuf_decode.h"
#include "cluster/apiserver/rest_handler.h"
#include "cluster/apiserver/rest_request.h"
#include "cluster/apiserver/selectors.h"
#include "cluster/apiserver/tables.h"
#include "common/ascii.h"
#include "common/yaml.h"

namespace steward::cluster {

using rest::IsTrue;
using rest::ParseInt;
using rest::QueryRevision;
using rest::RevisionToAwait;
using rest::WriteOptionsOf;

namespace {

// Request bodies and patches are decoded as Go decodes them: the last of duplicate keys wins
// (field validation sees the raw text and reports duplicates).
const ParseOptions kLastWins{.duplicate_keys = DuplicateKeys::kLastWins};

// The media type of a request body: the Content-Type without parameters, lower case.
std::string BodyMediaType(const net::HttpRequest& http) {
  std::string content_type = AsciiLower(http.headers.Get("Content-Type"));
  return std::string(TrimHttpWhitespace(content_type.substr(0, content_type.find(';'))));
}

// Reads the fields of a DeleteOptions body into `del`; an error for a body that is not an
// object or has an invalid dryRun.
std::optional<StatusError> ReadDeleteOptionsBody(const Json& body, DeleteOptions& del) {
  if (!body.is_object()) {
    return BadRequestError("the body of a delete must be a DeleteOptions object");
  }
  const Json& pre = body.contains("preconditions") ? body["preconditions"] : Json();
  if (pre.is_object()) {
    if (pre.contains("uid") && pre["uid"].is_string()) {
      del.precondition_uid = pre["uid"].get<std::string>();
    }
    if (pre.contains("resourceVersion") && pre["resourceVersion"].is_string()) {
      del.precondition_resource_version = pre["resourceVersion"].get<std::string>();
    }
  }
  del.propagation_policy = GetString(body, "propagationPolicy");
  if (body.contains("orphanDependents") && body["orphanDependents"].is_boolean() &&
      del.propagation_policy.empty()) {
    del.propagation_policy = body["orphanDependents"].get<bool>() ? "Orphan" : "Background";
  }
  if (body.contains("gracePeriodSeconds") && body["gracePeriodSeconds"].is_number_integer()) {
    del.grace_period_seconds = body["gracePeriodSeconds"].get<int64_t>();
  }
  if (body.contains("dryRun")) {
    const Json& d = body["dryRun"];
    if (!d.is_array() || (d.size() == 1 && d[0] != "All") || d.size() > 1) {
      return BadRequestError("Invalid dry run value: " + DumpJson(d));
    }
    if (!d.empty()) del.dry_run = true;
  }
  return std::nullopt;
}

// A <Kind>List of stored objects, their JSON sent as it is: no parse, no re-serialisation.
std::string StoredListJson(const ResourceType& type, const std::vector<ObjectRecord>& items,
                           const Json& meta) {
  std::string body;
  size_t total = 0;
  for (const auto& rec : items) total += rec.json->size() + 1;
  body.reserve(total + 256);
  body += "{\"apiVersion\":\"";
  body += type.ApiVersion();
  body += "\",\"items\":[";
  bool first = true;
  for (const auto& rec : items) {
    if (!first) body += ',';
    first = false;
    body += *rec.json;
  }
  body += "],\"kind\":\"";
  body += type.ListKind();
  body += "\",\"metadata\":";
  body += DumpJson(meta);
  body += "}";
  return body;
}

}  // namespace

void RestHandler::ServeVerb(Request& r, const FaultInjector::Decision& decision) {
  if (InjectFault(r, decision)) return;
  const auto& h = r.http;
  r.output = NegotiateResource(h.headers.Get("Accept"));
  if (r.output == Output::kNone) {
    RespondError(r, NotAcceptableError("only the following media types are accepted: "
                                       "application/json, application/yaml, "
                                       "application/json;as=Table;v=v1;g=meta.k8s.io"));
    return;
  }
  std::string dry = std::string(h.Query("dryRun"));
  if (!dry.empty() && dry != "All") {
    RespondError(r, BadRequestError("Invalid dry run value: \"" + dry + "\""));
    return;
  }
  const std::string& verb = r.verb;
  if (verb == "watch") {
    ServeWatch(r);
    return;
  }
  if (r.type->create_only) {
    ServeReview(r);
    return;
  }
  if (r.subresource == "token") {
    ServeTokenRequest(r);
    return;
  }
  if (!ParseListOptions(r)) return;
  if (verb == "get") {
    ServeGet(r);
  } else if (verb == "list") {
    ServeList(r);
  } else if (verb == "create") {
    ServeCreate(r);
  } else if (verb == "update") {
    ServeUpdate(r);
  } else if (verb == "patch") {
    ServePatch(r);
  } else if (verb == "delete") {
    ServeDelete(r);
  } else {
    ServeDeleteCollection(r);
  }
}

bool RestHandler::InjectFault(Request& r, const FaultInjector::Decision& decision) {
  switch (decision.action) {
    case FaultInjector::Action::kReset:
      r.responded = true;
      r.writer->Abort();
      Finish(r, 0);
      return true;
    case FaultInjector::Action::kTooManyRequests:
      RespondError(r, TooManyRequestsError(decision.retry_after_seconds));
      return true;
    case FaultInjector::Action::kInternalError:
      RespondError(r, InternalError("injected fault"));
      return true;
    case FaultInjector::Action::kUnavailable:
      RespondError(r, ServiceUnavailableError("the server is currently unable to handle the "
                                              "request (injected fault)"));
      return true;
    case FaultInjector::Action::kNone:
      break;
  }
  return false;
}

bool RestHandler::ParseListOptions(Request& r) {
  const auto& h = r.http;
  ListOptions& list_opts = r.list_opts;
  list_opts.label_selector = std::string(h.Query("labelSelector"));
  list_opts.field_selector = std::string(h.Query("fieldSelector"));
  list_opts.continue_token = std::string(h.Query("continue"));
  list_opts.resource_version = std::string(h.Query("resourceVersion"));
  list_opts.resource_version_match = std::string(h.Query("resourceVersionMatch"));
  if (h.HasQuery("limit")) {
    auto limit = ParseInt(h.Query("limit"));
    if (!limit || *limit < 0) {
      RespondError(r, BadRequestError("invalid limit: " + std::string(h.Query("limit"))));
      return false;
    }
    list_opts.limit = *limit;
  }
  return true;
}

void RestHandler::ServeGet(Request& r) {
  const auto& h = r.http;
  const ResourceType& type = *r.type;
  const Subresource sub = r.sub;
  if (auto rv = QueryRevision(h.Query("resourceVersion"))) {
    uint64_t current = api_.storage().CurrentRevision();
    if (*rv > current) {
      RespondError(r, TooLargeResourceVersionError(*rv, current));
      return;
    }
  }
  if (r.output == Output::kJson && sub == Subresource::kNone) {
    // The stored JSON is sent as it is: no parse, no re-serialisation.
    auto rec = api_.GetRecord(type, r.ns, r.name);
    if (!rec.ok()) {
      RespondError(r, rec.error());
    } else {
      Respond(r, 200, *rec->json);
    }
    return;
  }
  auto obj = api_.Get(type, r.ns, r.name, sub);
  if (!obj.ok()) {
    RespondError(r, obj.error());
    return;
  }
  if (r.output == Output::kTable && sub == Subresource::kNone) {
    const Json* rv = FindPath(*obj, "metadata.resourceVersion");
    Json meta = {{"resourceVersion", rv != nullptr && rv->is_string() ? *rv : Json("")}};
    RespondJson(r, 200,
                ToTable(type, {*obj}, meta, api_.clock().WallNow(),
                        IncludeObjectParam(h.Query("includeObject"))));
  } else if (r.output == Output::kPartialMetadata) {
    RespondJson(r, 200, PartialMetadata(*obj));
  } else {
    RespondJson(r, 200, *obj);
  }
}

void RestHandler::ServeList(Request& r) {
  const auto& h = r.http;
  const ResourceType& type = *r.type;
  if (h.HasQuery("sendInitialEvents")) {
    RespondError(r, InvalidError(type, "",
                                 {{"FieldValueForbidden",
                                   "Forbidden: sendInitialEvents is forbidden for list",
                                   "sendInitialEvents"}}));
    return;
  }
  auto records = api_.ListRecords(type, r.ns, r.list_opts);
  if (!records.ok()) {
    RespondError(r, records.error());
    return;
  }
  Json meta = {{"resourceVersion", std::to_string(records->revision)}};
  if (!records->continue_token.empty()) {
    meta["continue"] = records->continue_token;
    if (records->remaining_counted) meta["remainingItemCount"] = records->remaining;
  }
  if (r.output == Output::kTable) {
    std::vector<Json> objects;
    objects.reserve(records->items.size());
    for (const auto& rec : records->items) objects.push_back(rec.Parse());
    RespondJson(r, 200,
                ToTable(type, objects, meta, api_.clock().WallNow(),
                        IncludeObjectParam(h.Query("includeObject"))));
    return;
  }
  if (r.output == Output::kPartialMetadata) {
    Json items = Json::array();
    for (const auto& rec : records->items) items.push_back(PartialMetadata(rec.Parse()));
    RespondJson(r, 200,
                Json{{"kind", "PartialObjectMetadataList"},
                     {"apiVersion", "meta.k8s.io/v1"},
                     {"metadata", meta},
                     {"items", items}});
    return;
  }
  Respond(r, 200, StoredListJson(type, records->items, meta));
}

void RestHandler::ServeCreate(Request& r) {
  if (!r.name.empty() || r.sub != Subresource::kNone) {
    RespondError(r, MethodNotAllowedError("the server does not allow this method on the "
                                          "requested resource"));
    return;
  }
  Json body;
  if (!DecodeBody(r, &body) || !ValidateBody(r, &body, "CreateOptions")) return;
  // The audit record names the object created, as a real API server's objectRef does.
  if (const Json* name = FindPath(body, "metadata.name"); name != nullptr && name->is_string()) {
    r.record.name = name->get<std::string>();
  }
  SendResult(r, api_.Create(*r.type, r.ns, std::move(body), WriteOptionsFor(r)), 201);
}

void RestHandler::ServeUpdate(Request& r) {
  Json body;
  if (!DecodeBody(r, &body) || !ValidateBody(r, &body, "UpdateOptions")) return;
  SendResult(r, api_.Update(*r.type, r.ns, r.name, std::move(body), r.sub, WriteOptionsFor(r)),
             200);
}

void RestHandler::ServePatch(Request& r) {
  const auto& h = r.http;
  const ResourceType& type = *r.type;
  WriteOptions write_opts = WriteOptionsFor(r);
  auto patch_type = PatchTypeFromContentType(AsciiLower(h.headers.Get("Content-Type")));
  if (!patch_type.ok()) {
    RespondError(r, UnsupportedMediaTypeError(
                        "the body of the request was in an unknown format - accepted media "
                        "types include: application/json-patch+json, "
                        "application/merge-patch+json, "
                        "application/strategic-merge-patch+json"));
    return;
  }
  if (*patch_type == PatchType::kApply && write_opts.field_manager.empty()) {
    RespondError(r,
                 InvalidError(type, r.name,
                              {{"FieldValueRequired", "Required value: is required for apply patch",
                                "fieldManager"}}));
    return;
  }
  std::string patch_body = h.body;
  if (!ValidatePatch(r, *patch_type, &patch_body)) return;
  SendResult(r, api_.Patch(type, r.ns, r.name, *patch_type, patch_body, r.sub, write_opts), 200);
}

void RestHandler::ServeDelete(Request& r) {
  DeleteOptions del;
  if (!ParseDeleteOptions(r, &del)) return;
  SendResult(r, api_.Delete(*r.type, r.ns, r.name, del), 200);
}

void RestHandler::ServeDeleteCollection(Request& r) {
  DeleteOptions del;
  if (!ParseDeleteOptions(r, &del)) return;
  SendResult(r, api_.DeleteCollection(*r.type, r.ns, r.list_opts, del), 200);
}

bool RestHandler::DecodeBody(Request& r, Json* out) {
  const auto& h = r.http;
  const std::string media = BodyMediaType(h);
  if (media.empty() || media == "application/json" || media == "*/*") {
    auto parsed = ParseJson(h.body, kLastWins);
    if (!parsed.ok()) {
      RespondError(
          r, BadRequestError("the request body is not valid JSON: " + parsed.status().message()));
      return false;
    }
    *out = std::move(parsed).value();
    return true;
  }
  if (media == "application/yaml" || media == "application/x-yaml") {
    auto parsed = ParseYaml(h.body, kLastWins);
    if (!parsed.ok()) {
      RespondError(
          r, BadRequestError("the request body is not valid YAML: " + parsed.status().message()));
      return false;
    }
    *out = std::move(parsed).value();
    return true;
  }
  if (media == kProtobufMediaType) {
    auto decoded = DecodeKubernetesProtobuf(h.body);
    if (!decoded.ok()) {
      RespondError(r, BadRequestError("the request body is not valid protobuf: " +
                                      decoded.status().message()));
      return false;
    }
    *out = std::move(decoded).value();
    return true;
  }
  RespondError(r, UnsupportedMediaTypeError(
                      "the body of the request was in an unknown format - accepted media "
                      "types include: application/json, application/yaml, "
                      "application/vnd.kubernetes.protobuf"));
  return false;
}

bool RestHandler::ValidateBody(Request& r, Json* body, std::string_view options_kind) {
  const auto& h = r.http;
  const ResourceType& type = *r.type;
  auto validation = ParseFieldValidation(h.Query("fieldValidation"), options_kind);
  if (!validation.ok()) {
    RespondError(r, validation.error());
    return false;
  }
  if (BodyMediaType(h) == kProtobufMediaType) return true;
  if (*validation != FieldValidation::kIgnore) {
    FieldProblems problems = CheckFields(type, h.body, *body, r.sub);
    if (!problems.empty() && *validation == FieldValidation::kStrict) {
      RespondError(r, StrictDecodingError(type, *body, problems, r.sub));
      return false;
    }
    for (auto& w : WarningHeaders(problems)) r.extra_headers.emplace_back("Warning", w);
  }
  DropUnknownFields(type, *body, r.sub);
  return true;
}

bool RestHandler::ValidatePatch(Request& r, PatchType patch_type, std::string* patch) {
  const auto& h = r.http;
  const ResourceType& type = *r.type;
  const Subresource sub = r.sub;
  auto validation = ParseFieldValidation(h.Query("fieldValidation"), "PatchOptions");
  if (!validation.ok()) {
    RespondError(r, validation.error());
    return false;
  }
  if (patch_type == PatchType::kApply) return true;
  auto parsed = ParseJson(*patch, kLastWins);
  if (!parsed.ok()) return true;
  if (*validation != FieldValidation::kIgnore) {
    auto current = api_.Get(type, r.ns, r.name, sub);
    if (!current.ok()) return true;
    StatusOr<Json> patched =
        patch_type == PatchType::kJsonMerge ? ApplyMergePatch(*current, *parsed)
        : patch_type == PatchType::kJsonPatch
            ? ApplyJsonPatch(*current, *parsed)
            : ApplyStrategicMergePatch(*current, *parsed,
                                       sub == Subresource::kScale ? "Scale" : type.kind);
    if (!patched.ok()) return true;
    FieldProblems problems =
        CheckPatchFields(type, patch_type, *patch, *parsed, &*patched, &*current, sub);
    if (!problems.empty() && *validation == FieldValidation::kStrict) {
      RespondError(r, StrictPatchError(problems, patch_type == PatchType::kStrategicMerge
                                                     ? GoMapString(*parsed)
                                                     : DumpJson(*patched)));
      return false;
    }
    for (auto& w : WarningHeaders(problems)) r.extra_headers.emplace_back("Warning", w);
  }
  if (DropUnknownPatchFields(type, patch_type, *parsed, sub)) *patch = DumpJson(*parsed);
  return true;
}

bool RestHandler::ParseDeleteOptions(Request& r, DeleteOptions* del) {
  const auto& h = r.http;
  del->dry_run = WriteOptionsOf(h).dry_run;
  if (!h.body.empty()) {
    Json body;
    if (!DecodeBody(r, &body)) return false;
    if (auto error = ReadDeleteOptionsBody(body, *del)) {
      RespondError(r, *error);
      return false;
    }
  }
  if (h.HasQuery("propagationPolicy")) {
    del->propagation_policy = std::string(h.Query("propagationPolicy"));
  }
  if (h.HasQuery("gracePeriodSeconds")) {
    auto g = ParseInt(h.Query("gracePeriodSeconds"));
    if (!g) {
      RespondError(r, BadRequestError("invalid gracePeriodSeconds"));
      return false;
    }
    del->grace_period_seconds = *g;
  }
  return true;
}

void RestHandler::SendResult(Request& r, const ApiResult<Json>& result, int ok_code) {
  if (!result.ok()) {
    RespondError(r, result.error());
  } else {
    RespondJson(r, ok_code, *result);
  }
}

void RestHandler::ServeWatch(Request& req) {
  const auto& h = req.http;
  const ResourceType& rt = *req.type;
  auto labels = LabelSelector::Parse(h.Query("labelSelector"));
  if (!labels.ok()) {
    RespondError(req, BadRequestError(labels.status().message()));
    return;
  }
  std::string field_text(h.Query("fieldSelector"));
  if (req.watch && !req.name.empty()) {
    field_text = "metadata.name=" + req.name + (field_text.empty() ? "" : "," + field_text);
  }
  auto fields = FieldSelector::Parse(field_text);
  if (!fields.ok()) {
    RespondError(req, BadRequestError(fields.status().message()));
    return;
  }
  if (auto err = CheckFieldSelector(rt, *fields)) {
    RespondError(req, *err);
    return;
  }
  std::string rv(h.Query("resourceVersion"));
  bool send_initial = IsTrue(h.Query("sendInitialEvents"));
  bool bookmarks = IsTrue(h.Query("allowWatchBookmarks"));
  std::string rv_match(h.Query("resourceVersionMatch"));
  if (send_initial && rv_match != "NotOlderThan") {
    RespondError(req, InvalidError(rt, "",
                                   {{"FieldValueInvalid",
                                     "Invalid value: \"" + rv_match +
                                         "\": sendInitialEvents requires setting "
                                         "resourceVersionMatch to NotOlderThan",
                                     "resourceVersionMatch"}}));
    return;
  }
  if (send_initial && !bookmarks) {
    RespondError(req, InvalidError(rt, "",
                                   {{"FieldValueForbidden",
                                     "Forbidden: sendInitialEvents requires setting "
                                     "allowWatchBookmarks to true",
                                     "allowWatchBookmarks"}}));
    return;
  }
  std::chrono::seconds timeout(1800 + api_.storage().CurrentRevision() % 1800);
  if (h.HasQuery("timeoutSeconds")) {
    auto t = ParseInt(h.Query("timeoutSeconds"));
    if (!t || *t < 0) {
      RespondError(req, BadRequestError("invalid timeoutSeconds"));
      return;
    }
    if (*t > 0) timeout = std::chrono::seconds(*t);
  }
  WatchRequest wr;
  wr.group_resource = rt.GroupResource();
  wr.ns = rt.namespaced ? req.ns : "";
  uint64_t initial_end = 0;
  std::optional<uint64_t> requested_rv;
  if (!rv.empty() && rv != "0") {
    char* end = nullptr;
    unsigned long long v = std::strtoull(rv.c_str(), &end, 10);
    if (end == rv.c_str() || *end != '\0') {
      RespondError(req, BadRequestError("invalid resource version: " + rv));
      return;
    }
    requested_rv = v;
  }
  // A sendInitialEvents watch at a resourceVersion still not reached after the wait (see
  // RevisionToAwait) fails as the watch cache's does: one ERROR event with the 504.
  std::optional<StatusError> too_large;
  if (send_initial) {
    // List at a revision, then watch from exactly that revision: the list's objects become
    // ADDED events, closed by a bookmark marked initial-events-end.
    wr.initial_snapshot = true;
    initial_end = api_.storage().CurrentRevision();
    if (requested_rv && *requested_rv > initial_end) {
      too_large = TooLargeResourceVersionError(*requested_rv, initial_end);
    }
  } else if (!requested_rv) {
    wr.initial_snapshot = true;
  } else {
    wr.from_revision = *requested_rv;
  }
  req.responded = true;
  if (too_large) {
    WatchStreams::Fail(*req.writer, *too_large);
    Finish(req, 200);
    return;
  }
  auto watcher = api_.storage().Watch(wr);
  if (!watcher.ok()) {
    WatchStreams::Fail(*req.writer, ExpiredError(watcher.status().message()));
    Finish(req, 200);
    return;
  }
  Finish(req, 200);
  WatchStreams::Filter filter{&rt, std::move(labels).value(), std::move(fields).value(),
                              NegotiateResource(h.headers.Get("Accept")),
                              IncludeObjectParam(h.Query("includeObject"))};
  WatchStreams::Run run{bookmarks, initial_end, wr.from_revision, timeout, faults_.ForWatch()};
  streams_.Open(std::move(filter), req.writer, std::move(watcher).value(), run);
}

}  // namespace steward::cluster
