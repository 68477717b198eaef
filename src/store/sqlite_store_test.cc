#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "common/clock.h"
#include "store/store.h"
#include "store/store_test_util.h"
#include "test_support/eventually.h"
#include "test_support/private_files.h"

namespace steward::store {
namespace {

using namespace ::steward::store::test_util;  // NOLINT: the helpers of every store test
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// A second, raw connection to the file, for what the Store interface does not expose.
std::string RawQuery(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  std::string out;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
    out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

void RawExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
}

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/steward-store-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/steward.db";
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  SqliteOptions Options() {
    SqliteOptions o;
    o.path = path_;
    o.clock = &clock_;
    return o;
  }
  Store& Open() {
    store_.reset();
    auto s = OpenSqliteStore(Options());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (s.ok()) store_ = std::move(s).value();
    return *store_;
  }
  ProjectRecord MustCreate(const ProjectRecord& r, const Mutation& extra = {}) {
    auto created = store_->CreateProject(r, extra);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? *created : ProjectRecord{};
  }

  FakeClock clock_;
  std::string dir_;
  std::string path_;
  std::unique_ptr<Store> store_;
};

TEST(StoreEnumsTest, RoundTrip) {
  for (auto d : {DesiredState::kRunning, DesiredState::kSuspended, DesiredState::kDeleted}) {
    EXPECT_EQ(ParseDesiredState(ToString(d)), d);
  }
  for (auto c : {CredentialState::kPending, CredentialState::kActive, CredentialState::kRevoked}) {
    EXPECT_EQ(ParseCredentialState(ToString(c)), c);
  }
  EXPECT_EQ(ToString(DesiredState::kRunning), "running");
  EXPECT_EQ(ToString(CredentialState::kRevoked), "revoked");
  EXPECT_EQ(ParseDesiredState("Running"), std::nullopt);
  EXPECT_EQ(ParseDesiredState(""), std::nullopt);
  EXPECT_EQ(ParseCredentialState("active "), std::nullopt);
}

TEST_F(SqliteStoreTest, ReopenKeepsDataAndDoesNotReapplyMigrations) {
  Store& store = Open();
  Mutation extra;
  extra.credentials.push_back(Cred("c-1", "tok-1", CredentialState::kActive));
  extra.history.push_back(Entry("operation", "create", 1));
  MustCreate(Project("p1", "alpha"), extra);
  ASSERT_TRUE(store.MutateProject("p1", SetGeneration(3)).ok());
  std::string applied =
      RawQuery(path_, "SELECT group_concat(applied_ms) FROM schema_migrations ORDER BY version");
  const std::string t0 = std::to_string(kT0);
  EXPECT_EQ(applied,
            t0 + "," + t0 + "," + t0 + "," + t0 + "," + t0 + "," + t0 + "," + t0 + "," + t0);
  store_.reset();

  clock_.Advance(std::chrono::hours(1));
  Store& reopened = Open();
  auto got = reopened.GetProject("p1");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->generation, 3);
  EXPECT_EQ(got->version, 2);
  EXPECT_EQ(reopened.FindCredentialByToken("tok-1")->id, "c-1");
  EXPECT_EQ(reopened.ListHistory("p1", 0, 0)->size(), 1u);
  EXPECT_EQ(RawQuery(path_, "SELECT count(*) FROM schema_migrations"), "8");
  EXPECT_EQ(
      RawQuery(path_, "SELECT group_concat(applied_ms) FROM schema_migrations ORDER BY version"),
      applied);
  EXPECT_EQ(RawQuery(path_, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(RawQuery(path_, "PRAGMA application_id"), std::to_string(0x53545744));
  // New seqs continue after the old ones.
  ASSERT_TRUE(reopened
                  .MutateProject("p1",
                                 [](ProjectRecord&, const std::vector<Credential>&, Mutation& m) {
                                   m.history.push_back(Entry("phase", "Running"));
                                   return Status::Ok();
                                 })
                  .ok());
  auto history = reopened.ListHistory("p1", 0, 0);
  ASSERT_EQ(history->size(), 2u);
  EXPECT_GT((*history)[1].seq, (*history)[0].seq);
}

// One process has no replicas: no Leases in a SQLite store, said plainly.
TEST_F(SqliteStoreTest, KeepsNoReplicaLeases) {
  Store& store = Open();
  EXPECT_EQ(store.GetLease("steward-replica-r0").status().code(), StatusCode::kUnimplemented);
  auto put = store.PutLease({"steward-replica-r0", "{}", 0});
  EXPECT_EQ(put.status().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(put.status().message(), HasSubstr("replicas need PostgreSQL"));
  EXPECT_EQ(store.ListLeases().status().code(), StatusCode::kUnimplemented);
}

TEST_F(SqliteStoreTest, RefusesNewerSchema) {
  Open();
  store_.reset();
  RawExec(path_, "INSERT INTO schema_migrations (version, applied_ms) VALUES (9, 0)");
  auto r = OpenSqliteStore(Options());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(r.status().message(),
            path_ + ": schema version 9 is newer than this Steward (knows up to 8)");
}

TEST_F(SqliteStoreTest, RefusesAFileThatIsNotSqlite) {
  std::string garbage;
  for (int i = 0; i < 256; ++i) garbage += "this is not a database, just text. ";
  {
    std::ofstream f(path_, std::ios::binary);
    f << garbage;
  }
  auto r = OpenSqliteStore(Options());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr(path_ + ":"));
  EXPECT_THAT(r.status().message(), HasSubstr("not a database"));
  std::ifstream f(path_, std::ios::binary);
  std::string after((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(after, garbage);  // left untouched
}

TEST_F(SqliteStoreTest, RefusesAnotherApplicationsDatabase) {
  RawExec(path_, "CREATE TABLE users (name TEXT)");
  auto r = OpenSqliteStore(Options());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr(path_ + ": not a Steward database"));
  EXPECT_EQ(RawQuery(path_, "SELECT count(*) FROM sqlite_schema"), "1");  // untouched

  std::string other = dir_ + "/other.db";
  RawExec(other, "PRAGMA application_id = 42");
  SqliteOptions o = Options();
  o.path = other;
  auto r2 = OpenSqliteStore(o);
  EXPECT_EQ(r2.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(r2.status().message(), HasSubstr(other + ": not a Steward database"));
  EXPECT_THAT(r2.status().message(), HasSubstr("application_id 42"));
}

TEST_F(SqliteStoreTest, RefusesAMissingDirectory) {
  SqliteOptions o = Options();
  o.path = dir_ + "/missing/steward.db";
  auto r = OpenSqliteStore(o);
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr(o.path));
  EXPECT_THAT(r.status().message(), HasSubstr("directory " + dir_ + "/missing does not exist"));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/missing"));
  o.path = "";
  EXPECT_EQ(OpenSqliteStore(o).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(SqliteStoreTest, WriteLockHeldByAnotherProcessIsUnavailable) {
  SqliteOptions o = Options();
  o.busy_timeout_ms = 50;
  auto opened = OpenSqliteStore(o);
  ASSERT_TRUE(opened.ok());
  store_ = std::move(opened).value();
  MustCreate(Project("p1", "alpha"));
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  auto r = store_->MutateProject("p1", SetGeneration(1));
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(r.status().message(), HasSubstr(path_));
  EXPECT_TRUE(store_->GetProject("p1").ok());  // WAL: readers are not blocked
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  EXPECT_TRUE(store_->MutateProject("p1", SetGeneration(1)).ok());
}

TEST_F(SqliteStoreTest, InMemoryStoreWorks) {
  auto r = OpenSqliteStore({.path = ":memory:", .clock = &clock_});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Store& store = **r;
  ASSERT_TRUE(store.CreateProject(Project("p1", "alpha"), {}).ok());
  EXPECT_EQ(store.GetProject("p1")->created_ms, kT0);
  EXPECT_EQ(store.Describe(), "sqlite::memory:");
}

// Durable intent: once MutateProject has returned, a SIGKILL does not lose the change.
TEST_F(SqliteStoreTest, CommittedChangeSurvivesSigkill) {
  Open();
  MustCreate(Project("p1", "alpha"));
  store_.reset();  // no open connection across fork()

  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    char result = 'E';
    auto child = OpenSqliteStore(Options());
    if (child.ok()) {
      auto r = (*child)->MutateProject(
          "p1", [](ProjectRecord& rec, const std::vector<Credential>&, Mutation& m) {
            rec.generation = 42;
            rec.desired = DesiredState::kRunning;
            m.history.push_back(Entry("operation", "start", 42));
            return Status::Ok();
          });
      if (r.ok()) result = 'K';
    }
    if (write(fds[1], &result, 1) != 1) _exit(2);
    for (;;) pause();  // killed here, store still open
  }
  close(fds[1]);
  char result = 0;
  ASSERT_EQ(read(fds[0], &result, 1), 1);
  kill(pid, SIGKILL);
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  close(fds[0]);
  ASSERT_EQ(result, 'K') << "the child could not commit";
  EXPECT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL);

  Store& store = Open();
  auto got = store.GetProject("p1");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->generation, 42);
  EXPECT_EQ(got->desired, DesiredState::kRunning);
  EXPECT_EQ(got->version, 2);
  EXPECT_THAT(Summaries(*store.ListHistory("p1", 0, 0)), ElementsAre("start"));
}

// The database, its -wal and -shm hold instance credentials: private whatever the umask.
TEST_F(SqliteStoreTest, DatabaseFilesArePrivateWhateverTheUmask) {
  test_support::ScopedUmask umask(022);
  Open();
  Mutation extra;
  extra.credentials.push_back(Cred("c-1", "secret-token", CredentialState::kActive));
  MustCreate(Project("p1", "alpha"), extra);
  // While open, in WAL mode: the companions exist, with the database file's mode.
  EXPECT_THAT(test_support::EntriesUnder(dir_),
              ::testing::IsSupersetOf({"steward.db", "steward.db-wal", "steward.db-shm"}));
  EXPECT_THAT(test_support::NotPrivate(dir_), IsEmpty());
  store_.reset();
  EXPECT_THAT(test_support::NotPrivate(dir_), IsEmpty());
  EXPECT_EQ(test_support::ModeOf(path_), 0600);
}

TEST_F(SqliteStoreTest, ExistingLooseDatabaseIsTightenedAndKeepsItsData) {
  test_support::ScopedUmask umask(022);
  Open();
  MustCreate(Project("p1", "alpha"));
  store_.reset();
  ASSERT_EQ(::chmod(path_.c_str(), 0644), 0);  // as Steward left it before
  Store& reopened = Open();
  EXPECT_EQ(test_support::ModeOf(path_), 0600);
  EXPECT_TRUE(reopened.GetProject("p1").ok());
  ASSERT_TRUE(reopened.MutateProject("p1", SetGeneration(2)).ok());
  EXPECT_THAT(test_support::NotPrivate(dir_), IsEmpty());  // -wal and -shm made since
}

TEST_F(SqliteStoreTest, AVersionOneDatabaseGainsTheHostnamesTable) {
  Open();
  MustCreate(Project("p1", "alpha"));
  store_.reset();
  // As a Steward of schema 1 left it.
  RawExec(path_,
          "DROP INDEX projects_moving_from; ALTER TABLE projects DROP COLUMN moving_from; "
          "ALTER TABLE projects DROP COLUMN move_order; "
          "DROP TABLE hostnames; DROP INDEX projects_cluster; ALTER TABLE projects DROP COLUMN "
          "cluster; DROP INDEX projects_kind; ALTER TABLE projects DROP COLUMN kind; "
          "DROP TABLE shard_owners; DROP TABLE shard_history; DROP TABLE feed; DROP TABLE "
          "command_slots; "
          "DELETE FROM schema_migrations WHERE version >= 2");
  Store& reopened = Open();
  EXPECT_EQ(RawQuery(path_, "SELECT count(*) FROM schema_migrations"), "8");
  ASSERT_TRUE(reopened.MutateProject("p1", ClaimHosts({"alpha.localhost"})).ok());
  EXPECT_EQ(RawQuery(path_, "SELECT project_id FROM hostnames WHERE host = 'alpha.localhost'"),
            "p1");
}

TEST_F(SqliteStoreTest, AVersionTwoDatabaseGainsKindsAndItsRecordsAreProjects) {
  Open();
  MustCreate(Project("p1", "alpha"));
  store_.reset();
  // As a Steward of schema 2 left it.
  RawExec(path_,
          "DROP INDEX projects_moving_from; ALTER TABLE projects DROP COLUMN moving_from; "
          "ALTER TABLE projects DROP COLUMN move_order; "
          "DROP INDEX projects_cluster; ALTER TABLE projects DROP COLUMN cluster; "
          "DROP INDEX projects_kind; ALTER TABLE projects DROP COLUMN kind; "
          "DROP TABLE shard_owners; DROP TABLE shard_history; DROP TABLE feed; DROP TABLE "
          "command_slots; "
          "DELETE FROM schema_migrations WHERE version >= 3");
  Store& reopened = Open();
  EXPECT_EQ(RawQuery(path_, "SELECT count(*) FROM schema_migrations"), "8");
  auto got = reopened.GetProject("p1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->kind, RecordKind::kProject);
}

// Schema 6 (issue 34): every record that holds claims also claims its id and its name, the
// words the API's paths take; of two stored records where one's id is the other's name, the id
// keeps the word (paths resolved ids first). Records without claims get theirs from
// ClaimHostnames, with everything else (AVersionOneDatabaseGainsTheHostnamesTable).
TEST_F(SqliteStoreTest, AVersionFiveDatabaseClaimsEveryIdAndNameOnce) {
  Open();
  MustCreate(Project("p1", "alpha"));
  MustCreate(Project("alpha2", "p1x"));
  MustCreate(Project("old", "p1"));  // stored before the rule: its name is p1's id
  MustCreate(Project("bare", "bare-name"));
  for (const char* id : {"p1", "alpha2", "old"}) {
    ASSERT_TRUE(store_->MutateProject(id, ClaimHosts({std::string(id) + ".localhost"})).ok());
  }
  store_.reset();
  RawExec(path_,
          "DROP INDEX projects_moving_from; ALTER TABLE projects DROP COLUMN moving_from; "
          "ALTER TABLE projects DROP COLUMN move_order; "
          "DELETE FROM hostnames WHERE host LIKE 'Reference/%'; "
          "DROP INDEX projects_cluster; ALTER TABLE projects DROP COLUMN cluster; "
          "DELETE FROM schema_migrations WHERE version >= 6");
  Open();
  EXPECT_EQ(RawQuery(path_, "SELECT count(*) FROM schema_migrations"), "8");
  auto holder = [&](const std::string& word) {
    return RawQuery(path_,
                    "SELECT project_id FROM hostnames WHERE host = '" + ReferenceClaim(word) + "'");
  };
  EXPECT_EQ(holder("p1"), "p1");
  EXPECT_EQ(holder("alpha"), "p1");
  EXPECT_EQ(holder("alpha2"), "alpha2");
  EXPECT_EQ(holder("p1x"), "alpha2");
  EXPECT_EQ(holder("old"), "old");
  EXPECT_EQ(RawQuery(path_, "SELECT count(*) FROM hostnames WHERE project_id = 'bare'"), "0");
}

TEST_F(SqliteStoreTest, AVersionSixDatabasePlacesEveryRecordOnTheDefaultCluster) {
  Open();
  MustCreate(Project("p1", "alpha"));
  store_.reset();
  RawExec(path_,
          "DROP INDEX projects_moving_from; ALTER TABLE projects DROP COLUMN moving_from; "
          "ALTER TABLE projects DROP COLUMN move_order; "
          "DROP INDEX projects_cluster; ALTER TABLE projects DROP COLUMN cluster; "
          "DELETE FROM schema_migrations WHERE version >= 7");
  Open();
  EXPECT_EQ(RawQuery(path_, "SELECT count(*) FROM schema_migrations"), "8");
  EXPECT_EQ(store_->GetProject("p1")->cluster, "default");
  ProjectRecord east = Project("p2", "beta");
  east.cluster = "east";
  MustCreate(east);
  EXPECT_EQ(RawQuery(path_, "SELECT cluster FROM projects WHERE id = 'p2'"), "east");
}

}  // namespace
}  // namespace steward::store
