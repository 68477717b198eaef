// InstanceHandlers: the API's routes that talk to a project's pods through
// instance::InstanceCalls rather than to the store — launcher info and logs, flow commands (the
// restart one pod at a time), logout, files, MCP, an agent's status and commands, and the
// resources with their live streams (instance_handlers.cc, resources_handlers.cc).
//
// Ownership: made by Server::Init once the pool and scheduler exist, owned by the Server, which
// outlives it; borrows the server (to answer), its options, dependencies, pool and scheduler.
// Owns the open resources streams.
// Threads: the handlers run on the server's pool (the route table calls them); the resources
// polls on the pool, posted by scheduler timers; Stop() from Server::Stop.
// Lock order: a ResourceStream's mu alone, or streams_mu_ alone.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/api_internal.h"
#include "common/mutex.h"
#include "common/scheduler.h"
#include "instance/instance_calls.h"

namespace steward::api {

// A live resources stream (GET /v1/projects/{p}/resources/stream): every ready pod's
// /flowforge/resources read every ApiOptions::resources_poll on the pool (a Scheduler timer posts
// each poll), new samples written as `sample` events; ended (`end` event) when a pod it started
// with is no longer ready, when no pod answers, or when the client does not keep up; dropped
// when the client goes or the server stops. Over SSE (call->writer) or, when the request asked
// for an upgrade, over a WebSocket (`ws`: each event one JSON text message, the end a close
// frame too).
struct ResourceStream {
  CallPtr call;
  std::shared_ptr<net::WebSocket> ws;  // null: SSE
  std::string project;                 // the project's name, for messages
  std::string service;
  instance::InstanceCalls* calls = nullptr;  // its cluster's; outlives the API
  Mutex mu;
  bool ended GUARDED_BY(mu) = false;
  std::map<std::string, double> last_ts GUARDED_BY(mu);  // per pod: the newest sample sent
  Scheduler::TaskId timer GUARDED_BY(mu) = 0;
  std::chrono::steady_clock::time_point last_write GUARDED_BY(mu);
};

class InstanceHandlers {
 public:
  InstanceHandlers(Server& server, const ApiOptions& options, const ApiDeps& deps, TaskPool& pool,
                   Scheduler& scheduler, const std::atomic<bool>& stopping)
      : server_(server),
        options_(options),
        deps_(deps),
        pool_(pool),
        scheduler_(scheduler),
        stopping_(stopping) {}
  InstanceHandlers(const InstanceHandlers&) = delete;
  InstanceHandlers& operator=(const InstanceHandlers&) = delete;

  // Routes (on the pool).
  void HandleInstanceInfo(const CallPtr& call);
  void HandleInstanceLogs(const CallPtr& call);
  void HandleFlowsStart(const CallPtr& call);
  void HandleFlowsStop(const CallPtr& call);
  void HandleFlowsRestart(const CallPtr& call);
  void HandleLogout(const CallPtr& call);
  void HandleFiles(const CallPtr& call);
  void HandleResources(const CallPtr& call);
  void HandleResourcesStream(const CallPtr& call);
  void HandleMcpFeatures(const CallPtr& call);
  void HandleMcpToolCall(const CallPtr& call);
  void HandleMcpResourceRead(const CallPtr& call);
  // MQTT schema agents: the agent's own status (its port 3500 API) and its broker commands.
  void HandleAgentStatus(const CallPtr& call);
  void HandleAgentCommand(const CallPtr& call);

  // Ends every open resources stream (`end` event: Stopping); later polls find them ended.
  void Stop() EXCLUDES(streams_mu_);

 private:
  // The project when its phase allows instance operations, else answers and returns nullopt.
  std::optional<store::ProjectRecord> RunningProject(
      const CallPtr& call, store::RecordKind kind = store::RecordKind::kProject);
  void HandleFlowsCommand(const CallPtr& call, const std::string& cmd);
  void HandleRestartEach(const CallPtr& call);
  // Sends a files request to the project's launcher; on anything but a 2xx answer replies with
  // the error (`not_found`, when set, is the message of a 404) and returns nullopt.
  std::optional<instance::FileAnswer> SendFiles(const CallPtr& call,
                                                const store::ProjectRecord& rec,
                                                const instance::FileRequest& req,
                                                const std::string& op, const std::string& path,
                                                const std::string& not_found);
  void FilesList(const CallPtr& call, const store::ProjectRecord& rec, const std::string& path);
  void FilesRename(const CallPtr& call, const store::ProjectRecord& rec, const std::string& path);
  void FilesDelete(const CallPtr& call, const store::ProjectRecord& rec, const std::string& path);
  void FilesCreate(const CallPtr& call, const store::ProjectRecord& rec, const std::string& path);
  // Sends an MCP command (`data` its arguments) to one pod and answers {pod, <key>: answer}.
  void McpCommand(const CallPtr& call, const std::string& cmd, Json data, const std::string& key);
  // One poll of a resources stream (on the pool); schedules the next unless it ended.
  void PollResources(const std::shared_ptr<ResourceStream>& s) EXCLUDES(s->mu);
  // Writes a resources stream's events (s->mu held): over SSE in one write, over a WebSocket
  // one message each. False when the client is gone.
  bool WriteResourcesLocked(const std::shared_ptr<ResourceStream>& s,
                            const std::vector<std::pair<std::string, Json>>& events)
      REQUIRES(s->mu);
  // Ends a resources stream with an `end` event (s->mu held); no-op when it has ended.
  void EndResourcesLocked(const std::shared_ptr<ResourceStream>& s, const std::string& reason,
                          const std::string& message) REQUIRES(s->mu);
  void DropResourceStream(const std::shared_ptr<ResourceStream>& s) EXCLUDES(streams_mu_, s->mu);

  Server& server_;
  const ApiOptions& options_;
  const ApiDeps& deps_;
  TaskPool& pool_;
  Scheduler& scheduler_;
  const std::atomic<bool>& stopping_;

  Mutex streams_mu_;
  std::vector<std::shared_ptr<ResourceStream>> streams_ GUARDED_BY(streams_mu_);
};

}  // namespace steward::api
