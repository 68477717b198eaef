#include "cluster/apiserver/rest_handler.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <unordered_set>

#include "cluster/apiserver/discovery.h"
#include "cluster/apiserver/field_validation.h"
#include "cluster/apiserver/protobuf_decode.h"
#include "cluster/apiserver/rbac_escalation.h"
#include "cluster/apiserver/selectors.h"
#include "cluster/apiserver/tables.h"
#include "common/ascii.h"
#include "common/log.h"
#include "common/yaml.h"

namespace steward::cluster {

namespace {

constexpr const char* kJsonType = "application/json";
// Request bodies and patches are decoded as Go decodes them: the last of duplicate keys wins
// (field validation sees the raw text and reports duplicates).
const ParseOptions kLastWins{.duplicate_keys = DuplicateKeys::kLastWins};

std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) parts.emplace_back(path.substr(i, j - i));
    i = j;
  }
  return parts;
}

// One media range of an Accept header, with its parameters.
struct MediaType {
  std::string type;  // "application/json"
  std::vector<std::pair<std::string, std::string>> params;
  std::string Param(std::string_view name) const {
    for (const auto& [k, v] : params) {
      if (k == name) return v;
    }
    return "";
  }
};

std::vector<MediaType> ParseAccept(std::string_view header) {
  std::vector<MediaType> out;
  size_t i = 0;
  while (i <= header.size()) {
    size_t comma = header.find(',', i);
    if (comma == std::string_view::npos) comma = header.size();
    std::string_view item = header.substr(i, comma - i);
    MediaType mt;
    size_t semi = item.find(';');
    mt.type = AsciiLower(TrimHttpWhitespace(item.substr(0, semi)));
    while (semi != std::string_view::npos) {
      size_t next = item.find(';', semi + 1);
      std::string_view param = item.substr(
          semi + 1, next == std::string_view::npos ? std::string_view::npos : next - semi - 1);
      size_t eq = param.find('=');
      if (eq != std::string_view::npos) {
        mt.params.emplace_back(AsciiLower(TrimHttpWhitespace(param.substr(0, eq))),
                               TrimHttpWhitespace(param.substr(eq + 1)));
      }
      semi = next;
    }
    if (!mt.type.empty()) out.push_back(std::move(mt));
    i = comma + 1;
  }
  return out;
}

enum class Output { kJson, kTable, kPartialMetadata, kAggregatedDiscovery, kNone };

bool IsJsonLike(const std::string& type) {
  return type == "application/json" || type == "*/*" || type == "application/*";
}

// The representation to answer with for a resource request, per the Accept header.
Output NegotiateResource(std::string_view accept) {
  if (TrimHttpWhitespace(accept).empty()) return Output::kJson;
  for (const auto& mt : ParseAccept(accept)) {
    if (!IsJsonLike(mt.type)) continue;
    std::string as = mt.Param("as");
    if (as.empty()) return Output::kJson;
    std::string g = mt.Param("g");
    if (as == "Table" && g == "meta.k8s.io") return Output::kTable;
    if ((as == "PartialObjectMetadata" || as == "PartialObjectMetadataList") &&
        g == "meta.k8s.io") {
      return Output::kPartialMetadata;
    }
  }
  return Output::kNone;
}

Output NegotiateDiscovery(std::string_view accept) {
  if (TrimHttpWhitespace(accept).empty()) return Output::kJson;
  for (const auto& mt : ParseAccept(accept)) {
    if (!IsJsonLike(mt.type)) continue;
    std::string as = mt.Param("as");
    if (as.empty()) return Output::kJson;
    if (as == "APIGroupDiscoveryList" && mt.Param("g") == "apidiscovery.k8s.io" &&
        mt.Param("v") == "v2") {
      return Output::kAggregatedDiscovery;
    }
  }
  return Output::kNone;
}

Json PartialMetadata(const Json& obj) {
  return {{"kind", "PartialObjectMetadata"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", obj.contains("metadata") ? obj["metadata"] : Json::object()}};
}

TableIncludeObject IncludeObjectParam(std::string_view v) {
  if (v == "None") return TableIncludeObject::kNone;
  if (v == "Object") return TableIncludeObject::kObject;
  return TableIncludeObject::kMetadata;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

bool IsTrue(std::string_view v) { return v == "true" || v == "1" || v == "True"; }

// A resourceVersion query value as a revision; nullopt when absent, "0" or not a number.
std::optional<uint64_t> QueryRevision(std::string_view rv) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(rv.data(), rv.data() + rv.size(), v);
  if (rv.empty() || ec != std::errc() || ptr != rv.data() + rv.size() || v == 0) {
    return std::nullopt;
  }
  return v;
}

// How long a read at a resourceVersion newer than the current one waits for it to arrive before
// answering 504 "Too large resource version" (the watch cache's blockTimeout), and how often the
// wait looks at the revision.
constexpr std::chrono::seconds kFreshnessWait{3};
constexpr std::chrono::milliseconds kFreshnessPoll{10};

// The revision a request must wait for before it is served (0: none), as the API server's watch
// cache does: a get, or a list not at an Exact revision (nor continued), at a resourceVersion
// newer than the current one; a watch only with sendInitialEvents (it lists first). A plain
// watch from a future resourceVersion does not wait: it streams the events after it, whenever
// they come.
uint64_t RevisionToAwait(const std::string& verb, const net::HttpRequest& http, uint64_t current) {
  auto rv = QueryRevision(http.Query("resourceVersion"));
  if (!rv || *rv <= current) return 0;
  if (verb == "get") return *rv;
  if (verb == "list") {
    bool exact = http.Query("resourceVersionMatch") == "Exact";
    return exact || !http.Query("continue").empty() ? 0 : *rv;
  }
  if (verb == "watch") return IsTrue(http.Query("sendInitialEvents")) ? *rv : 0;
  return 0;
}

// Calls `then` once the storage revision reaches `revision` or `deadline` passes, polling on
// `scheduler` (at once, on the calling thread, when it already has).
void AwaitRevision(Scheduler& scheduler, const Storage& storage, uint64_t revision,
                   std::chrono::steady_clock::time_point deadline, std::function<void()> then) {
  if (storage.CurrentRevision() >= revision || std::chrono::steady_clock::now() >= deadline) {
    then();
    return;
  }
  scheduler.Schedule(kFreshnessPoll,
                     [&scheduler, &storage, revision, deadline, then = std::move(then)]() mutable {
                       AwaitRevision(scheduler, storage, revision, deadline, std::move(then));
                     });
}

// What a write's options say in the query: dryRun=All, fieldManager.
WriteOptions WriteOptionsOf(const net::HttpRequest& http) {
  WriteOptions opts;
  opts.dry_run = http.Query("dryRun") == "All";
  opts.field_manager = std::string(http.Query("fieldManager"));
  return opts;
}

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

// Everything known about one request while it is being served.
struct RestHandler::Request {
  net::HttpRequest http;
  std::shared_ptr<net::ResponseWriter> writer;
  SteadyTime start;
  RequestRecord record;
  // Resource addressing, when the path names a resource.
  const ResourceType* type = nullptr;
  std::string ns;
  std::string name;
  std::string subresource;
  std::string rest;  // path after the subresource (proxy)
  bool watch = false;
  // Set by ServeResource: the API verb (get, list, watch, create, update, patch, delete,
  // deletecollection or proxy), the subresource served, the negotiated representation and the
  // list options (of a get, list or deletecollection).
  std::string verb;
  Subresource sub = Subresource::kNone;
  Output output = Output::kJson;
  ListOptions list_opts;
  bool responded = false;
  UserInfo user;  // who the bearer token is (Serve)
  // Headers added to the response, whatever it is: Warning (field validation), Vary.
  std::vector<std::pair<std::string, std::string>> extra_headers;
};

// One open watch stream: a storage watcher, the filters of the request and the encoding.
class WatchSession : public std::enable_shared_from_this<WatchSession> {
 public:
  WatchSession(RestHandler& owner, const ResourceType& type, std::string ns, LabelSelector labels,
               FieldSelector fields, Output output, TableIncludeObject include,
               std::shared_ptr<net::ResponseWriter> writer, RequestRecord record)
      : owner_(owner),
        type_(type),
        ns_(std::move(ns)),
        labels_(std::move(labels)),
        fields_(std::move(fields)),
        output_(output),
        include_(include),
        writer_(std::move(writer)),
        record_(std::move(record)) {
    filtered_ = !labels_.Empty() || !fields_.Empty();
    for (const auto& req : fields_.requirements()) {
      if (req.path != "metadata.name" && req.path != "metadata.namespace") parse_fields_ = true;
    }
  }

  // `from_revision`: the resourceVersion a watch without initial events starts after (0 for
  // one with them); no bookmark goes out before the stream has reached it.
  void Start(std::unique_ptr<Watcher> watcher, bool bookmarks, uint64_t initial_end_revision,
             uint64_t from_revision, std::chrono::seconds timeout,
             FaultInjector::WatchLimits limits) {
    std::weak_ptr<WatchSession> weak = shared_from_this();
    {
      MutexLock lock(pump_mu_);
      if (closed_) return;  // the handler stopped before the stream began
      StartLocked(std::move(watcher), bookmarks, initial_end_revision, from_revision, timeout,
                  limits, weak);
    }
    // Outside pump_mu_: when the client has already gone, OnClose runs the callback at once,
    // on this thread, and Close() takes pump_mu_.
    writer_->OnClose([weak] {
      if (auto self = weak.lock()) self->Close(false);
    });
  }

  void StartLocked(std::unique_ptr<Watcher> watcher, bool bookmarks, uint64_t initial_end_revision,
                   uint64_t from_revision, std::chrono::seconds timeout,
                   FaultInjector::WatchLimits limits, const std::weak_ptr<WatchSession>& weak)
      REQUIRES(pump_mu_) {
    watcher_ = std::move(watcher);
    bookmarks_ = bookmarks;
    initial_end_revision_ = initial_end_revision;
    from_revision_ = from_revision;
    limits_ = limits;
    net::Headers headers;
    headers.Add("Content-Type", "application/json");
    headers.Add("Cache-Control", "no-cache, private");
    writer_->BeginStream(200, std::move(headers));
    watcher_->SetNotify([this, weak] {
      if (auto self = weak.lock()) owner_.Enqueue(self);
    });
    auto& sched = owner_.scheduler_;
    timeout_timer_ = sched.Schedule(timeout, [weak] {
      if (auto self = weak.lock()) self->Close(false);
    });
    if (limits_.max_age.count() > 0) {
      cut_timer_ = sched.Schedule(limits_.max_age, [weak] {
        if (auto self = weak.lock()) self->Close(true);
      });
    }
    if (bookmarks_) ScheduleBookmarkLocked();
    owner_.Enqueue(shared_from_this());  // lock order: pump_mu_, then the handler's mu_
  }

  // Sends a single ERROR event and ends the stream.
  void FailWith(const StatusError& error) {
    net::Headers headers;
    headers.Add("Content-Type", "application/json");
    writer_->BeginStream(200, std::move(headers));
    Json event = {{"type", "ERROR"}, {"object", error.ToStatus()}};
    writer_->Write(DumpJson(event) + "\n");
    writer_->End();
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
    if (output_ == Output::kJson) {
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
    Json object = {{"kind", type_.kind}, {"apiVersion", type_.ApiVersion()}, {"metadata", meta}};
    if (output_ == Output::kTable) {
      object = {{"kind", "Table"},
                {"apiVersion", "meta.k8s.io/v1"},
                {"metadata", meta},
                {"columnDefinitions", nullptr},
                {"rows", nullptr}};
    } else if (output_ == Output::kPartialMetadata) {
      object = {
          {"kind", "PartialObjectMetadata"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", meta}};
    }
    return DumpJson(Json{{"type", "BOOKMARK"}, {"object", std::move(object)}}) + "\n";
  }

  bool MatchesLabels(const std::shared_ptr<const Labels>& labels) const {
    return labels_.Empty() || labels_.MatchesStored(labels);
  }

  bool MatchesFields(const ObjectRecord& rec) const {
    if (fields_.Empty()) return true;
    if (parse_fields_) return fields_.Matches(rec.Parse());
    Json meta = {{"metadata", {{"name", rec.name}, {"namespace", rec.ns}}}};
    return fields_.Matches(meta);
  }

  // Whether the object matched the field selector before a modification.
  bool MatchesPrevFields(const WatchEvent& ev) const {
    if (fields_.Empty()) return true;
    if (!parse_fields_ || !ev.prev_json) return MatchesFields(ev.object);  // name/ns never change
    auto prev = ParseJson(*ev.prev_json);
    return prev.ok() && fields_.Matches(*prev);
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
    switch (output_) {
      case Output::kTable: {
        Json obj = ev.object.Parse();
        Json meta = {{"resourceVersion", std::to_string(ev.object.revision)}};
        Json table =
            ToTable(type_, {obj}, meta, owner_.api_.clock().WallNow(), include_, headers_sent_);
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

  RestHandler& owner_;
  const ResourceType& type_;
  std::string ns_;
  LabelSelector labels_;
  FieldSelector fields_;
  Output output_;
  TableIncludeObject include_;
  std::shared_ptr<net::ResponseWriter> writer_;
  RequestRecord record_;
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

RestHandler::RestHandler(ObjectApi& api, FaultInjector& faults, RequestLog& log, Options options)
    : api_(api),
      faults_(faults),
      log_(log),
      options_(std::move(options)),
      tokens_(options_.token, options_.token_signing_key) {
  for (int i = 0; i < std::max(1, options_.dispatcher_threads); ++i) {
    dispatchers_.emplace_back([this] { DispatchLoop(); });
  }
}

RestHandler::~RestHandler() { Stop(); }

void RestHandler::SetProxy(ProxyFn proxy) { proxy_ = std::move(proxy); }

void RestHandler::SetMetricsSource(std::function<std::string()> source) {
  metrics_source_ = std::move(source);
}

size_t RestHandler::ActiveWatches() const {
  MutexLock lock(mu_);
  return sessions_.size();
}

void RestHandler::Stop() {
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
  scheduler_.Stop();
  MutexLock lock(mu_);
  sessions_.clear();
  ready_.clear();
}

void RestHandler::Enqueue(std::shared_ptr<WatchSession> session) {
  MutexLock lock(mu_);
  if (stopping_) return;
  ready_.push_back(std::move(session));
  cv_.NotifyOne();
}

void RestHandler::Forget(WatchSession* session) {
  MutexLock lock(mu_);
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    if (it->get() == session) {
      sessions_.erase(it);
      break;
    }
  }
}

void RestHandler::DispatchLoop() {
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

void RestHandler::Respond(Request& req, int code, std::string body,
                          const std::string& content_type) {
  if (req.responded) return;
  req.responded = true;
  net::HttpResponse resp;
  resp.status = code;
  resp.headers.Add("Content-Type", content_type);
  resp.headers.Add("Cache-Control", "no-cache, private");
  for (const auto& [name, value] : req.extra_headers) resp.headers.Add(name, value);
  resp.body = std::move(body);
  Stamp(req);
  req.writer->Send(std::move(resp));
  Finish(req, code);
}

void RestHandler::RespondJson(Request& req, int code, const Json& body) {
  Respond(req, code, DumpJson(body));
}

net::HttpResponse RestHandler::ErrorResponse(const Request& req, const StatusError& error) {
  net::HttpResponse resp;
  resp.status = error.code;
  resp.headers.Add("Content-Type", kJsonType);
  resp.headers.Add("Cache-Control", "no-cache, private");
  if (error.retry_after_seconds > 0) {
    resp.headers.Add("Retry-After", std::to_string(error.retry_after_seconds));
  }
  for (const auto& [name, value] : req.extra_headers) resp.headers.Add(name, value);
  resp.body = DumpJson(error.ToStatus());
  return resp;
}

void RestHandler::RespondError(Request& req, const StatusError& error) {
  if (req.responded) return;
  req.responded = true;
  net::HttpResponse resp = ErrorResponse(req, error);
  Stamp(req);
  req.writer->Send(std::move(resp));
  Finish(req, error.code);
}

void RestHandler::Stamp(Request& req) {
  req.record.answered = api_.clock().WallNow();
  req.record.latency =
      std::chrono::duration_cast<std::chrono::microseconds>(api_.clock().Now() - req.start);
}

void RestHandler::Finish(Request& req, int code) {
  req.record.code = code;
  if (req.record.answered == SystemTime{}) {
    req.record.latency =
        std::chrono::duration_cast<std::chrono::microseconds>(api_.clock().Now() - req.start);
  }
  log_.Record(req.record);
}

void RestHandler::Begin(Request& req) {
  req.start = api_.clock().Now();
  req.record.started = api_.clock().WallNow();
  req.record.uri = req.http.target;
  req.record.user_agent = std::string(req.http.headers.Get("User-Agent"));
  req.record.user = "admin";
}

void RestHandler::Handle(net::HttpRequest http, std::shared_ptr<net::ResponseWriter> writer) {
  auto req = std::make_shared<Request>();
  req->http = std::move(http);
  req->writer = std::move(writer);
  Begin(*req);
  Request& r = *req;
  Guarded(r, [this, &r] { Serve(r); });
}

std::optional<net::HttpResponse> RestHandler::CheckHead(const net::HttpRequest& head) {
  // As kube-apiserver's authentication filter, which runs before a handler reads the body: an
  // unauthenticated request is refused from its head, before "100 Continue" or a body byte.
  if (OpenPath(head.path) || head.body_too_large) return std::nullopt;
  if (tokens_.Authenticate(head.headers.Get("Authorization"), api_.storage(),
                           api_.clock().WallNow())) {
    return std::nullopt;  // Serve authenticates again, with the body read
  }
  Request req;
  req.http.method = head.method;
  req.http.target = head.target;
  req.http.headers = head.headers;
  Begin(req);
  req.record.user = "system:anonymous";
  req.record.verb = AsciiLower(head.method);
  net::HttpResponse resp = ErrorResponse(req, UnauthorizedError());
  Stamp(req);
  Finish(req, resp.status);
  return resp;
}

std::optional<size_t> RestHandler::BodyLimit(const net::HttpRequest& head) {
  return ProxyPath(head.path) ? options_.max_proxy_body_bytes : options_.max_body_bytes;
}

bool RestHandler::ProxyPath(std::string_view path) {
  constexpr std::string_view kPrefix = "/api/v1/namespaces/";
  if (!path.starts_with(kPrefix)) return false;
  path.remove_prefix(kPrefix.size());
  std::vector<std::string_view> parts;  // namespace, resource, name, subresource
  for (size_t pos = 0; parts.size() < 4;) {
    const size_t slash = path.find('/', pos);
    parts.push_back(path.substr(pos, slash == std::string_view::npos ? slash : slash - pos));
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  return parts.size() == 4 && !parts[0].empty() && !parts[2].empty() &&
         (parts[1] == "pods" || parts[1] == "services") && parts[3] == "proxy";
}

bool RestHandler::OpenPath(std::string_view path) {
  return path == "/healthz" || path == "/livez" || path == "/readyz" || path == "/version" ||
         path == "/version/";
}

void RestHandler::Serve(Request& req) {
  const auto& http = req.http;
  const std::string& path = http.path;
  if (http.body_too_large) {
    req.record.verb = AsciiLower(http.method);
    const size_t limit = *BodyLimit(http);
    RespondError(req, TooLargeError("Request entity too large: limit is " + std::to_string(limit)));
    return;
  }
  // Health and version are open to anonymous clients, as on a default API server.
  if (path == "/healthz" || path == "/livez" || path == "/readyz") {
    req.record.verb = "get";
    Respond(req, 200, "ok", "text/plain; charset=utf-8");
    return;
  }
  if (path == "/version" || path == "/version/") {
    req.record.verb = "get";
    RespondJson(req, 200, VersionDocument());
    return;
  }
  {
    auto user = tokens_.Authenticate(http.headers.Get("Authorization"), api_.storage(),
                                     api_.clock().WallNow());
    if (!user) {
      req.record.user = "system:anonymous";
      req.record.verb = AsciiLower(http.method);
      RespondError(req, UnauthorizedError());
      return;
    }
    req.user = std::move(*user);
    req.record.user = req.user.name;
  }
  if (path.rfind("/api/", 0) != 0 && path.rfind("/apis/", 0) != 0) {
    // A non-resource path (discovery roots, OpenAPI, metrics): authorized by path.
    AccessAttributes a;
    a.resource_request = false;
    a.verb = AsciiLower(http.method);
    a.path = path;
    if (!Authorized(req, a)) return;
  }
  if (path == "/metrics") {
    req.record.verb = "get";
    std::string extra = metrics_source_ ? metrics_source_() : "";
    Respond(req, 200, log_.MetricsText(extra), "text/plain; version=0.0.4; charset=utf-8");
    return;
  }
  auto parts = SplitPath(path);
  if (parts.empty()) {
    ServeRootPaths(req);
    return;
  }
  if (parts[0] == "openapi") {
    ServeOpenApi(req, parts);
    return;
  }
  if (parts[0] != "api" && parts[0] != "apis") {
    req.record.verb = AsciiLower(http.method);
    RespondError(req, NotFoundPathError(path));
    return;
  }
  bool core = parts[0] == "api";
  size_t gv_end = core ? 2 : 3;
  if (parts.size() <= gv_end) {
    ServeDiscovery(req, parts);
    return;
  }
  if (!ParseResourcePath(req, parts)) return;
  ServeResource(req);
}

void RestHandler::ServeRootPaths(Request& req) {
  req.record.verb = "get";
  Json paths = Json::array({"/api", "/api/v1", "/apis", "/healthz", "/livez", "/metrics",
                            "/openapi/v2", "/openapi/v3", "/readyz", "/version"});
  for (const auto& rt : AllResourceTypes()) {
    if (!rt.group.empty()) {
      paths.push_back("/apis/" + rt.group);
      paths.push_back("/apis/" + rt.group + "/" + rt.version);
    }
  }
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  RespondJson(req, 200, Json{{"paths", paths}});
}

void RestHandler::ServeOpenApi(Request& req, const std::vector<std::string>& parts) {
  const auto& http = req.http;
  const std::string& path = http.path;
  req.record.verb = "get";
  if (parts.size() == 2 && parts[1] == "v2") {
    std::string_view accept = http.headers.Get("Accept");
    bool json_ok = accept.empty();
    for (const auto& mt : ParseAccept(accept)) json_ok = json_ok || IsJsonLike(mt.type);
    if (!json_ok) {
      RespondError(req, NotAcceptableError("only the following media types are accepted: "
                                           "application/json"));
      return;
    }
    RespondJson(req, 200, OpenApiV2Document());
    return;
  }
  if (parts.size() == 2 && parts[1] == "v3") {
    RespondJson(req, 200, OpenApiV3Root());
    return;
  }
  if (parts.size() > 2 && parts[1] == "v3") {
    std::string rest;
    for (size_t i = 2; i < parts.size(); ++i) rest += (i > 2 ? "/" : "") + parts[i];
    auto doc = OpenApiV3Document(rest);
    if (!doc) {
      RespondError(req, NotFoundPathError(path));
      return;
    }
    RespondJson(req, 200, *doc);
    return;
  }
  RespondError(req, NotFoundPathError(path));
}

void RestHandler::ServeDiscovery(Request& req, const std::vector<std::string>& parts) {
  const auto& http = req.http;
  const std::string& path = http.path;
  bool core = parts[0] == "api";
  size_t gv_end = core ? 2 : 3;
  // The discovery documents depend on Accept (aggregated or not): caches must key on it.
  req.extra_headers.emplace_back("Vary", "Accept");
  req.record.verb = "get";
  if (parts.size() == gv_end) {
    std::string group = core ? "" : parts[1];
    std::string version = core ? parts[1] : parts[2];
    auto doc = ApiResourceListDocument(group, version);
    if (!doc) {
      RespondError(req, NotFoundPathError(path));
      return;
    }
    RespondJson(req, 200, *doc);
    return;
  }
  if (http.method != "GET") {
    RespondError(req, MethodNotAllowedError("the server does not allow this method on the "
                                            "requested resource"));
    return;
  }
  Output out = NegotiateDiscovery(http.headers.Get("Accept"));
  if (out == Output::kNone) {
    RespondError(req, NotAcceptableError("only the following media types are accepted: "
                                         "application/json"));
    return;
  }
  if (parts.size() == 1) {
    if (out == Output::kAggregatedDiscovery) {
      Respond(req, 200, DumpJson(AggregatedDiscoveryDocument(core)),
              "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
    } else {
      RespondJson(req, 200,
                  core ? ApiVersionsDocument(http.headers.Get("Host")) : ApiGroupListDocument());
    }
    return;
  }
  // /apis/GROUP: the APIGroup entry of the group list.
  if (!core && parts.size() == 2) {
    for (const auto& g : ApiGroupListDocument()["groups"]) {
      if (g["name"] == parts[1]) {
        Json group = g;
        group["kind"] = "APIGroup";
        group["apiVersion"] = "v1";
        RespondJson(req, 200, group);
        return;
      }
    }
  }
  RespondError(req, NotFoundPathError(path));
}

bool RestHandler::ParseResourcePath(Request& req, const std::vector<std::string>& parts) {
  const auto& http = req.http;
  const std::string& path = http.path;
  bool core = parts[0] == "api";
  size_t gv_end = core ? 2 : 3;
  std::string group = core ? "" : parts[1];
  std::string version = core ? parts[1] : parts[2];
  size_t i = gv_end;
  if (parts[i] == "watch") {
    req.watch = true;
    ++i;
  }
  if (i < parts.size() && parts[i] == "namespaces" && i + 1 < parts.size()) {
    if (i + 2 < parts.size() && parts[i + 2] != "status" && parts[i + 2] != "finalize") {
      req.ns = parts[i + 1];
      i += 2;
    }
  }
  if (i >= parts.size()) {
    RespondError(req, NotFoundPathError(path));
    return false;
  }
  req.type = FindResource(group, version, parts[i]);
  if (i + 1 < parts.size()) req.name = parts[i + 1];
  if (i + 2 < parts.size()) req.subresource = parts[i + 2];
  for (size_t j = i + 3; j < parts.size(); ++j) req.rest += "/" + parts[j];
  if (req.subresource == "proxy" && !path.empty() && path.back() == '/') req.rest += "/";
  req.record.group = group;
  req.record.resource = parts[i];
  req.record.subresource = req.subresource;
  req.record.ns = req.ns;
  req.record.name = req.name;
  if (req.type == nullptr) {
    req.record.verb = AsciiLower(http.method);
    RespondError(req, NotFoundPathError(path));
    return false;
  }
  return true;
}

void RestHandler::ServeResource(Request& req) {
  if (!ResolveVerb(req)) return;
  if (req.verb == "proxy") {
    // pods/proxy and services/proxy are authorized as any subresource (the verb from the
    // HTTP method): a token without them reaches no pod.
    if (!AuthorizeResource(req)) return;
    ServeProxy(req);
    return;
  }
  if (!ResolveSubresource(req)) return;
  if (!AuthorizeResource(req)) return;
  // Fault injection: latency first, then failures.
  auto decision = faults_.Decide(req.verb);
  uint64_t await_revision = RevisionToAwait(req.verb, req.http, api_.storage().CurrentRevision());
  auto reqp = std::make_shared<Request>(std::move(req));
  auto run = [this, reqp, decision] { ServeVerb(*reqp, decision); };
  // A read at a future resourceVersion first waits (off the I/O thread) for it to arrive.
  auto start = [this, reqp, await_revision, run = std::move(run)]() mutable {
    if (await_revision == 0) {
      Guarded(*reqp, run);
      return;
    }
    AwaitRevision(scheduler_, api_.storage(), await_revision,
                  std::chrono::steady_clock::now() + kFreshnessWait,
                  [this, reqp, run]() mutable { Guarded(*reqp, run); });
  };
  if (decision.latency.count() > 0) {
    scheduler_.Schedule(decision.latency, std::move(start));
  } else {
    start();
  }
}

bool RestHandler::ResolveVerb(Request& req) {
  const auto& http = req.http;
  const std::string& method = http.method;
  std::string verb;
  if (method == "GET") {
    verb = req.name.empty() ? ((req.watch || IsTrue(http.Query("watch"))) ? "watch" : "list")
                            : (req.watch ? "watch" : "get");
  } else if (method == "POST") {
    verb = "create";
  } else if (method == "PUT") {
    verb = "update";
  } else if (method == "PATCH") {
    verb = "patch";
  } else if (method == "DELETE") {
    verb = req.name.empty() ? "deletecollection" : "delete";
  } else {
    req.record.verb = AsciiLower(method);
    RespondError(req, MethodNotAllowedError("the server does not allow this method on the "
                                            "requested resource"));
    return false;
  }
  if (req.subresource == "proxy") verb = "proxy";
  req.verb = verb;
  req.record.verb = verb;
  if ((verb == "update" || verb == "patch") && req.name.empty()) {
    RespondError(req, MethodNotAllowedError("the server does not allow this method on the "
                                            "requested resource"));
    return false;
  }
  if (!req.rest.empty() && req.subresource != "proxy") {
    RespondError(req, NotFoundPathError(http.path));
    return false;
  }
  return true;
}

void RestHandler::ServeProxy(Request& req) {
  const ResourceType& rt = *req.type;
  if ((rt.kind != "Service" && rt.kind != "Pod") || !proxy_) {
    RespondError(req, NotFoundPathError(req.http.path));
    return;
  }
  req.responded = true;
  Finish(req, 200);
  proxy_(rt.resource, req.ns, req.name, req.rest, req.http, req.writer);
}

bool RestHandler::ResolveSubresource(Request& req) {
  const auto& http = req.http;
  const ResourceType& rt = *req.type;
  const std::string& verb = req.verb;
  if (rt.create_only && (verb != "create" || !req.subresource.empty())) {
    RespondError(req, MethodNotAllowedError("the server does not allow this method on the "
                                            "requested resource"));
    return false;
  }
  if (req.subresource == "status" && rt.has_status) {
    req.sub = Subresource::kStatus;
  } else if (req.subresource == "scale" && rt.has_scale) {
    req.sub = Subresource::kScale;
  } else if (req.subresource == "token" && rt.has_token) {
    if (verb != "create") {
      RespondError(req, MethodNotAllowedError("the server does not allow this method on the "
                                              "requested resource"));
      return false;
    }
  } else if (!req.subresource.empty()) {
    RespondError(req, NotFoundPathError(http.path));
    return false;
  }
  if (rt.namespaced && req.ns.empty() && !req.name.empty()) {
    RespondError(req, NotFoundPathError(http.path));
    return false;
  }
  if (!rt.namespaced && !req.ns.empty()) {
    RespondError(req, NotFoundPathError(http.path));
    return false;
  }
  if (rt.namespaced && req.ns.empty() && verb != "list" && verb != "watch") {
    RespondError(req, NotFoundPathError(http.path));
    return false;
  }
  return true;
}

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

// ---- authorization, reviews and tokens --------------------------------------------------

WriteOptions RestHandler::WriteOptionsFor(const Request& r) {
  WriteOptions opts = WriteOptionsOf(r.http);
  opts.admit = EscalationCheck(api_.storage(), r.user, *r.type, r.ns, r.name);
  return opts;
}

bool RestHandler::Authorized(Request& r, const AccessAttributes& a) {
  const AccessDecision d = Authorize(api_.storage(), r.user, a);
  if (d.allowed) return true;
  RespondError(r, ForbiddenAccessError(r.user, a, d.reason));
  return false;
}

bool RestHandler::AuthorizeResource(Request& r) {
  AccessAttributes a;
  a.verb = r.verb;
  if (a.verb == "proxy") {  // services/proxy: the verb of the HTTP method, as RequestInfo
    const std::string& m = r.http.method;
    a.verb = m == "GET" || m == "HEAD" ? "get"
             : m == "POST"             ? "create"
             : m == "PUT"              ? "update"
             : m == "PATCH"            ? "patch"
             : m == "DELETE"           ? "delete"
                                       : AsciiLower(m);
  }
  a.group = r.type->group;
  a.resource = r.type->resource;
  a.subresource = r.subresource;
  a.ns = r.ns;
  a.name = r.name;
  return Authorized(r, a);
}

void RestHandler::ServeReview(Request& r) {
  Json body;
  if (!DecodeBody(r, &body) || !ValidateBody(r, &body, "CreateOptions")) return;
  const std::string& resource = r.type->resource;
  if (resource == "selfsubjectaccessreviews") {
    SendResult(r, ReviewSelfSubjectAccess(api_.storage(), r.user, std::move(body)), 201);
  } else if (resource == "selfsubjectrulesreviews") {
    SendResult(r, ReviewSelfSubjectRules(api_.storage(), r.user, body), 201);
  } else {
    SendResult(r, ReviewSelfSubject(r.user, api_.clock().WallNow()), 201);
  }
}

void RestHandler::ServeTokenRequest(Request& r) {
  Json body;
  if (!DecodeBody(r, &body)) return;
  SendResult(r,
             RequestServiceAccountToken(tokens_, api_.storage(), r.ns, r.name, std::move(body),
                                        api_.clock().WallNow()),
             201);
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

void RestHandler::Guarded(Request& req, const std::function<void()>& fn) {
  // Bad input must never take the server down: a body whose fields have the wrong JSON types
  // can make defaulting code throw; answer it as the API server would (400), anything else 500.
  try {
    fn();
  } catch (const Json::type_error& e) {
    if (req.writer) {
      RespondError(req, BadRequestError(std::string("the object's fields have the wrong types: ") +
                                        e.what()));
    }
  } catch (const std::exception& e) {
    if (req.writer) RespondError(req, InternalError(e.what()));
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
  Output output = NegotiateResource(h.headers.Get("Accept"));
  auto session = std::make_shared<WatchSession>(
      *this, rt, wr.ns, std::move(labels).value(), std::move(fields).value(), output,
      IncludeObjectParam(h.Query("includeObject")), req.writer, req.record);
  req.responded = true;
  if (too_large) {
    session->FailWith(*too_large);
    Finish(req, 200);
    return;
  }
  auto watcher = api_.storage().Watch(wr);
  if (!watcher.ok()) {
    StatusError expired = ExpiredError(watcher.status().message());
    session->FailWith(expired);
    Finish(req, 200);
    return;
  }
  {
    MutexLock lock(mu_);
    if (stopping_) {
      req.writer->Abort();
      return;
    }
    sessions_.insert(session);
  }
  Finish(req, 200);
  session->Start(std::move(watcher).value(), bookmarks, initial_end, wr.from_revision, timeout,
                 faults_.ForWatch());
}

}  // namespace steward::cluster
