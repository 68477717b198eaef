// ProcessRuntime: the optional process runtime of the embedded kubelet. A container whose image
// matches a profile's process_images entry runs as a real local process instead of a virtual
// one (docs/embedded-cluster.md, "Process pods").
//
//   - Start: /bin/sh -c COMMAND in its own process group (SIGTERM/SIGKILL go to the group),
//     with PR_SET_PDEATHSIG(SIGKILL) so that a crashed cluster leaves no orphan. Working dir:
//     the mapping's dir, else the pod's own directory (created 0700 under the base dir, removed
//     once the pod's processes are gone). Environment: PATH and LANG of this process, HOME =
//     the pod directory, then the mapping's env, then the container's resolved env, then what
//     binds it: every declared containerPort gets a free loopback port, passed as
//     STEWARD_PORT_<NAME> (the port's name upper-cased, '-' as '_'; unnamed: the number) and, for
//     the first declared port, PORT; STEWARD_POD_DIR names the pod directory. stdin is
//     /dev/null; stdout and stderr go to <pod dir>/<container>.log (appended across restarts).
//   - Readiness: with a readinessProbe (httpGet: 2xx/3xx answers, or tcpSocket against a
//     declared port's loopback twin), ready after successThreshold successes in a row, not ready
//     after failureThreshold failures, probed every periodSeconds from initialDelaySeconds;
//     without one, ready as soon as the process runs (the kubelet's rule).
//   - Exit: restarted per restart policy (Always; OnFailure when the code is not 0; Never) after
//     a back-off of 1 s doubling up to 60 s (reset after 60 s of running); restart_count counts.
//   - Stop: SIGTERM to the group, SIGKILL after the grace period; the pod is forgotten (Has()
//     false) once every process has been reaped.
// Every change a kubelet should look at (started, ready or not, exited, restarted, gone) is
// reported through the notify callback with the spec's key.
//
// Threads: one supervisor thread (forks every process, so that PR_SET_PDEATHSIG, which follows
// the forking thread, fires only when the runtime or the whole process is gone; reaps, restarts,
// kills, probes; probes run outside the lock, one at a time, so a slow probe delays the others,
// and a Start(), by at most its timeout).
// Thread-safety: all methods may be called from any thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"

namespace steward::cluster::controllers {

class ProcessRuntime {
 public:
  struct Probe {
    enum class Kind { kNone, kHttp, kTcp };
    Kind kind = Kind::kNone;
    int port = 0;            // the container port probed
    std::string path = "/";  // kHttp
    std::chrono::milliseconds initial_delay{0};
    std::chrono::milliseconds period{std::chrono::seconds(10)};
    std::chrono::milliseconds timeout{std::chrono::seconds(1)};
    int success_threshold = 1;
    int failure_threshold = 3;
  };
  struct Port {
    std::string name;  // may be empty
    int container_port = 0;
  };
  struct Spec {
    std::string key;  // "ns/name": what notifications name
    std::string uid;
    std::string container;
    std::string command;  // run with /bin/sh -c
    std::string dir;      // working directory; empty: the pod directory
    std::vector<std::pair<std::string, std::string>> env;  // in order; later entries win
    std::vector<Port> ports;
    Probe readiness;
    std::string restart_policy = "Always";  // Always | OnFailure | Never
  };
  using WallTime = std::chrono::system_clock::time_point;
  struct View {
    bool running = false;  // a process is alive
    bool ready = false;
    int restart_count = 0;
    WallTime started_at{};  // of the current (or last) run
    bool exited = false;    // a run has ended: exit_code, finished_at are set
    int exit_code = 0;      // 128 + signal for a process killed by a signal
    WallTime last_started_at{};
    WallTime finished_at{};
    bool waiting = false;  // exited, a restart is due after the back-off
    std::string log_path;
  };
  struct Options {
    std::string base_dir;  // where pod directories are made; empty: $TMPDIR, else /tmp
    std::chrono::milliseconds tick{50};
    std::chrono::milliseconds backoff_base{std::chrono::seconds(1)};
    std::chrono::milliseconds backoff_max{std::chrono::seconds(60)};
  };

  explicit ProcessRuntime(Options options);
  ProcessRuntime() : ProcessRuntime(Options{}) {}
  ~ProcessRuntime();  // StopAll()
  ProcessRuntime(const ProcessRuntime&) = delete;
  ProcessRuntime& operator=(const ProcessRuntime&) = delete;

  // Called (from the supervisor thread, or the caller of Start/Stop) with a spec's key whenever
  // one of its containers changes. Set before the first Start.
  void SetNotify(std::function<void(const std::string& key)> notify);

  // Starts the container's process. A container already known (same uid and name) is left as
  // it is. kInternal when the pod directory, a port or the process cannot be made.
  Status Start(const Spec& spec);
  // SIGTERM to every process of the pod now, SIGKILL to those left after `grace`.
  void Stop(const std::string& uid, std::chrono::milliseconds grace);
  // True while the pod has containers here (until its processes are reaped after Stop).
  bool Has(const std::string& uid) const;
  std::optional<View> Get(const std::string& uid, const std::string& container) const;
  // The loopback port that stands for `container_port` of the pod; nullopt when none of its
  // process containers declares it or the pod is stopping.
  std::optional<uint16_t> HostPort(const std::string& uid, int container_port) const;
  std::string PodDir(const std::string& uid) const;
  // True once StopAll() has begun: Start() refuses from then on.
  bool stopping() const;
  // Stops every pod (SIGTERM, SIGKILL after `grace`) and waits until all are reaped; then ends
  // the supervisor. Idempotent.
  void StopAll(std::chrono::milliseconds grace = std::chrono::seconds(5));

 private:
  using Clock = std::chrono::steady_clock;
  struct Container {
    Spec spec;
    std::map<int, uint16_t> host_ports;  // container port → loopback port
    pid_t pid = 0;                       // 0: not running
    View view;
    Clock::time_point run_start{};
    Clock::time_point next_probe{};
    int successes = 0;
    int failures = 0;
    Clock::time_point restart_at{};
    std::chrono::milliseconds backoff{0};
    uint64_t generation = 0;       // bumped on every spawn (stale probe results are dropped)
    bool spawn_requested = false;  // Start() waits for the supervisor to fork it
  };
  struct Pod {
    std::string key;
    std::string dir;
    std::map<std::string, std::unique_ptr<Container>> containers;
    bool stopping = false;
    Clock::time_point kill_at{};
    bool killed = false;
  };
  struct DueProbe {
    std::string uid, container;
    uint64_t generation;
    Probe probe;
    uint16_t port;
  };

  Status Spawn(const Pod& pod, Container& c) REQUIRES(mu_);
  void RemovePod(std::map<std::string, Pod>::iterator it) REQUIRES(mu_);
  void Loop();
  // One pass: reaps, restarts, kills, removes; returns the probes due and the keys to notify.
  std::vector<DueProbe> Tick(std::vector<std::string>& notify) REQUIRES(mu_);
  void ApplyProbe(const DueProbe& due, bool ok, std::vector<std::string>& notify) REQUIRES(mu_);
  void Notify(const std::vector<std::string>& keys);

  const Options options_;
  std::string base_dir_;
  std::function<void(const std::string&)> notify_;
  mutable Mutex mu_;
  CondVar cv_;
  std::map<std::string, Pod> pods_ GUARDED_BY(mu_);              // by uid
  std::map<std::string, Status> spawn_results_ GUARDED_BY(mu_);  // "uid/container", for Start
  bool stopping_all_ GUARDED_BY(mu_) = false;
  bool done_ GUARDED_BY(mu_) = false;
  std::thread supervisor_;
};

// One probe, as the kubelet's prober runs it against 127.0.0.1:`port`: an HTTP GET of `path`
// answered 200-399, or a TCP connect. False on refusal, timeout or another answer.
bool ProbeHttp(uint16_t port, const std::string& path, std::chrono::milliseconds timeout);
bool ProbeTcp(uint16_t port, std::chrono::milliseconds timeout);

}  // namespace steward::cluster::controllers
