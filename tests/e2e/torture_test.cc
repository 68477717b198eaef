// `steward torture` as the test suite runs it (docs/torture.md): the small run, the run with
// Steward SIGKILLed ten times, the run on two clusters with cluster processes killed and
// restarted (one kept down past its grace), and three
// replicas on PostgreSQL with kills and a database restart, each
// against the hostile profile with the oracle checking every claim. A failure prints the run's
// output: every violation with the seed and the command that replays it. The seed can be set
// with STEWARD_TORTURE_SEED to replay one locally.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>

#include "process.h"

namespace steward::e2e {
namespace {

using std::chrono::minutes;
using ::testing::HasSubstr;

std::string Seed(const char* fallback) {
  const char* env = std::getenv("STEWARD_TORTURE_SEED");
  return env != nullptr && *env != '\0' ? env : fallback;
}

RunResult Torture(const std::vector<std::string>& args) {
  TempDir dir;
  std::vector<std::string> argv = {StewardBinary(), "torture", "--work-dir", dir.path() + "/run"};
  argv.insert(argv.end(), args.begin(), args.end());
  return ::steward::e2e::Run(argv, "", minutes(20));
}

std::string Describe(const RunResult& r) {
  return "exit " + std::to_string(r.exit_code) + " after " +
         std::to_string(r.elapsed.count() / 1000) + " s\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

// The summary line's count of `what` ("steward kills").
int Count(const std::string& out, const std::string& what) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex("(\\d+) " + what))) return -1;
  return std::stoi(m[1]);
}

TEST(TortureTest, SmallRunKeepsEveryInvariant) {
  RunResult r = Torture({"--seed", Seed("1"), "--projects", "30", "--ops", "20"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("violations: 0")) << Describe(r);
  // The oracle did its work: claims were checked and held, scans and credential checks ran.
  EXPECT_GT(Count(r.out, "held"), 30) << Describe(r);
  EXPECT_GT(Count(r.out, "scans"), 0) << Describe(r);
  EXPECT_GT(Count(r.out, "credential checks"), 0) << Describe(r);
  EXPECT_GT(Count(r.out, "2xx"), 300) << Describe(r);
  // Agents were driven too, and their claims checked against the cluster and their own API.
  EXPECT_GT(Count(r.out, "agent claims held"), 0) << Describe(r);
  EXPECT_GT(Count(r.out, "instance calls"), 0) << Describe(r);
  // The audit log's order checks saw Steward's creates and claims.
  EXPECT_GT(Count(r.out, "creates checked for their order"), 30) << Describe(r);
  EXPECT_GT(Count(r.out, "Running claims timed"), 30) << Describe(r);
}

TEST(TortureTest, StewardKilledTenTimesLosesNoAnsweredOperation) {
  RunResult r =
      Torture({"--seed", Seed("2"), "--projects", "30", "--ops", "20", "--kill-steward", "10"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("violations: 0")) << Describe(r);
  EXPECT_EQ(Count(r.out, "steward kills"), 10) << Describe(r);
  EXPECT_GT(Count(r.out, "held"), 30) << Describe(r);
  EXPECT_GT(Count(r.out, "agent claims held"), 0) << Describe(r);
  EXPECT_GT(Count(r.out, "scans"), 0) << Describe(r);
  EXPECT_GT(Count(r.out, "credential checks"), 0) << Describe(r);
  // Requests were cut by the kills and sent again.
  EXPECT_GT(Count(r.out, "no answer"), 0) << Describe(r);
}

// Two clusters (issue 37): Steward places the projects over both and moves some between them;
// a cluster process is killed and restarted twice while Steward keeps running, and once one is
// kept down past its unreachable grace (3 s): each project placed on it then says Unknown
// (ClusterUnreachable) and none Running, every scan finds each project's objects only on its own
// cluster (or the one a move under way left), no move leaves anything behind, and after the
// cluster returns every project reaches its last requested state.
TEST(TortureTest, TwoClustersOneKilledPastItsGraceAndClusterProcessesRestarted) {
  RunResult r = Torture({"--seed", Seed("3"), "--projects", "20", "--ops", "15", "--clusters", "2",
                         "--restart-cluster", "2", "--kill-cluster", "1"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("violations: 0")) << Describe(r);
  EXPECT_EQ(Count(r.out, "cluster restarts"), 2) << Describe(r);
  EXPECT_EQ(Count(r.out, "cluster kills"), 1) << Describe(r);
  EXPECT_GT(Count(r.out, "records told unreachable"), 0) << Describe(r);
  EXPECT_GT(Count(r.out, "moves"), 0) << Describe(r);  // each left nothing behind
  EXPECT_GT(Count(r.out, "held"), 20) << Describe(r);
  EXPECT_GT(Count(r.out, "agent claims held"), 0) << Describe(r);
  EXPECT_GT(Count(r.out, "scans"), 0) << Describe(r);
  EXPECT_GT(Count(r.out, "credential checks"), 0) << Describe(r);
  EXPECT_GT(Count(r.out, "creates checked for their order"), 20) << Describe(r);
}

// Three replicas on one PostgreSQL server the run starts: operations through random replicas,
// four replica kills (every other one the owner of a project mid-step, every other one down past
// its lease), one database restart; the oracle as above plus the handover bound (lease + 1.5
// retry periods + 2 s) and no write by a replica outside its epochs (the cluster's audit log).
TEST(TortureTest, ThreeReplicasOnPostgresKilledAndTheDatabaseRestarted) {
  RunResult r =
      Torture({"--seed", Seed("4"), "--projects", "16", "--ops", "10", "--replicas", "3",
               "--database", "postgres", "--kill-steward", "4", "--restart-database", "1"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("violations: 0")) << Describe(r);
  EXPECT_EQ(Count(r.out, "steward kills"), 4) << Describe(r);
  EXPECT_EQ(Count(r.out, "database restarts"), 1) << Describe(r);
  EXPECT_GT(Count(r.out, "held"), 16) << Describe(r);
  EXPECT_GT(Count(r.out, "handovers"), 0) << Describe(r);
  EXPECT_GT(Count(r.out, "fenced writes checked"), 50) << Describe(r);
  EXPECT_GT(Count(r.out, "no answer"), 0) << Describe(r);
}

TEST(TortureTest, BadFlagsAreUsageErrors) {
  RunResult zero =
      ::steward::e2e::Run({StewardBinary(), "torture", "--projects", "0"}, "", minutes(1));
  EXPECT_EQ(zero.exit_code, 2) << Describe(zero);
  EXPECT_THAT(zero.err, HasSubstr("--projects")) << Describe(zero);
  RunResult missing = ::steward::e2e::Run(
      {StewardBinary(), "torture", "--steward-binary", "/nonexistent/steward"}, "", minutes(1));
  EXPECT_EQ(missing.exit_code, 2) << Describe(missing);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent/steward")) << Describe(missing);
  RunResult sqlite_replicas =
      ::steward::e2e::Run({StewardBinary(), "torture", "--replicas", "2"}, "", minutes(1));
  EXPECT_EQ(sqlite_replicas.exit_code, 2) << Describe(sqlite_replicas);
  EXPECT_THAT(sqlite_replicas.err, HasSubstr("several replicas need --database postgres"))
      << Describe(sqlite_replicas);
  RunResult one_cluster_killed =
      ::steward::e2e::Run({StewardBinary(), "torture", "--kill-cluster", "1"}, "", minutes(1));
  EXPECT_EQ(one_cluster_killed.exit_code, 2) << Describe(one_cluster_killed);
  EXPECT_THAT(one_cluster_killed.err, HasSubstr("kill-cluster needs --clusters 2"))
      << Describe(one_cluster_killed);
}

}  // namespace
}  // namespace steward::e2e
