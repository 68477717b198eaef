#include "process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "net/http_client.h"

namespace steward::e2e {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<char*> CArgs(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

}  // namespace

std::string StewardBinary() {
  const char* env = std::getenv("STEWARD_BINARY");
  return env != nullptr ? env : "steward";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

RunResult Run(const std::vector<std::string>& argv, const std::string& input,
              std::chrono::milliseconds timeout) {
  RunResult result;
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe(in_pipe) != 0 || pipe(out_pipe) != 0 || pipe(err_pipe) != 0) return result;
  auto start = Clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) {
      close(fd);
    }
    auto args = CArgs(argv);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  SetNonBlocking(in_pipe[1]);
  SetNonBlocking(out_pipe[0]);
  SetNonBlocking(err_pipe[0]);
  size_t written = 0;
  if (input.empty()) {
    close(in_pipe[1]);
    in_pipe[1] = -1;
  }
  bool out_open = true, err_open = true;
  auto deadline = start + timeout;
  bool killed = false;
  while (out_open || err_open) {
    auto now = Clock::now();
    if (now >= deadline) {
      kill(pid, SIGKILL);
      killed = true;
      break;
    }
    pollfd fds[3];
    int n = 0;
    if (out_open) fds[n++] = {out_pipe[0], POLLIN, 0};
    if (err_open) fds[n++] = {err_pipe[0], POLLIN, 0};
    if (in_pipe[1] >= 0) fds[n++] = {in_pipe[1], POLLOUT, 0};
    int wait_ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count());
    if (poll(fds, n, std::min(wait_ms, 200)) < 0 && errno != EINTR) break;
    for (int i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == in_pipe[1]) {
        ssize_t w = write(in_pipe[1], input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if (w < 0 && errno != EAGAIN) written = input.size();
        if (written >= input.size()) {
          close(in_pipe[1]);
          in_pipe[1] = -1;
        }
        continue;
      }
      char buf[65536];
      ssize_t r = read(fds[i].fd, buf, sizeof buf);
      if (r > 0) {
        (fds[i].fd == out_pipe[0] ? result.out : result.err).append(buf, static_cast<size_t>(r));
      } else if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
        if (fds[i].fd == out_pipe[0]) out_open = false;
        if (fds[i].fd == err_pipe[0]) err_open = false;
      }
    }
  }
  if (in_pipe[1] >= 0) close(in_pipe[1]);
  close(out_pipe[0]);
  close(err_pipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  if (!killed && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& argv) {
  int out_pipe[2];
  if (pipe(out_pipe) != 0) return;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    close(out_pipe[0]);
    close(out_pipe[1]);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    auto args = CArgs(argv);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(out_pipe[1]);
  SetNonBlocking(out_pipe[0]);
  pid_ = pid;
  out_fd_ = out_pipe[0];
}

BackgroundProcess::~BackgroundProcess() {
  if (pid_ > 0) Stop(SIGKILL, std::chrono::seconds(5));
  if (out_fd_ >= 0) close(out_fd_);
}

void BackgroundProcess::Pump(std::chrono::milliseconds wait) {
  if (out_fd_ < 0) return;
  pollfd fd = {out_fd_, POLLIN, 0};
  if (poll(&fd, 1, static_cast<int>(wait.count())) <= 0) return;
  char buf[65536];
  while (true) {
    ssize_t r = read(out_fd_, buf, sizeof buf);
    if (r > 0) {
      buffer_.append(buf, static_cast<size_t>(r));
      continue;
    }
    if (r == 0) {
      close(out_fd_);
      out_fd_ = -1;
    }
    break;
  }
}

std::optional<std::string> BackgroundProcess::WaitForLine(const std::string& needle,
                                                          std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  size_t search_from = 0;
  while (true) {
    size_t pos = buffer_.find(needle, search_from);
    if (pos != std::string::npos) {
      size_t begin = buffer_.rfind('\n', pos);
      begin = begin == std::string::npos ? 0 : begin + 1;
      size_t end = buffer_.find('\n', pos);
      if (end != std::string::npos) return buffer_.substr(begin, end - begin);
    }
    auto now = Clock::now();
    if (now >= deadline || out_fd_ < 0) return std::nullopt;
    Pump(std::min(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now),
                  std::chrono::milliseconds(100)));
  }
}

const std::string& BackgroundProcess::output() {
  Pump(std::chrono::milliseconds(0));
  return buffer_;
}

int BackgroundProcess::Stop(int signal, std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  kill(pid_, signal);
  auto deadline = Clock::now() + timeout;
  int status = 0;
  while (true) {
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) break;
    if (Clock::now() >= deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      pid_ = -1;
      return -1;
    }
    Pump(std::chrono::milliseconds(20));
  }
  Pump(std::chrono::milliseconds(0));
  pid_ = -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "steward-e2e-XXXXXX").string();
  char* made = mkdtemp(tmpl.data());
  path_ = made != nullptr ? made : "";
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

ClusterUnderTest::ClusterUnderTest(const std::vector<std::string>& extra,
                                   const std::string& data_dir) {
  kubeconfig_ = dir_.path() + "/kubeconfig";
  std::vector<std::string> argv = {
      StewardBinary(), "cluster",          "--listen",  "127.0.0.1:0", "--ingress-listen",
      "127.0.0.1:0",   "--kubeconfig-out", kubeconfig_, "--log-level", "warn"};
  if (!data_dir.empty()) {
    argv.push_back("--data-dir");
    argv.push_back(data_dir);
  }
  argv.insert(argv.end(), extra.begin(), extra.end());
  process_ = std::make_unique<BackgroundProcess>(argv);
  auto api = process_->WaitForLine("API server:", std::chrono::seconds(20));
  auto ing = process_->WaitForLine("Ingress:", std::chrono::seconds(5));
  if (!api || !ing) return;
  api_url_ = api->substr(api->find("https://"));
  ingress_url_ = ing->substr(ing->find("http://"));
  ok_ = true;
}

ClusterUnderTest::~ClusterUnderTest() { Stop(); }

int ClusterUnderTest::Stop() {
  if (!process_ || !process_->running()) return -1;
  return process_->Stop(SIGTERM);
}

uint16_t ClusterUnderTest::ingress_port() const {
  size_t colon = ingress_url_.rfind(':');
  return static_cast<uint16_t>(std::stoi(ingress_url_.substr(colon + 1)));
}

std::vector<std::string> ClusterUnderTest::KubectlArgv(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {"kubectl", "--kubeconfig", kubeconfig_, "--cache-dir",
                                   dir_.path() + "/kube-cache"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

RunResult ClusterUnderTest::Kubectl(const std::vector<std::string>& args, const std::string& input,
                                    std::chrono::milliseconds timeout) {
  return Run(KubectlArgv(args), input, timeout);
}

bool ClusterUnderTest::KubectlUntil(const std::vector<std::string>& args,
                                    bool (*pred)(const RunResult&),
                                    std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (pred(Kubectl(args))) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // poll interval, not a sync
  }
  return false;
}

HttpAnswer HttpGet(uint16_t port, const std::string& host, const std::string& path) {
  net::HttpClient::Options o;
  o.port = port;
  auto client = net::HttpClient::Create(o);
  net::Headers headers;
  headers.Add("Host", host);
  auto resp = client->Request("GET", path, "", headers);
  if (!resp.ok()) return {};
  return {resp->status, resp->body};
}

std::optional<ServeAddress> WaitForServeAddress(BackgroundProcess& serve,
                                                std::chrono::milliseconds timeout) {
  auto api = serve.WaitForLine("  API ", timeout);
  auto token = serve.WaitForLine("  API token ", std::chrono::seconds(10));
  if (!api || !token) return std::nullopt;
  ServeAddress out;
  std::smatch m;
  if (!std::regex_search(*api, m, std::regex(R"((https?://\S+))"))) return std::nullopt;
  out.server = m[1];
  if (!std::regex_search(*token, m, std::regex(R"(API token +(\S+))"))) return std::nullopt;
  out.token_file = m[1];
  return out;
}

ServeUnderTest::ServeUnderTest()
    : process_(std::make_unique<BackgroundProcess>(std::vector<std::string>{
          StewardBinary(), "serve", "--embedded-cluster", "instant", "--data-dir",
          dir_.path() + "/data", "--listen", "127.0.0.1:0", "--log-level", "warn", "--namespace",
          "steward", "--kubeconfig-out", dir_.path() + "/kubeconfig"})),
      address_(WaitForServeAddress(*process_)) {}

// Every "http://NAME.localhost:PORT/" in `text`: name → port.
std::map<std::string, uint16_t> Urls(const std::string& text) {
  std::map<std::string, uint16_t> urls;
  std::regex re(R"(http://([a-z0-9-]+)\.localhost:(\d+)/)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    urls[(*it)[1]] = static_cast<uint16_t>(std::stoi((*it)[2]));
  }
  return urls;
}

}  // namespace steward::e2e
