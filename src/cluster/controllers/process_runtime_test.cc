// ProcessRuntime on its own: orphans, process groups, probes. (Through the kubelet and the
// ingress: src/cluster/process_pods_test.cc.)
#include "cluster/controllers/process_runtime.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

namespace steward::cluster::controllers {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

bool Eventually(const std::function<bool()>& fn, milliseconds timeout = seconds(10)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (fn()) return true;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return fn();
}

// Gone, or a zombie nobody has reaped yet (in a container without an init that reaps).
bool Dead(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string line;
  std::getline(stat, line);
  size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

pid_t ReadPid(const fs::path& file) {
  std::ifstream in(file);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

class ProcessRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/steward-process-runtime-test-XXXXXX";
    ASSERT_NE(::mkdtemp(templ), nullptr);
    dir_ = templ;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  ProcessRuntime::Spec SpecOf(const std::string& command) {
    ProcessRuntime::Spec spec;
    spec.key = "default/p";
    spec.uid = "uid-1";
    spec.container = "app";
    spec.command = command;
    return spec;
  }
  fs::path dir_;
};

TEST_F(ProcessRuntimeTest, AProcessDiesWithTheProcessThatRanIt) {
  const fs::path pid_file = dir_ / "pid";
  pid_t owner = ::fork();
  ASSERT_GE(owner, 0);
  if (owner == 0) {
    ProcessRuntime::Options o;
    o.base_dir = dir_.string();
    auto* runtime = new ProcessRuntime(o);  // never destroyed: the process is killed
    ProcessRuntime::Spec spec = SpecOf("echo $$ > " + pid_file.string() + "; exec sleep 1000");
    if (!runtime->Start(spec).ok()) ::_exit(1);
    for (;;) ::pause();
  }
  ASSERT_TRUE(Eventually([&] { return ReadPid(pid_file) > 0; }));
  const pid_t child = ReadPid(pid_file);
  EXPECT_FALSE(Dead(child));
  ::kill(owner, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(owner, &status, 0), owner);
  EXPECT_TRUE(Eventually([&] { return Dead(child); })) << "pid " << child << " outlived its owner";
}

TEST_F(ProcessRuntimeTest, StopEndsTheWholeProcessGroupAndForgetsThePod) {
  ProcessRuntime::Options o;
  o.base_dir = dir_.string();
  ProcessRuntime runtime(o);
  const fs::path pid_file = dir_ / "pid";
  // The shell stays (it waits), its background child is in the same group.
  ASSERT_TRUE(runtime.Start(SpecOf("sleep 1000 & echo $! > " + pid_file.string() + "; wait")).ok());
  ASSERT_TRUE(Eventually([&] { return ReadPid(pid_file) > 0; }));
  const pid_t grandchild = ReadPid(pid_file);
  const std::string pod_dir = runtime.PodDir("uid-1");
  EXPECT_TRUE(fs::exists(pod_dir));
  auto view = runtime.Get("uid-1", "app");
  ASSERT_TRUE(view.has_value());
  EXPECT_TRUE(view->running);
  EXPECT_TRUE(view->ready);  // no readiness probe: ready once running

  runtime.Stop("uid-1", seconds(5));
  ASSERT_TRUE(Eventually([&] { return !runtime.Has("uid-1"); }));
  EXPECT_TRUE(Eventually([&] { return Dead(grandchild); }));
  EXPECT_FALSE(fs::exists(pod_dir));
}

TEST_F(ProcessRuntimeTest, ACommandThatCannotRunIsReportedAndRestartedWithACount) {
  ProcessRuntime::Options o;
  o.base_dir = dir_.string();
  o.backoff_base = milliseconds(20);
  ProcessRuntime runtime(o);
  ASSERT_TRUE(runtime.Start(SpecOf("exit 7")).ok());
  ASSERT_TRUE(Eventually([&] {
    auto v = runtime.Get("uid-1", "app");
    return v && v->restart_count >= 2;
  }));
  auto v = runtime.Get("uid-1", "app");
  EXPECT_TRUE(v->exited);
  EXPECT_EQ(v->exit_code, 7);
  runtime.StopAll(milliseconds(100));
  EXPECT_FALSE(runtime.Has("uid-1"));
  EXPECT_FALSE(runtime.Start(SpecOf("true")).ok());  // stopped for good
}

TEST(ProbeTest, TcpAndHttpProbesSeeWhatListens) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const uint16_t port = ntohs(addr.sin_port);
  EXPECT_FALSE(ProbeTcp(port, milliseconds(500)));  // bound, not listening: refused
  ASSERT_EQ(::listen(fd, 4), 0);
  EXPECT_TRUE(ProbeTcp(port, milliseconds(500)));
  // Listening but never answering: the HTTP probe times out.
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(ProbeHttp(port, "/", milliseconds(300)));
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(250));
  ::close(fd);
}

}  // namespace
}  // namespace steward::cluster::controllers
