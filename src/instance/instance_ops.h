// InstanceOps: the operations on a running instance that the FlowFuse driver offers beside the
// lifecycle (details, logs, start/stop/restart flows, logout of a user token, files, resources,
// MCP commands), through the launcher's admin API on the pods' `management` port (2880); and the
// driver's calls to an MQTT schema agent (status, start/restart/stop) on its port 3500.
//
// Access: kDirect sends plain HTTP to each ready endpoint's pod IP on port 2880 (3500 for an
// agent; Steward runs in the cluster and can reach pod IPs); kProxy goes through the Kubernetes
// API server's pod proxy (GET /api/v1/namespaces/{ns}/pods/{pod}:2880/proxy/flowforge/...) with
// Steward's own credentials, which works from anywhere the API server is reachable.
//
// The pods are the ready endpoints of the project's Service (EndpointSlices labelled
// kubernetes.io/service-name=<service>): from InstanceOptions::cached_endpoint_slices when it
// answers (Steward's engine cache, the one its readiness verdicts are made from: no request),
// else one list request per call; a project with no ready endpoint answers kFailedPrecondition
// ("no ready pod"). Info, AgentStatus and AgentCommand ask
// one pod (the next one when a pod cannot be reached); Logs and Command ask every ready pod (an
// HA project has several), concurrently, each bounded by the timeout.
//
// Pods are taken in name order (deduplicated across slices); an endpoint counts as ready unless
// its conditions.ready is false (absent means ready, as discovery/v1 says), and only endpoints
// whose targetRef is a Pod are used.
//
// Errors: kInvalidArgument (a service name that is not a DNS-1123 label, an empty namespace, a
// command that is not an object with a string "cmd", an agent command other than start, restart
// and stop); kFailedPrecondition (no ready pod); kUnavailable (a pod could not be reached:
// connection refused or timed out, or, with kProxy, the API server itself answered the proxy
// request with a 404 or 5xx Status, e.g. the pod is gone; the server's message is kept); other
// API server refusals of the proxy request (401, 403, ...) keep the code of their Status
// (kube::ApiError); kAborted (the launcher or agent answered an HTTP error, or a body that is not
// JSON or not of the expected shape; the message names the pod, the HTTP status and the start of
// the body). Every message starts with `pod <name>: `.
// Lifecycle commands ({"cmd": "start" | "stop" | "restart" | "shutdown"}) to one pod are sent one
// at a time: a second waits until the first has been answered (at most its own timeout, then the
// pod counts as unreachable). The real launcher (2.29.1) answers a restart only after its 2 s
// pause and a fresh start; a start or restart that arrives during that pause starts a second
// Node-RED on the same port, which crashes, and the launcher ends up in safe mode or stopped; a
// stop that arrives then is undone by the pending start. Other commands (logout, mcp:*) are not
// held. Several Steward processes (replicas) hold one another back through
// InstanceOptions::shared_slots: a command waits for this process's slot, then the shared one.
// Files refuses, with kInvalidArgument and before anything is sent, the requests the launcher's
// files routes cannot take without its process dying (instance_ops.cc: CheckFileRequest), and an
// upload onto a directory (the parent is listed first, on the pod that takes the upload).
// Proxy requests are not retried by the transport on 5xx (a pod's own 5xx is its answer), only
// when it knows nothing was applied (429, connect failures); a GET the API server answers with a
// 5xx Status of its own is sent again by CallProxy (twice at most), a command never.
// Thread-safe: calls may run concurrently.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/json.h"
#include "common/mutex.h"
#include "common/status.h"
#include "instance/instance_calls.h"
#include "kube/client/client.h"

namespace steward::instance {

enum class Access { kDirect, kProxy };

struct InstanceOptions {
  std::string ns;  // the namespace of the projects' objects
  Access access = Access::kProxy;
  uint16_t management_port = 2880;          // the launcher's admin API
  uint16_t agent_port = 3500;               // an MQTT schema agent's API
  std::chrono::milliseconds timeout{5000};  // per pod request
  // RestartEach: how often a restarted pod's /flowforge/info is asked until it says running.
  std::chrono::milliseconds restart_poll{200};
  // The EndpointSlices of a Service from a cache kept by a watch (the engine's informer), or
  // nullopt when the cache cannot answer (not synced): the slices are then listed. Called
  // concurrently from any thread.
  std::function<std::optional<std::vector<Json>>(const std::string& service)>
      cached_endpoint_slices;
  // Several processes sending commands to the same pods (replicas on one store): a pod's slot
  // they all respect (store::Store::TakeSlot with this process's holder name). `take` answers
  // true when taken for `ttl`, false while another process holds it (asked again, with a growing
  // pause up to 200 ms, until the command's timeout); an error fails the command (kUnavailable,
  // nothing sent). The hold is `release`d once the pod has answered; the ttl (the command's
  // timeout + 2 s) frees it when this process dies first. Unset: this process only.
  struct SharedSlots {
    std::function<StatusOr<bool>(const std::string& key, std::chrono::milliseconds ttl)> take;
    std::function<void(const std::string& key)> release;
  };
  std::optional<SharedSlots> shared_slots;
  // Test seam for kDirect: maps a pod IP and the port asked for (management_port or agent_port)
  // to the host:port actually dialled (default: ip:port).
  std::function<std::pair<std::string, uint16_t>(const std::string& pod_ip, uint16_t port)>
      dial_override;
};

class InstanceOps : public InstanceCalls {
 public:
  InstanceOps(std::shared_ptr<kube::Client> client, InstanceOptions options);

  // `service` is the project's Service name (manifests::NamesFor(id, name).service).
  // GET /flowforge/info from one ready pod: the first by name that can be reached.
  // kFailedPrecondition: no ready pod; kUnavailable: no pod could be reached; kAborted: the
  // launcher answered an HTTP error or a body that is not a JSON object (message says which).
  StatusOr<Json> Info(const std::string& service) const override;
  // GET /flowforge/logs from every ready pod; each must answer a JSON array of objects. Entries
  // {ts, level, msg, ...} gain "pod" (overwriting any) and are merged and sorted by numeric ts
  // (stable: ties keep pod-name order, then each pod's order; an entry without a numeric ts
  // sorts as ts 0). A pod that fails makes the whole call fail (as above; the first failing pod
  // by name is reported).
  StatusOr<Json> Logs(const std::string& service) const override;
  // POST /flowforge/command with `command` (e.g. {"cmd":"start"}, {"cmd":"logout","token":..})
  // to every ready pod, concurrently. Per-pod results, in pod-name order, are returned even when
  // some failed (an HTTP error status is an answer; an unreachable pod has status 0 and
  // `error`); the call itself fails only with kInvalidArgument (bad service name or command),
  // kFailedPrecondition (no ready pod) or a failure to list the endpoints.
  StatusOr<std::vector<PodAnswer>> Command(const std::string& service,
                                           const Json& command) const override;
  // POST /flowforge/command to one pod: the first by name that can be reached (MCP commands,
  // which the driver sends to the Service, so to any one pod). Checks `command` as Command does.
  // An HTTP error status is an answer; kUnavailable when no pod could be reached.
  StatusOr<PodAnswer> CommandOne(const std::string& service, const Json& command) const override;
  // The launcher's files API (`/flowforge/files/_/<path>`, each segment percent-encoded) on the
  // first pod by name that can be reached. Any HTTP status is an answer (the launcher's 404,
  // 400, 403, 406 and 5xx are the caller's to map). kInvalidArgument (field "path") when
  // FilePathProblem() finds one or the method is not GET/PUT/DELETE/POST; kOutOfRange when the
  // answer is over `max_answer_bytes` (it is not read further: the connection is dropped).
  StatusOr<FileAnswer> Files(const std::string& service, const FileRequest& request,
                             size_t max_answer_bytes) const override;
  // GET /flowforge/resources from every ready pod; each must answer {resources: [objects]} (or,
  // from older launchers, a bare array). Samples gain "pod" and are merged, sorted by numeric
  // ts (stable, as Logs); meta is the first pod's. {meta, resources, count, pods} (pods: the
  // names of the pods asked, in name order). Errors as Logs.
  StatusOr<Json> Resources(const std::string& service) const override;
  // The driver's HA restartFlows done one pod at a time: {"cmd":"restart"} to each ready pod in
  // name order; after a 2xx answer, GET /flowforge/info on that pod (every restart_poll) until
  // its state is "running", for at most `per_pod` from the command; then the next pod. The first
  // failure (unreachable, an HTTP error answer, not running again in time) ends the run: later
  // pods are "skipped". The restart command itself may take up to `per_pod` to answer (the real
  // launcher answers only once it has restarted: a 2 s pause, settings, start). The call itself
  // fails only as Command does (bad service, no ready pod).
  StatusOr<std::vector<RestartStep>> RestartEach(const std::string& service,
                                                 std::chrono::milliseconds per_pod) const override;

  // An MQTT schema agent (`service` is its Service, mqtt-schema-agent-<team>-<broker>; the
  // Deployment has one replica), on agent_port rather than the launcher's port.
  // GET /api/v1/status from the first ready pod by name that can be reached: the agent's JSON
  // object ({"connected": bool, "error": null or a code} from FlowFuse's agent). Errors as Info.
  StatusOr<Json> AgentStatus(const std::string& service) const override;
  // `command` "start" or "restart" POSTs /api/v1/commands/start (the agent reconnects), "stop"
  // POSTs /api/v1/commands/stop, with no body, to the first ready pod by name that can be
  // reached. Anything else is kInvalidArgument (field "command"), before any request. An HTTP
  // error status is an answer (the agent's 400 {"error", "message"} when it cannot fetch its
  // credentials); kFailedPrecondition when no pod is ready, kUnavailable when none was reached.
  StatusOr<PodAnswer> AgentCommand(const std::string& service,
                                   std::string_view command) const override;

 private:
  struct Pod {
    std::string name, ip;
  };
  // One request to a launcher. max_bytes > 0 bounds the answer's body: it is read as a stream
  // and the call fails (kOutOfRange) past it.
  struct Request {
    std::string method, path, body;
    std::string content_type = "application/json";  // sent when body is not empty
    size_t max_bytes = 0;
    std::chrono::milliseconds timeout{0};  // 0: InstanceOptions::timeout
    uint16_t port = 0;                     // 0: InstanceOptions::management_port
  };
  static Request GetRequest(std::string path, uint16_t port = 0);
  // One request's outcome: an HTTP answer from the launcher (failure OK), or why none came.
  struct Reply {
    int status = 0;
    std::string body;
    std::string content_type;
    Status failure;  // kUnavailable (unreachable), or the API server's refusal; "pod X: ..."
    bool api_server_5xx = false;  // kProxy: the API server answered a 5xx Status for itself
  };
  StatusOr<std::vector<Pod>> ReadyPods(const std::string& service) const;
  Reply Call(const Pod& pod, const std::string& method, const std::string& path,
             const std::string& body) const;
  Reply Call(const Pod& pod, const Request& request) const;
  // A GET the API server answers with a 5xx Status of its own (not the pod's answer) is sent
  // again, twice at most and only while half the request's timeout is left: a blip of the API
  // server is not the instance's failure. Other methods are sent once (a command must not run
  // twice).
  Reply CallProxy(const Pod& pod, const Request& request) const;
  Reply CallProxyOnce(const Pod& pod, const Request& request) const;
  Reply CallDirect(const Pod& pod, const Request& request) const;
  // Call() on every pod at once; replies in the pods' order.
  std::vector<Reply> CallAll(const std::vector<Pod>& pods, const std::string& method,
                             const std::string& path, const std::string& body) const;
  // GET `path` from every pod at once, and their entries merged: the objects `entries` finds in
  // each pod's JSON answer (nullptr: not of the shape `shape` names), each tagged with its pod,
  // in timestamp order (a pod's own order kept among equal stamps). The first failure, HTTP
  // error or answer of another shape fails the whole (kAborted naming the pod): no merge is
  // shown with a pod missing.
  StatusOr<Json> MergedFromEvery(
      const std::vector<Pod>& pods, const std::string& path, std::string_view shape,
      const std::function<const Json*(size_t index, const Json& answer)>& entries) const;
  // Call() on the pods in order until one is reached; *index is the pod that answered (or the
  // last one tried).
  Reply CallFirst(const std::vector<Pod>& pods, const Request& request, size_t* index) const;
  // The pod that answered a request, and its reply.
  struct Answered {
    std::string pod;
    Reply reply;
  };
  // `request` to the ready pods of `service` until one is reached: its answer, whatever the
  // status; ReadyPods' errors, or the last pod's failure when none was reached.
  StatusOr<Answered> CallFirstReady(const std::string& service, const Request& request) const;
  // CallFirstReady whose answer must be a 2xx JSON object (Info's errors otherwise).
  StatusOr<Json> GetObjectFromFirst(const std::string& service, const Request& request) const;
  // CallFirstReady's answer as a PodAnswer.
  StatusOr<PodAnswer> AnswerFromFirst(const std::string& service, const Request& request) const;
  uint16_t PortOf(const Request& request) const;
  // Waits until `pod` answers GET /flowforge/info with state "running", up to `deadline`.
  Status WaitRunning(const Pod& pod, std::chrono::steady_clock::time_point deadline) const;

  // Lifecycle commands in flight, by pod name (shared by copies of this object).
  struct CommandSlots {
    Mutex mu;
    CondVar cv;
    std::set<std::string> busy GUARDED_BY(mu);
  };
  // Takes `pod`'s command slot in this process, then the shared one (when configured), waiting
  // until `deadline`: Ok when taken; kUnavailable ("pod X: ...") when it stayed busy or the
  // shared slot could not be asked for.
  Status AcquireCommandSlot(const std::string& pod, std::chrono::steady_clock::time_point deadline,
                            std::chrono::milliseconds timeout) const;
  // Takes the shared slot (options_.shared_slots set), asking again until `deadline`.
  Status AcquireSharedSlot(const std::string& pod, std::chrono::steady_clock::time_point deadline,
                           std::chrono::milliseconds timeout) const;
  void ReleaseCommandSlot(const std::string& pod) const;
  // The shared slot's key of `pod`: "pod:<namespace>/<name>".
  std::string SlotKey(const std::string& pod) const;

  std::shared_ptr<kube::Client> client_;
  InstanceOptions options_;
  std::shared_ptr<CommandSlots> slots_ = std::make_shared<CommandSlots>();
};

}  // namespace steward::instance
