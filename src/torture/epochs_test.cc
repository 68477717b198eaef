#include "torture/epochs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/manifests/manifests.h"

namespace steward::torture {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr int64_t kT = 1767225600000;  // ms

store::ShardEvent Acquired(int64_t seq, int shard, std::string owner, int64_t epoch, int64_t ms) {
  return {seq, shard, std::move(owner), epoch, ms, true};
}
store::ShardEvent Released(int64_t seq, int shard, std::string owner, int64_t epoch, int64_t ms) {
  return {seq, shard, std::move(owner), epoch, ms, false};
}
AuditWrite Write(std::string replica, std::string resource, std::string name, int64_t start_ms,
                 int64_t end_ms, std::string verb = "update") {
  AuditWrite w;
  w.replica = std::move(replica);
  w.resource = std::move(resource);
  w.name = std::move(name);
  w.verb = std::move(verb);
  w.start_us = start_ms * 1000;
  w.end_us = end_ms * 1000;
  return w;
}

TEST(EpochsTest, ReplicaNamesComeFromTheUserAgent) {
  EXPECT_EQ(ReplicaOfUserAgent("steward/0.9 replica/r1"), "r1");
  EXPECT_EQ(ReplicaOfUserAgent("steward/0.9 replica/r-2 extra"), "r-2");
  EXPECT_EQ(ReplicaOfUserAgent("steward/0.9"), "");
  EXPECT_EQ(ReplicaOfUserAgent("kubectl/v1.30 notareplica/x"), "");
}

TEST(EpochsTest, AuditLinesBecomeWritesWithTheirStartTimes) {
  const std::string log =
      R"({"time":"2026-01-01T00:00:01.500000Z","verb":"update","resource":"deployments",)"
      R"("namespace":"ns","name":"alpha","code":200,"latencyMs":250.0,)"
      R"("userAgent":"steward/0.9 replica/r1"})"
      "\n"
      R"({"time":"2026-01-01T00:00:02Z","verb":"get","resource":"deployments","name":"alpha"})"
      "\nnot json\n"
      R"({"time":"2026-01-01T00:00:03Z","verb":"delete","resource":"services","name":"b","code":404})";
  auto writes = ParseAuditWrites(log);
  ASSERT_THAT(writes, SizeIs(2));
  EXPECT_EQ(writes[0].replica, "r1");
  EXPECT_EQ(writes[0].end_us, (kT + 1500) * 1000);
  EXPECT_EQ(writes[0].start_us, (kT + 1250) * 1000);
  EXPECT_EQ(writes[0].code, 200);
  EXPECT_EQ(writes[1].verb, "delete");
  EXPECT_EQ(writes[1].replica, "");
  EXPECT_EQ(writes[1].code, 404);

  // A line with the arrival's own time: that time, not the answer's minus the latency.
  writes = ParseAuditWrites(
      R"({"time":"2026-01-01T00:00:01.500000Z","startTime":"2026-01-01T00:00:01.100000Z",)"
      R"("verb":"create","resource":"services","name":"a","code":201,"latencyMs":250.0})");
  ASSERT_THAT(writes, SizeIs(1));
  EXPECT_EQ(writes[0].start_us, (kT + 1100) * 1000);
  EXPECT_EQ(writes[0].end_us, (kT + 1500) * 1000);
}

TEST(EpochsTest, WritesInsideTheirOwnersTenureHoldAndOthersAreViolations) {
  ObjectOwners owners;
  owners.AddProject("p1", "alpha", kT - 1000);
  const engine::ObjectNames n = engine::NamesFor("p1", "alpha");
  auto shard_of = [](const std::string&) { return 3; };
  // a owns shard 3 from T+0 to T+100 (released), b from T+150, a again (a new process) from
  // T+300, which ends b's tenure.
  const std::vector<store::ShardEvent> history = {
      Acquired(1, 3, "a", 1, kT), Released(2, 3, "a", 1, kT + 100),
      Acquired(3, 3, "b", 2, kT + 150), Acquired(4, 3, "a", 3, kT + 300)};
  std::vector<AuditWrite> ok = {Write("a", "deployments", n.deployment, kT + 10, kT + 90),
                                Write("b", "services", n.service, kT + 150, kT + 299),
                                Write("a", "ingresses", n.ingress, kT + 400, kT + 500),
                                Write("", "deployments", n.deployment, kT + 120, kT + 130)};
  EpochReport fine = CheckWriteEpochs(ok, history, owners, shard_of);
  EXPECT_THAT(fine.violations, IsEmpty());
  EXPECT_EQ(fine.writes, 3);
  EXPECT_EQ(fine.attributed, 3);

  std::vector<AuditWrite> bad = {
      Write("a", "deployments", n.deployment, kT + 90, kT + 110),   // past its release
      Write("b", "deployments", n.deployment, kT + 120, kT + 160),  // before it acquired
      Write("b", "services", n.service, kT + 290, kT + 310),        // past a's acquisition
      Write("c", "secrets", n.secret, kT + 200, kT + 201)};         // never an owner
  EpochReport report = CheckWriteEpochs(bad, history, owners, shard_of);
  ASSERT_THAT(report.violations, SizeIs(4));
  EXPECT_THAT(report.violations[0], HasSubstr("replica a sent update deployments/"));
  EXPECT_THAT(report.violations[0], HasSubstr("owned by a at epoch 1 at the start and owned by "
                                              "nobody at the end"));
  EXPECT_THAT(report.violations[2], HasSubstr("owned by a at epoch 3 at the end"));
  EXPECT_THAT(report.violations[3], HasSubstr("record p1, shard 3"));
}

TEST(EpochsTest, SuppliedCredentialSecretsAreTheApisAndUnknownObjectsAreNotAttributed) {
  ObjectOwners owners;
  owners.AddProject("p1", "alpha", kT - 1000);
  owners.AddAgent("a1", "mqtt-schema-agent-t-b", kT - 1000);
  auto shard_of = [](const std::string& id) { return id == "a1" ? 1 : 0; };
  const std::vector<store::ShardEvent> history = {Acquired(1, 1, "a", 1, kT)};
  std::vector<AuditWrite> writes = {
      Write("b", "secrets", "p1-credentials-0123abcd", kT + 5, kT + 6, "create"),  // exempt
      Write("b", "secrets", "p1-credentials-0123abcd", kT + 5, kT + 6, "patch"),   // exempt
      Write("b", "secrets", "alpha-credentials", kT + 5, kT + 6, "update"),        // the engine's
      Write("b", "configmaps", "whatever", kT + 5, kT + 6),
      Write("a", "deployments", "mqtt-schema-agent-t-b", kT + 5, kT + 6)};
  EpochReport report = CheckWriteEpochs(writes, history, owners, shard_of);
  EXPECT_EQ(report.exempt, 2);
  EXPECT_EQ(report.attributed, 2);
  ASSERT_THAT(report.violations, SizeIs(1));
  EXPECT_THAT(report.violations[0], HasSubstr("update secrets/alpha-credentials "));
}

TEST(EpochsTest, ANameUsedAgainBelongsToEachIncarnationFromItsCreationOn) {
  ObjectOwners owners;
  owners.AddAgent("old", "mqtt-schema-agent-t-b", kT);
  owners.AddAgent("new", "mqtt-schema-agent-t-b", kT + 5000);
  bool exempt = false;
  EXPECT_EQ(owners.RecordOf("deployments", "mqtt-schema-agent-t-b", (kT - 1) * 1000, &exempt),
            "old");
  EXPECT_EQ(owners.RecordOf("deployments", "mqtt-schema-agent-t-b", (kT + 4999) * 1000, &exempt),
            "old");
  EXPECT_EQ(owners.RecordOf("deployments", "mqtt-schema-agent-t-b", (kT + 5000) * 1000, &exempt),
            "new");
  // Each incarnation's writes are judged by its own shard.
  auto shard_of = [](const std::string& id) { return id == "old" ? 1 : 2; };
  const std::vector<store::ShardEvent> history = {Acquired(1, 1, "a", 1, kT - 10),
                                                  Acquired(2, 2, "b", 1, kT - 10)};
  EpochReport report =
      CheckWriteEpochs({Write("a", "deployments", "mqtt-schema-agent-t-b", kT + 100, kT + 200),
                        Write("b", "deployments", "mqtt-schema-agent-t-b", kT + 6000, kT + 6100),
                        Write("a", "deployments", "mqtt-schema-agent-t-b", kT + 7000, kT + 7100)},
                       history, owners, shard_of);
  ASSERT_THAT(report.violations, SizeIs(1));
  EXPECT_THAT(report.violations[0], HasSubstr("replica a sent update"));
  EXPECT_THAT(report.violations[0], HasSubstr("record new, shard 2"));
}

TEST(EpochsTest, EveryShardOfADeadReplicaIsAcquiredAgainWithinTheBound) {
  // a held shards 1 and 2 when it died at T+1000; b took 1 after 7 s, a's next process took 2
  // back after 20 s (too late for a 9 s bound); shard 3 (b's) is not a's concern; shard 4 of a
  // is never acquired again.
  const std::vector<store::ShardEvent> history = {
      Acquired(1, 1, "a", 1, kT),        Acquired(2, 2, "a", 1, kT),
      Acquired(3, 3, "b", 1, kT),        Acquired(4, 4, "a", 1, kT),
      Acquired(5, 1, "b", 2, kT + 8000), Acquired(6, 2, "a", 2, kT + 21000),
  };
  HandoverReport report = CheckHandovers({{"a", kT + 1000}}, history, 9000);
  EXPECT_EQ(report.shards, 3);
  EXPECT_EQ(report.max_ms, 20000);
  ASSERT_THAT(report.violations, SizeIs(2));
  EXPECT_THAT(report.violations[0], HasSubstr("shard 2 of a was acquired by a 20000 ms after"));
  EXPECT_THAT(report.violations[1], HasSubstr("shard 4 of a (epoch 1) was never acquired again"));
  // A replica that had released its shards before it died leaves nothing to hand over.
  const std::vector<store::ShardEvent> released = {Acquired(1, 1, "a", 1, kT),
                                                   Released(2, 1, "a", 1, kT + 500)};
  EXPECT_EQ(CheckHandovers({{"a", kT + 1000}}, released, 9000).shards, 0);
}

TEST(EpochsTest, AReplicaBackBeforeItsLeaseLapsedIsTimedFromItsReturn) {
  // a died at T+1000 holding shards 1 and 2 and its next process was ready at T+9000, its Lease
  // live all along: it took shard 1 back at T+12000 (11 s after the death, 3 s after its
  // return: within a 9 s bound); b took shard 2 at T+12000, timed from the death (too late).
  const std::vector<store::ShardEvent> history = {
      Acquired(1, 1, "a", 1, kT),
      Acquired(2, 2, "a", 1, kT),
      Acquired(3, 1, "a", 2, kT + 12000),
      Acquired(4, 2, "b", 2, kT + 12000),
  };
  HandoverReport report = CheckHandovers({{"a", kT + 1000, kT + 9000}}, history, 9000);
  EXPECT_EQ(report.shards, 2);
  EXPECT_EQ(report.max_ms, 11000);
  ASSERT_THAT(report.violations, SizeIs(1));
  EXPECT_THAT(report.violations[0], HasSubstr("shard 2 of a was acquired by b 11000 ms after"));
  // Not back in time: its own re-acquisition is timed from the death.
  EXPECT_THAT(CheckHandovers({{"a", kT + 1000}}, history, 9000).violations, SizeIs(2));
  // Back, but slow after it: 10 s after its return.
  const std::vector<store::ShardEvent> slow = {Acquired(1, 1, "a", 1, kT),
                                               Acquired(2, 1, "a", 2, kT + 19000)};
  HandoverReport late = CheckHandovers({{"a", kT + 1000, kT + 9000}}, slow, 9000);
  ASSERT_THAT(late.violations, SizeIs(1));
  EXPECT_THAT(late.violations[0], HasSubstr("10000 ms after its next process was ready"));
}

}  // namespace
}  // namespace steward::torture
