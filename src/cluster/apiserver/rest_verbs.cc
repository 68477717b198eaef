// RestHandler's verbs: get, list, watch, create, update, patch, delete and deletecollection of
// a resource, with the shared prelude (faults, Accept, dryRun, list options). Decoding and field
// validation of bodies and patches are in request_decoding.cc; routing, answers and
// authorization in rest_handler.cc.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cluster/apiserver/field_validation.h"
#include "cluster/apiserver/protobuf_decode.h"
#include "cluster/apiserver/request_decoding.h"
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
  if (auto e = ParseListOptions(r.http, &r.list_opts)) return RespondError(r, *e);
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
  if (auto e = DecodeValidBody(r.http, *r.type, r.sub, "CreateOptions", &body, &r.extra_headers)) {
    return RespondError(r, *e);
  }
  // The audit record names the object created, as a real API server's objectRef does.
  if (const Json* name = FindPath(body, "metadata.name"); name != nullptr && name->is_string()) {
    r.record.name = name->get<std::string>();
  }
  SendResult(r, api_.Create(*r.type, r.ns, std::move(body), WriteOptionsFor(r)), 201);
}

void RestHandler::ServeUpdate(Request& r) {
  Json body;
  if (auto e = DecodeValidBody(r.http, *r.type, r.sub, "UpdateOptions", &body, &r.extra_headers)) {
    return RespondError(r, *e);
  }
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
  auto current = [&] { return api_.Get(type, r.ns, r.name, r.sub); };
  if (auto e = ValidatePatch(h, type, r.sub, *patch_type, current, &patch_body, &r.extra_headers)) {
    return RespondError(r, *e);
  }
  SendResult(r, api_.Patch(type, r.ns, r.name, *patch_type, patch_body, r.sub, write_opts), 200);
}

void RestHandler::ServeDelete(Request& r) {
  DeleteOptions del;
  if (auto e = ParseDeleteOptions(r.http, &del)) return RespondError(r, *e);
  SendResult(r, api_.Delete(*r.type, r.ns, r.name, del), 200);
}

void RestHandler::ServeDeleteCollection(Request& r) {
  DeleteOptions del;
  if (auto e = ParseDeleteOptions(r.http, &del)) return RespondError(r, *e);
  SendResult(r, api_.DeleteCollection(*r.type, r.ns, r.list_opts, del), 200);
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
