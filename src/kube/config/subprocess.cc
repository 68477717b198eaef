#include "kube/config/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "kube/config/file_util.h"

extern char** environ;

namespace steward::kube::config_internal {

namespace {

// Owns a file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int* out() { return &fd_; }

 private:
  int fd_ = -1;
};

struct Pipe {
  Fd read;
  Fd write;
};

Status MakePipe(Pipe& p) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Internal("pipe2: " + ErrnoText(errno));
  *p.read.out() = fds[0];
  *p.write.out() = fds[1];
  return Status::Ok();
}

// RAII for the spawn attribute objects.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

std::vector<char*> CStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

Status SpawnChild(const std::string& program, const std::vector<std::string>& args,
                  const std::vector<std::string>& env, Pipe& out, Pipe& err, pid_t* pid) {
  SpawnSetup s;
  posix_spawn_file_actions_addopen(&s.actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&s.actions, out.write.get(), 1);
  posix_spawn_file_actions_adddup2(&s.actions, err.write.get(), 2);
  // Own process group (so a timeout kills its children too), default signal dispositions for
  // the signals a server commonly ignores or blocks, and an empty signal mask.
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGHUP);
  sigset_t empty;
  sigemptyset(&empty);
  posix_spawnattr_setsigdefault(&s.attr, &defaults);
  posix_spawnattr_setsigmask(&s.attr, &empty);
  posix_spawnattr_setpgroup(&s.attr, 0);
  posix_spawnattr_setflags(&s.attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  std::vector<std::string> argv_s;
  argv_s.reserve(args.size() + 1);
  argv_s.push_back(program);
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv = CStrings(argv_s);
  std::vector<char*> envp = CStrings(env);
  int rc = ::posix_spawnp(pid, program.c_str(), &s.actions, &s.attr, argv.data(), envp.data());
  if (rc == ENOENT) return NotFound("executable " + program + " not found");
  if (rc == EACCES) return {StatusCode::kPermissionDenied, program + ": " + ErrnoText(rc)};
  if (rc != 0) return Internal("cannot start " + program + ": " + ErrnoText(rc));
  return Status::Ok();
}

// Appends what is readable on `fd` to `buf` (up to `cap`, the rest is discarded). Returns false
// at end of file or on error.
bool Drain(int fd, std::string& buf, size_t cap, bool* truncated) {
  char chunk[8192];
  ssize_t n = ::read(fd, chunk, sizeof(chunk));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) return false;
  size_t room = buf.size() < cap ? cap - buf.size() : 0;
  size_t take = std::min(room, static_cast<size_t>(n));
  buf.append(chunk, take);
  if (take < static_cast<size_t>(n) && truncated != nullptr) *truncated = true;
  return true;
}

// Reads both pipes until both close or the deadline passes. Returns false on timeout.
bool ReadUntilClosed(int out_fd, int err_fd, std::chrono::steady_clock::time_point deadline,
                     const SubprocessOptions& options, SubprocessResult& result) {
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd fds[2] = {{out_open ? out_fd : -1, POLLIN, 0}, {err_open ? err_fd : -1, POLLIN, 0}};
    int rc = ::poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count() + 1, 1000)));
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return false;
    if (out_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      out_open = Drain(out_fd, result.stdout_data, options.max_stdout, &result.stdout_truncated);
    }
    if (err_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      err_open = Drain(err_fd, result.stderr_data, options.max_stderr, nullptr);
    }
  }
  return true;
}

void RecordStatus(int status, SubprocessResult& result) {
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.term_signal = WTERMSIG(status);
}

// Reaps the child, waiting at most until `deadline`. Returns false when it is still running.
bool WaitChild(pid_t pid, std::chrono::steady_clock::time_point deadline,
               SubprocessResult& result) {
  while (true) {
    int status = 0;
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      RecordStatus(status, result);
      return true;
    }
    if (r < 0 && errno != EINTR) return true;  // not our child any more (SIGCHLD ignored)
    if (std::chrono::steady_clock::now() >= deadline) return false;
    ::usleep(2000);
  }
}

void KillAndReap(pid_t pid, SubprocessResult& result) {
  ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return;
  }
  RecordStatus(status, result);
}

}  // namespace

std::vector<std::string> CurrentEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

StatusOr<SubprocessResult> RunSubprocess(const std::string& program,
                                         const std::vector<std::string>& args,
                                         const std::vector<std::string>& env,
                                         const SubprocessOptions& options) {
  if (program.empty()) return InvalidArgument("no program to run");
  Pipe out, err;
  RETURN_IF_ERROR(MakePipe(out));
  RETURN_IF_ERROR(MakePipe(err));
  auto deadline = std::chrono::steady_clock::now() + options.timeout;
  pid_t pid = -1;
  RETURN_IF_ERROR(SpawnChild(program, args, env, out, err, &pid));
  out.write.Reset();
  err.write.Reset();
  SubprocessResult result;
  bool finished = ReadUntilClosed(out.read.get(), err.read.get(), deadline, options, result) &&
                  WaitChild(pid, deadline, result);
  if (!finished) {
    KillAndReap(pid, result);
    return Status(StatusCode::kDeadlineExceeded, program + " did not finish within " +
                                                     std::to_string(options.timeout.count()) +
                                                     " ms (killed)");
  }
  return result;
}

}  // namespace steward::kube::config_internal
