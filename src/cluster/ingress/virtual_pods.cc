#include "cluster/ingress/virtual_pods.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "cluster/controllers/container_env.h"
#include "cluster/ingress/launcher_answers.h"
#include "common/ascii.h"
#include "common/json_access.h"
#include "common/time_util.h"
#include "net/http_client.h"

namespace steward::cluster::ingress {

namespace {

constexpr size_t kMaxLogLines = 1000;
constexpr size_t kMaxSamples = 2520;  // the launcher's SampleBuffer (3.5 h at its 5 s default)
constexpr std::string_view kLauncherContainer = "node-red";
constexpr std::string_view kAgentContainer = "mqtt-schema-agent";
// What the stand-in models: the launcher release the real-launcher check ran (docs/flowfuse.md);
// with MCP commands on, "+mcp" says it answers them as the launcher's main branch does.
constexpr std::string_view kNodeRedVersion = "4.1.15";
constexpr std::string_view kLauncherVersion = "2.29.1";
constexpr std::string_view kNodeVersion = "20.20.2";

// Fields a proxy does not pass on (RFC 9110 §7.6.1), and Content-Length, which is recomputed.
bool IsHopByHop(std::string_view name) {
  for (std::string_view h : {"Connection", "Keep-Alive", "Proxy-Connection", "TE", "Trailer",
                             "Transfer-Encoding", "Upgrade", "Content-Length"}) {
    if (AsciiEqualsIgnoreCase(name, h)) return true;
  }
  return false;
}

// The launcher's 4 hex digits of md5(hostname) that tag its log entries and samples; any stable
// 4 hex digits will do.
std::string SrcOf(const std::string& pod_name) {
  char src[8];
  snprintf(src, sizeof src, "%04x",
           static_cast<unsigned>(std::hash<std::string>{}(pod_name)&0xffff));
  return src;
}

// Express's res.sendStatus(): the status text as text/plain.
net::HttpResponse StatusText(int status, std::string_view text) {
  net::HttpResponse r;
  r.status = status;
  r.headers.Set("Content-Type", "text/plain; charset=utf-8");
  r.body = std::string(text);
  return r;
}

int IntField(const Json& obj, std::string_view key, int fallback = 0) {
  return static_cast<int>(GetInt(obj, key, fallback));
}

std::string HtmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

// The container that declares `port`, if any.
const Json* ContainerForPort(const Json& pod, int port, std::string* port_name) {
  for (const Json& c : ArrayMemberOrEmpty(MemberOrNull(pod, "spec"), "containers")) {
    for (const Json& p : ArrayMemberOrEmpty(c, "ports")) {
      if (IntField(p, "containerPort", -1) == port) {
        *port_name = GetString(p, "name");
        return &c;
      }
    }
  }
  return nullptr;
}

// The launcher's container: "node-red", else the one declaring a "management" port, else the
// first.
const Json* LauncherContainer(const Json& pod) {
  const Json& containers = ArrayMemberOrEmpty(MemberOrNull(pod, "spec"), "containers");
  for (const Json& c : containers) {
    if (GetString(c, "name") == kLauncherContainer) return &c;
  }
  for (const Json& c : containers) {
    for (const Json& p : ArrayMemberOrEmpty(c, "ports")) {
      if (GetString(p, "name") == "management") return &c;
    }
  }
  return containers.empty() ? nullptr : &containers[0];
}

// The MQTT schema agent's container, if the pod has one.
const Json* AgentContainer(const Json& pod) {
  for (const Json& c : ArrayMemberOrEmpty(MemberOrNull(pod, "spec"), "containers")) {
    if (GetString(c, "name") == kAgentContainer) return &c;
  }
  return nullptr;
}

// Whether a request to `port` reaches the MQTT schema agent: `declaring` (the container that
// declares the port, or null) is its container, or nothing declares the port, it is the agent's
// port and the agent's container declares none.
bool AgentServes(const Json& pod, const Json* declaring, int port) {
  if (declaring != nullptr) return GetString(*declaring, "name") == kAgentContainer;
  if (port != kAgentPort) return false;
  const Json* agent = AgentContainer(pod);
  return agent != nullptr && ArrayMemberOrEmpty(*agent, "ports").empty();
}

// Whether the agent could fetch its broker credentials from the platform
// (GET <FORGE_URL>/api/v1/teams/<team>/brokers/<broker>/credentials with the team token): the
// stand-in calls nothing, so it asks only that every part of that request be there.
bool AgentHasCredentials(const std::vector<std::pair<std::string, std::string>>& env) {
  auto value = [&](std::string_view name) -> std::string_view {
    for (const auto& [k, v] : env) {
      if (k == name) return v;
    }
    return {};
  };
  const std::string_view url = value("FORGE_URL");
  const bool http = (url.starts_with("http://") && url.size() > 7) ||
                    (url.starts_with("https://") && url.size() > 8);
  return http && !value("FORGE_TEAM_ID").empty() && !value("FORGE_BROKER_ID").empty() &&
         !value("FORGE_TEAM_TOKEN").empty();
}

bool AcceptsJson(const net::HttpRequest& request) {
  return request.headers.Get("Accept").find("application/json") != std::string_view::npos;
}

std::string HostOf(const net::HttpRequest& request) {
  return std::string(request.headers.Get("Host"));
}

}  // namespace

net::HttpResponse JsonResponse(int status, const Json& body) {
  net::HttpResponse r;
  r.status = status;
  r.headers.Set("Content-Type", "application/json; charset=utf-8");
  r.body = DumpJson(body);
  return r;
}

net::HttpResponse ExpressErrorPage(int status, std::string_view message) {
  net::HttpResponse r;
  r.status = status;
  r.headers.Set("Content-Security-Policy", "default-src 'none'");
  r.headers.Set("X-Content-Type-Options", "nosniff");
  r.headers.Set("Content-Type", "text/html; charset=utf-8");
  r.body =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>Error</title>\n</head>\n<body>\n<pre>" +
      HtmlEscape(message) + "</pre>\n</body>\n</html>\n";
  return r;
}

VirtualPods::VirtualPods(ObjectApi& api) : api_(api) {}

StatusOr<std::unique_ptr<VirtualPods>> VirtualPods::Create(ObjectApi& api) {
  std::unique_ptr<VirtualPods> pods(new VirtualPods(api));
  VirtualPods* raw = pods.get();
  auto feed = WatchFeed::Start(api.storage(), {"pods"},
                               [raw](const WatchEvent& ev) { raw->OnPodEvent(ev); });
  if (!feed.ok()) return feed.status();
  pods->feed_ = std::move(feed).value();
  return pods;
}

VirtualPods::~VirtualPods() { Stop(); }

void VirtualPods::Stop() {
  if (feed_) feed_->Stop();
}

bool VirtualPods::IsServing(const Json& pod) {
  const Json& meta = MemberOrNull(pod, "metadata");
  if (!MemberOrNull(meta, "deletionTimestamp").is_null()) return false;
  const Json& status = MemberOrNull(pod, "status");
  if (GetString(status, "phase") != "Running") return false;
  for (const Json& c : ArrayMemberOrEmpty(status, "conditions")) {
    if (GetString(c, "type") == "Ready") return GetString(c, "status") == "True";
  }
  return false;
}

int64_t VirtualPods::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             api_.clock().WallNow().time_since_epoch())
      .count();
}

void VirtualPods::AppendLog(PodState& state, int64_t ts, std::string level, std::string msg) {
  // Launcher log timestamps are used as cursors by clients: strictly increasing, entries of one
  // millisecond told apart by the counter (lib/logBuffer.js).
  int seq = 0;
  if (!state.logs.empty()) {
    const LogLine& last = state.logs.back();
    if (ts <= last.ts) {
      ts = last.ts;
      seq = last.seq + 1;
      if (seq > 9999) {
        ++ts;
        seq = 0;
      }
    }
  }
  state.logs.push_back({ts, seq, std::move(level), std::move(msg)});
  if (state.logs.size() > kMaxLogLines) {
    state.logs.erase(state.logs.begin(),
                     state.logs.begin() + static_cast<long>(state.logs.size() - kMaxLogLines));
  }
}

std::vector<std::pair<std::string, std::string>> VirtualPods::ResolveEnv(
    const Json& pod, const Json& container) const {
  return controllers::ResolveContainerEnv(api_.storage(), pod, container);
}

VirtualPods::PodState VirtualPods::StartPod(const Json& pod) const {
  PodState state;
  const Json& meta = MemberOrNull(pod, "metadata");
  state.ns = GetString(meta, "namespace");
  state.name = GetString(meta, "name");
  if (const Json* c = LauncherContainer(pod)) state.env = ResolveEnv(pod, *c);
  state.project_id = state.name;
  for (const auto& [k, v] : state.env) {
    if (k == "FORGE_PROJECT_ID" && !v.empty()) state.project_id = v;
  }
  int64_t now = NowMs();
  // The kubelet's record of when the container started is the truth; the watch that brings
  // us here may lag it a little.
  if (const Json* launcher = LauncherContainer(pod)) {
    const std::string container = GetString(*launcher, "name");
    for (const Json& cs : ArrayMemberOrEmpty(MemberOrNull(pod, "status"), "containerStatuses")) {
      if (GetString(cs, "name") != container) continue;
      const Json* started = FindPath(cs, "state.running.startedAt");
      if (started == nullptr || !started->is_string()) continue;
      if (auto t = ParseRfc3339(started->get<std::string>())) {
        now = std::chrono::duration_cast<std::chrono::milliseconds>(t->time_since_epoch()).count();
      }
    }
  }
  if (const Json* agent = AgentContainer(pod)) {
    // The real agent connects at start-up ("default to running", lib/api.js).
    state.agent_credentials = AgentHasCredentials(ResolveEnv(pod, *agent));
    state.agent_connected = state.agent_credentials;
  }
  state.running = true;
  state.last_start_ms = now;
  state.next_sample_ms = now + sample_interval_ms_.load();
  state.files["ff-logs"] = FileNode{true, "", now};  // the launcher's log directory
  AppendStartLogs(state, now);
  return state;
}

void VirtualPods::AppendStartLogs(PodState& state, int64_t now) {
  AppendLog(state, now, "system", "Launcher version: " + std::string(kLauncherVersion));
  AppendLog(state, now, "system", "Loading project settings");
  AppendLog(state, now, "system", "Target state is 'running'");
  AppendLog(state, now, "system", "Starting Node-RED");
  AppendLog(state, now, "info", "Node-RED version: v" + std::string(kNodeRedVersion));
  AppendLog(state, now, "info", "Node.js  version: v" + std::string(kNodeVersion));
  AppendLog(state, now, "info", "Started flows");
}

void VirtualPods::CrashLauncher(PodState& state, int64_t now_ms) const {
  // A new process: a new log buffer and sample buffer, Node-RED starting again. The storage
  // directory is the volume's: it stays.
  state.logs.clear();
  state.samples.clear();
  state.cpu_baseline = false;
  state.next_sample_ms = now_ms + sample_interval_ms_.load();
  state.running = true;
  state.last_start_ms = now_ms;
  state.restart_pause = true;
  state.restarting_until =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(restart_ms_.load());
  AppendStartLogs(state, now_ms);
}

void VirtualPods::OnPodEvent(const WatchEvent& ev) {
  const ObjectRecord& rec = ev.object;
  std::string key = rec.ns + "/" + rec.name;
  Json pod = rec.Parse();
  std::string uid = GetString(MemberOrNull(pod, "metadata"), "uid");
  if (ev.type == WatchEventType::kDeleted) {
    MutexLock lock(mu_);
    states_.erase(uid);
    auto it = parse_cache_.find(key);
    if (it != parse_cache_.end() && it->second.revision <= rec.revision) parse_cache_.erase(it);
    return;
  }
  if (GetString(MemberOrNull(pod, "status"), "phase") != "Running") return;
  {
    MutexLock lock(mu_);
    if (states_.count(uid) != 0) return;
  }
  PodState state = StartPod(pod);
  MutexLock lock(mu_);
  states_.try_emplace(uid, std::move(state));
}

void VirtualPods::Forget(std::string_view uid) {
  MutexLock lock(mu_);
  states_.erase(std::string(uid));
}

size_t VirtualPods::TrackedPods() const {
  if (feed_) feed_->CatchUp();
  MutexLock lock(mu_);
  return states_.size();
}

std::shared_ptr<const Json> VirtualPods::Parsed(const ObjectRecord& pod) {
  std::string key = pod.ns + "/" + pod.name;
  std::shared_ptr<const Json> parsed;
  {
    MutexLock lock(mu_);
    auto it = parse_cache_.find(key);
    if (it != parse_cache_.end() && it->second.revision == pod.revision) parsed = it->second.object;
  }
  if (!parsed) {
    parsed = std::make_shared<const Json>(pod.Parse());
    MutexLock lock(mu_);
    ParsedPod& slot = parse_cache_[key];
    if (slot.revision <= pod.revision) slot = {pod.revision, parsed};
  }
  return parsed;
}

StatusOr<net::HttpResponse> VirtualPods::Serve(const ObjectRecord& pod, int port,
                                               const net::HttpRequest& request,
                                               std::string_view expected_uid) {
  std::shared_ptr<const Json> parsed = Parsed(pod);
  if (!expected_uid.empty() &&
      GetString(MemberOrNull(*parsed, "metadata"), "uid") != expected_uid) {
    return Unavailable("connection refused: pod " + pod.ns + "/" + pod.name + " was replaced");
  }
  return Serve(*parsed, port, request);
}

void VirtualPods::SetProcessRuntime(controllers::ProcessRuntime* runtime,
                                    std::function<bool(std::string_view image)> is_process_image) {
  is_process_image_ = std::move(is_process_image);
  runtime_.store(runtime);
}

std::optional<uint16_t> VirtualPods::ProcessPort(const ObjectRecord& pod, int port,
                                                 std::string_view expected_uid) {
  controllers::ProcessRuntime* runtime = runtime_.load();
  if (runtime == nullptr) return std::nullopt;
  std::shared_ptr<const Json> parsed = Parsed(pod);
  const std::string uid = GetString(MemberOrNull(*parsed, "metadata"), "uid");
  if ((!expected_uid.empty() && uid != expected_uid) || !IsServing(*parsed)) return std::nullopt;
  return runtime->HostPort(uid, port);
}

StatusOr<net::HttpResponse> VirtualPods::Forward(const std::string& pod_id, uint16_t host_port,
                                                 const net::HttpRequest& request) const {
  net::HttpClient::Options o;
  o.host = "127.0.0.1";
  o.port = host_port;
  o.timeout = std::chrono::seconds(60);
  auto client = net::HttpClient::Create(o);
  net::Headers headers;
  for (const auto& [k, v] : request.headers.fields()) {
    if (IsHopByHop(k)) continue;
    headers.Add(k, v);
  }
  auto answer = client->Request(request.method, request.target.empty() ? "/" : request.target,
                                request.body, headers);
  if (!answer.ok()) {
    if (answer.status().code() == StatusCode::kDeadlineExceeded) {
      net::HttpResponse r = ExpressErrorPage(504, "upstream timed out");
      r.headers.Set("X-Steward-Pod", pod_id);
      return r;
    }
    return Unavailable("connection refused: " + pod_id + ": " + answer.status().message());
  }
  net::HttpResponse out;
  out.status = answer->status;
  out.body = std::move(answer->body);
  for (const auto& [k, v] : answer->headers.fields()) {
    if (IsHopByHop(k) || AsciiEqualsIgnoreCase(k, "Content-Length")) continue;
    out.headers.Add(k, v);
  }
  out.headers.Set("X-Steward-Pod", pod_id);
  return out;
}

StatusOr<net::HttpResponse> VirtualPods::Serve(const Json& pod, int port,
                                               const net::HttpRequest& request) {
  const Json& meta = MemberOrNull(pod, "metadata");
  const std::string ns = GetString(meta, "namespace");
  const std::string name = GetString(meta, "name");
  if (!IsServing(pod)) {
    return Unavailable("connection refused: pod " + ns + "/" + name + " is not ready");
  }
  if (controllers::ProcessRuntime* runtime = runtime_.load()) {
    const std::string uid = GetString(meta, "uid");
    if (auto host_port = runtime->HostPort(uid, port)) {
      return Forward(ns + "/" + name, *host_port, request);
    }
    if (!runtime->Has(uid) && is_process_image_) {
      for (const Json& c : ArrayMemberOrEmpty(MemberOrNull(pod, "spec"), "containers")) {
        if (is_process_image_(GetString(c, "image"))) {
          return Unavailable("connection refused: pod " + ns + "/" + name +
                             ": its process is not running");
        }
      }
    }
  }
  if (feed_) feed_->CatchUp();

  std::string port_name;
  const Json* container = ContainerForPort(pod, port, &port_name);
  const Json* launcher = LauncherContainer(pod);
  const bool agent = AgentServes(pod, container, port);
  const bool management =
      !agent && (port_name == "management" || (container == nullptr && port == kManagementPort));
  if (container == nullptr) container = launcher;

  const std::string uid = GetString(meta, "uid");
  bool known;
  {
    MutexLock lock(mu_);
    known = states_.count(uid) != 0;
  }
  // After CatchUp the watch has seen every pod in storage that went Running, so a miss means
  // a Forget() or a pod unknown to storage. Only a pod that storage still holds gets state
  // kept for it; anything else is served from a throwaway state, so that nothing is kept
  // for a pod whose deletion has already been applied.
  std::optional<PodState> throwaway;
  if (!known) {
    PodState fresh = StartPod(pod);
    auto rec = api_.storage().Get("pods", ns, name);
    bool stored = rec && GetString(MemberOrNull(rec->Parse(), "metadata"), "uid") == uid;
    if (stored) {
      MutexLock lock(mu_);
      states_.try_emplace(uid, std::move(fresh));
    } else {
      throwaway = std::move(fresh);
    }
  }

  net::HttpResponse response;
  {
    MutexLock lock(mu_);
    PodState* state = nullptr;
    if (throwaway) {
      state = &*throwaway;
    } else if (auto it = states_.find(uid); it != states_.end()) {
      state = &it->second;
    } else {  // deleted between the checks above
      throwaway = StartPod(pod);
      state = &*throwaway;
    }
    if (agent) {
      response = ServeAgent(*state, request);
    } else if (management) {
      response = ServeManagement(*state, request);
      if (response.status == 0) {
        return Unavailable("connection reset: the launcher in pod " + ns + "/" + name +
                           " exited (" + response.body + ") and restarts");
      }
    } else if ((!state->running || Starting(*state)) && container != nullptr &&
               container == launcher) {
      // The launcher's stopped Node-RED no longer listens on its ports.
      return Unavailable("connection refused: Node-RED in pod " + ns + "/" + name + " is stopped");
    }
  }
  if (!management && !agent) response = ServeWeb(pod, container, port, request);
  response.headers.Set("X-Steward-Pod", ns + "/" + name);
  if (request.method == "HEAD") response.body.clear();
  return response;
}

net::HttpResponse VirtualPods::ServeWeb(const Json& pod, const Json* container, int port,
                                        const net::HttpRequest& request) const {
  const Json& meta = MemberOrNull(pod, "metadata");
  const std::string ns = GetString(meta, "namespace");
  const std::string name = GetString(meta, "name");
  const std::string image = container ? GetString(*container, "image") : "";
  const std::string host = HostOf(request);
  if (AcceptsJson(request)) {
    Json body = {{"pod", name},
                 {"namespace", ns},
                 {"container", container ? GetString(*container, "name") : ""},
                 {"image", image},
                 {"port", port},
                 {"podIP", GetString(MemberOrNull(pod, "status"), "podIP")},
                 {"method", request.method},
                 {"path", request.path},
                 {"target", request.target},
                 {"host", host}};
    Json headers = Json::object();
    for (const auto& [k, v] : request.headers.fields()) headers[k] = v;
    body["headers"] = std::move(headers);
    return JsonResponse(200, body);
  }
  net::HttpResponse r;
  r.status = 200;
  r.headers.Set("Content-Type", "text/html; charset=utf-8");
  r.body = "<!DOCTYPE html>\n<html><head><title>" + HtmlEscape(name) +
           "</title></head>\n<body>\n<h1>Steward virtual pod</h1>\n<p>Pod <b>" + HtmlEscape(ns) +
           "/" + HtmlEscape(name) + "</b> (image <code>" + HtmlEscape(image) +
           "</code>) answered <code>" + HtmlEscape(request.method) + " " +
           HtmlEscape(request.path) + "</code> for host <code>" + HtmlEscape(host) +
           "</code>.</p>\n<p>No container runs in the embedded cluster: this page stands in for "
           "the application.</p>\n</body></html>\n";
  return r;
}

void VirtualPods::SetRestartDuration(std::chrono::milliseconds d) { restart_ms_ = d.count(); }

void VirtualPods::SetResourceSampleInterval(std::chrono::milliseconds d) {
  sample_interval_ms_ = std::max<int64_t>(1, d.count());
}

void VirtualPods::SetMcpCommands(bool on) { mcp_commands_ = on; }

bool VirtualPods::Starting(const PodState& state) {
  return state.running && std::chrono::steady_clock::now() < state.restarting_until;
}

void VirtualPods::TakeSamples(PodState& state, int64_t now_ms) const {
  const int64_t interval = sample_interval_ms_.load();
  // A pod idle for long catches up at most a buffer's worth.
  if (state.next_sample_ms < now_ms - interval * static_cast<int64_t>(kMaxSamples)) {
    state.next_sample_ms = now_ms - interval * static_cast<int64_t>(kMaxSamples);
  }
  const std::string src = SrcOf(state.name);
  while (state.next_sample_ms <= now_ms) {
    // The launcher polls Node-RED's metrics only while it runs (lib/launcher.js resourcePoll).
    if (!state.running || Starting(state)) {
      state.next_sample_ms += interval;
      continue;
    }
    const int64_t n = state.sample_seq++;
    // Node-RED's prom-client metrics as lib/resources/sample.js reads them: resident memory in
    // MB, event loop lag (mean, p99) in seconds, message counters; cpu (%) needs a previous
    // sample of the same process.
    Json sample = {{"src", src},
                   {"ps", 60.0 + static_cast<double>(n % 17)},
                   {"ela", 0.0005 + static_cast<double>(n % 5) / 10000.0},
                   {"el99", 0.002 + static_cast<double>(n % 7) / 10000.0},
                   {"nrmsgs", 0},
                   {"nrrecv", 0},
                   {"nrsend", 0},
                   {"ts", state.next_sample_ms}};
    if (state.cpu_baseline) sample["cpu"] = static_cast<double>((n * 7) % 50) / 10.0;
    state.cpu_baseline = true;
    state.samples.push_back(std::move(sample));
    state.next_sample_ms += interval;
  }
  if (state.samples.size() > kMaxSamples) {
    state.samples.erase(
        state.samples.begin(),
        state.samples.begin() + static_cast<long>(state.samples.size() - kMaxSamples));
  }
}

net::HttpResponse VirtualPods::ServeManagement(PodState& state, const net::HttpRequest& request) {
  const std::string& path = request.path;
  const bool get = request.method == "GET" || request.method == "HEAD";
  if (get && path == "/flowforge/info") {
    const std::string launcher =
        std::string(kLauncherVersion) + (mcp_commands_.load() ? "+mcp" : "");
    Json body = {{"id", state.project_id},
                 {"state", !state.running ? "stopped" : (Starting(state) ? "starting" : "running")},
                 {"lastStartTime", state.last_start_ms},
                 {"versions",
                  {{"node-red", kNodeRedVersion}, {"launcher", launcher}, {"node", kNodeVersion}}}};
    return JsonResponse(200, body);
  }
  if (get && path == "/flowforge/logs") {
    Json body = Json::array();
    const std::string src = SrcOf(state.name);
    for (const LogLine& l : state.logs) {
      char seq[8];
      snprintf(seq, sizeof seq, "%04d", l.seq);
      body.push_back(
          {{"level", l.level}, {"msg", l.msg}, {"ts", std::to_string(l.ts) + seq}, {"src", src}});
    }
    return JsonResponse(200, body);
  }
  if (get && path == "/flowforge/health-check") {
    // isHealthy(): the Node-RED process is alive.
    return state.running ? StatusText(200, "OK") : StatusText(500, "Internal Server Error");
  }
  if (get && path == "/flowforge/ready") {
    return state.running && !(Starting(state) && state.restart_pause)
               ? StatusText(200, "OK")
               : StatusText(503, "Service Unavailable");
  }
  if (get && path == "/flowforge/resources") {
    TakeSamples(state, NowMs());
    Json list = Json::array();
    for (const Json& sample : state.samples) list.push_back(sample);
    const size_t count = list.size();
    return JsonResponse(
        200, {{"meta", Json::object()}, {"resources", std::move(list)}, {"count", count}});
  }
  if (get && path == "/flowforge/env") {
    Json body = Json::object();
    for (const auto& [k, v] : state.env) body[k] = v;
    return JsonResponse(200, body);
  }
  constexpr std::string_view kFiles = "/flowforge/files/_/";
  if (path.starts_with(kFiles)) {
    const int64_t now = NowMs();
    net::HttpResponse r =
        ServeFiles(state, std::string_view(path).substr(kFiles.size()), request, now);
    if (r.status == 0) CrashLauncher(state, now);
    return r;
  }
  if (request.method == "POST" && path == "/flowforge/command") return ServeCommand(state, request);
  return ExpressErrorPage(404, "Cannot " + request.method + " " + path);
}

namespace {

// The route a path matches in an Express app with default settings: case-insensitive, one
// trailing '/' optional.
std::string ExpressRoute(std::string_view path) {
  std::string route = AsciiLower(path);
  if (route.size() > 1 && route.back() == '/') route.pop_back();
  return route;
}

// What body-parser.json() refuses: a body of media type application/json that is not a JSON
// object or array (its strict mode); an empty body is {} to it.
bool RefusedJsonBody(const net::HttpRequest& request) {
  std::string_view type = request.headers.Get("Content-Type");
  type = TrimHttpWhitespace(type.substr(0, type.find(';')));
  if (!AsciiEqualsIgnoreCase(type, "application/json") || request.body.empty()) return false;
  auto parsed = ParseJson(request.body);
  return !parsed.ok() || !(parsed->is_object() || parsed->is_array());
}

}  // namespace

net::HttpResponse VirtualPods::ServeAgent(PodState& state, const net::HttpRequest& request) {
  // bodyParser.json() runs before every route (index.js); the real page shows the parser's
  // stack (NODE_ENV is unset), the stand-in the status text.
  if (RefusedJsonBody(request)) return ExpressErrorPage(400, "Bad Request");
  const std::string route = ExpressRoute(request.path);
  const std::string& m = request.method;
  const bool get = m == "GET" || m == "HEAD";  // Express answers HEAD with a GET route
  const bool status_route = route == "/api/v1/status" || route == "/healthz";
  const bool command_route = route == "/api/v1/commands/start" || route == "/api/v1/commands/stop";
  if (get && route == "/healthz") return JsonResponse(200, Json::object());
  if (get && route == "/api/v1/status") {
    return JsonResponse(200, {{"connected", state.agent_connected}, {"error", nullptr}});
  }
  if (m == "POST" && route == "/api/v1/commands/start") {
    // Agent.start(): stop the client if any, fetch the credentials, connect.
    state.agent_connected = state.agent_credentials;
    if (!state.agent_credentials) return JsonResponse(400, {{"error", ""}, {"message", ""}});
    return JsonResponse(200, Json::object());
  }
  if (m == "POST" && route == "/api/v1/commands/stop") {
    state.agent_connected = false;
    return JsonResponse(200, Json::object());
  }
  if (m == "OPTIONS" && (status_route || command_route)) {
    // The router's automatic answer: the route's methods.
    const std::string allow = status_route ? "GET, HEAD" : "POST";
    net::HttpResponse r;
    r.status = 200;
    r.headers.Set("Allow", allow);
    r.headers.Set("Content-Type", "text/plain");
    r.headers.Set("X-Content-Type-Options", "nosniff");
    r.body = allow;
    return r;
  }
  return ExpressErrorPage(404, "Cannot " + m + " " + request.path);
}

}  // namespace steward::cluster::ingress
