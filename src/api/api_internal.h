// Internals of the API server shared by its .cc files (not part of the module's public surface).
//
// Threading: HttpServer I/O threads only route, authenticate and hand each request to the
// TaskPool; handlers run on the pool. The store listener (on the committing thread; it never
// calls the store) completes ?wait= waiters, applies the change to the view and hands it to the
// WatchHub, which numbers and renders it once and writes it to the watch streams from its own
// fan-out thread (see WatchHub); Scheduler timers end waits and send keep-alives.
//
// Lock order: WatchHub's own (see there); InstanceHandlers' own (see there); wait_mu_ alone.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "api/api_server.h"
#include "api/project_view.h"
#include "common/ascii.h"
#include "common/json.h"
#include "common/metrics.h"
#include "common/mutex.h"
#include "common/scheduler.h"
#include "common/status.h"
#include "net/http.h"
#include "net/http_server.h"
#include "store/store.h"

namespace steward::api {

// A fixed set of threads running posted tasks in order of posting. Join() runs what is queued,
// then joins; Post after Join has begun returns false and drops the task. With `max_queued`
// (0: no bound), Offer also refuses a task while that many wait for a thread.
class TaskPool {
 public:
  explicit TaskPool(int threads, size_t max_queued = 0);
  ~TaskPool();
  bool Post(std::function<void()> task);
  enum class Offered { kQueued, kFull, kStopping };
  Offered Offer(std::function<void()> task);
  size_t queued() const;  // tasks waiting for a thread
  void Join();

 private:
  void Run() EXCLUDES(mu_);
  mutable Mutex mu_;
  CondVar cv_;  // a task was posted, or Join began
  std::deque<std::function<void()>> tasks_ GUARDED_BY(mu_);
  bool joining_ GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_ GUARDED_BY(mu_);
  const size_t max_queued_;
};

// An error answer: {"error": {"code", "reason", "message", "field"?}}.
struct ErrorAnswer {
  int status = 500;
  std::string reason = "Internal";
  std::string message;
  std::string field;  // "" = none
};
ErrorAnswer MakeError(int status, std::string reason, std::string message, std::string field = "");
ErrorAnswer BadArgument(std::string field, std::string message);  // 400 InvalidArgument
// Maps an engine/store Status (see docs/api.md): kInvalidArgument → 400 with the status's field
// (Status::field()), kNotFound → 404, kFailedPrecondition/kAlreadyExists → 409 Conflict,
// kUnavailable/kDeadlineExceeded → 503, anything else → 500.
ErrorAnswer FromStatus(const Status& status);
// Bodies of the operations: none at all (NoFields: kInvalidArgument naming the first key), or
// {"token": "<non-empty>"} (TokenOf: the token, or kInvalidArgument naming the field).
Status NoFields(const Json& body);
StatusOr<std::string> TokenOf(const Json& body);
Json ErrorJson(const ErrorAnswer& e);

// Opaque page tokens: the last id of the page.
std::string EncodeContinue(std::string_view last_id);
std::optional<std::string> DecodeContinue(std::string_view token);
// "2026-11-30T04:00:03.123Z".
std::string FormatTimeMs(int64_t ms_since_epoch);

// The project representation of docs/api.md.
Json ProjectJson(const store::ProjectRecord& r);
// The stored status, or {"phase":"Pending","reason":"Accepted",...} when none yet.
Json StatusJson(const store::ProjectRecord& r);
std::string PhaseOf(const store::ProjectRecord& r);  // "" stored = "Pending"
// Done with `generation` (docs/api.md): observed >= generation and the phase is the desired
// resting one (Running / Suspended) or Failed.
bool IsDone(const store::ProjectRecord& r, int64_t generation);

// Instance calls' failures as answers (instance_handlers.cc): kFailedPrecondition → 409
// ProjectNotRunning, kAborted/kOutOfRange → 502 InstanceError, kUnavailable/kDeadlineExceeded →
// 503, anything else as FromStatus. FromInstance also says the record's phase for a 409.
ErrorAnswer FromInstanceStatus(const Status& s);
ErrorAnswer FromInstance(const store::ProjectRecord& r, const Status& s);
// The Service of a project's (or agent's) pods.
std::string ServiceOf(const store::ProjectRecord& r);

// One request in flight.
struct Call {
  net::HttpRequest request;
  std::shared_ptr<net::ResponseWriter> writer;
  std::string route;  // the matched pattern, for metrics ("other" when none)
  std::vector<std::string> params;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::atomic<bool> answered{false};
};
using CallPtr = std::shared_ptr<Call>;

class Server;
class InstanceHandlers;
class RecordHandlers;
// A route's handler: a member function of the Server or of one of its handler classes, bound.
using HandlerFn = std::function<void(const CallPtr&)>;

// One method of a route: its handler and the query parameters it takes (any other, or one given
// twice, is answered 400 naming it).
struct Method {
  HandlerFn fn = nullptr;
  std::vector<std::string> params;
};

struct Route {
  // "/v1/projects/{project}/start"; a last segment "{name...}" matches one or more segments,
  // captured as one parameter, joined with '/' (each decoded; an empty one kept as "").
  std::string pattern;
  std::vector<std::string> segments;
  std::map<std::string, Method> methods;  // "GET" → handler
  bool open = false;                      // no authentication
  bool large_body = false;                // bodies up to ApiOptions::max_file_bytes
};

// The path of a request target as sent (net::RawPath), split at '/' and each segment
// percent-decoded. nullopt when a segment decodes to
// something holding '/' (an escaped "%2F"): such a path cannot name a route segment.
std::optional<std::vector<std::string>> PathSegments(std::string_view target);
// The first problem with `query` for a method taking `allowed`: an unknown or repeated
// parameter; nullopt when there is none.
std::optional<ErrorAnswer> CheckQuery(const std::vector<std::pair<std::string, std::string>>& query,
                                      const std::vector<std::string>& allowed);

// A pending ?wait=.
struct Waiter {
  CallPtr call;
  std::string project_id;
  int64_t generation = 0;
  bool until_purged = false;
  int done_status = 200;  // 200, or 201 for a create
  std::optional<store::ProjectRecord> last;
  int64_t last_version = 0;
  Scheduler::TaskId timer = 0;
  bool finished = false;
};

// One committed change as the watch streams see it: its SSE text (a `project`, `agent` or
// `deleted` event, docs/api.md, whose id is EventId(feed, position)), rendered once by the store
// listener and shared by every stream and the replay window, and what routing it needs.
// Immutable once queued.
struct StreamEvent {
  uint64_t position = 0;  // 1, 2, ...: one more per change, in feed (commit) order
  store::RecordKind kind = store::RecordKind::kProject;
  std::string project_id;
  std::string name;  // the project's name (a purge: the name it had)
  std::string team;
  int64_t version = 0;  // the record version; a purge: the last version + 1
  bool purged = false;
  std::shared_ptr<const std::string> text;
};

// A watch event id: "<feed>.<position>" (docs/api.md): the store's FeedId() and the change's
// position in it.
std::string EventId(std::string_view feed, uint64_t position);
struct ParsedEventId {
  std::string feed;
  uint64_t position = 0;
};
// Parses an id strictly: a feed id of 1..32 characters [0-9a-z], '.', a position in canonical
// decimal (digits only, no sign, no leading zero, at most 2^63 - 1). nullopt for anything else.
std::optional<ParsedEventId> ParseEventId(std::string_view text);

// Whether a stream may resume after `last_id` (a Last-Event-ID) on a server of feed `feed` whose
// replay window holds the positions [oldest, current] (oldest = current + 1 when it holds none):
// kResume when the id is this feed's and oldest - 1 <= position <= current; otherwise the
// reason the stream starts over with a snapshot (the `reset` event's reason).
enum class ResumeVerdict { kResume, kMalformed, kUnknownFeed, kExpired, kAhead };
ResumeVerdict JudgeResume(std::string_view last_id, std::string_view feed, uint64_t oldest,
                          uint64_t current);
std::string_view ResetReason(ResumeVerdict v);  // "Malformed", "UnknownFeed", "Expired", "Ahead"

// The SSE texts of docs/api.md: a `project` (or `agent`) event, a `deleted` event (data.version
// when `version` > 0), the `sync` that ends a snapshot, the `resumed` that ends a replay, the
// `reset` that begins a snapshot in place of a resume, and the `error` events that end a stream
// whose client does not keep up, or every stream when the server's fan-out fell behind.
// `json`: DumpJson(ProjectJson(record)) of a record of `kind`.
std::string ProjectEvent(store::RecordKind kind, const std::string& json, std::string_view id);
std::string DeletedEvent(const std::string& project_id, const std::string& name, int64_t version,
                         std::string_view id);
std::string SyncEvent(size_t projects, std::string_view id);
std::string ResumedEvent(std::string_view from, size_t replayed, std::string_view id);
std::string ResetEvent(std::string_view reason, std::string_view message);
std::string SlowConsumerEvent(size_t pending_bytes);
// The `error` event that ends every stream when the fan-out fell behind by more than its bound.
std::string FanoutBehindEvent(size_t queued_bytes);

// A watch stream. Fed by the fan-out thread (live changes), its handler (the snapshot) and the
// keep-alive timer, each with `mu` held.
struct Stream {
  CallPtr call;
  // Filter: a change matches when its project's id or name equals this ("" = every project).
  // A name that does not exist yet is fine: the stream then shows the project once created.
  std::string project;
  std::string team;                                                     // filter; "" = every team
  std::optional<store::RecordKind> kind = store::RecordKind::kProject;  // nullopt: every kind
  Mutex mu;
  bool initial GUARDED_BY(mu) = false;  // began with a snapshot of the current projects
  bool live GUARDED_BY(mu) = false;     // false while the snapshot or replay is being written
  // The position the stream starts after: every change up to it is in its snapshot or replay,
  // so the fan-out skips those still queued; every later one reaches it through the fan-out.
  uint64_t after GUARDED_BY(mu) = 0;
  bool ended GUARDED_BY(mu) = false;
  // Output queued on the connection and not yet sent beyond which the stream is ended with a
  // SlowConsumer error: WatchHub::stream_pending_limit() plus the size of the initial snapshot
  // (written at once, it drains at the client's pace).
  size_t max_pending GUARDED_BY(mu) = 0;
  std::vector<StreamEvent> buffered GUARDED_BY(mu);  // changes seen before `live`
  // Per project, for the snapshot hand-over.
  std::map<std::string, int64_t> sent_versions GUARDED_BY(mu);
};

// How a watch stream begins (WatchHub::RegisterStream).
struct WatchStart {
  bool stopping = false;  // the server is stopping: the stream was not registered (and is ended)
  uint64_t at = 0;        // the position the stream starts after (its sync's or resumed's id)
  std::string from;       // the Last-Event-ID (or since=) asked for; "" = none
  ResumeVerdict verdict = ResumeVerdict::kResume;  // for `from` when set
  std::string reset_message;                       // why `from` cannot be resumed from
  // A resume: the changes after `from` up to `at` that match the stream, in order.
  std::vector<StreamEvent> replay;
};

// The streams of GET /v1/watch (docs/api.md) and what feeds them: the changes' positions, the
// replay window a resuming client is served from, the fan-out thread ("api-fanout") that writes
// each change to every matching stream in commit order, and the keep-alives. Every change is
// rendered once (Publish), whatever the number of streams; a stream whose client does not keep
// up is ended (SlowConsumer), never waited for, and a fan-out that falls behind by more than its
// bound ends every stream (Overloaded) rather than hold memory without bound.
//
// Ids are "<feed>.<position>": the store's FeedId() and its position of the change, the same on
// every replica sharing the store and across restarts.
//
// Threading: Publish runs on the store's committing thread (the listener), Serve on the API's
// pool, the fan-out on its own thread, keep-alives on the scheduler. Lock order, where several
// are held: a Stream's mu (only while RegisterStream registers it; otherwise a Stream's mu is
// taken alone), then ring_mu_, then streams_mu_; fanout_mu_ and hook_mu_ alone.
class WatchHub {
 public:
  struct Options {
    size_t window_events = 0;  // the replay window's bounds (either 0: no window)
    size_t window_bytes = 0;
    std::chrono::milliseconds keepalive{15000};
    // steward_watch_streams_ended_total{reason}: streams ended because they fell behind,
    // "slow_consumer" (the client did not read) or "fanout_behind" (the fan-out fell behind the
    // store's changes: every open stream). Null: not counted. Outlives the hub.
    CounterFamily* ended = nullptr;
  };
  // The current records a snapshot of `s` shows (its filters applied), rendered.
  using SnapshotFn = std::function<std::vector<ProjectView::ItemPtr>(const Stream& s)>;

  // `pool` (stream removals) and `scheduler` (keep-alives) must outlive the hub.
  WatchHub(std::string feed, Options options, TaskPool& pool, Scheduler& scheduler,
           SnapshotFn snapshot);
  ~WatchHub();
  WatchHub(const WatchHub&) = delete;
  WatchHub& operator=(const WatchHub&) = delete;

  // Starts the fan-out thread and the keep-alives. `position`: the store's last position when
  // the server began to listen (a change delivered before this keeps its own).
  void Start(uint64_t position) EXCLUDES(ring_mu_);
  // The store listener's part: gives `change` its position and, unless no stream is open and
  // the window is off, renders its event (`json`: the record as rendered; unused for a purge),
  // keeps it in the window and queues it for the fan-out.
  void Publish(const store::ProjectChange& change, const std::shared_ptr<const std::string>& json)
      EXCLUDES(ring_mu_, streams_mu_, fanout_mu_);
  // Serves a stream whose answer has begun (on the pool): registers it, sends its snapshot or
  // replay (`from`: the Last-Event-ID or since=, "" for none), then it goes live. After Stop(),
  // ends it at once.
  void Serve(const std::shared_ptr<Stream>& s, std::string from, bool initial);
  // The fan-out writes what it has queued and ends; then every open stream ends cleanly (its
  // last chunk). Idempotent.
  void Stop() EXCLUDES(fanout_mu_, streams_mu_);

  const std::string& feed() const { return feed_; }
  // The unsent output beyond which a stream is ended (beyond its snapshot).
  size_t stream_pending_limit() const { return stream_pending_limit_.load(); }

 private:
  friend struct ServerTestPeer;
  friend struct WatchTestPeer;

  // Registers `s` under ring_mu_ and streams_mu_, so that nothing falls between what it is sent
  // first and what the fan-out hands it: every change up to `at` is in its snapshot (read after
  // this) or its replay (copied from the window here), every later one reaches it through the
  // fan-out (buffered until it is live). Sets the stream's mode from `from` and `initial`.
  WatchStart RegisterStream(const std::shared_ptr<Stream>& s, std::string from, bool initial)
      EXCLUDES(ring_mu_, streams_mu_, s->mu);
  // A `reset` (when `start` is a refused resume), the current projects, then `sync` at start.at.
  void SendSnapshot(const std::shared_ptr<Stream>& s, const WatchStart& start) EXCLUDES(s->mu);
  // The replay, then `resumed` at start.at.
  void SendReplay(const std::shared_ptr<Stream>& s, const WatchStart& start) EXCLUDES(s->mu);
  // Writes what the fan-out buffered during the snapshot or replay and makes the stream live.
  void GoLiveLocked(const std::shared_ptr<Stream>& s) REQUIRES(s->mu);
  // Whether `e` passes the stream's filters (project, team, kind).
  static bool Matches(const Stream& s, const StreamEvent& e);
  // Runs the test hook, if any (no lock held).
  void RunWatchHook(std::string_view stage) EXCLUDES(hook_mu_);
  // Adds a change to the replay window, dropping the oldest beyond the window's bounds.
  void KeepLocked(StreamEvent e) REQUIRES(ring_mu_);
  // The fan-out thread: takes every queued event at once and hands each stream its share of
  // them in one write, in queue (= commit) order. Returns once stopping and the queue is empty.
  void FanoutLoop() EXCLUDES(fanout_mu_);
  void FanOut(const std::vector<StreamEvent>& batch) EXCLUDES(streams_mu_);
  // Ends every open stream with FanoutBehindEvent (after what each has queued).
  void EndStreamsBehind(size_t queued_bytes) EXCLUDES(streams_mu_);
  // Adds `e` to `out` unless the stream already showed it (s->mu held); true when added.
  static bool AppendLocked(Stream& s, const StreamEvent& e, std::string* out) REQUIRES(s.mu);
  // Writes `text` unless the client has more than s->max_pending bytes unsent, in which case the
  // stream is ended with a SlowConsumer error (s->mu held); false when the stream has ended.
  bool SendLocked(const std::shared_ptr<Stream>& s, std::string text) REQUIRES(s->mu);
  // Writes one piece (s->mu held); false when the client is gone (the stream is then ended).
  bool WriteLocked(const std::shared_ptr<Stream>& s, std::string text) REQUIRES(s->mu);
  void KeepAlive() EXCLUDES(streams_mu_);
  void DropStream(const std::shared_ptr<Stream>& s) EXCLUDES(streams_mu_, s->mu);

  const std::string feed_;
  const Options options_;
  TaskPool& pool_;
  Scheduler& scheduler_;
  const SnapshotFn snapshot_;

  Mutex ring_mu_;
  uint64_t position_ GUARDED_BY(ring_mu_) = 0;         // the last change's; 0 = none yet
  std::deque<StreamEvent> ring_ GUARDED_BY(ring_mu_);  // positions position_ - size + 1 ...
  size_t ring_bytes_ GUARDED_BY(ring_mu_) = 0;         // their texts' sizes

  Mutex streams_mu_;
  std::vector<std::shared_ptr<Stream>> streams_ GUARDED_BY(streams_mu_);
  bool stopping_ GUARDED_BY(streams_mu_) = false;

  // Tests: run by Serve, with no lock held, with "register" just before a stream is registered
  // and "registered" just after, before its snapshot or replay is sent.
  Mutex hook_mu_;
  std::function<void(std::string_view stage)> watch_hook_ GUARDED_BY(hook_mu_);

  // A stream whose client leaves more than this unsent (beyond its snapshot) is ended.
  static constexpr size_t kStreamPendingLimit = 1 << 20;
  std::atomic<size_t> stream_pending_limit_{kStreamPendingLimit};  // tests may lower it

  // Store listener → fan-out thread: what the fan-out has not taken yet, which it takes all at
  // once (a lagging fan-out writes each stream many changes per write). Bounded by the text it
  // holds: past the bound the queue is dropped, nothing more is queued until the fan-out has
  // seen that, and it then ends every open stream with an `error` event (Overloaded) — each
  // client reconnects with its last event id, and the replay window (filled by the listener,
  // not from this queue) gives it what was dropped — instead of holding memory without bound.
  static constexpr size_t kFanoutQueueLimit = 64u << 20;
  std::atomic<size_t> fanout_queue_limit_{kFanoutQueueLimit};  // tests may lower it
  Mutex fanout_mu_;
  CondVar fanout_cv_;  // an event was queued, the queue overflowed, or stopping
  std::vector<StreamEvent> fanout_queue_ GUARDED_BY(fanout_mu_);
  size_t fanout_queued_bytes_ GUARDED_BY(fanout_mu_) = 0;
  // The bytes queued when the queue overflowed; 0 when it has not (or the fan-out has seen it).
  size_t fanout_overflow_bytes_ GUARDED_BY(fanout_mu_) = 0;
  bool fanout_stop_ GUARDED_BY(fanout_mu_) = false;
  std::thread fanout_thread_;
};

// Server: the API server's core — the listeners, routing and authentication, the answers (with
// their metrics), the ?wait= waiters, the list view kept by the store listener, and the watch
// (with WatchHub). The routes themselves run in RecordHandlers (record_handlers.h: the store's
// records) and InstanceHandlers (instance_handlers.h: a project's pods), which Init makes and
// the route table binds; Server's own handlers are the probes, /metrics, /ui and the watch.
class Server final : public ApiServer, public net::Handler {
 public:
  Server(ApiOptions options, ApiDeps deps);
  ~Server() override;
  Status Init();
  uint16_t port() const override;
  uint16_t probe_port() const override;
  void Stop() override;
  // Requests of the main listener.
  void Handle(net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer) override;
  // Refuses a request without the token from its head alone (main listener).
  std::optional<net::HttpResponse> CheckHead(const net::HttpRequest& head) override;
  // The files routes' limit (maxFileBytes) for them, maxBodyBytes for the rest.
  std::optional<size_t> BodyLimit(const net::HttpRequest& head) override;
  // Requests of either listener: `probe` for the probe listener (open routes only).
  void Dispatch(net::HttpRequest request, std::shared_ptr<net::ResponseWriter> writer, bool probe);
  // The route table, fixed once constructed (docs/openapi.yaml describes each; a test compares).
  const std::vector<Route>& routes() const { return routes_; }

  // Answers (each records the request metrics; later answers to the same call are ignored).
  void Reply(const CallPtr& call, int status, const Json& body, net::Headers headers = {});
  void ReplyText(const CallPtr& call, int status, std::string body, std::string content_type,
                 net::Headers headers = {});
  void ReplyError(const CallPtr& call, const ErrorAnswer& e, net::Headers headers = {});
  void RecordMetrics(const Call& call, int status);
  // The request's JSON body; nullopt after answering the error (`required`: an empty body is
  // one).
  std::optional<Json> ReadJsonBody(const CallPtr& call, bool required);
  // Answers 200 text/event-stream (no caching, no proxy buffering) and starts the stream.
  void BeginEventStream(const CallPtr& call);
  // Answers `rec` at once with `immediate_status` or, with `wait`, once the change is done
  // (Running, Suspended, purged when `until_purged`) with `done_status`, or when the wait ends.
  void AnswerOrWait(const CallPtr& call, const store::ProjectRecord& rec, int immediate_status,
                    int done_status, std::optional<std::chrono::milliseconds> wait,
                    bool until_purged);
  // The records `filter` selects from the view, which the store listener keeps (each rendered
  // once); nullopt when the view lags the store (then read the store).
  std::optional<std::vector<ProjectView::ItemPtr>> ViewList(const store::ListFilter& filter);
  // The view's item for a record read from the store (rendered now).
  static ProjectView::ItemPtr Rendered(const store::ProjectRecord& r);

  // Handlers (run on the pool).
  void HandleHealthz(const CallPtr& call);
  void HandleReadyz(const CallPtr& call);
  void HandleMetrics(const CallPtr& call);
  // /ui and /ui/{file}: the dashboard's embedded files, without the token (they hold no data;
  // every call the page makes carries it). Answered on the I/O thread (no blocking work).
  void HandleUi(const CallPtr& call);
  void HandleWatch(const CallPtr& call);

 private:
  friend struct ServerTestPeer;
  friend struct WatchTestPeer;
  // Whether view_ holds every change the store had committed when asked (waiting up to
  // kViewCatchUp for it); false also when the store cannot say.
  bool ViewCaughtUp();

  // ?wait= machinery.
  void FinishWaiter(const std::shared_ptr<Waiter>& w, bool done);
  void SendWaiterAnswer(const std::shared_ptr<Waiter>& w, bool done);

  // Store listener: completes waiters, applies the change to the view (rendering it once), and
  // hands it to the watch hub.
  void OnChange(const store::ProjectChange& change);

  // GET /v1/watch (watch_hub.cc). The stream the query asks for (`initial` from its query);
  // nullptr after answering 400.
  std::shared_ptr<Stream> NewStream(const CallPtr& call, bool* initial);
  // The current records a snapshot of `s` shows: from the view when it is caught up, else the
  // store (or the one project asked for).
  std::vector<ProjectView::ItemPtr> Snapshot(const Stream& s);

  // The route whose pattern has these segments (parameters captured), or nullptr.
  const Route* Match(const std::vector<std::string>& segs, std::vector<std::string>* params) const;
  // The route a request of this listener reaches (nullptr: none); `segments` nullopt for a path
  // with an escaped '/'.
  const Route* Resolve(const net::HttpRequest& request, bool probe,
                       std::optional<std::vector<std::string>>* segments,
                       std::vector<std::string>* params) const;
  // The 401 a request gets before anything else; nullopt when no token is needed or it is valid.
  std::optional<ErrorAnswer> AuthError(const net::HttpRequest& request, const Route* route,
                                       bool probe) const;
  bool Authorized(const net::HttpRequest& request) const;

  ApiOptions options_;
  ApiDeps deps_;
  std::vector<Route> routes_;
  std::unique_ptr<TaskPool> pool_;
  std::unique_ptr<TaskPool> credential_pool_;  // PUTs with supplied credentials (ApiOptions)
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<net::HttpServer> http_;
  std::unique_ptr<net::Handler> probe_handler_;
  std::unique_ptr<net::HttpServer> probe_http_;
  CounterFamily* requests_total_ = nullptr;
  HistogramFamily* request_duration_ = nullptr;

  std::atomic<bool> stopping_{false};
  Mutex stop_mu_;
  bool stopped_ GUARDED_BY(stop_mu_) = false;

  // The store listener (Stop removes it, which waits for a delivery under way).
  int listener_handle_ = -1;

  // Guards waiters_ and every Waiter's fields.
  Mutex wait_mu_;
  std::multimap<std::string, std::shared_ptr<Waiter>> waiters_ GUARDED_BY(wait_mu_);  // by id

  // Every record as rendered, kept by the listener (OnChange); lists and snapshots read it.
  ProjectView view_;
  static constexpr std::chrono::seconds kViewCatchUp{1};
  std::atomic<bool> view_reloading_{false};  // a Load after a gap is queued or running
  CounterFamily* list_sources_ = nullptr;    // lists and snapshots, by where they were read

  // GET /v1/watch's streams, their positions, replay window and fan-out (made by Init).
  std::unique_ptr<WatchHub> hub_;

  // The routes over the store's records, and those that talk to pods with their resources
  // streams (made by Init).
  std::unique_ptr<RecordHandlers> records_;
  std::unique_ptr<InstanceHandlers> instances_;
};

}  // namespace steward::api
