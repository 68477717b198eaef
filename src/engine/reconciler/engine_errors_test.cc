// Errors Kubernetes answers the engine's writes with (docs/design.md §5): a request the server
// refuses as wrong is not retried as "unavailable" (the project is Failed, reason named, one
// write per run), and 401/403 get the slow, loud retry: a status reason and condition naming the
// verb and the object, an ERROR line, a counter, and a long backoff (the engine's clock is a
// FakeClock here, so the backoff is checked without waiting for it).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "engine/reconciler/engine_test_support.h"
#include "test_support/captured_log.h"

namespace steward::engine::testing {
namespace {

using test_support::Eventually;
using ::testing::HasSubstr;
using ::testing::Not;

// A Transport that answers requests with `method` whose target contains `fragment` with an
// error of its own (a Kubernetes Status body), as an API server would, instead of sending them;
// everything else passes through. Counts the refused requests and notes the clock's time of each.
class RefusingTransport final : public ForwardingTransport {
 public:
  RefusingTransport(std::shared_ptr<kube::Transport> inner, const Clock& clock)
      : ForwardingTransport(std::move(inner)), clock_(clock) {}

  void Refuse(std::string method, std::string fragment, int code, std::string reason,
              std::string message) {
    MutexLock lock(mu_);
    method_ = std::move(method);
    fragment_ = std::move(fragment);
    code_ = code;
    reason_ = std::move(reason);
    message_ = std::move(message);
  }
  void Allow() {
    MutexLock lock(mu_);
    code_ = 0;
  }
  int refused() const {
    MutexLock lock(mu_);
    return static_cast<int>(times_.size());
  }
  std::vector<SteadyTime> times() const {
    MutexLock lock(mu_);
    return times_;
  }

  StatusOr<kube::TransportResponse> Do(const kube::TransportRequest& request) override {
    {
      MutexLock lock(mu_);
      if (code_ != 0 && request.method == method_ &&
          request.target.find(fragment_) != std::string::npos) {
        times_.push_back(clock_.Now());
        kube::TransportResponse response;
        response.status = code_;
        response.headers.Set("Content-Type", "application/json");
        response.body = DumpJson(Json{{"kind", "Status"},
                                      {"apiVersion", "v1"},
                                      {"metadata", Json::object()},
                                      {"status", "Failure"},
                                      {"message", message_},
                                      {"reason", reason_},
                                      {"code", code_}});
        return response;
      }
    }
    return inner().Do(request);
  }

 private:
  const Clock& clock_;
  mutable Mutex mu_;
  std::string method_ GUARDED_BY(mu_), fragment_ GUARDED_BY(mu_), reason_ GUARDED_BY(mu_),
      message_ GUARDED_BY(mu_);
  int code_ GUARDED_BY(mu_) = 0;
  std::vector<SteadyTime> times_ GUARDED_BY(mu_);
};

class ErrorsFixture : public EngineFixture {
 protected:
  // Replaces client_ by one whose requests go through a RefusingTransport (after StartCluster).
  std::shared_ptr<RefusingTransport> RefusingClient(const Clock& clock) {
    auto transport = kube::Transport::Create(kube::test_support::RestConfigFor(*cluster_));
    EXPECT_TRUE(transport.ok());
    auto refusing = std::make_shared<RefusingTransport>(*transport, clock);
    client_ = std::make_shared<kube::Client>(refusing);
    return refusing;
  }
};

struct Refusal {
  int code;
  std::string reason;  // the server's Status reason
  std::string expect;  // the project's status reason
};

void PrintTo(const Refusal& r, std::ostream* os) { *os << r.code << " " << r.reason; }

class RefusedWriteTest : public ErrorsFixture, public ::testing::WithParamInterface<Refusal> {};

// The create of the project's first object (its Secret) is refused as wrong: the project ends
// Failed with a reason that says why and the server's message, and the engine does not retry it
// on its own: each further run (as a cluster event or a new intent causes) sends it once.
TEST_P(RefusedWriteTest, IsFailedWithTheReasonAndNotRetriedAsUnavailable) {
  const Refusal& p = GetParam();
  StartCluster();
  auto refusing = RefusingClient(RealClock::Get());
  const std::string server_says = "the server says no (" + p.reason + ")";
  refusing->Refuse("POST", "/secrets", p.code, p.reason, server_says);
  StartEngine();
  auto put = engine_->intents().Put("refused", Spec(), "", /*start=*/true);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  const std::string id = put->record.id;
  const std::string secret = NamesFor(id, "refused").secret;
  ASSERT_TRUE(WaitPhase(id, "Failed", 1, seconds(10)))
      << StatusOf(id).reason << ": " << StatusOf(id).message << " after " << refusing->refused()
      << " refused requests";
  const ProjectStatus s = StatusOf(id);
  EXPECT_EQ(s.reason, p.expect);
  EXPECT_THAT(s.message, HasSubstr("create Secret " + secret));
  EXPECT_THAT(s.message, HasSubstr(server_says));
  EXPECT_EQ(refusing->refused(), 1);

  // One request per run, however often it runs; nothing else is written.
  for (int i = 0; i < 3; ++i) {
    const uint64_t runs = engine_->stats().reconciles;
    engine_->Enqueue(id);
    ASSERT_TRUE(Eventually([&] { return engine_->stats().reconciles > runs; }));
    ASSERT_TRUE(Eventually([&] { return refusing->refused() == 2 + i; }));
    EXPECT_EQ(StatusOf(id).reason, p.expect);
  }
  EXPECT_EQ(refusing->refused(), 4);
  // The transport counts a refusal before the run that sent it counts the write: wait for it.
  EXPECT_TRUE(Eventually([&] { return engine_->stats().writes == 4u; })) << engine_->stats().writes;
  EXPECT_FALSE(Get("secrets", secret).has_value());
  EXPECT_EQ(engine_->stats().kube_unauthorized + engine_->stats().kube_forbidden, 0u);
  // Each refused write is counted under the server's status (steward_kube_writes_refused_total).
  const std::map<int, uint64_t> want = {{p.code, 4u}};
  EXPECT_EQ(engine_->stats().kube_refused_writes, want);
}

INSTANTIATE_TEST_SUITE_P(
    ClientErrors, RefusedWriteTest,
    ::testing::Values(Refusal{422, "Invalid", "Invalid"}, Refusal{400, "BadRequest", "Invalid"},
                      Refusal{413, "RequestEntityTooLarge", "RequestEntityTooLarge"},
                      Refusal{415, "UnsupportedMediaType", "UnsupportedMediaType"},
                      Refusal{405, "MethodNotAllowed", "MethodNotAllowed"},
                      Refusal{404, "NotFound", "NotFound"}),
    [](const ::testing::TestParamInfo<Refusal>& param) { return param.param.reason; });

struct AuthRefusal {
  int code;
  std::string reason;  // the server's Status reason
  std::string expect;  // the project's status reason
  std::string message;
};

void PrintTo(const AuthRefusal& r, std::ostream* os) { *os << r.code << " " << r.reason; }

class AuthRefusedTest : public ErrorsFixture, public ::testing::WithParamInterface<AuthRefusal> {
 protected:
  // The engine's clock: a member, so that it outlives the engine (TearDown stops the engine
  // before the fixture's members go; a clock local to the test body did not, and the engine's
  // workers read it after it was gone: found by TSan, a SEGV in WorkQueue::Done).
  FakeClock clock_;
  uint64_t AuthFailures() {
    const EngineStats s = engine_->stats();
    return GetParam().code == 401 ? s.kube_unauthorized : s.kube_forbidden;
  }
};

// Kubernetes refuses Steward's credentials: the project says so (reason, message naming the verb
// and the object, a condition on the Secret), an ERROR line and the counter say so, and the
// write is retried after a minute, then two (not at the work queue's pace); once the
// credentials are accepted again the project goes on to Running.
TEST_P(AuthRefusedTest, IsRetriedSlowlyAndLoudly) {
  const AuthRefusal& p = GetParam();
  test_support::CapturedLog log;
  StartCluster();
  FakeClock& clock = clock_;
  auto refusing = RefusingClient(clock);
  refusing->Refuse("POST", "/secrets", p.code, p.reason, p.message);
  EngineOptions o = DefaultOptions();
  o.clock = &clock;
  o.queue.max_timer_wait = milliseconds(5);  // the queue re-reads the fake clock this often
  StartEngine(o);
  auto put = engine_->intents().Put("locked", Spec(), "", /*start=*/true);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  const std::string id = put->record.id;
  const std::string secret = NamesFor(id, "locked").secret;

  ASSERT_TRUE(Eventually([&] { return StatusOf(id).reason == p.expect; }))
      << StatusOf(id).reason << ": " << StatusOf(id).message;
  ProjectStatus s = StatusOf(id);
  EXPECT_EQ(Record(id).phase, "Provisioning");
  EXPECT_THAT(s.message, HasSubstr("create Secret " + secret));
  EXPECT_THAT(s.message, HasSubstr(p.message));
  EXPECT_THAT(s.message, HasSubstr("Steward's credentials"));
  EXPECT_THAT(s.message, HasSubstr("retrying in 60 s"));
  EXPECT_THAT(s.message, Not(HasSubstr(cluster_->token())));
  ASSERT_FALSE(s.conditions.empty());
  EXPECT_EQ(s.conditions.back().resource, "Secret");
  EXPECT_EQ(s.conditions.back().reason, p.expect);
  EXPECT_FALSE(s.conditions.back().ready);
  ASSERT_TRUE(Eventually([&] { return AuthFailures() == 1; })) << AuthFailures();
  EXPECT_THAT(log.Text(),
              HasSubstr("error project " + id + ": " + p.expect + ": create Secret " + secret));
  EXPECT_THAT(log.Text(), Not(HasSubstr(cluster_->token())));
  ASSERT_EQ(refusing->refused(), 1);
  const SteadyTime first = refusing->times()[0];
  // The run's requeue is in the queue (its due time read from the clock) before the clock moves.
  ASSERT_TRUE(Eventually([&] { return engine_->stats().queue_waiting == 1; }));

  // Not before the minute is up. (A check that nothing happens: the queue, re-reading the clock
  // every 5 ms, would have handed the project out long before the deadline.)
  clock.Advance(seconds(59));
  EXPECT_FALSE(Eventually([&] { return refusing->refused() > 1; }, milliseconds(300)));
  clock.Advance(seconds(2));
  ASSERT_TRUE(Eventually([&] { return refusing->refused() == 2; })) << refusing->refused();
  EXPECT_GE(refusing->times()[1] - first, seconds(60));
  ASSERT_TRUE(Eventually([&] { return AuthFailures() == 2; })) << AuthFailures();
  ASSERT_TRUE(Eventually([&] {
    return StatusOf(id).message.find("retrying in 120 s") != std::string::npos;
  })) << StatusOf(id).message;

  // Accepted again: after the (doubled) backoff the project goes on.
  ASSERT_TRUE(Eventually([&] { return engine_->stats().queue_waiting == 1; }));
  refusing->Allow();
  clock.Advance(seconds(121));
  ASSERT_TRUE(WaitPhase(id, "Running", 1)) << StatusOf(id).reason << ": " << StatusOf(id).message;
  EXPECT_EQ(refusing->refused(), 2);
  EXPECT_EQ(AuthFailures(), 2u);
}

INSTANTIATE_TEST_SUITE_P(
    Credentials, AuthRefusedTest,
    ::testing::Values(AuthRefusal{401, "Unauthorized", "KubeUnauthorized", "Unauthorized"},
                      AuthRefusal{403, "Forbidden", "KubeForbidden",
                                  "secrets is forbidden: User "
                                  "\"system:serviceaccount:steward:steward\" cannot create "
                                  "resource \"secrets\" in API group \"\" in the namespace "
                                  "\"projects\""}),
    [](const ::testing::TestParamInfo<AuthRefusal>& param) { return param.param.reason; });

}  // namespace
}  // namespace steward::engine::testing
