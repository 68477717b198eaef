// VirtualPods: the processes of the embedded cluster's pods, simulated in process.
//
// No container runs. A pod "answers" an HTTP request addressed to one of its ports when it is
// serving: phase Running, condition Ready=True and no deletionTimestamp. Otherwise (and on
// a stopped launcher's web port) Serve() fails with kUnavailable, the in-process equivalent of
// "connection refused"; callers turn that into 502/503 as a real proxy would.
//
// What a serving pod answers depends on the container port the request targets:
//   - the port named "management" (or the undeclared port 2880): a stand-in for the FlowFuse
//     Node-RED launcher's admin API:
//       GET  /flowforge/info          {"id", "state", "lastStartTime", "versions"}
//       GET  /flowforge/logs          [{"ts", "level", "msg", "src"}...]; ts is a string, epoch
//                                      milliseconds and a 4-digit counter ("17000000000000001"),
//                                      as the real launcher's lib/logBuffer.js writes it
//       GET  /flowforge/health-check  200 "OK" (text/plain); 500 while Node-RED is stopped
//       GET  /flowforge/ready         200 "OK" unless stopped or in a restart (503)
//       GET  /flowforge/resources     {"meta", "resources": [{src, ps, cpu, ela, el99, nrmsgs,
//                                      nrrecv, nrsend, ts}], "count"}: a sample every
//                                      resource_sample_interval while Node-RED runs (none while
//                                      stopped; the first after a start has no cpu; at most
//                                      2520 kept), as the launcher's lib/resources
//       POST /flowforge/command       {"cmd": "start"|"stop"|"restart"|"logout"|"mcp:..."}, as
//                                      lib/admin.js answers: start while running 409
//                                      {"err":"Already running"}, start while starting {} (a
//                                      no-op), otherwise "starting" for restart_duration;
//                                      "restart" leaves the launcher "starting" (its web port
//                                      refusing, /ready 503) for restart_duration, and while
//                                      starting is a no-op; an unknown cmd or a body without a
//                                      string cmd 404 {}; a body that is not JSON 400 (Express's
//                                      page). The mcp commands answer as the launcher's lib/mcp.js
//                                      does (its main branch: 2.29.1, the current release, has
//                                      none and answers 404 {}; SetMcpCommands(false) is that)
//       GET|PUT|DELETE|POST /flowforge/files/_/<path>: the launcher's files API (lib/files) on an
//                                      in-memory storage directory per pod holding "ff-logs/"
//                                      (the launcher's), at most kMaxStorageBytes of file
//                                      content; the requests that kill the real launcher's
//                                      process (a PUT or a JSON POST without a string "path", a
//                                      POST without a Content-Type, an upload without a "file"
//                                      part, onto the root or a directory, or past the limit)
//                                      drop the connection (kUnavailable) and restart the
//                                      launcher: its logs and samples start afresh, "starting"
//                                      for restart_duration; the files are kept
//       GET  /flowforge/env           the resolved env of the launcher container (a test aid)
//       any other path                404 text/html "Cannot <METHOD> <path>" (Express's page)
//   - the port of a container named "mqtt-schema-agent" (the one that declares the port, or the
//     undeclared port 3500 when that container declares no ports): a stand-in for FlowFuse's MQTT
//     schema agent (github.com/FlowFuse/mqtt-schema-agent, lib/api.js and index.js), an Express 5
//     app whose routes are:
//       GET  /api/v1/status           {"connected": bool, "error": null}: whether its MQTT client
//                                      is connected; "error" is the code of the real client's
//                                      last failure ("NOTAUTHORIZED", "ECONNREFUSED", ...),
//                                      always null here, where no broker is dialled
//       POST /api/v1/commands/start   {}: (re)connects; 400 {"error": "", "message": ""} when it
//                                      cannot fetch its broker credentials (below)
//       POST /api/v1/commands/stop    {}: disconnects
//       GET  /healthz                 {}
//     The agent starts connected, as the real one connects at start-up, provided it can fetch its
//     credentials from the platform: the stand-in, which calls no platform, takes that to mean
//     FORGE_URL (http:// or https://), FORGE_TEAM_ID, FORGE_BROKER_ID and FORGE_TEAM_TOKEN are
//     all set and non-empty in the container's env, resolved at start as the launcher's is
//     (without them the real process exits on the rejected start-up connect and restarts; the
//     stand-in stays up, disconnected). A connect is immediate (the real client reports
//     connected once the broker accepts it, after the start command answered). As Express
//     routes: paths match case-insensitively with an optional trailing '/'; any other path or
//     method answers 404 text/html "Cannot <METHOD> <path>" (a known path's wrong method too:
//     Express has no 405); OPTIONS on a route answers 200 with Allow ("GET, HEAD" or "POST"); a
//     body declared application/json that is not a JSON object or array answers 400
//     (body-parser's refusal) on any route.
//   - any other port: a small page (HTML, or JSON with "Accept: application/json") naming
//     the pod, namespace, method, path, host and container image (the JSON form also echoes
//     the request headers, so tests can see what a proxy forwarded).
// Every answer carries "X-Steward-Pod: <namespace>/<name>".
//
// Process pods (SetProcessRuntime; docs/embedded-cluster.md): a request to a container port
// that one of the pod's processes declares is forwarded to that process's loopback twin port
// (HTTP/1.1, hop-by-hop fields dropped, 60 s timeout), and its answer returned as it is
// (plus X-Steward-Pod); a refused connection is kUnavailable, as for a stopped virtual pod.
// Ports no process declares are answered virtually as above. ProcessPort() gives the twin port
// to the ingress listener's WebSocket tunnel.
//
// Per-pod state (launcher state, logs, resolved env, the agent's connection) is keyed by pod uid.
// It is created when the pod is first seen Running (that is when its containers "start": env,
// including secretKeyRef/configMapKeyRef/fieldRef values, is resolved then and kept, as a real
// process keeps its env when a Secret changes later; the start time is the container status's
// startedAt when the kubelet wrote one), and dropped when the pod is deleted. A pod served
// after Forget() starts afresh; a pod that storage does not hold (a hand-made object) is
// served from a throwaway state on every request.
//
// Thread-safety: all methods may be called concurrently from any thread.
// Lifecycle: Stop() (idempotent, run by the destructor) ends the pod watch.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cluster/apiserver/object_api.h"
#include "cluster/controllers/process_runtime.h"
#include "cluster/ingress/watch_feed.h"
#include "common/json.h"
#include "common/mutex.h"
#include "common/status.h"
#include "net/http.h"

namespace steward::cluster::ingress {

// The container port of the launcher's admin API in FlowFuse's Kubernetes driver.
inline constexpr int kManagementPort = 2880;
// The container port ("web") of the MQTT schema agent's HTTP API in that driver.
inline constexpr int kAgentPort = 3500;

class VirtualPods {
 public:
  // Watches pods through `api.storage()`; `api` must outlive this object.
  static StatusOr<std::unique_ptr<VirtualPods>> Create(ObjectApi& api);
  ~VirtualPods();
  VirtualPods(const VirtualPods&) = delete;
  VirtualPods& operator=(const VirtualPods&) = delete;

  // Answers `request` as the pod `pod` (a full Pod object) would on container port `port`.
  // kUnavailable ("connection refused") when the pod is not serving or its process on that
  // port is stopped.
  StatusOr<net::HttpResponse> Serve(const Json& pod, int port, const net::HttpRequest& request);
  // The same for a stored pod record; the parsed object is cached per revision, which keeps
  // the hot path (ingress, proxy) free of JSON parsing. A non-empty `expected_uid` that is not
  // the pod's uid (the name now belongs to a new pod) also fails with kUnavailable.
  StatusOr<net::HttpResponse> Serve(const ObjectRecord& pod, int port,
                                    const net::HttpRequest& request,
                                    std::string_view expected_uid = {});

  // Forwards requests to process pods' ports through `runtime` (null: none). `is_process_image`
  // says which images run as processes: a pod with such a container that the runtime does not
  // run (yet: a pod adopted from an earlier run, before the kubelet starts it) refuses
  // connections instead of being answered by the stand-in. Both must outlive this object; call
  // before serving.
  void SetProcessRuntime(controllers::ProcessRuntime* runtime,
                         std::function<bool(std::string_view image)> is_process_image);
  // The loopback port of the process behind container port `port` of a serving pod (the uid
  // must be `expected_uid` when that is non-empty); nullopt when it is not a process port.
  std::optional<uint16_t> ProcessPort(const ObjectRecord& pod, int port,
                                      std::string_view expected_uid = {});

  // True when the pod would answer at all (Running, Ready, not terminating).
  static bool IsServing(const Json& pod);

  // Drops the state of a pod (as when it is deleted). Unknown uids are ignored.
  void Forget(std::string_view uid);
  // Number of pods with state, for tests and metrics.
  size_t TrackedPods() const;

  // How long a "restart" command keeps a launcher "starting" (default 300 ms), and how often
  // the launcher takes a resources sample (default 1 s). Apply to later requests.
  void SetRestartDuration(std::chrono::milliseconds d);
  void SetResourceSampleInterval(std::chrono::milliseconds d);
  // Whether the launchers answer the mcp:* commands (default true: the launcher's main branch;
  // false: 2.29.1, which answers 404 {} and reports launcher version "2.29.1" instead of
  // "2.29.1+mcp"). Applies to later requests.
  void SetMcpCommands(bool on);
  // The file content one pod's storage directory holds at most.
  static constexpr size_t kMaxStorageBytes = 64u << 20;

  void Stop();

 private:
  struct LogLine {
    int64_t ts;   // epoch ms
    int seq = 0;  // 0..9999: entries of one millisecond
    std::string level;
    std::string msg;
  };
  struct FileNode {
    bool dir = false;
    std::string content;
    int64_t mtime_ms = 0;
  };
  struct PodState {
    std::string ns;
    std::string name;
    std::string project_id;
    bool running = true;
    int64_t last_start_ms = 0;
    // A restart in progress: "starting" until then (steady time, so that it ends in a test
    // whose cluster clock stands still).
    std::chrono::steady_clock::time_point restarting_until{};
    bool restart_pause = false;  // that "starting" comes from a restart: /ready says 503
    bool cpu_baseline = false;   // a sample was taken since Node-RED started: the next has cpu
    std::vector<LogLine> logs;   // bounded, oldest first
    std::vector<std::pair<std::string, std::string>> env;
    std::map<std::string, FileNode> files;  // storage-relative normalised path → node
    size_t file_bytes = 0;                  // content held in `files`
    std::vector<Json> samples;              // resources, oldest first, bounded
    int64_t next_sample_ms = 0;
    int64_t sample_seq = 0;
    // The MQTT schema agent (a container named "mqtt-schema-agent"): whether it could fetch its
    // broker credentials (its env has them all), and whether its MQTT client is connected.
    bool agent_credentials = false;
    bool agent_connected = false;
  };
  struct ParsedPod {
    uint64_t revision = 0;
    std::shared_ptr<const Json> object;
  };

  explicit VirtualPods(ObjectApi& api);
  void OnPodEvent(const WatchEvent& event);
  // Builds the state of a pod whose containers have just started. Reads Secrets/ConfigMaps.
  PodState StartPod(const Json& pod) const;
  std::vector<std::pair<std::string, std::string>> ResolveEnv(const Json& pod,
                                                              const Json& container) const;
  static void AppendLog(PodState& state, int64_t ts, std::string level, std::string msg);
  // What the launcher logs from its start to Node-RED's "Started flows".
  static void AppendStartLogs(PodState& state, int64_t now);
  int64_t NowMs() const;

  net::HttpResponse ServeWeb(const Json& pod, const Json* container, int port,
                             const net::HttpRequest& request) const;
  net::HttpResponse ServeManagement(PodState& state, const net::HttpRequest& request);
  net::HttpResponse ServeCommand(PodState& state, const net::HttpRequest& request);
  net::HttpResponse ServeMcp(const std::string& cmd, const Json& data);
  static net::HttpResponse ServeAgent(PodState& state, const net::HttpRequest& request);
  static net::HttpResponse ServeFiles(PodState& state, std::string_view rest,
                                      const net::HttpRequest& request, int64_t now_ms);
  void TakeSamples(PodState& state, int64_t now_ms) const;
  // The launcher process died (an unhandled rejection) and its container restarted.
  void CrashLauncher(PodState& state, int64_t now_ms) const;
  static bool Starting(const PodState& state);

  // The parsed pod of a stored record (cached per revision).
  std::shared_ptr<const Json> Parsed(const ObjectRecord& pod);
  StatusOr<net::HttpResponse> Forward(const std::string& pod_id, uint16_t host_port,
                                      const net::HttpRequest& request) const;

  ObjectApi& api_;
  std::unique_ptr<WatchFeed> feed_;
  std::atomic<controllers::ProcessRuntime*> runtime_{nullptr};
  std::function<bool(std::string_view)> is_process_image_;  // set before serving

  std::atomic<int64_t> restart_ms_{300};
  std::atomic<int64_t> sample_interval_ms_{1000};
  std::atomic<bool> mcp_commands_{true};

  mutable Mutex mu_;
  std::unordered_map<std::string, PodState> states_ GUARDED_BY(mu_);        // by uid
  std::unordered_map<std::string, ParsedPod> parse_cache_ GUARDED_BY(mu_);  // by "ns/name"
};

}  // namespace steward::cluster::ingress
