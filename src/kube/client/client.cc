#include "kube/client/client.h"

#include <chrono>
#include <utility>

#include "net/http.h"

namespace steward::kube {
namespace {

constexpr std::string_view kJson = "application/json";
// Without a server-side timeout a watch lasts up to an hour (MinRequestTimeout 1800 s × [1, 2)).
constexpr Millis kDefaultWatchTimeout = std::chrono::hours(2);
// How much longer than its timeoutSeconds a watch request may take before the client gives up.
constexpr Millis kWatchTimeoutSlack = std::chrono::seconds(30);

// "?a=1&b=x%20y", skipping empty values.
class Query {
 public:
  Query& Add(std::string_view key, std::string_view value) {
    if (value.empty()) return *this;
    text_ += text_.empty() ? '?' : '&';
    text_ += key;
    text_ += '=';
    text_ += net::PercentEncode(value);
    return *this;
  }
  const std::string& str() const { return text_; }

 private:
  std::string text_;
};

using net::Is2xx;

std::string Describe(const TransportRequest& request) {
  return request.method + " " + request.target;
}

ApiError TransportFailure(const TransportRequest& request, const Status& status) {
  ApiError e = ApiErrorFromTransport(status);
  e.message = Describe(request) + ": " + e.message;
  return e;
}

// A 2xx response whose body is not what the API promises.
ApiError BadResponse(const TransportRequest& request, int http_status, const std::string& what) {
  ApiError e;
  e.code = StatusCode::kInternal;
  e.http_status = http_status;
  e.message = "decoding the response to " + Describe(request) + ": " + what;
  return e;
}

Result<TransportResponse> Send(Transport& transport, const TransportRequest& request) {
  auto response = transport.Do(request);
  if (!response.ok()) return TransportFailure(request, response.status());
  if (!Is2xx(response->status)) {
    return ApiErrorFromResponse(response->status, response->body, response->headers);
  }
  return std::move(response).value();
}

Result<Json> SendForObject(Transport& transport, const TransportRequest& request) {
  auto response = Send(transport, request);
  if (!response.ok()) return std::move(response).error();
  auto object = ParseJson(response->body);
  if (!object.ok()) return BadResponse(request, response->status, object.status().message());
  if (!object->is_object()) return BadResponse(request, response->status, "not a JSON object");
  return std::move(object).value();
}

std::optional<ApiError> CheckWriteOptions(const WriteOptions& options, bool apply) {
  if (options.force && !apply) {
    return LocalApiError(StatusCode::kInvalidArgument,
                         "WriteOptions.force is only valid for server-side apply");
  }
  return std::nullopt;
}

std::string WriteQuery(const WriteOptions& options, bool apply) {
  Query q;
  q.Add("fieldManager", options.field_manager);
  if (options.dry_run) q.Add("dryRun", "All");
  q.Add("fieldValidation", options.field_validation);
  if (apply && options.force) q.Add("force", "true");
  return q.str();
}

TransportRequest WriteRequest(std::string method, std::string target, std::string body,
                              std::string_view content_type, const WriteOptions& options) {
  TransportRequest r;
  r.method = std::move(method);
  r.target = std::move(target);
  r.body = std::move(body);
  r.content_type = std::string(content_type);
  r.cancel = options.cancel;
  r.timeout = options.timeout;
  return r;
}

std::string_view PatchContentType(PatchType type) {
  switch (type) {
    case PatchType::kMerge:
      return "application/merge-patch+json";
    case PatchType::kJson:
      return "application/json-patch+json";
    case PatchType::kStrategic:
      return "application/strategic-merge-patch+json";
    case PatchType::kApply:
      return "application/apply-patch+yaml";
  }
  return "";
}

// The namespace a namespaced call goes to, or a local error naming what is missing.
std::optional<ApiError> RequireNamespace(const ResourceType& type, std::string_view ns,
                                         std::string_view call) {
  if (!type.namespaced || !ns.empty()) return std::nullopt;
  return LocalApiError(
      StatusCode::kInvalidArgument,
      std::string(call) + " " + type.GroupResource() + ": a namespace is required");
}

std::optional<ApiError> RequireName(const ResourceType& type, std::string_view name,
                                    std::string_view call) {
  if (!name.empty()) return std::nullopt;
  return LocalApiError(StatusCode::kInvalidArgument,
                       std::string(call) + " " + type.GroupResource() + ": a name is required");
}

// metadata.<field> as a string, or "" when absent.
std::string MetaField(const Json& object, std::string_view field) {
  const Json* meta = FindPath(object, "metadata");
  return meta != nullptr ? GetString(*meta, field) : "";
}

// A copy of `object` with apiVersion/kind filled in from the type when absent.
Json WithTypeMeta(const ResourceType& type, Json object) {
  if (!object.contains("apiVersion")) object["apiVersion"] = type.ApiVersion();
  if (!object.contains("kind")) object["kind"] = type.kind;
  return object;
}

// Where an existing object lives, checked for PUT/apply: name, namespace, resourceVersion.
struct ObjectKey {
  std::string ns;
  std::string name;
};

Expected<ObjectKey, ApiError> KeyOf(const ResourceType& type, const Json& object,
                                    std::string_view call, bool need_resource_version) {
  if (!object.is_object() || !FindPath(object, "metadata") || !object["metadata"].is_object()) {
    return LocalApiError(
        StatusCode::kInvalidArgument,
        std::string(call) + " " + type.GroupResource() + ": the object has no metadata");
  }
  ObjectKey key{type.namespaced ? MetaField(object, "namespace") : "", MetaField(object, "name")};
  if (key.name.empty()) {
    return LocalApiError(
        StatusCode::kInvalidArgument,
        std::string(call) + " " + type.GroupResource() + ": metadata.name is required");
  }
  std::string what = std::string(call) + " " + type.GroupResource() + " \"" + key.name + "\"";
  if (type.namespaced && key.ns.empty()) {
    return LocalApiError(StatusCode::kInvalidArgument, what + ": metadata.namespace is required");
  }
  if (need_resource_version && MetaField(object, "resourceVersion").empty()) {
    return LocalApiError(StatusCode::kInvalidArgument,
                         what +
                             ": metadata.resourceVersion is required (an update is always "
                             "conditional on the version that was read)");
  }
  return key;
}

Result<ObjectList> DecodeList(const ResourceType& type, const TransportRequest& request,
                              const TransportResponse& response) {
  auto parsed = ParseJson(response.body);
  if (!parsed.ok()) return BadResponse(request, response.status, parsed.status().message());
  if (!parsed->is_object()) return BadResponse(request, response.status, "not a JSON object");
  ObjectList list;
  if (const Json* meta = FindPath(*parsed, "metadata"); meta != nullptr && meta->is_object()) {
    list.resource_version = GetString(*meta, "resourceVersion");
    list.continue_token = GetString(*meta, "continue");
  }
  auto items = parsed->find("items");
  if (items == parsed->end() || items->is_null()) return list;
  if (!items->is_array()) return BadResponse(request, response.status, "\"items\" is not a list");
  list.items.reserve(items->size());
  for (auto& item : *items) {
    if (!item.is_object()) return BadResponse(request, response.status, "an item is not an object");
    // Items of a list omit apiVersion/kind on a real server.
    list.items.push_back(WithTypeMeta(type, std::move(item)));
  }
  return list;
}

std::string DeleteBody(const DeleteOptions& options) {
  Json body = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
  if (options.precondition_uid || options.precondition_resource_version) {
    Json pre = Json::object();
    if (options.precondition_uid) pre["uid"] = *options.precondition_uid;
    if (options.precondition_resource_version) {
      pre["resourceVersion"] = *options.precondition_resource_version;
    }
    body["preconditions"] = std::move(pre);
  }
  if (!options.propagation_policy.empty()) body["propagationPolicy"] = options.propagation_policy;
  if (options.grace_period_seconds) body["gracePeriodSeconds"] = *options.grace_period_seconds;
  if (options.dry_run) body["dryRun"] = Json::array({"All"});
  return DumpJson(body);
}

bool NonEmptyArray(const Json* value) {
  return value != nullptr && value->is_array() && !value->empty();
}

// Whether a deleted object the server returned is still stored: marked for deletion and
// waiting for finalizers, a grace period or a namespace's clean-up.
bool StillTerminating(const Json& object) {
  const Json* ts = FindPath(object, "metadata.deletionTimestamp");
  if (ts == nullptr || ts->is_null()) return false;
  if (NonEmptyArray(FindPath(object, "metadata.finalizers"))) return true;
  const Json* grace = FindPath(object, "metadata.deletionGracePeriodSeconds");
  if (grace != nullptr && grace->is_number_integer() && grace->get<int64_t>() > 0) return true;
  if (NonEmptyArray(FindPath(object, "spec.finalizers"))) return true;  // Namespace
  const Json* status = FindPath(object, "status");
  if (status != nullptr && status->is_object() && GetString(*status, "phase") == "Terminating") {
    return true;
  }
  return false;  // marked and removed at once (a pod deleted with grace period 0)
}

// The body of a successful delete: a Status (gone), the object's last state (gone) or the
// object still terminating.
DeleteResult InterpretDelete(Json body) {
  DeleteResult result;
  if (GetString(body, "kind") == "Status") {
    result.gone = true;
    return result;
  }
  result.gone = !StillTerminating(body);
  result.object = std::move(body);
  return result;
}

std::string WatchQuery(const WatchOptions& options) {
  Query q;
  q.Add("watch", "1");
  if (options.allow_bookmarks) q.Add("allowWatchBookmarks", "true");
  q.Add("resourceVersion", options.resource_version);
  std::string match = options.resource_version_match;
  // The watch-list protocol needs NotOlderThan; the server refuses sendInitialEvents without it.
  if (options.send_initial_events && match.empty()) match = "NotOlderThan";
  q.Add("resourceVersionMatch", match);
  if (options.send_initial_events) q.Add("sendInitialEvents", "true");
  if (options.timeout_seconds > 0) q.Add("timeoutSeconds", std::to_string(options.timeout_seconds));
  q.Add("labelSelector", options.label_selector);
  q.Add("fieldSelector", options.field_selector);
  return q.str();
}

}  // namespace

Client::Client(std::shared_ptr<Transport> transport) : transport_(std::move(transport)) {}

Result<Json> Client::Get(const ResourceType& type, std::string_view ns, std::string_view name,
                         const std::shared_ptr<CancelToken>& cancel) const {
  if (auto e = RequireNamespace(type, ns, "get")) return *e;
  if (auto e = RequireName(type, name, "get")) return *e;
  TransportRequest r;
  r.method = "GET";
  r.target = type.Path(ns, name);
  r.cancel = cancel;
  return SendForObject(*transport_, r);
}

namespace {

TransportRequest ListRequest(const ResourceType& type, std::string_view ns,
                             const ListOptions& options) {
  Query q;
  q.Add("labelSelector", options.label_selector);
  q.Add("fieldSelector", options.field_selector);
  if (options.limit > 0) q.Add("limit", std::to_string(options.limit));
  q.Add("continue", options.continue_token);
  q.Add("resourceVersion", options.resource_version);
  q.Add("resourceVersionMatch", options.resource_version_match);
  TransportRequest r;
  r.method = "GET";
  r.target = type.Path(ns) + q.str();
  return r;
}

}  // namespace

Result<ObjectList> Client::List(const ResourceType& type, std::string_view ns,
                                const ListOptions& options) const {
  TransportRequest r = ListRequest(type, ns, options);
  auto response = Send(*transport_, r);
  if (!response.ok()) return std::move(response).error();
  return DecodeList(type, r, *response);
}

Result<ScannedList> Client::ListScanned(const ResourceType& type, std::string_view ns,
                                        const ListOptions& options) const {
  TransportRequest r = ListRequest(type, ns, options);
  auto response = Send(*transport_, r);
  if (!response.ok()) return std::move(response).error();
  auto scanned = ScanListPage(response->body, type.ApiVersion(), type.kind);
  if (!scanned.ok()) return BadResponse(r, response->status, scanned.status().message());
  return std::move(scanned).value();
}

Result<ObjectList> Client::ListAll(const ResourceType& type, std::string_view ns,
                                   ListOptions options) const {
  const ListOptions first_page = options;
  bool restarted = false;
  ObjectList all;
  bool first = true;
  while (true) {
    auto page = List(type, ns, options);
    if (!page.ok()) {
      // An expired continue token: start over once, from a fresh first page.
      if (page.error().IsGone() && !first && !restarted) {
        restarted = true;
        options = first_page;
        options.continue_token.clear();
        all = ObjectList{};
        first = true;
        continue;
      }
      return std::move(page).error();
    }
    if (first) all.resource_version = page->resource_version;
    first = false;
    for (auto& item : page->items) all.items.push_back(std::move(item));
    if (page->continue_token.empty()) return all;
    options.continue_token = page->continue_token;
    // The continue token pins the snapshot; a server refuses resourceVersion alongside it.
    options.resource_version.clear();
    options.resource_version_match.clear();
  }
}

Result<Json> Client::Create(const ResourceType& type, std::string_view ns, const Json& object,
                            const WriteOptions& options) const {
  if (auto e = CheckWriteOptions(options, false)) return *e;
  if (!object.is_object()) {
    return LocalApiError(StatusCode::kInvalidArgument,
                         "create " + type.GroupResource() + ": the object is not a JSON object");
  }
  Json body = WithTypeMeta(type, object);
  std::string target_ns;
  if (type.namespaced) {
    target_ns = ns.empty() ? MetaField(object, "namespace") : std::string(ns);
    if (auto e = RequireNamespace(type, target_ns, "create")) return *e;
    if (!body.contains("metadata") || !body["metadata"].is_object()) {
      body["metadata"] = Json::object();
    }
    body["metadata"]["namespace"] = target_ns;
  }
  return SendForObject(*transport_,
                       WriteRequest("POST", type.Path(target_ns) + WriteQuery(options, false),
                                    DumpJson(body), kJson, options));
}

Result<Json> Client::Update(const ResourceType& type, const Json& object,
                            const WriteOptions& options) const {
  if (auto e = CheckWriteOptions(options, false)) return *e;
  auto key = KeyOf(type, object, "update", true);
  if (!key.ok()) return std::move(key).error();
  return SendForObject(
      *transport_, WriteRequest("PUT", type.Path(key->ns, key->name) + WriteQuery(options, false),
                                DumpJson(WithTypeMeta(type, object)), kJson, options));
}

Result<Json> Client::UpdateStatus(const ResourceType& type, const Json& object,
                                  const WriteOptions& options) const {
  if (auto e = CheckWriteOptions(options, false)) return *e;
  auto key = KeyOf(type, object, "update status of", true);
  if (!key.ok()) return std::move(key).error();
  return SendForObject(
      *transport_,
      WriteRequest("PUT", type.Path(key->ns, key->name, "status") + WriteQuery(options, false),
                   DumpJson(WithTypeMeta(type, object)), kJson, options));
}

Result<Json> Client::Patch(const ResourceType& type, std::string_view ns, std::string_view name,
                           PatchType patch_type, std::string_view body, const WriteOptions& options,
                           std::string_view subresource) const {
  bool apply = patch_type == PatchType::kApply;
  if (auto e = CheckWriteOptions(options, apply)) return *e;
  if (auto e = RequireNamespace(type, ns, "patch")) return *e;
  if (auto e = RequireName(type, name, "patch")) return *e;
  if (apply && options.field_manager.empty()) {
    return LocalApiError(StatusCode::kInvalidArgument,
                         "apply " + type.GroupResource() + " \"" + std::string(name) +
                             "\": WriteOptions.field_manager is required for server-side apply");
  }
  return SendForObject(
      *transport_,
      WriteRequest("PATCH", type.Path(ns, name, subresource) + WriteQuery(options, apply),
                   std::string(body), PatchContentType(patch_type), options));
}

Result<Json> Client::Apply(const ResourceType& type, const Json& object,
                           const WriteOptions& options) const {
  auto key = KeyOf(type, object, "apply", false);
  if (!key.ok()) return std::move(key).error();
  return Patch(type, key->ns, key->name, PatchType::kApply, DumpJson(WithTypeMeta(type, object)),
               options);
}

Result<DeleteResult> Client::Delete(const ResourceType& type, std::string_view ns,
                                    std::string_view name, const DeleteOptions& options) const {
  if (auto e = RequireNamespace(type, ns, "delete")) return *e;
  if (auto e = RequireName(type, name, "delete")) return *e;
  TransportRequest r;
  r.method = "DELETE";
  r.target = type.Path(ns, name);
  r.body = DeleteBody(options);
  r.content_type = std::string(kJson);
  r.cancel = options.cancel;
  auto body = SendForObject(*transport_, r);
  if (!body.ok()) return std::move(body).error();
  return InterpretDelete(std::move(body).value());
}

Result<WatchEnd> Client::Watch(const ResourceType& type, std::string_view ns,
                               const WatchOptions& options,
                               const std::function<bool(const WatchEvent&)>& on_event) const {
  TransportRequest r;
  r.method = "GET";
  r.target = type.Path(ns) + WatchQuery(options);
  r.cancel = options.cancel;
  r.timeout = options.timeout_seconds > 0
                  ? Millis(std::chrono::seconds(options.timeout_seconds)) + kWatchTimeoutSlack
                  : kDefaultWatchTimeout;

  NdjsonFramer framer;
  WatchEnd end;
  std::optional<ApiError> failure;
  // Stops the framer without an error of the stream's own.
  const Status stop(StatusCode::kCancelled, "stopped");
  auto on_line = [&](std::string_view line) -> Status {
    auto event = DecodeWatchEvent(line);
    if (!event.ok()) {
      failure = BadResponse(r, 200, event.status().message());
      failure->code = StatusCode::kInvalidArgument;
      return event.status();
    }
    ++end.events;
    if (!on_event(*event)) {
      end.stopped_by_handler = true;
      return stop;
    }
    return Status::Ok();
  };
  auto on_data = [&](std::string_view chunk) -> bool {
    if (options.cancel && options.cancel->cancelled()) return false;
    Status status = framer.Feed(chunk, on_line);
    if (!status.ok() && !failure && !end.stopped_by_handler) {
      failure = BadResponse(r, 200, status.message());
      failure->code = status.code();
    }
    return status.ok();
  };
  auto response = transport_->Stream(r, on_data);
  if (failure) return *failure;
  if (end.stopped_by_handler) return end;
  if (options.cancel && options.cancel->cancelled()) {
    return TransportFailure(r, Cancelled("the watch was cancelled"));
  }
  if (!response.ok()) return TransportFailure(r, response.status());
  if (!Is2xx(response->status)) {
    return ApiErrorFromResponse(response->status, response->body, response->headers);
  }
  if (framer.buffered() > 0) {
    // The stream ended inside a line: the event is lost; the caller resumes from the last one.
    return TransportFailure(r, Unavailable("the watch stream ended inside an event (" +
                                           std::to_string(framer.buffered()) + " bytes)"));
  }
  return end;
}

}  // namespace steward::kube
