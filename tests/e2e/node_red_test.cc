// `steward demo` whose projects run a real Node-RED 4 (the embedded cluster's process runtime
// with scripts/node-red/profile.sh; tests/real-launcher/node-red, installed by scripts/setup.sh):
// a project's demo URL serves the Node-RED editor through the ingress listener, its /comms
// WebSocket carries Node-RED's messages, and stopping the demo leaves no Node-RED process behind.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "process.h"
#include "test_support/websocket_client.h"

namespace steward::e2e {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;
using ::testing::HasSubstr;

const fs::path kSourceDir = STEWARD_SOURCE_DIR;

// The pids of processes whose environment holds `entry` ("NAME=value").
std::vector<int> ProcessesWithEnv(const std::string& entry) {
  std::vector<int> out;
  std::error_code ec;
  for (const auto& d : fs::directory_iterator("/proc", ec)) {
    const std::string name = d.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string env = ReadFile((d.path() / "environ").string());
    size_t start = 0;
    while (start < env.size()) {
      size_t end = env.find('\0', start);
      if (end == std::string::npos) end = env.size();
      if (env.compare(start, end - start, entry) == 0) out.push_back(std::stoi(name));
      start = end + 1;
    }
  }
  return out;
}

TEST(NodeRedTest, ADemoProjectServesTheRealNodeRedEditorAndItsCommsWebSocket) {
  const fs::path red =
      kSourceDir / "tests" / "real-launcher" / "node-red" / "node_modules" / "node-red";
  ASSERT_TRUE(fs::exists(red / "red.js"))
      << red.string() << " is missing: run scripts/setup.sh (npm ci in tests/real-launcher/*)";
  TempDir dir;
  RunResult profile = ::steward::e2e::Run(
      {"/bin/sh", (kSourceDir / "scripts" / "node-red" / "profile.sh").string(), "instant"});
  ASSERT_EQ(profile.exit_code, 0) << profile.err;
  // A tag in every Node-RED's environment, to find them (and their absence) afterwards.
  const std::string tag = "STEWARD_E2E_TAG=" + dir.path();
  const std::string profile_path = dir.path() + "/profile.yaml";
  std::ofstream(profile_path) << profile.out << "    env: {STEWARD_E2E_TAG: \"" << dir.path()
                              << "\"}\n";

  BackgroundProcess demo({StewardBinary(), "demo", "--profile", profile_path, "--projects", "1",
                          "--data-dir", dir.path() + "/state"});
  // The summary comes once alpha is Running, which a process pod is only once Node-RED's editor
  // answers its readiness check.
  ASSERT_TRUE(demo.WaitForLine("Stop:", seconds(60))) << demo.output();
  auto urls = Urls(demo.output());
  ASSERT_EQ(urls.count("alpha"), 1u) << demo.output();
  const uint16_t port = urls["alpha"];
  const std::string host = "alpha.localhost:" + std::to_string(port);
  EXPECT_EQ(ProcessesWithEnv(tag).size(), 1u);

  HttpAnswer editor = HttpGet(port, host, "/");
  EXPECT_EQ(editor.status, 200) << editor.body;
  EXPECT_THAT(editor.body, HasSubstr("<title>Node-RED</title>"));
  EXPECT_THAT(editor.body, HasSubstr("red/red.min.js"));
  HttpAnswer settings = HttpGet(port, host, "/settings");
  EXPECT_EQ(settings.status, 200);
  EXPECT_THAT(settings.body, HasSubstr("\"version\":\"4.1.15\""));

  test_support::WsClient::Options o;
  o.port = port;
  o.target = "/comms";
  o.headers = {{"Host", host}};
  {
    test_support::WsClient comms(o);
    ASSERT_TRUE(comms.upgraded()) << comms.status() << " " << comms.body()
                                  << comms.handshake_error();
    // Without adminAuth the connection is active at once; a subscription makes Node-RED send its
    // retained notifications, among them the runtime's state since the flows started.
    comms.Send(R"({"subscribe":"notification/#"})");
    ASSERT_TRUE(comms.WaitForMessages(1)) << comms.end_error();
    EXPECT_THAT(comms.messages()[0],
                HasSubstr(R"({"topic":"notification/runtime-state","data":{"state":"start"}})"));
    // And a closing handshake it answers: frames go both ways through the tunnel.
    comms.Close(1000, "bye");
    ASSERT_TRUE(comms.WaitEnded());
    EXPECT_EQ(comms.close_code(), 1000) << comms.end_error();
  }

  EXPECT_EQ(demo.Stop(SIGINT, seconds(20)), 0) << demo.output();
  EXPECT_THAT(ProcessesWithEnv(tag), ::testing::IsEmpty());
}

}  // namespace
}  // namespace steward::e2e
