// --wait of `steward project` and `steward agent`: a mutating verb is followed through the
// watch stream, opened (its initial `sync` seen) before the request goes out so that every
// transition after the commit is delivered, until the record is "done" with the generation the
// request answered (docs/api.md), printing a line per step. Internal to cli/
// (project_command.cc).
//
// Threads: OpenWatch starts the stream's reader thread; the caller's thread reads what it queued.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <string>

#include "api_client/api_client.h"
#include "common/json.h"
#include "common/mutex.h"
#include "common/status.h"

namespace steward::cli {

// The watch stream, read on its own thread (HttpClient is blocking) into a queue.
struct WatchState {
  Mutex mu;
  CondVar cv;
  std::deque<api_client::WatchEvent> events GUARDED_BY(mu);
  bool synced GUARDED_BY(mu) = false;
  bool ended GUARDED_BY(mu) = false;
  bool stop GUARDED_BY(mu) = false;
  Status end_status GUARDED_BY(mu);
  int end_http_status GUARDED_BY(mu) = 0;  // the stream ended with this API error answer
  // Not guarded: set before the reader thread starts; afterwards used by that thread alone.
  std::unique_ptr<api_client::ApiClient> client;
};

// Opens the stream of `query` and waits for its `sync` event (at most options.timeout); an
// error (and the answer's HTTP status in `http_status`, 0 when none) when it cannot.
StatusOr<std::shared_ptr<WatchState>> OpenWatch(const api_client::ApiClientOptions& options,
                                                const std::string& query,
                                                std::chrono::milliseconds duration,
                                                int* http_status);
// Follows the record of `answer` (the mutating request's answer) until it is done with its
// generation, or purged when `deleting`, or `duration` after `start`; the exit code (exit_codes.h)
// with the failure printed.
int FollowUntilDone(WatchState& watch, const Json& answer, bool deleting,
                    std::chrono::steady_clock::time_point start,
                    std::chrono::milliseconds duration);

}  // namespace steward::cli
