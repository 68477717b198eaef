// ChildProcess: a program (here: `steward cluster`, `steward serve`) run in the background with
// its stdout and stderr appended to a log file, killed when the parent dies (PR_SET_PDEATHSIG),
// so a torture run that crashes leaves nothing behind. Linux delivers that signal when the
// *thread* that called Start exits: call Start from a thread that outlives the child.
// Not thread-safe: one owner.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"

namespace steward::torture {

class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess();  // SIGKILLs a child still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Starts argv[0] (a path) with `argv`; output goes to `log_path` (appended). Fails when the
  // log cannot be opened or a child is already running.
  Status Start(const std::vector<std::string>& argv, const std::string& log_path);
  // True while the child has not been reaped.
  bool Running();
  // Sends `signal` and waits up to `timeout` for the child to exit; SIGKILL after that. Returns
  // the wait status as waitpid gives it, or -1 when no child was running.
  int Stop(int signal, std::chrono::milliseconds timeout = std::chrono::seconds(10));
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

// A TCP port on 127.0.0.1 that was free a moment ago, outside the ephemeral range, never the
// same twice in a process.
StatusOr<uint16_t> PickFreePort();

}  // namespace steward::torture
