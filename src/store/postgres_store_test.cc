// What only the PostgreSQL store has: URLs and password files, migrations shared by replicas, two
// store objects on one database (two replicas), and the server failing under it. The Store
// contract itself is store_contract_test.cc.
#include "store/postgres_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "common/clock.h"
#include "store/store_test_util.h"
#include "test_support/captured_log.h"
#include "test_support/eventually.h"
#include "test_support/held_port.h"

namespace steward::store {
namespace {

using namespace ::steward::store::test_util;  // NOLINT: the helpers of every store test
using test_support::Eventually;

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Not;

class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status error = Status::Ok();
    server_ = SharedPostgres(&error);
    ASSERT_NE(server_, nullptr) << error.ToString();
    auto db = NewDatabase(*server_);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = *db;
  }
  PostgresOptions Options() const {
    PostgresOptions o;
    o.url = server_->Url(db_);
    o.clock = &clock_;
    return o;
  }
  std::unique_ptr<Store> MustOpen(const PostgresOptions& o) {
    auto s = OpenPostgresStore(o);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }
  std::string Query(const std::string& sql) const {
    auto v = server_->Query(db_, sql);
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    return v.ok() ? *v : "";
  }
  // Ends every session Steward holds on this test's database (pg_terminate_backend).
  void TerminateStewardConnections() const {
    Query("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '" + db_ +
          "' AND application_name = 'steward'");
  }

  mutable FakeClock clock_;
  LocalPostgres* server_ = nullptr;
  std::string db_;
};

// A listener that records every position it sees, from any thread.
struct Positions {
  std::mutex mu;
  std::vector<int64_t> seen;
  std::vector<std::string> ids;
  Listener Record() {
    return [this](const ProjectChange& c) {
      std::lock_guard lock(mu);
      seen.push_back(c.position);
      ids.push_back(c.project_id);
    };
  }
  size_t size() {
    std::lock_guard lock(mu);
    return seen.size();
  }
  std::vector<int64_t> Get() {
    std::lock_guard lock(mu);
    return seen;
  }
};

std::vector<int64_t> Range(int64_t from, int64_t to) {
  std::vector<int64_t> out;
  for (int64_t p = from; p <= to; ++p) out.push_back(p);
  return out;
}

// ---- URLs, passwords, reachability ----

TEST(PostgresUrlTest, PasswordsInTheUrlAreRefusedWithoutEchoingThem) {
  for (const char* url : {"postgres://steward:s3cret@db/steward",
                          "postgresql://db/steward?password=s3cret&sslmode=require"}) {
    Status s = ValidatePostgresUrl(url);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << url;
    EXPECT_THAT(s.message(), HasSubstr("put the password in databasePasswordFile or PGPASSWORD"));
    EXPECT_THAT(s.message(), Not(HasSubstr("s3cret")));
    auto opened = OpenPostgresStore({.url = url});
    EXPECT_EQ(opened.status().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(ValidatePostgresUrl("mysql://db/x").code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(ValidatePostgresUrl("postgres://db/x?nonsense=1").message(),
              HasSubstr("cannot parse the URL"));
  EXPECT_TRUE(ValidatePostgresUrl("postgres://steward@db:5433/steward?sslmode=verify-full").ok());
  EXPECT_TRUE(ValidatePostgresUrl("postgresql://db/steward").ok());
}

TEST(PostgresUrlTest, AnUnreachableServerIsUnavailableNamingHostAndPort) {
  int port = 0;
  {
    // A port nobody listens on: bound, never listening, closed.
    test_support::HeldPort held;
    port = held.port();
  }
  ASSERT_NE(port, 0);
  auto opened = OpenPostgresStore(
      {.url = "postgres://steward@127.0.0.1:" + std::to_string(port) + "/steward"});
  ASSERT_EQ(opened.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(opened.status().message(),
              HasSubstr("postgres://steward@127.0.0.1:" + std::to_string(port) + "/steward"));
  EXPECT_THAT(opened.status().message(), HasSubstr("cannot connect"));
}

TEST_F(PostgresStoreTest, DescribeNamesUserHostPortAndDatabase) {
  auto store = MustOpen(Options());
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->Describe(),
            "postgres://steward@127.0.0.1:" + std::to_string(server_->port()) + "/" + db_);
}

TEST_F(PostgresStoreTest, PasswordFileMustBePrivateAndIsUsed) {
  const std::string role = "pw_" + db_;
  const std::string password = "pw-" + db_ + "-Zq9";
  ASSERT_TRUE(server_->CreatePasswordRole(role, password).ok());
  const std::string db = db_ + "_pw";
  ASSERT_TRUE(server_->CreateDatabase(db, role).ok());
  char tmpl[] = "/tmp/steward-pgpass-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string file = std::string(tmpl) + "/password";
  {
    std::ofstream f(file);
    f << password << "\n";
  }
  PostgresOptions o;
  o.url = server_->Url(db, role);
  o.password_file = file;
  ASSERT_EQ(::chmod(file.c_str(), 0640), 0);
  test_support::CapturedLog log;
  auto loose = OpenPostgresStore(o);
  ASSERT_EQ(loose.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(loose.status().message(),
              HasSubstr(file + ": readable by group or others (mode 0640)"));

  ASSERT_EQ(::chmod(file.c_str(), 0600), 0);
  auto store = OpenPostgresStore(o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)->CreateProject(Project("p1", "alpha"), {}).ok());
  EXPECT_THAT((*store)->Describe(), Not(HasSubstr(password)));

  // Without the password: the server asks for one, and the message says where it goes.
  o.password_file.clear();
  unsetenv("PGPASSWORD");
  auto none = OpenPostgresStore(o);
  EXPECT_EQ(none.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(none.status().message(), HasSubstr("databasePasswordFile or PGPASSWORD"));
  // A wrong one is refused by the server.
  {
    std::ofstream f(file, std::ios::trunc);
    f << "wrong";
  }
  o.password_file = file;
  auto wrong = OpenPostgresStore(o);
  EXPECT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.status().message(), HasSubstr("password authentication failed"));
  EXPECT_THAT(log.Text(), Not(HasSubstr(password)));
  std::filesystem::remove_all(tmpl);
}

// ---- Schema ----

TEST_F(PostgresStoreTest, ReplicasOpeningTogetherMigrateOnceAndShareOneFeed) {
  constexpr int kReplicas = 4;
  std::vector<std::unique_ptr<Store>> stores(kReplicas);
  std::vector<std::thread> threads;
  for (int i = 0; i < kReplicas; ++i) {
    threads.emplace_back([&, i] { stores[i] = MustOpen(Options()); });
  }
  for (auto& t : threads) t.join();
  for (const auto& s : stores) {
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->FeedId(), stores[0]->FeedId());
  }
  EXPECT_EQ(stores[0]->FeedId().size(), 32u);
  EXPECT_EQ(Query("SELECT count(*) FROM schema_migrations"), "6");
  EXPECT_EQ(Query("SELECT count(*) FROM feed"), "1");
  // Opening again applies nothing.
  const std::string applied =
      Query("SELECT string_agg(applied_ms::text, ',' ORDER BY version) FROM schema_migrations");
  clock_.Advance(std::chrono::hours(1));
  ASSERT_NE(MustOpen(Options()), nullptr);
  EXPECT_EQ(
      Query("SELECT string_agg(applied_ms::text, ',' ORDER BY version) FROM schema_migrations"),
      applied);
}

TEST_F(PostgresStoreTest, RefusesNewerSchemaAndOtherApplicationsDatabases) {
  ASSERT_NE(MustOpen(Options()), nullptr);
  Query("INSERT INTO schema_migrations (version, applied_ms) VALUES (8, 0)");
  auto newer = OpenPostgresStore(Options());
  ASSERT_EQ(newer.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(newer.status().message(),
              HasSubstr(": schema version 8 is newer than this Steward (knows up to 6)"));

  auto other = NewDatabase(*server_);
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(server_->Exec(*other, "CREATE TABLE users (name TEXT)").ok());
  PostgresOptions o = Options();
  o.url = server_->Url(*other);
  auto refused = OpenPostgresStore(o);
  ASSERT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("/" + *other + ": not a Steward database"));
  EXPECT_EQ(
      server_->Query(*other, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").value(),
      "1");  // untouched
}

// ---- Two replicas on one database ----

TEST_F(PostgresStoreTest, ChangesOfEitherReplicaReachBothInCommitOrderWithoutGaps) {
  auto a = MustOpen(Options());
  auto b = MustOpen(Options());
  ASSERT_TRUE(a && b);
  Positions at_a, at_b;
  a->AddListener(at_a.Record());
  b->AddListener(at_b.Record());
  ASSERT_TRUE(a->CreateProject(Project("p1", "alpha"), {}).ok());
  ASSERT_TRUE(b->CreateProject(Project("p2", "beta"), {}).ok());
  constexpr int kThreads = 4, kWrites = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Store& s = t % 2 == 0 ? *a : *b;
      for (int i = 0; i < kWrites; ++i) {
        auto r = s.MutateProject(t < 2 ? "p1" : "p2", Bump());
        EXPECT_TRUE(r.ok()) << r.status().ToString();
      }
    });
  }
  for (auto& t : threads) t.join();
  const int64_t last = 2 + kThreads * kWrites;
  EXPECT_EQ(a->LastPosition().value(), last);
  ASSERT_TRUE(Eventually([&] { return at_a.size() >= last && at_b.size() >= last; }));
  EXPECT_THAT(at_a.Get(), ElementsAreArray(Range(1, last)));
  EXPECT_THAT(at_b.Get(), ElementsAreArray(Range(1, last)));
  EXPECT_EQ(b->GetProject("p1")->generation, 2 * kWrites);
}

TEST_F(PostgresStoreTest, ARecordWrittenByOneReplicaIsDeliveredToTheOtherWithItsHistory) {
  auto a = MustOpen(Options());
  auto b = MustOpen(Options());
  ASSERT_TRUE(a && b);
  std::mutex mu;
  std::vector<ProjectChange> at_b;
  b->AddListener([&](const ProjectChange& c) {
    std::lock_guard lock(mu);
    at_b.push_back(c);
  });
  Mutation extra;
  extra.history.push_back(Entry("operation", "create", 1));
  ProjectRecord created = a->CreateProject(Project("p1", "alpha"), extra).value();
  ASSERT_TRUE(a->PurgeProject("p1", Entry("purged", "gone")).ok());
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard lock(mu);
    return at_b.size() == 2;
  }));
  std::lock_guard lock(mu);
  ASSERT_TRUE(at_b[0].record.has_value());
  EXPECT_EQ(at_b[0].record->name, "alpha");
  EXPECT_EQ(at_b[0].record->version, created.version);
  EXPECT_EQ(at_b[0].record->created_ms, kT0);
  ASSERT_EQ(at_b[0].history.size(), 1u);
  EXPECT_EQ(at_b[0].history[0].summary, "create");
  EXPECT_GT(at_b[0].history[0].seq, 0);
  EXPECT_FALSE(at_b[1].record.has_value());
  ASSERT_TRUE(at_b[1].purged.has_value());
  EXPECT_EQ(at_b[1].purged->name, "alpha");
  EXPECT_EQ(at_b[1].history.at(0).kind, "purged");
  EXPECT_EQ(at_b[1].position, 2);
}

TEST_F(PostgresStoreTest, ShardOwnershipIsACompareAndSetBetweenReplicas) {
  auto a = MustOpen(Options());
  auto b = MustOpen(Options());
  ASSERT_TRUE(a && b);
  // Both take shard 1 at once, many times over: exactly one wins each round.
  int64_t epoch = 0;
  for (int round = 0; round < 10; ++round) {
    std::atomic<int> won{0};
    std::thread ta([&] { won += a->AcquireShard(1, "a", epoch).ok() ? 1 : 0; });
    std::thread tb([&] { won += b->AcquireShard(1, "b", epoch).ok() ? 1 : 0; });
    ta.join();
    tb.join();
    ASSERT_EQ(won.load(), 1) << "round " << round;
    ++epoch;
  }
  auto owners = a->ListShardOwners().value();
  ASSERT_EQ(owners.size(), 1u);
  EXPECT_EQ(owners[0].epoch, 10);
  const Fence holder{1, owners[0].owner, 10};
  const Fence past{1, owners[0].owner == "a" ? "b" : "a", 9};
  Store& mine = owners[0].owner == "a" ? *a : *b;
  Store& theirs = owners[0].owner == "a" ? *b : *a;
  ASSERT_TRUE(mine.CreateProject(Project("p1", "alpha"), {}).ok());
  auto fenced = [](const Fence& f) {
    return [f](ProjectRecord& r, const std::vector<Credential>&, Mutation& m) {
      ++r.generation;
      m.fence = f;
      return Status::Ok();
    };
  };
  EXPECT_TRUE(mine.MutateProject("p1", fenced(holder)).ok());
  auto refused = theirs.MutateProject("p1", fenced(past));
  EXPECT_EQ(refused.status().code(), StatusCode::kAborted);
  EXPECT_EQ(theirs.PurgeProject("p1", Entry("purged", "x"), past).code(), StatusCode::kAborted);
  // The other replica takes over: the holder's writes are fenced from then on.
  ASSERT_TRUE(theirs.AcquireShard(1, past.owner, 10).ok());
  EXPECT_EQ(mine.MutateProject("p1", fenced(holder)).status().code(), StatusCode::kAborted);
  EXPECT_EQ(mine.ReleaseShard(holder).code(), StatusCode::kAborted);
  EXPECT_EQ(a->GetProject("p1")->generation, 1);
  auto history = b->ListShardHistory(0, 0).value();
  ASSERT_EQ(history.size(), 11u);
  for (size_t i = 0; i < history.size(); ++i) EXPECT_EQ(history[i].epoch, int64_t(i + 1));
}

// Replica Leases in the store (replicas.leases: store): create once, replace only at the stored
// version (as Kubernetes' resourceVersion), racing writers at one version: exactly one wins.
TEST_F(PostgresStoreTest, LeasesAreCreatedOnceAndReplacedOnlyAtTheirStoredVersion) {
  auto a = MustOpen(Options());
  auto b = MustOpen(Options());
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->GetLease("steward-replica-r0").status().code(), StatusCode::kNotFound);
  auto created = a->PutLease({"steward-replica-r0", R"x({"spec":{"holderIdentity":"r0_1"}})x", 0});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->version, 1);
  EXPECT_EQ(b->PutLease({"steward-replica-r0", "{}", 0}).status().code(),
            StatusCode::kAlreadyExists);
  auto read = b->GetLease("steward-replica-r0");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->body, R"x({"spec":{"holderIdentity":"r0_1"}})x");
  EXPECT_EQ(read->version, 1);
  // Both replace it at version 1, many times over: exactly one wins each round.
  int64_t version = 1;
  for (int round = 0; round < 10; ++round) {
    std::atomic<int> won{0};
    std::thread ta([&] { won += a->PutLease({"steward-replica-r0", "{}", version}).ok() ? 1 : 0; });
    std::thread tb([&] { won += b->PutLease({"steward-replica-r0", "{}", version}).ok() ? 1 : 0; });
    ta.join();
    tb.join();
    ASSERT_EQ(won.load(), 1) << "round " << round;
    ++version;
  }
  auto stale = a->PutLease({"steward-replica-r0", "{}", 1});
  EXPECT_EQ(stale.status().code(), StatusCode::kAborted);
  EXPECT_THAT(stale.status().message(), HasSubstr("is not the stored one (11)"));
  EXPECT_EQ(a->PutLease({"steward-replica-r9", "{}", 3}).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(b->PutLease({"steward-replica-r1", "{}", 0}).ok());
  auto all = a->ListLeases();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "steward-replica-r0");
  EXPECT_EQ((*all)[0].version, 11);
  EXPECT_EQ((*all)[1].name, "steward-replica-r1");
  EXPECT_EQ(a->PutLease({"", "{}", 0}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(a->PutLease({"x", std::string(65 * 1024, ' '), 0}).status().code(),
            StatusCode::kInvalidArgument);
}

// A database whose default isolation is SERIALIZABLE: concurrent writers through two replicas
// all succeed (the store's transactions are READ COMMITTED behind the feed lock).
TEST_F(PostgresStoreTest, ADatabaseDefaultingToSerializableChangesNothing) {
  Query("ALTER DATABASE " + db_ + " SET default_transaction_isolation = 'serializable'");
  auto a = MustOpen(Options());
  auto b = MustOpen(Options());
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->CreateProject(Project("p1", "alpha"), {}).ok());
  constexpr int kThreads = 4, kWrites = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kWrites; ++i) {
        auto r = (t % 2 ? *a : *b).MutateProject("p1", Bump());
        EXPECT_TRUE(r.ok()) << r.status().ToString();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(a->GetProject("p1")->generation, kThreads * kWrites);
}

// ---- The server failing under the store ----

TEST_F(PostgresStoreTest, LostConnectionsAreUnavailableThenTheStoreRecoversAndTheFeedResumes) {
  auto a = MustOpen(Options());
  auto b = MustOpen(Options());
  ASSERT_TRUE(a && b);
  Positions at_b;
  b->AddListener(at_b.Record());
  ASSERT_TRUE(a->CreateProject(Project("p1", "alpha"), {}).ok());
  ASSERT_TRUE(Eventually([&] { return at_b.size() == 1; }));
  // Inside a's transaction, every Steward session on the database is ended.
  auto cut =
      a->MutateProject("p1", [&](ProjectRecord& r, const std::vector<Credential>&, Mutation&) {
        TerminateStewardConnections();
        ++r.generation;
        return Status::Ok();
      });
  ASSERT_EQ(cut.status().code(), StatusCode::kUnavailable) << cut.status().ToString();
  EXPECT_THAT(cut.status().message(), HasSubstr("connection lost"));
  EXPECT_EQ(a->GetProject("p1")->generation, 0);  // rolled back; the next call reconnects
  // b's listen connection went too: what a commits meanwhile reaches b after it reconnects.
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(a->MutateProject("p1", Bump()).ok());
  ASSERT_TRUE(Eventually([&] { return at_b.size() >= 6; }));
  EXPECT_THAT(at_b.Get(), ElementsAreArray(Range(1, 6)));
  EXPECT_EQ(b->GetProject("p1")->generation, 5);
}

TEST_F(PostgresStoreTest, ACommitWhoseAnswerNeverCameIsUnavailableNeverOk) {
  PostgresOptions o = Options();
  std::atomic<bool> cut{false};
  o.before_commit = [&] {
    if (cut.exchange(false)) TerminateStewardConnections();
  };
  auto store = MustOpen(o);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->CreateProject(Project("p1", "alpha"), {}).ok());
  cut = true;
  auto unknown = store->MutateProject("p1", Bump());
  ASSERT_EQ(unknown.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(unknown.status().message(), HasSubstr("the outcome of the commit is unknown"));
  // The store goes on; the change did not commit here (the session ended before its COMMIT).
  ASSERT_TRUE(store->MutateProject("p1", Bump()).ok());
  EXPECT_EQ(store->GetProject("p1")->generation, 1);
}

// The feed's LISTEN connection is cut again and again while the other replica writes: every
// change still arrives once, in order.
TEST_F(PostgresStoreTest, TheFeedSurvivesItsConnectionBeingCutRepeatedly) {
  auto a = MustOpen(Options());
  auto b = MustOpen(Options());
  ASSERT_TRUE(a && b);
  Positions at_b;
  b->AddListener(at_b.Record());
  ASSERT_TRUE(a->CreateProject(Project("p1", "alpha"), {}).ok());
  constexpr int kWrites = 20;
  int cut = 0;
  for (int i = 0; i < kWrites; ++i) {
    // The feed connections (both replicas') are those whose last statement read the changes.
    cut += std::stoi(Query(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '" + db_ +
        "' AND application_name = 'steward' AND (query LIKE 'SELECT position, payload FROM "
        "changes%' OR query LIKE 'LISTEN%')"));
    ASSERT_TRUE(a->MutateProject("p1", Bump()).ok());
  }
  ASSERT_TRUE(Eventually([&] { return at_b.size() >= kWrites + 1; }));
  EXPECT_THAT(at_b.Get(), ElementsAreArray(Range(1, kWrites + 1)));
  EXPECT_EQ(b->GetProject("p1")->generation, kWrites);
  EXPECT_GE(cut, kWrites / 2);  // the feeds were really cut, most of the time
}

TEST_F(PostgresStoreTest, AStatementPastItsTimeoutIsUnavailableAndLaterWritesSucceed) {
  PostgresOptions o = Options();
  o.statement_timeout = std::chrono::milliseconds(300);
  auto store = MustOpen(o);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->CreateProject(Project("p1", "alpha"), {}).ok());
  // Another session holds the row every write locks.
  const std::string conninfo = server_->Url(db_);
  PGconn* raw = PQconnectdb(conninfo.c_str());
  ASSERT_EQ(PQstatus(raw), CONNECTION_OK) << PQerrorMessage(raw);
  PQclear(PQexec(raw, "BEGIN"));
  PGresult* locked = PQexec(raw, "SELECT position FROM feed FOR UPDATE");
  ASSERT_EQ(PQresultStatus(locked), PGRES_TUPLES_OK);
  PQclear(locked);
  auto waited = store->MutateProject("p1", Bump());
  ASSERT_EQ(waited.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(waited.status().message(), HasSubstr("statement_timeout"));
  PQclear(PQexec(raw, "ROLLBACK"));
  PQfinish(raw);
  ASSERT_TRUE(store->MutateProject("p1", Bump()).ok());
  EXPECT_EQ(store->GetProject("p1")->generation, 1);  // the first Bump wrote nothing
}

// Kill finds the postmaster's children through /proc. A process that exits between open and read
// makes read fail (ESRCH); a stat path that is a directory fails the same way (EISDIR), which is
// how this test provokes it: the entry is passed over, never an exception (the CI flake of
// 2026-12-04 was std::ios_base::failure from an ifstream there).
TEST(LocalPostgresProcTest, UnreadableStatEntriesArePassedOverAndZombiesAreNotAlive) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("steward-proc-" + std::to_string(getpid()));
  std::filesystem::remove_all(root);
  auto stat_file = [&](const std::string& pid, const std::string& text) {
    std::filesystem::create_directories(root / pid);
    std::ofstream(root / pid / "stat") << text;
  };
  stat_file("100", "100 (postgres: wal) writer) S 42 100 100 0");
  std::filesystem::create_directories(root / "101" / "stat");  // read(2) fails: EISDIR
  stat_file("102", "102 (postgres) Z 42 100 100 0");
  stat_file("103", "103 (other) S 7 103 103 0");
  stat_file("self", "1 (init) S 42 1 1 0");  // not a pid

  std::vector<pid_t> children = ChildProcessesOf(42, root.string());
  std::sort(children.begin(), children.end());
  EXPECT_EQ(children, (std::vector<pid_t>{100, 102}));
  EXPECT_TRUE(ProcessAlive(100, root.string()));
  EXPECT_FALSE(ProcessAlive(101, root.string()));
  EXPECT_FALSE(ProcessAlive(102, root.string()));  // a zombie
  EXPECT_FALSE(ProcessAlive(104, root.string()));  // absent
  std::filesystem::remove_all(root);
}

// A server of its own: these tests stop and kill it.
TEST(LocalPostgresFaultTest, RestartOrKillMidTransactionIsUnavailableAndLosesNothingAcknowledged) {
  auto server = LocalPostgres::Launch();
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  LocalPostgres& pg = **server;
  ASSERT_TRUE(pg.CreateDatabase("steward").ok());
  PostgresOptions o;
  o.url = pg.Url("steward");
  auto opened = OpenPostgresStore(o);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Store& store = **opened;
  Positions seen;
  store.AddListener(seen.Record());
  ASSERT_TRUE(store.CreateProject(Project("p1", "alpha"), {}).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(store.MutateProject("p1", Bump()).ok());

  auto restarted =
      store.MutateProject("p1", [&](ProjectRecord& r, const std::vector<Credential>&, Mutation&) {
        EXPECT_TRUE(pg.Restart().ok());
        ++r.generation;
        return Status::Ok();
      });
  ASSERT_EQ(restarted.status().code(), StatusCode::kUnavailable) << restarted.status().ToString();
  auto after_restart = store.GetProject("p1");
  ASSERT_TRUE(after_restart.ok()) << after_restart.status().ToString();
  EXPECT_EQ(after_restart->generation, 3);
  ASSERT_TRUE(store.MutateProject("p1", Bump()).ok());

  auto killed =
      store.MutateProject("p1", [&](ProjectRecord& r, const std::vector<Credential>&, Mutation&) {
        pg.Kill();
        ++r.generation;
        return Status::Ok();
      });
  ASSERT_EQ(killed.status().code(), StatusCode::kUnavailable);
  auto down = store.GetProject("p1");
  ASSERT_EQ(down.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(down.status().message(), HasSubstr("127.0.0.1:" + std::to_string(pg.port())));
  const Status started = pg.Start();
  ASSERT_TRUE(started.ok()) << started.ToString();
  auto back = store.GetProject("p1");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->generation, 4);  // every acknowledged write, none of the failed ones
  ASSERT_TRUE(store.MutateProject("p1", Bump()).ok());
  // The feed came back too: every committed position once, in order.
  ASSERT_TRUE(Eventually([&] { return seen.size() >= 6; }));
  EXPECT_THAT(seen.Get(), ElementsAreArray(Range(1, 6)));
}

// Every child of the postmaster is in a process group of its own, and a busy backend does not
// notice its postmaster's death until it waits: Kill must kill them all, or the next Start finds
// the old shared memory still attached and fails.
TEST(LocalPostgresFaultTest, AServerKilledMidQueryStartsAgainAtOnce) {
  auto server = LocalPostgres::Launch();
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  LocalPostgres& pg = **server;
  std::thread busy([&] {
    // Fails when the server is killed under it.
    (void)pg.Query("postgres", "SELECT count(*) FROM generate_series(1, 400000000)");
  });
  const bool running = Eventually([&] {
    auto n = pg.Query("postgres",
                      "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query "
                      "LIKE '%generate_series(1, 400000000)%' AND pid <> pg_backend_pid()");
    return n.ok() && *n == "1";
  });
  pg.Kill();
  // Started while the busy thread may still wait: a backend Kill missed would hold the old
  // shared memory (and finish its query only after minutes).
  const Status started = pg.Start();
  busy.join();
  ASSERT_TRUE(running) << "the busy query never showed";
  EXPECT_TRUE(started.ok()) << started.ToString();
}

// A replica whose feed fell behind past the retention re-reads every record.
TEST_F(PostgresStoreTest, AReplicaThatMissedPrunedChangesIsGivenEveryRecordAgain) {
  PostgresOptions o = Options();
  o.retain_changes = 2;
  o.retain_for = std::chrono::milliseconds(0);
  test_support::CapturedLog log;  // before the stores: their threads log into it
  auto a = MustOpen(o);
  auto b = MustOpen(o);
  ASSERT_TRUE(a && b);
  std::atomic<bool> release{false};
  std::mutex mu;
  std::vector<std::pair<std::string, int64_t>> at_b;  // id, generation
  std::vector<int64_t> positions;
  b->AddListener([&](const ProjectChange& c) {
    {
      std::lock_guard lock(mu);
      at_b.emplace_back(c.project_id, c.record ? c.record->generation : -1);
      positions.push_back(c.position);
    }
    // b's feed thread stalls in its first delivery while a writes on.
    Eventually([&] { return release.load(); }, std::chrono::seconds(30));
  });
  ASSERT_TRUE(a->CreateProject(Project("p1", "alpha"), {}).ok());
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard lock(mu);
    return at_b.size() == 1;  // b has read position 1 alone and is stuck delivering it
  }));
  ASSERT_TRUE(a->CreateProject(Project("p2", "beta"), {}).ok());
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(a->MutateProject(i % 2 ? "p1" : "p2", Bump()).ok());
  ASSERT_EQ(Query("SELECT min(position) > 2 FROM changes"), "t");  // b's next ones are gone
  release = true;
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard lock(mu);
    return at_b.size() >= 3;
  }));
  std::lock_guard lock(mu);
  // Position 1, then every record as it is now, at the position it was read at.
  EXPECT_EQ(at_b[0], std::make_pair(std::string("p1"), int64_t{0}));
  EXPECT_EQ(at_b[1], std::make_pair(std::string("p1"), int64_t{5}));
  EXPECT_EQ(at_b[2], std::make_pair(std::string("p2"), int64_t{5}));
  EXPECT_EQ(positions[1], 12);
  EXPECT_EQ(positions[2], 12);
  EXPECT_THAT(log.Text(), HasSubstr("were pruned before this process read them"));
}

}  // namespace
}  // namespace steward::store
