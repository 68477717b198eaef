// WatchStreams: the open watch streams of the embedded API server. Each stream sends its storage
// watcher's events (filtered by the request's label and field selectors, encoded as JSON, a
// Table or PartialObjectMetadata) as the API server does: leaving the selection is a DELETED,
// entering it an ADDED; BOOKMARK events every bookmark_interval when asked for, never below the
// revision the watch started from; the initial-events-end bookmark after a sendInitialEvents
// snapshot; the stream ends at its timeout or at a fault's cut.
//
// Ownership: this owns the streams and the dispatcher threads that pump them; a stream ends when
// its client goes, at its timeout, or at Stop(). The scheduler runs the streams' timers.
//
// Threading: Open, Fail and Active may be called from any thread; events are written from the
// dispatcher threads. Lock order: a stream's own lock, then the streams' mu_. Stop() blocks until
// every dispatcher has finished; call it before the HTTP server stops.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "cluster/apiserver/faults.h"
#include "cluster/apiserver/negotiation.h"
#include "cluster/apiserver/object_api.h"
#include "cluster/apiserver/selectors.h"
#include "cluster/apiserver/status_error.h"
#include "common/mutex.h"
#include "common/scheduler.h"
#include "net/http_server.h"

namespace steward::cluster {

class WatchSession;

class WatchStreams {
 public:
  struct Options {
    std::chrono::milliseconds bookmark_interval{std::chrono::seconds(10)};
    int dispatcher_threads = 2;
  };
  // Which events of the watcher a stream sends, and how.
  struct Filter {
    const ResourceType* type = nullptr;
    LabelSelector labels;
    FieldSelector fields;
    Output output = Output::kJson;
    TableIncludeObject include = TableIncludeObject::kMetadata;
  };
  // How a stream runs.
  struct Run {
    bool bookmarks = false;  // allowWatchBookmarks
    // sendInitialEvents: the revision of the snapshot, closed by a bookmark marked
    // k8s.io/initial-events-end; 0 for none.
    uint64_t initial_end_revision = 0;
    // The resourceVersion a watch without initial events starts after (0 for one with them):
    // no bookmark goes out before the stream has reached it.
    uint64_t from_revision = 0;
    std::chrono::seconds timeout{1800};
    FaultInjector::WatchLimits limits;
  };

  // `api` and `scheduler` must outlive this.
  WatchStreams(ObjectApi& api, Scheduler& scheduler, Options options);
  ~WatchStreams();
  WatchStreams(const WatchStreams&) = delete;
  WatchStreams& operator=(const WatchStreams&) = delete;

  // Starts the 200 answer on `writer` and streams what `watcher` delivers until the stream
  // ends. After Stop(), aborts the writer instead.
  void Open(Filter filter, std::shared_ptr<net::ResponseWriter> writer,
            std::unique_ptr<Watcher> watcher, const Run& run);
  // Answers a watch that cannot start as the API server does: a 200 stream with one ERROR event
  // holding `error`, then its end.
  static void Fail(net::ResponseWriter& writer, const StatusError& error);
  size_t Active() const;  // open streams
  // Ends every open stream (the connection dropped) and joins the dispatchers; idempotent.
  void Stop();

 private:
  friend class WatchSession;

  // Sessions with pending work are pumped on the dispatcher threads.
  void Enqueue(std::shared_ptr<WatchSession> session);
  void DispatchLoop();
  void Forget(WatchSession* session);

  ObjectApi& api_;
  Scheduler& scheduler_;
  const Options options_;

  mutable Mutex mu_;
  CondVar cv_;
  std::deque<std::shared_ptr<WatchSession>> ready_ GUARDED_BY(mu_);
  std::set<std::shared_ptr<WatchSession>> sessions_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  // Not guarded: started by the constructor, joined and cleared by Stop() (read there under
  // mu_ as the "stopped already" test).
  std::vector<std::thread> dispatchers_;
};

}  // namespace steward::cluster
