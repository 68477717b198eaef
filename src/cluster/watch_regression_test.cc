// Regression test: a watch whose client left while the watch's injected latency was pending
// deadlocked the handler's scheduler thread (WatchSession::Start registered OnClose under
// pump_mu_; OnClose runs the callback at once for a gone client, and the callback's Close()
// takes pump_mu_ again). Later latency-delayed requests were never answered and Stop() hung.
// Found by the engine's hostile scenario.
#include <gtest/gtest.h>

#include <memory>

#include "cluster/embedded_cluster.h"
#include "net/http_client.h"

namespace steward::cluster {
namespace {

using std::chrono::milliseconds;

TEST(EmbeddedClusterRegressionTest,
     WatchWhoseClientLeftDuringInjectedLatencyDoesNotWedgeTheServer) {
  EmbeddedCluster::Options o;
  o.profile.faults.latency["watch"] = {milliseconds(300), milliseconds(0)};
  // Longer than the watch's: the requests below are served after the deferred watch start.
  o.profile.faults.latency["*"] = {milliseconds(400), milliseconds(0)};
  auto started = EmbeddedCluster::Start(o);
  ASSERT_TRUE(started.ok()) << started.error().ToString();
  std::unique_ptr<EmbeddedCluster> cluster = std::move(*started);
  auto client = [&] {
    net::HttpClient::Options c;
    c.port = cluster->api_port();
    c.tls = true;
    c.ca_pem = cluster->ca_pem();
    c.bearer_token = cluster->token();
    c.timeout = milliseconds(3000);
    return net::HttpClient::Create(c);
  };
  // A watch the client gives up on before the server starts it (after its 300 ms latency).
  auto watch = client()->Stream(
      "GET", "/api/v1/namespaces/default/configmaps?watch=1", [](std::string_view) { return true; },
      {}, milliseconds(50));
  ASSERT_FALSE(watch.ok());
  ASSERT_EQ(watch.error().code(), StatusCode::kDeadlineExceeded);
  // Requests after the deferred watch start must still be answered.
  for (int i = 0; i < 2; ++i) {
    auto list = client()->Request("GET", "/api/v1/namespaces/default/configmaps");
    if (!list.ok()) {
      ADD_FAILURE() << "request " << i << " after the abandoned watch: " << list.error().ToString()
                    << " (the handler's scheduler thread is deadlocked; Stop() would hang)";
      (void)cluster.release();  // leak it: stopping it would hang the test binary
      return;
    }
    EXPECT_EQ(list->status, 200);
  }
}

}  // namespace
}  // namespace steward::cluster
