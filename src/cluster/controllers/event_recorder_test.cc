#include "cluster/controllers/event_recorder.h"

#include <gtest/gtest.h>

#include "cluster/storage/storage.h"
#include "common/random.h"

namespace steward::cluster::controllers {
namespace {

class EventRecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    storage_ = std::move(*Storage::Open({}));
    api_ = std::make_unique<ObjectApi>(*storage_, clock_, random_);
    ASSERT_TRUE(
        api_->Create(*FindGroupResource("namespaces"), "", Json{{"metadata", {{"name", "test"}}}})
            .ok());
    auto pod = api_->Create(
        *FindGroupResource("pods"), "test",
        Json{{"metadata", {{"name", "p"}}},
             {"spec", {{"containers", Json::array({{{"name", "c"}, {"image", "x"}}})}}}});
    ASSERT_TRUE(pod.ok());
    pod_ = *pod;
  }
  std::vector<Json> Events() {
    auto list = api_->List(*FindGroupResource("events"), "test", {});
    std::vector<Json> out;
    for (auto& e : (*list)["items"]) out.push_back(e);
    return out;
  }

  FakeClock clock_;
  Random random_{1};
  std::unique_ptr<Storage> storage_;
  std::unique_ptr<ObjectApi> api_;
  Json pod_;
  const EventSource source_{"kubelet", "steward-node"};
};

TEST_F(EventRecorderTest, RepeatBumpsCount) {
  EventRecorder rec(*api_);
  const ResourceType& pods = *FindGroupResource("pods");
  rec.Record(pods, pod_, "Normal", "Pulling", "Pulling image \"x\"", source_, "spec.containers{c}");
  clock_.Advance(std::chrono::seconds(5));
  rec.Record(pods, pod_, "Normal", "Pulling", "Pulling image \"x\"", source_, "spec.containers{c}");
  auto events = Events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["count"], 2);
  EXPECT_NE(events[0]["firstTimestamp"], events[0]["lastTimestamp"]);
  EXPECT_EQ(events[0]["involvedObject"]["fieldPath"], "spec.containers{c}");
  EXPECT_EQ(events[0]["involvedObject"]["uid"], pod_["metadata"]["uid"]);
  EXPECT_EQ(events[0]["reportingComponent"], "kubelet");
  EXPECT_EQ(events[0]["reportingInstance"], "steward-node");
  EXPECT_EQ(events[0]["source"]["host"], "steward-node");
  std::string name = events[0]["metadata"]["name"];
  EXPECT_EQ(name.rfind("p.", 0), 0u);
}

TEST_F(EventRecorderTest, KeepsAtMostTwentyPerObject) {
  EventRecorder rec(*api_);
  const ResourceType& pods = *FindGroupResource("pods");
  for (int i = 0; i < 25; ++i) {
    rec.Record(pods, pod_, "Normal", "R", "message " + std::to_string(i), source_);
  }
  auto events = Events();
  EXPECT_EQ(events.size(), kMaxEventsPerObject);
  for (const auto& e : events) {
    // The oldest five went first.
    for (int i = 0; i < 5; ++i) EXPECT_NE(e["message"], "message " + std::to_string(i));
  }
  EXPECT_EQ(rec.tracked(), kMaxEventsPerObject);
}

TEST_F(EventRecorderTest, ExpiresAfterTtlUnlessRefreshed) {
  EventRecorder rec(*api_);
  const ResourceType& pods = *FindGroupResource("pods");
  rec.Record(pods, pod_, "Normal", "Old", "old", source_);
  rec.Record(pods, pod_, "Normal", "Kept", "kept", source_);
  clock_.Advance(std::chrono::minutes(50));
  rec.Record(pods, pod_, "Normal", "Kept", "kept", source_);  // refreshed
  clock_.Advance(std::chrono::minutes(11));
  rec.Sweep();
  auto events = Events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["reason"], "Kept");
  clock_.Advance(std::chrono::minutes(50));
  rec.Sweep();
  EXPECT_TRUE(Events().empty());
  EXPECT_EQ(rec.tracked(), 0u);
}

}  // namespace
}  // namespace steward::cluster::controllers
