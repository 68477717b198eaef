#include "cluster/controllers/process_runtime.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "common/log.h"

extern char** environ;

namespace steward::cluster::controllers {

namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// A connected (or failed) non-blocking connect to 127.0.0.1:port within `timeout`; -1 on failure.
int ConnectLoopback(uint16_t port, milliseconds timeout) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno != EINPROGRESS) {
      ::close(fd);
      return -1;
    }
    pollfd p{fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1 ||
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      ::close(fd);
      return -1;
    }
  }
  return fd;
}

// A free loopback port (bound and released: another process could take it in between, which
// the process then reports by failing to listen, and its restart gets the same port).
StatusOr<uint16_t> FreeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Internal(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    int e = errno;
    ::close(fd);
    return Internal(std::string("bind 127.0.0.1:0: ") + std::strerror(e));
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::string PortEnvName(const ProcessRuntime::Port& p) {
  std::string out = "STEWARD_PORT_";
  if (p.name.empty()) return out + std::to_string(p.container_port);
  for (char c : p.name) {
    out.push_back(c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  }
  return out;
}

void SetEnv(std::vector<std::pair<std::string, std::string>>& env, const std::string& name,
            std::string value) {
  for (auto& kv : env) {
    if (kv.first == name) {
      kv.second = std::move(value);
      return;
    }
  }
  env.emplace_back(name, std::move(value));
}

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 255;
}

}  // namespace

bool ProbeTcp(uint16_t port, milliseconds timeout) {
  int fd = ConnectLoopback(port, timeout);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

bool ProbeHttp(uint16_t port, const std::string& path, milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int fd = ConnectLoopback(port, timeout);
  if (fd < 0) return false;
  std::string req = "GET " + (path.empty() ? std::string("/") : path) +
                    " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                    "\r\nUser-Agent: kube-probe/1.31\r\nAccept: */*\r\nConnection: close\r\n\r\n";
  std::string head;
  size_t sent = 0;
  bool ok = false;
  while (true) {
    auto left =
        std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd, static_cast<short>(sent < req.size() ? POLLOUT : POLLIN), 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) != 1) break;
    if (sent < req.size()) {
      ssize_t n = ::send(fd, req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
      continue;
    }
    char buf[512];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    head.append(buf, static_cast<size_t>(n));
    size_t eol = head.find("\r\n");
    if (eol == std::string::npos && head.size() > 4096) break;  // no status line: a failure
    if (eol == std::string::npos) continue;
    // "HTTP/1.1 200 OK"
    int code = 0;
    if (head.rfind("HTTP/", 0) == 0 && head.size() > 12) code = std::atoi(head.c_str() + 9);
    ok = code >= 200 && code < 400;
    break;
  }
  ::close(fd);
  return ok;
}

ProcessRuntime::ProcessRuntime(Options options) : options_(std::move(options)) {
  base_dir_ = options_.base_dir;
  if (base_dir_.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    base_dir_ = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  supervisor_ = std::thread([this] { Loop(); });
  pthread_setname_np(supervisor_.native_handle(), "pod-processes");
}

ProcessRuntime::~ProcessRuntime() { StopAll(); }

void ProcessRuntime::SetNotify(std::function<void(const std::string&)> notify) {
  MutexLock lock(mu_);
  notify_ = std::move(notify);
}

Status ProcessRuntime::Start(const Spec& spec) {
  const std::string key = spec.uid + "/" + spec.container;
  MutexLock lock(mu_);
  if (stopping_all_) return FailedPrecondition("the process runtime is stopping");
  auto [it, inserted] = pods_.try_emplace(spec.uid);
  Pod& pod = it->second;
  if (pod.stopping) return FailedPrecondition("pod " + spec.key + " is stopping");
  if (pod.containers.count(spec.container) != 0) return Status::Ok();
  if (inserted) {
    std::string templ = (fs::path(base_dir_) / "steward-pod-XXXXXX").string();
    if (::mkdtemp(templ.data()) == nullptr) {
      int e = errno;
      pods_.erase(it);
      return Internal("pod directory under " + base_dir_ + ": " + std::strerror(e));
    }
    pod.dir = templ;
    pod.key = spec.key;
  }
  auto c = std::make_unique<Container>();
  c->spec = spec;
  for (const Port& p : spec.ports) {
    if (p.container_port <= 0 || c->host_ports.count(p.container_port) != 0) continue;
    auto hp = FreeLoopbackPort();
    if (!hp.ok()) {
      if (pod.containers.empty()) RemovePod(it);
      return hp.status();
    }
    c->host_ports[p.container_port] = *hp;
  }
  c->view.log_path = (fs::path(pod.dir) / (spec.container + ".log")).string();
  // The supervisor thread forks it: PR_SET_PDEATHSIG follows the thread that forked, and that
  // one lives as long as the processes.
  c->spawn_requested = true;
  pod.containers.emplace(spec.container, std::move(c));
  cv_.NotifyAll();
  cv_.Wait(mu_, [&]() REQUIRES(mu_) { return spawn_results_.count(key) != 0 || done_; });
  auto result = spawn_results_.find(key);
  if (result == spawn_results_.end()) return FailedPrecondition("the process runtime stopped");
  Status st = std::move(result->second);
  spawn_results_.erase(result);
  return st;
}

void ProcessRuntime::RemovePod(std::map<std::string, Pod>::iterator it) {
  std::error_code ec;
  fs::remove_all(it->second.dir, ec);
  pods_.erase(it);
}

Status ProcessRuntime::Spawn(const Pod& pod, Container& c) {
  const Spec& spec = c.spec;
  std::vector<std::pair<std::string, std::string>> env;
  for (const char* name : {"PATH", "LANG"}) {
    if (const char* v = std::getenv(name)) env.emplace_back(name, v);
  }
  env.emplace_back("HOME", pod.dir);
  for (const auto& [k, v] : spec.env) SetEnv(env, k, v);
  bool first = true;
  for (const Port& p : spec.ports) {
    auto hp = c.host_ports.find(p.container_port);
    if (hp == c.host_ports.end()) continue;
    SetEnv(env, PortEnvName(p), std::to_string(hp->second));
    if (first) SetEnv(env, "PORT", std::to_string(hp->second));
    first = false;
  }
  SetEnv(env, "STEWARD_POD_DIR", pod.dir);

  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string sh = "/bin/sh", dash_c = "-c", command = spec.command;
  std::vector<char*> argv = {sh.data(), dash_c.data(), command.data(), nullptr};
  const std::string dir = spec.dir.empty() ? pod.dir : spec.dir;

  int log_fd = ::open(c.view.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log_fd < 0) return Internal("open " + c.view.log_path + ": " + std::strerror(errno));
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) {
    ::close(log_fd);
    return Internal(std::string("open /dev/null: ") + std::strerror(errno));
  }
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    // The child: async-signal-safe calls only until exec.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD}) ::signal(sig, SIG_DFL);
    ::dup2(null_fd, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    if (::syscall(SYS_close_range, 3U, ~0U, 0U) != 0) {
      for (int fd = 3; fd < 65536; ++fd) ::close(fd);
    }
    if (::chdir(dir.c_str()) != 0) {
      static const char kMsg[] = "steward: cannot enter the working directory\n";
      (void)!::write(2, kMsg, sizeof kMsg - 1);
      ::_exit(127);
    }
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  int fork_errno = errno;
  ::close(log_fd);
  ::close(null_fd);
  if (pid < 0) return Internal(std::string("fork: ") + std::strerror(fork_errno));
  ::setpgid(pid, pid);  // also from here, so that a kill right away reaches the group
  auto now = Clock::now();
  c.pid = pid;
  ++c.generation;
  c.run_start = now;
  c.view.running = true;
  c.view.waiting = false;
  c.view.started_at = std::chrono::system_clock::now();
  c.successes = 0;
  c.failures = 0;
  c.view.ready = spec.readiness.kind == Probe::Kind::kNone;
  c.next_probe = now + spec.readiness.initial_delay;
  return Status::Ok();
}

void ProcessRuntime::Stop(const std::string& uid, milliseconds grace) {
  std::vector<std::string> keys;
  {
    MutexLock lock(mu_);
    auto it = pods_.find(uid);
    if (it == pods_.end() || it->second.stopping) return;
    Pod& pod = it->second;
    pod.stopping = true;
    pod.kill_at = Clock::now() + grace;
    for (auto& [name, c] : pod.containers) {
      c->view.ready = false;
      if (c->pid > 0) ::kill(-c->pid, SIGTERM);
    }
    keys.push_back(pod.key);
  }
  cv_.NotifyAll();
  Notify(keys);
}

bool ProcessRuntime::Has(const std::string& uid) const {
  MutexLock lock(mu_);
  return pods_.count(uid) != 0;
}

std::optional<ProcessRuntime::View> ProcessRuntime::Get(const std::string& uid,
                                                        const std::string& container) const {
  MutexLock lock(mu_);
  auto it = pods_.find(uid);
  if (it == pods_.end()) return std::nullopt;
  auto c = it->second.containers.find(container);
  if (c == it->second.containers.end()) return std::nullopt;
  return c->second->view;
}

std::optional<uint16_t> ProcessRuntime::HostPort(const std::string& uid, int container_port) const {
  MutexLock lock(mu_);
  auto it = pods_.find(uid);
  if (it == pods_.end()) return std::nullopt;
  for (const auto& [name, c] : it->second.containers) {
    auto hp = c->host_ports.find(container_port);
    if (hp != c->host_ports.end()) return hp->second;
  }
  return std::nullopt;
}

std::string ProcessRuntime::PodDir(const std::string& uid) const {
  MutexLock lock(mu_);
  auto it = pods_.find(uid);
  return it == pods_.end() ? std::string() : it->second.dir;
}

bool ProcessRuntime::stopping() const {
  MutexLock lock(mu_);
  return stopping_all_;
}

void ProcessRuntime::StopAll(milliseconds grace) {
  std::vector<std::string> uids;
  {
    MutexLock lock(mu_);
    if (done_) return;
    stopping_all_ = true;
    for (const auto& [uid, pod] : pods_) uids.push_back(uid);
  }
  for (const auto& uid : uids) Stop(uid, grace);
  {
    // Pods already stopping with a longer grace period get this one.
    MutexLock lock(mu_);
    for (auto& [uid, pod] : pods_) pod.kill_at = std::min(pod.kill_at, Clock::now() + grace);
  }
  {
    MutexLock lock(mu_);
    cv_.Wait(mu_, [&]() REQUIRES(mu_) { return pods_.empty(); });
    done_ = true;
  }
  cv_.NotifyAll();
  if (supervisor_.joinable()) supervisor_.join();
}

void ProcessRuntime::Notify(const std::vector<std::string>& keys) {
  std::function<void(const std::string&)> notify;
  {
    MutexLock lock(mu_);
    notify = notify_;
  }
  if (!notify) return;
  for (const auto& k : keys) notify(k);
}

void ProcessRuntime::Loop() {
  for (;;) {
    std::vector<std::string> keys;
    std::vector<DueProbe> probes;
    {
      MutexLock lock(mu_);
      if (done_) return;
      if (pods_.empty()) {
        cv_.Wait(mu_);  // nothing to watch until a Start (or the end)
      } else {
        cv_.WaitFor(mu_, options_.tick);
      }
      if (done_) return;
      probes = Tick(keys);
    }
    cv_.NotifyAll();  // StopAll waits for pods_ to empty
    for (const DueProbe& due : probes) {
      bool ok = due.probe.kind == Probe::Kind::kHttp
                    ? ProbeHttp(due.port, due.probe.path, due.probe.timeout)
                    : ProbeTcp(due.port, due.probe.timeout);
      MutexLock lock(mu_);
      ApplyProbe(due, ok, keys);
    }
    Notify(keys);
  }
}

std::vector<ProcessRuntime::DueProbe> ProcessRuntime::Tick(std::vector<std::string>& keys) {
  std::vector<DueProbe> probes;
  const auto now = Clock::now();
  for (auto it = pods_.begin(); it != pods_.end();) {
    Pod& pod = it->second;
    bool alive = false;
    for (auto it_c = pod.containers.begin(); it_c != pod.containers.end();) {
      const std::string& name = it_c->first;
      Container& c = *it_c->second;
      if (c.spawn_requested) {
        c.spawn_requested = false;
        Status st =
            pod.stopping ? FailedPrecondition("pod " + pod.key + " is stopping") : Spawn(pod, c);
        if (st.ok()) {
          LOG_INFO("process pod {} container {}: pid {}, log {}", pod.key, name, c.pid,
                   c.view.log_path);
          keys.push_back(pod.key);
        }
        spawn_results_[it->first + "/" + name] = st;
        if (!st.ok()) {
          it_c = pod.containers.erase(it_c);
          continue;
        }
      }
      if (c.pid > 0) {
        int status = 0;
        // Has it exited? Asked without reaping it: while it is a zombie its pid cannot be
        // reused, so the group kill below cannot reach a stranger.
        siginfo_t info{};
        const bool exited =
            ::waitid(P_PID, static_cast<id_t>(c.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
            info.si_pid == c.pid;
        if (exited) ::kill(-c.pid, SIGKILL);  // whatever is left of its group goes with it
        pid_t r = exited ? ::waitpid(c.pid, &status, 0) : ::waitpid(c.pid, &status, WNOHANG);
        // ECHILD: reaped elsewhere (never here); its pid may be anyone's by now: no kill.
        if (r == c.pid || (r < 0 && errno == ECHILD)) {
          const bool reaped = r == c.pid;
          c.pid = 0;
          c.view.running = false;
          c.view.ready = false;
          c.view.exited = true;
          c.view.exit_code = reaped ? ExitCodeOf(status) : 255;
          c.view.last_started_at = c.view.started_at;
          c.view.finished_at = std::chrono::system_clock::now();
          const std::string& policy = c.spec.restart_policy;
          bool restart = !pod.stopping && !stopping_all_ &&
                         (policy == "Always" || (policy == "OnFailure" && c.view.exit_code != 0));
          if (restart) {
            if (now - c.run_start > options_.backoff_max) c.backoff = milliseconds(0);
            c.backoff = c.backoff.count() == 0 ? options_.backoff_base
                                               : std::min(c.backoff * 2, options_.backoff_max);
            c.restart_at = now + c.backoff;
            c.view.waiting = true;
          }
          LOG_INFO("process pod {} container {}: exited with {}{}", pod.key, name, c.view.exit_code,
                   restart ? ", restarting" : "");
          keys.push_back(pod.key);
        }
      }
      if (c.pid == 0 && c.view.waiting && !pod.stopping && now >= c.restart_at) {
        Status st = Spawn(pod, c);
        if (st.ok()) {
          ++c.view.restart_count;
        } else {
          LOG_WARN("process pod {} container {}: restart: {}", pod.key, name, st.message());
          c.restart_at = now + options_.backoff_max;
        }
        keys.push_back(pod.key);
      }
      if (c.pid > 0) alive = true;
      if (c.pid > 0 && !pod.stopping && c.spec.readiness.kind != Probe::Kind::kNone &&
          now >= c.next_probe) {
        c.next_probe = now + c.spec.readiness.period;
        auto hp = c.host_ports.find(c.spec.readiness.port);
        // A probe of an undeclared port never succeeds: nothing listens there.
        if (hp != c.host_ports.end()) {
          probes.push_back({it->first, name, c.generation, c.spec.readiness, hp->second});
        }
      }
      ++it_c;
    }
    if (pod.stopping && alive && !pod.killed && now >= pod.kill_at) {
      pod.killed = true;
      for (auto& [name, c] : pod.containers) {
        if (c->pid > 0) ::kill(-c->pid, SIGKILL);
      }
    }
    if ((pod.stopping && !alive) || pod.containers.empty()) {
      keys.push_back(pod.key);
      std::error_code ec;
      fs::remove_all(pod.dir, ec);
      it = pods_.erase(it);
      continue;
    }
    ++it;
  }
  return probes;
}

void ProcessRuntime::ApplyProbe(const DueProbe& due, bool ok, std::vector<std::string>& keys) {
  auto it = pods_.find(due.uid);
  if (it == pods_.end() || it->second.stopping) return;
  auto cit = it->second.containers.find(due.container);
  if (cit == it->second.containers.end()) return;
  Container& c = *cit->second;
  if (c.generation != due.generation || c.pid == 0) return;
  bool was = c.view.ready;
  if (ok) {
    c.failures = 0;
    if (++c.successes >= std::max(1, due.probe.success_threshold)) c.view.ready = true;
  } else {
    c.successes = 0;
    // Not yet ready: one failure keeps it so; ready: failureThreshold in a row take it away.
    if (++c.failures >= std::max(1, due.probe.failure_threshold)) c.view.ready = false;
  }
  if (was != c.view.ready) keys.push_back(it->second.key);
}

}  // namespace steward::cluster::controllers
