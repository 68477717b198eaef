// RecordHandlers: the API's routes over the store's records — a project's or an agent's PUT
// (create or update; supplied credentials on the credential threads), the lifecycle operations,
// rename, move, get, list (from the server's view when it is caught up), history, the stack's
// defaults and the credential check (record_handlers.cc). Each answers at once or, with
// ?wait=, when the change is done (Server::AnswerOrWait).
//
// Ownership: made by Server::Init once its pools exist, owned by the Server, which outlives it;
// borrows the server (to answer and to read its view), its options, dependencies and pools.
// Threads: the handlers run on the server's pool (PUTs with supplied credentials and moves
// finish on the credential pool); the class holds no state of its own beyond what it borrows.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>

#include "api/api_internal.h"
#include "engine/intents/intents.h"

namespace steward::api {

class RecordHandlers {
 public:
  RecordHandlers(Server& server, const ApiOptions& options, const ApiDeps& deps,
                 TaskPool& credential_pool, const std::atomic<bool>& stopping)
      : server_(server),
        options_(options),
        deps_(deps),
        credential_pool_(credential_pool),
        stopping_(stopping) {}
  RecordHandlers(const RecordHandlers&) = delete;
  RecordHandlers& operator=(const RecordHandlers&) = delete;

  // Projects (/v1/projects...).
  void HandleList(const CallPtr& call);
  void HandleGet(const CallPtr& call);
  void HandlePut(const CallPtr& call);
  void HandleDelete(const CallPtr& call);
  void HandleStart(const CallPtr& call);
  void HandleSuspend(const CallPtr& call);
  void HandleRestart(const CallPtr& call);
  void HandleRotate(const CallPtr& call);
  void HandleRename(const CallPtr& call);
  void HandleMove(const CallPtr& call);
  void HandleHistory(const CallPtr& call);
  void HandleStackDefaults(const CallPtr& call);
  void HandleCredentialCheck(const CallPtr& call);
  // MQTT schema agents (/v1/agents): the same operations on records of RecordKind::kAgent.
  void HandleAgentList(const CallPtr& call);
  void HandleAgentGet(const CallPtr& call);
  void HandleAgentPut(const CallPtr& call);
  void HandleAgentDelete(const CallPtr& call);
  void HandleAgentStart(const CallPtr& call);
  void HandleAgentStop(const CallPtr& call);
  void HandleAgentRestart(const CallPtr& call);
  void HandleAgentHistory(const CallPtr& call);

 private:
  using OpFn = StatusOr<store::ProjectRecord> (engine::Intents::*)(std::string_view,
                                                                   store::RecordKind);
  void PutOf(const CallPtr& call, store::RecordKind kind);
  void Operation(const CallPtr& call, OpFn op,
                 store::RecordKind kind = store::RecordKind::kProject);
  void ListOf(const CallPtr& call, store::RecordKind kind);
  void GetOf(const CallPtr& call, store::RecordKind kind);
  void HistoryOf(const CallPtr& call, store::RecordKind kind);
  // Runs `work` on the credential pool (a request that may wait on a cluster: a PUT with
  // supplied credentials, a move), or answers 503 when the pool is full or stopping.
  void OffWorkers(const CallPtr& call, std::function<void()> work);
  // Parses ?wait=; false after answering 400. `wait` stays nullopt when absent.
  bool ReadWait(const CallPtr& call, std::optional<std::chrono::milliseconds>* wait);

  Server& server_;
  const ApiOptions& options_;
  const ApiDeps& deps_;
  TaskPool& credential_pool_;
  const std::atomic<bool>& stopping_;
};

}  // namespace steward::api
