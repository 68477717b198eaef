// RunSubprocess: runs one program (never through a shell) with its stdout and stderr captured,
// stdin from /dev/null, a given environment and a timeout. Used by the exec credential plugin.
// Thread-safe: each call owns its pipes and child; the pipes are close-on-exec so concurrent
// calls do not leak descriptors into each other's children.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "common/status.h"

namespace steward::kube::config_internal {

struct SubprocessResult {
  int exit_code = -1;   // when the child exited normally, else -1
  int term_signal = 0;  // the signal that killed it, else 0
  std::string stdout_data;
  std::string stderr_data;
  bool stdout_truncated = false;  // more than max_output bytes were written (the rest dropped)
};

struct SubprocessOptions {
  std::chrono::milliseconds timeout{30000};
  size_t max_stdout = 4u << 20;
  size_t max_stderr = 64u << 10;
};

// Runs `program` (looked up in PATH when it contains no '/') with argv[0] = program followed by
// `args`, and exactly the environment `env` ("NAME=value" entries). The child runs in its own
// process group; on timeout the whole group is killed with SIGKILL and the call fails with
// kDeadlineExceeded. Fails with kNotFound when the program does not exist, kPermissionDenied when
// it cannot be executed. A non-zero exit is NOT an error here: see exit_code / term_signal.
StatusOr<SubprocessResult> RunSubprocess(const std::string& program,
                                         const std::vector<std::string>& args,
                                         const std::vector<std::string>& env,
                                         const SubprocessOptions& options);

// The current process environment as "NAME=value" entries.
std::vector<std::string> CurrentEnvironment();

}  // namespace steward::kube::config_internal
