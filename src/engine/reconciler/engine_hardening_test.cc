// Hardening: specs the cluster refuses or prunes, and waits that could not finish, always end in
// a reported state; deletion never waits on the engine's own bookkeeping.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "engine/reconciler/engine_test_support.h"

namespace steward::engine::testing {
namespace {

using ::testing::HasSubstr;

// A Kubernetes API server older than v1.25 ignores fieldValidation and silently drops the
// fields it does not know (as the embedded cluster does without the parameter): this transport
// removes the parameter from every request on the way.
class NoFieldValidationTransport final : public ForwardingTransport {
 public:
  explicit NoFieldValidationTransport(std::shared_ptr<kube::Transport> inner)
      : ForwardingTransport(std::move(inner)) {}
  StatusOr<kube::TransportResponse> Do(const kube::TransportRequest& request) override {
    kube::TransportRequest r = request;
    const size_t q = r.target.find('?');
    if (q != std::string::npos) {
      std::string kept;
      std::string_view query = std::string_view(r.target).substr(q + 1);
      while (!query.empty()) {
        const size_t amp = query.find('&');
        std::string_view param = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
        if (param == "fieldValidation=Strict") {
          ++stripped;
          continue;
        }
        kept += (kept.empty() ? "" : "&") + std::string(param);
      }
      r.target = r.target.substr(0, q) + (kept.empty() ? "" : "?" + kept);
    }
    return inner().Do(r);
  }

  std::atomic<int> stripped{0};

 private:
};

using HardeningTest = EngineFixture;

// A field past the engine's validation (the operator's config is a plain struct here; a spec
// cannot carry one any more) that the cluster does not know: the engine writes strictly, so the
// server refuses the create with 400 and the project is Failed with the server's words, instead
// of the field being pruned and the project waiting for ever to observe its own write.
TEST_F(HardeningTest, FieldTheServerRefusesStrictlyFailsWithTheServersMessage) {
  StartCluster();
  EngineOptions o = DefaultOptions();
  o.config.container_security_context = Json{{"allowPrivilegeEscalation", false}, {"bogus", true}};
  StartEngine(o);
  auto put = engine_->intents().Put("strict", Spec(), "", /*start=*/true);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Failed", 1)) << StatusOf(id).reason << ": " << StatusOf(id).message;
  const ProjectStatus s = StatusOf(id);
  EXPECT_EQ(s.reason, "Invalid");
  EXPECT_THAT(s.message, HasSubstr("create Deployment strict"));
  EXPECT_THAT(s.message, HasSubstr("strict decoding error: unknown field "
                                   "\"spec.template.spec.containers[0].securityContext.bogus\""));
  EXPECT_FALSE(Get("deployments.apps", "strict").has_value());
}

// The same field against a server that ignores fieldValidation: it stores the object without
// the field. The answer of the create shows it, so the project fails at once naming the field,
// and a further run (as any cluster event causes) writes nothing more.
TEST_F(HardeningTest, FieldTheServerDropsFailsAsNotPersistedWithoutRewriting) {
  StartCluster();
  auto transport = kube::Transport::Create(kube::test_support::RestConfigFor(*cluster_));
  ASSERT_TRUE(transport.ok());
  auto lenient = std::make_shared<NoFieldValidationTransport>(*transport);
  client_ = std::make_shared<kube::Client>(lenient);
  EngineOptions o = DefaultOptions();
  o.config.container_security_context = Json{{"bogus", true}};
  StartEngine(o);
  auto put = engine_->intents().Put("lenient", Spec(), "", /*start=*/true);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Failed", 1)) << StatusOf(id).reason << ": " << StatusOf(id).message;
  EXPECT_GT(lenient->stripped.load(), 0);
  const ProjectStatus s = StatusOf(id);
  EXPECT_EQ(s.reason, "NotPersisted");
  EXPECT_THAT(s.message, HasSubstr("Deployment lenient: the API server did not keep "
                                   "spec.template.spec.containers[0].securityContext"));
  ASSERT_TRUE(Get("deployments.apps", "lenient").has_value());

  const uint64_t writes = ClusterWrites();
  for (int i = 0; i < 3; ++i) {
    const uint64_t runs = engine_->stats().reconciles;
    engine_->Enqueue(id);
    ASSERT_TRUE(test_support::Eventually([&] { return engine_->stats().reconciles > runs; }));
  }
  EXPECT_EQ(ClusterWrites(), writes);
  EXPECT_EQ(StatusOf(id).reason, "NotPersisted");

  // Deleting it is not held up.
  ASSERT_TRUE(engine_->intents().Delete(id).ok());
  EXPECT_TRUE(WaitPurged(id)) << StatusOf(id).reason << ": " << StatusOf(id).message;
  EXPECT_TRUE(Leftovers(id).empty());
}

// An informer that never shows the engine's own update (its watch is held here): the wait to
// observe the write is bounded by engine.stepTimeoutSeconds and ends Failed with its reason; a
// DELETE then deletes the Deployment at once (the uid precondition is all a delete needs)
// instead of waiting for the watch or a restart.
TEST_F(HardeningTest, StuckObservingWriteIsBoundedAndDeleteProceedsAtOnce) {
  StartCluster();
  auto gate = GateClient();
  EngineOptions o = DefaultOptions();
  o.config.step_timeout_seconds = 2;
  o.expectation_timeout = seconds(600);  // the expectation alone would hold for the whole test
  o.recheck = milliseconds(200);
  StartEngine(o);
  auto put = engine_->intents().Put("stuck", Spec("flowfuse/node-red:4.0"), "", true);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  const std::string id = put->record.id;
  ASSERT_TRUE(WaitPhase(id, "Running", 1)) << StatusOf(id).message;

  gate->Hold("/deployments");
  auto update = engine_->intents().Put("stuck", Spec("flowfuse/node-red:4.1"));
  ASSERT_TRUE(update.ok());
  const int64_t g2 = update->record.generation;
  ASSERT_TRUE(WaitPhase(id, "Failed", g2)) << StatusOf(id).reason << ": " << StatusOf(id).message;
  EXPECT_EQ(StatusOf(id).reason, "ObservingWrite");
  EXPECT_THAT(StatusOf(id).message, HasSubstr("engine.stepTimeoutSeconds"));

  ASSERT_TRUE(engine_->intents().Delete(id).ok());
  EXPECT_TRUE(test_support::Eventually([&] {
    auto dep = Get("deployments.apps", "stuck");
    if (!dep) return true;
    const Json* ts = FindPath(*dep, "metadata.deletionTimestamp");
    return ts != nullptr && !ts->is_null();
  })) << StatusOf(id).reason
      << ": " << StatusOf(id).message;

  gate->Release();
  EXPECT_TRUE(WaitPurged(id)) << StatusOf(id).reason << ": " << StatusOf(id).message;
  EXPECT_TRUE(Leftovers(id).empty());
}

}  // namespace
}  // namespace steward::engine::testing
