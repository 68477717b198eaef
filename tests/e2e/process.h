// Child processes for end-to-end tests: `steward cluster` in the background and kubectl runs,
// with deadlines on everything (no test waits forever).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace steward::e2e {

struct RunResult {
  int exit_code = -1;  // -1 when killed at the deadline
  std::string out;
  std::string err;
  std::chrono::milliseconds elapsed{0};
};

// Runs argv[0] with arguments, feeding `input` on stdin; kills it after `timeout`.
RunResult Run(const std::vector<std::string>& argv, const std::string& input = "",
              std::chrono::milliseconds timeout = std::chrono::seconds(60));

// A process running in the background whose stdout is collected line by line.
class BackgroundProcess {
 public:
  explicit BackgroundProcess(const std::vector<std::string>& argv);
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  // Reads stdout until a line containing `needle` arrives (returns that line) or the deadline.
  std::optional<std::string> WaitForLine(const std::string& needle,
                                         std::chrono::milliseconds timeout);
  // Everything read from stdout so far (after pumping what is available now).
  const std::string& output();
  // Sends `signal` and waits up to `timeout` for exit; returns the exit status (or -1).
  int Stop(int signal, std::chrono::milliseconds timeout = std::chrono::seconds(10));

 private:
  void Pump(std::chrono::milliseconds wait);
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string buffer_;
  size_t scanned_ = 0;
};

// A temporary directory removed at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// `steward cluster` started with a kubeconfig in a temp dir; kubectl runs against it.
class ClusterUnderTest {
 public:
  // `extra` flags are appended (e.g. {"--profile", "instant", "--set", "pod_ready.fixed_ms=900"}).
  explicit ClusterUnderTest(const std::vector<std::string>& extra = {},
                            const std::string& data_dir = "");
  ~ClusterUnderTest();

  bool ok() const { return ok_; }
  const std::string& kubeconfig() const { return kubeconfig_; }
  const std::string& api_url() const { return api_url_; }
  const std::string& ingress_url() const { return ingress_url_; }
  uint16_t ingress_port() const;
  const std::string& dir() const { return dir_.path(); }
  BackgroundProcess& process() { return *process_; }

  // kubectl --kubeconfig K --cache-dir C <args>.
  RunResult Kubectl(const std::vector<std::string>& args, const std::string& input = "",
                    std::chrono::milliseconds timeout = std::chrono::seconds(60));
  std::vector<std::string> KubectlArgv(const std::vector<std::string>& args) const;
  // Repeats the kubectl command until `pred(result)` holds or the deadline passes.
  bool KubectlUntil(const std::vector<std::string>& args, bool (*pred)(const RunResult&),
                    std::chrono::milliseconds timeout);
  int Stop();

 private:
  TempDir dir_;
  std::string kubeconfig_;
  std::string api_url_;
  std::string ingress_url_;
  std::unique_ptr<BackgroundProcess> process_;
  bool ok_ = false;
};

// A plain HTTP/1.1 GET to 127.0.0.1:port with a Host header; returns status and body.
struct HttpAnswer {
  int status = 0;
  std::string body;
};
HttpAnswer HttpGet(uint16_t port, const std::string& host, const std::string& path);

std::string StewardBinary();

// Every "http://NAME.localhost:PORT/" in `text` (the project URLs a demo prints): name → port.
std::map<std::string, uint16_t> Urls(const std::string& text);

// Where `steward serve` (or demo) says its API is: the URL and the token file of the lines
// "  API <url>" and "  API token <file>" it prints at start. nullopt when they do not come
// within `timeout`.
struct ServeAddress {
  std::string server;
  std::string token_file;
};
std::optional<ServeAddress> WaitForServeAddress(
    BackgroundProcess& serve, std::chrono::milliseconds timeout = std::chrono::seconds(60));

// `steward serve --embedded-cluster instant` (namespace steward, log level warn) in a temp dir
// that holds its data and the embedded cluster's kubeconfig (<dir>/kubeconfig), for tests that
// run the CLI against it. Started by the constructor; ok() says whether its address came.
class ServeUnderTest {
 public:
  ServeUnderTest();
  bool ok() const { return address_.has_value(); }
  const std::string& server() const { return address_->server; }
  const std::string& token_file() const { return address_->token_file; }
  const std::string& dir() const { return dir_.path(); }
  const std::string& output() { return process_->output(); }

 private:
  TempDir dir_;
  std::unique_ptr<BackgroundProcess> process_;
  std::optional<ServeAddress> address_;
};

// The whole file at `path` ("" when it cannot be read).
std::string ReadFile(const std::string& path);

}  // namespace steward::e2e
