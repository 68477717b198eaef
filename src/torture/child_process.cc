#include "torture/child_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>
#include <thread>

#include "net/free_port.h"

namespace steward::torture {

ChildProcess::~ChildProcess() {
  if (pid_ > 0) Stop(SIGKILL, std::chrono::seconds(5));
}

Status ChildProcess::Start(const std::vector<std::string>& argv, const std::string& log_path) {
  if (pid_ > 0) return Status(StatusCode::kFailedPrecondition, "child already running");
  if (argv.empty()) return Status(StatusCode::kInvalidArgument, "empty command");
  int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return Status(StatusCode::kInternal, "opening " + log_path + ": " + std::strerror(errno));
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(log_fd);
    return Status(StatusCode::kInternal, std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // Only async-signal-safe calls from here to exec.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(126);  // the parent died before prctl took effect
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    dup2(log_fd, 1);
    dup2(log_fd, 2);
    // Nothing else of the parent's: Asio opens sockets without CLOEXEC, and a child holding the
    // parent's connections would keep them open after the parent closes them.
    close_range(3, ~0U, 0);
    execv(args[0], args.data());
    _exit(127);
  }
  close(log_fd);
  pid_ = pid;
  return Status::Ok();
}

bool ChildProcess::Running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

int ChildProcess::Stop(int signal, std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  kill(pid_, signal);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (true) {
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    // Polling a child's exit: waitpid has no timeout, and a SIGCHLD handler would be process-wide.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  pid_ = -1;
  return status;
}

StatusOr<uint16_t> PickFreePort() {
  const uint16_t port = net::PickFreePort();
  if (port == 0)
    return Status(StatusCode::kUnavailable, "no free port in 20000-31999 on 127.0.0.1");
  return port;
}

}  // namespace steward::torture
