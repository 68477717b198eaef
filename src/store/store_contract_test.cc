// The Store contract (store.h), run against every implementation: SQLite (a fresh file per test)
// and PostgreSQL (a fresh database per test on one server per test binary). Tests of what only
// one implementation has (files, WAL and modes; connections, replicas, faults) are in
// sqlite_store_test.cc and postgres_store_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "common/clock.h"
#include "store/postgres_store.h"
#include "store/store.h"
#include "store/store_test_util.h"
#include "test_support/eventually.h"

namespace steward::store {
namespace {

using namespace ::steward::store::test_util;  // NOLINT: the helpers of every store test
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// Where a test's store lives: opened again on the same data by each Open().
class Backend {
 public:
  virtual ~Backend() = default;
  // `fast`: durability that only a power loss would miss may be traded for speed.
  virtual StatusOr<std::unique_ptr<Store>> Open(Clock* clock, bool fast) = 0;
  virtual std::string Describe() const = 0;  // what the store's Describe() says
  virtual std::string Where() const = 0;     // what its error messages name
  // One value from a raw query of the store's tables, for what the interface does not expose.
  virtual std::string Query(const std::string& sql) = 0;
  // From now on, Open() opens another, new database.
  virtual void UseAnotherDatabase() = 0;
  virtual int64_t LatestSchema() const = 0;
};

class SqliteBackend final : public Backend {
 public:
  SqliteBackend() {
    char tmpl[] = "/tmp/steward-store-test-XXXXXX";
    if (mkdtemp(tmpl) != nullptr) dir_ = tmpl;
    path_ = dir_ + "/steward.db";
  }
  ~SqliteBackend() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  StatusOr<std::unique_ptr<Store>> Open(Clock* clock, bool fast) override {
    return OpenSqliteStore({.path = path_, .synchronous_full = !fast, .clock = clock});
  }
  std::string Describe() const override { return "sqlite:" + path_; }
  std::string Where() const override { return path_; }
  std::string Query(const std::string& sql) override {
    sqlite3* db = nullptr;
    std::string out;
    if (sqlite3_open(path_.c_str(), &db) == SQLITE_OK) {
      sqlite3_stmt* stmt = nullptr;
      if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
          sqlite3_step(stmt) == SQLITE_ROW) {
        const unsigned char* v = sqlite3_column_text(stmt, 0);
        if (v) out = reinterpret_cast<const char*>(v);
      }
      sqlite3_finalize(stmt);
    }
    sqlite3_close(db);
    return out;
  }
  void UseAnotherDatabase() override { path_ = dir_ + "/other.db"; }
  int64_t LatestSchema() const override { return 8; }

 private:
  std::string dir_, path_;
};

class PostgresBackend final : public Backend {
 public:
  PostgresBackend() { UseAnotherDatabase(); }
  StatusOr<std::unique_ptr<Store>> Open(Clock* clock, bool) override {
    RETURN_IF_ERROR(status_);
    PostgresOptions o;
    o.url = server_->Url(db_);
    o.clock = clock;
    return OpenPostgresStore(o);
  }
  std::string Describe() const override {
    return server_ ? "postgres://steward@127.0.0.1:" + std::to_string(server_->port()) + "/" + db_
                   : "";
  }
  std::string Where() const override { return Describe(); }
  std::string Query(const std::string& sql) override {
    if (!server_) return "";
    auto v = server_->Query(db_, sql);
    return v.ok() ? *v : "error: " + v.error().message();
  }
  void UseAnotherDatabase() override {
    server_ = SharedPostgres(&status_);
    if (!server_) return;
    auto db = NewDatabase(*server_);
    if (db.ok()) {
      db_ = *db;
    } else {
      status_ = db.error();
    }
  }
  int64_t LatestSchema() const override { return 6; }

 private:
  LocalPostgres* server_ = nullptr;
  Status status_ = Status::Ok();
  std::string db_;
};

class StoreContractTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "sqlite") {
      backend_ = std::make_unique<SqliteBackend>();
    } else {
      backend_ = std::make_unique<PostgresBackend>();
    }
  }
  void TearDown() override { store_.reset(); }

  Store& Open(bool fast = false) {
    store_.reset();
    auto s = backend_->Open(&clock_, fast);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (s.ok()) store_ = std::move(s).value();
    return *store_;
  }
  Store& OpenFast() { return Open(/*fast=*/true); }
  ProjectRecord MustCreate(const ProjectRecord& r, const Mutation& extra = {}) {
    auto created = store_->CreateProject(r, extra);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? *created : ProjectRecord{};
  }

  FakeClock clock_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Store> store_;
};

INSTANTIATE_TEST_SUITE_P(Stores, StoreContractTest, ::testing::Values("sqlite", "postgres"),
                         [](const auto& param_info) { return param_info.param; });

TEST_P(StoreContractTest, CreateThenGetByIdAndName) {
  Store& store = Open();
  EXPECT_EQ(store.Describe(), backend_->Describe());
  ProjectRecord in = Project("p1", "alpha");
  in.desired = DesiredState::kRunning;
  in.generation = 1;
  in.restart_epoch = 7;
  in.status_json = R"({"phase":"Pending"})";
  in.phase = "Pending";
  in.observed_generation = 0;
  in.version = 99;  // store-owned: ignored
  ProjectRecord created = MustCreate(in);
  EXPECT_EQ(created.version, 1);
  EXPECT_EQ(created.created_ms, kT0);
  EXPECT_EQ(created.updated_ms, kT0);

  auto got = store.GetProject("p1");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->name, "alpha");
  EXPECT_EQ(got->team, "team-a");
  EXPECT_EQ(got->spec_json, R"({"stack":"s1"})");
  EXPECT_EQ(got->desired, DesiredState::kRunning);
  EXPECT_EQ(got->generation, 1);
  EXPECT_EQ(got->restart_epoch, 7);
  EXPECT_EQ(got->status_json, R"({"phase":"Pending"})");
  EXPECT_EQ(got->phase, "Pending");
  EXPECT_EQ(got->version, 1);
  EXPECT_EQ(got->created_ms, kT0);

  auto by_name = store.GetProjectByName("alpha");
  ASSERT_TRUE(by_name.ok());
  EXPECT_EQ(by_name->id, "p1");

  auto missing = store.GetProject("nope");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("\"nope\""));
  auto missing_name = store.GetProjectByName("beta");
  EXPECT_EQ(missing_name.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing_name.status().message(), HasSubstr("named \"beta\""));
}

TEST_P(StoreContractTest, CreateRefusesTakenIdOrName) {
  Store& store = Open();
  MustCreate(Project("p1", "alpha"));
  auto same_id = store.CreateProject(Project("p1", "beta"), {});
  EXPECT_EQ(same_id.status().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(same_id.status().message(), HasSubstr("project id \"p1\""));
  auto same_name = store.CreateProject(Project("p2", "alpha"), {});
  EXPECT_EQ(same_name.status().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(same_name.status().message(), HasSubstr("project name \"alpha\""));
  EXPECT_THAT(same_name.status().message(), HasSubstr("\"p1\""));
  EXPECT_EQ(store.GetProject("p2").status().code(), StatusCode::kNotFound);
}

TEST_P(StoreContractTest, CreateValidatesIdAndName) {
  Store& store = Open();
  for (std::string bad :
       std::vector<std::string>{"", "P1", "-a", "a-", "a_b", "a.b", std::string(41, 'a')}) {
    auto r = store.CreateProject(Project(bad, "alpha"), {});
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(r.status().message(), HasSubstr("project id \"" + bad + "\"")) << bad;
  }
  for (std::string bad :
       std::vector<std::string>{"", "Alpha", "-alpha", "al pha", std::string(64, 'a')}) {
    auto r = store.CreateProject(Project("p1", bad), {});
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(r.status().message(), HasSubstr("project name \"" + bad + "\"")) << bad;
  }
  MustCreate(Project(std::string(40, 'a'), std::string(63, 'b')));
  MustCreate(Project("0-9", "a-1"));
  MustCreate(Project("p-dash", "trailing-"));  // FlowFuse allows it; objects get a hashed name
}

TEST_P(StoreContractTest, CreateWritesCredentialsAndHistoryAtomically) {
  Store& store = Open();
  std::vector<ProjectChange> changes;
  store.AddListener([&](const ProjectChange& c) { changes.push_back(c); });
  Mutation extra;
  extra.credentials.push_back(Cred("c-1", "tok-1", CredentialState::kActive));
  HistoryEntry create = Entry("operation", "create", 1);
  create.project_id = "someone-else";  // forced to the record's id
  extra.history.push_back(create);
  MustCreate(Project("p1", "alpha"), extra);

  auto creds = store.ListCredentials("p1");
  ASSERT_TRUE(creds.ok());
  ASSERT_EQ(creds->size(), 1u);
  EXPECT_EQ((*creds)[0].project_id, "p1");
  EXPECT_EQ((*creds)[0].created_ms, kT0);
  EXPECT_EQ((*creds)[0].state, CredentialState::kActive);
  auto history = store.ListHistory("p1", 0, 0);
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 1u);
  EXPECT_EQ((*history)[0].project_id, "p1");
  EXPECT_EQ((*history)[0].at_ms, kT0);
  EXPECT_GT((*history)[0].seq, 0);

  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].project_id, "p1");
  ASSERT_TRUE(changes[0].record.has_value());
  EXPECT_EQ(changes[0].record->version, 1);
  ASSERT_EQ(changes[0].history.size(), 1u);
  EXPECT_EQ(changes[0].history[0].seq, (*history)[0].seq);

  // A failing extra (token taken) leaves no project behind.
  Mutation clash;
  clash.credentials.push_back(Cred("c-2", "tok-1", CredentialState::kActive));
  clash.history.push_back(Entry("operation", "create"));
  auto r = store.CreateProject(Project("p2", "beta"), clash);
  EXPECT_EQ(r.status().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(r.status().message(), HasSubstr("token"));
  EXPECT_THAT(r.status().message(), HasSubstr(backend_->Where()));
  EXPECT_EQ(store.GetProject("p2").status().code(), StatusCode::kNotFound);
  EXPECT_THAT(*store.ListHistory("p2", 0, 0), IsEmpty());
  EXPECT_EQ(changes.size(), 1u);
}

TEST_P(StoreContractTest, ListFiltersAndPages) {
  Store& store = Open();
  struct Row {
    const char* id;
    const char* team;
    const char* phase;
    DesiredState desired;
  };
  for (Row row : {Row{"a1", "x", "Running", DesiredState::kRunning},
                  Row{"a2", "y", "Running", DesiredState::kSuspended},
                  Row{"a3", "x", "Pending", DesiredState::kRunning},
                  Row{"a4", "x", "Running", DesiredState::kDeleted},
                  Row{"a5", "y", "", DesiredState::kSuspended}}) {
    ProjectRecord r = Project(row.id, std::string("n-") + row.id, row.team);
    r.phase = row.phase;
    r.desired = row.desired;
    MustCreate(r);
  }
  auto list = [&](ListFilter f) {
    auto r = store.ListProjects(f);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? Ids(*r) : std::vector<std::string>{"error"};
  };
  EXPECT_THAT(list({}), ElementsAre("a1", "a2", "a3", "a4", "a5"));
  auto counts = store.CountByPhase(RecordKind::kProject);
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(*counts, (std::map<std::string, int64_t>{{"", 1}, {"Pending", 1}, {"Running", 3}}));
  EXPECT_THAT(list({.team = "x"}), ElementsAre("a1", "a3", "a4"));
  EXPECT_THAT(list({.team = "z"}), IsEmpty());
  EXPECT_THAT(list({.phase = "Running"}), ElementsAre("a1", "a2", "a4"));
  EXPECT_THAT(list({.phase = ""}), ElementsAre("a5"));
  EXPECT_THAT(list({.desired = DesiredState::kRunning}), ElementsAre("a1", "a3"));
  EXPECT_THAT(list({.desired = DesiredState::kDeleted}), ElementsAre("a4"));
  EXPECT_THAT(list({.team = "x", .phase = "Running"}), ElementsAre("a1", "a4"));
  EXPECT_THAT(list({.team = "x", .phase = "Pending", .desired = DesiredState::kRunning}),
              ElementsAre("a3"));
  EXPECT_THAT(list({.team = "y", .desired = DesiredState::kRunning}), IsEmpty());
  // Paging.
  EXPECT_THAT(list({.limit = 2}), ElementsAre("a1", "a2"));
  EXPECT_THAT(list({.after_id = "a2", .limit = 2}), ElementsAre("a3", "a4"));
  EXPECT_THAT(list({.after_id = "a4", .limit = 2}), ElementsAre("a5"));
  EXPECT_THAT(list({.after_id = "a5", .limit = 2}), IsEmpty());
  EXPECT_THAT(list({.team = "x", .after_id = "a1", .limit = 1}), ElementsAre("a3"));
  EXPECT_THAT(list({.team = "x", .after_id = "a3"}), ElementsAre("a4"));
  auto bad = store.ListProjects({.limit = -1});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("limit"));
}

TEST_P(StoreContractTest, MutateWritesAndBumpsVersion) {
  Store& store = Open();
  MustCreate(Project("p1", "alpha"));
  clock_.Advance(std::chrono::seconds(5));
  auto r =
      store.MutateProject("p1", [](ProjectRecord& rec, const std::vector<Credential>&, Mutation&) {
        rec.spec_json = R"({"stack":"s2"})";
        rec.desired = DesiredState::kRunning;
        rec.generation = 2;
        rec.restart_epoch = 1;
        rec.status_json = "{}";
        rec.phase = "Starting";
        rec.observed_generation = 1;
        rec.team = "team-b";
        rec.version = 42;    // ignored
        rec.created_ms = 1;  // ignored
        rec.updated_ms = 2;  // ignored
        return Status::Ok();
      });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, 2);
  EXPECT_EQ(r->created_ms, kT0);
  EXPECT_EQ(r->updated_ms, kT0 + 5000);
  auto got = store.GetProject("p1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->spec_json, R"({"stack":"s2"})");
  EXPECT_EQ(got->desired, DesiredState::kRunning);
  EXPECT_EQ(got->generation, 2);
  EXPECT_EQ(got->restart_epoch, 1);
  EXPECT_EQ(got->status_json, "{}");
  EXPECT_EQ(got->phase, "Starting");
  EXPECT_EQ(got->observed_generation, 1);
  EXPECT_EQ(got->team, "team-b");
  EXPECT_EQ(got->version, 2);
  EXPECT_EQ(got->created_ms, kT0);
  EXPECT_EQ(got->updated_ms, kT0 + 5000);
  EXPECT_THAT(Ids(*store.ListProjects({.team = "team-b"})), ElementsAre("p1"));
  EXPECT_THAT(Ids(*store.ListProjects({.phase = "Starting"})), ElementsAre("p1"));

  auto missing = store.MutateProject(
      "nope", [](ProjectRecord&, const std::vector<Credential>&, Mutation&) -> Status {
        ADD_FAILURE() << "fn called for a missing project";
        return Status::Ok();
      });
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("\"nope\""));
}

TEST_P(StoreContractTest, MutateThatChangesNothingWritesNothing) {
  Store& store = Open();
  MustCreate(Project("p1", "alpha"));
  int calls = 0;
  store.AddListener([&](const ProjectChange&) { ++calls; });
  clock_.Advance(std::chrono::seconds(1));
  auto r =
      store.MutateProject("p1", [](ProjectRecord& rec, const std::vector<Credential>&, Mutation&) {
        rec.version = 7;  // store-owned fields only: still nothing to write
        rec.updated_ms = 1;
        return Status::Ok();
      });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->version, 1);
  EXPECT_EQ(r->updated_ms, kT0);
  EXPECT_EQ(store.GetProject("p1")->version, 1);
  EXPECT_EQ(store.GetProject("p1")->updated_ms, kT0);
  EXPECT_EQ(calls, 0);
  // Same values written back are still a no-op; a history entry alone is a write.
  ASSERT_TRUE(store.MutateProject("p1", SetGeneration(0)).ok());
  EXPECT_EQ(calls, 0);
  auto with_history = store.MutateProject(
      "p1", [](ProjectRecord&, const std::vector<Credential>&, Mutation& extra) {
        extra.history.push_back(Entry("phase", "Pending"));
        return Status::Ok();
      });
  ASSERT_TRUE(with_history.ok());
  EXPECT_EQ(with_history->version, 2);
  EXPECT_EQ(calls, 1);
}

TEST_P(StoreContractTest, FailingMutationRollsBackEverything) {
  Store& store = Open();
  MustCreate(Project("p1", "alpha"));
  MustCreate(Project("p2", "beta"));
  int calls = 0;
  store.AddListener([&](const ProjectChange&) { ++calls; });
  auto failing = [](Status result) {
    return [result](ProjectRecord& rec, const std::vector<Credential>&, Mutation& extra) {
      rec.desired = DesiredState::kRunning;
      rec.generation = 9;
      extra.credentials.push_back(Cred("c-9", "tok-9", CredentialState::kPending));
      extra.history.push_back(Entry("operation", "start", 9));
      return result;
    };
  };
  auto r = store.MutateProject("p1", failing(Aborted("stale view of p1")));
  EXPECT_EQ(r.status(), Aborted("stale view of p1"));

  // An error from the store after fn (rename collision) rolls back just the same.
  auto renamed = store.MutateProject(
      "p1", [&](ProjectRecord& rec, const std::vector<Credential>& creds, Mutation& extra) {
        RETURN_IF_ERROR(failing(Status::Ok())(rec, creds, extra));
        rec.name = "beta";
        return Status::Ok();
      });
  EXPECT_EQ(renamed.status().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(renamed.status().message(), HasSubstr("project name \"beta\""));
  EXPECT_THAT(renamed.status().message(), HasSubstr("\"p2\""));

  auto got = store.GetProject("p1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->version, 1);
  EXPECT_EQ(got->generation, 0);
  EXPECT_EQ(got->desired, DesiredState::kSuspended);
  EXPECT_EQ(got->name, "alpha");
  EXPECT_THAT(*store.ListCredentials("p1"), IsEmpty());
  EXPECT_EQ(store.FindCredentialByToken("tok-9").status().code(), StatusCode::kNotFound);
  EXPECT_THAT(*store.ListHistory("p1", 0, 0), IsEmpty());
  EXPECT_EQ(calls, 0);
}

TEST_P(StoreContractTest, MutateRefusesIdChangeAndRenamesOtherwise) {
  Store& store = Open();
  MustCreate(Project("p1", "alpha"));
  auto r =
      store.MutateProject("p1", [](ProjectRecord& rec, const std::vector<Credential>&, Mutation&) {
        rec.id = "p9";
        return Status::Ok();
      });
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("id cannot change"));
  EXPECT_EQ(store.GetProject("p9").status().code(), StatusCode::kNotFound);

  auto bad_name =
      store.MutateProject("p1", [](ProjectRecord& rec, const std::vector<Credential>&, Mutation&) {
        rec.name = "Not_A_Label";
        return Status::Ok();
      });
  EXPECT_EQ(bad_name.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_name.status().message(), HasSubstr("project name \"Not_A_Label\""));

  auto renamed =
      store.MutateProject("p1", [](ProjectRecord& rec, const std::vector<Credential>&, Mutation&) {
        rec.name = "gamma";
        return Status::Ok();
      });
  ASSERT_TRUE(renamed.ok()) << renamed.status().ToString();
  EXPECT_EQ(store.GetProjectByName("gamma")->id, "p1");
  EXPECT_EQ(store.GetProjectByName("alpha").status().code(), StatusCode::kNotFound);
  MustCreate(Project("p2", "alpha"));  // the old name is free again
}

TEST_P(StoreContractTest, UpsertCreatesWhenAbsentAndMutatesWhenPresent) {
  Store& store = Open();
  std::vector<ProjectChange> seen;
  store.AddListener([&](const ProjectChange& c) { seen.push_back(c); });
  bool updated = false;
  auto created = store.UpsertProjectByName("alpha", CreateAs("p1"),
                                           [&](ProjectRecord&, const auto&, Mutation&) {
                                             updated = true;
                                             return Status::Ok();
                                           });
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_TRUE(created->created);
  EXPECT_FALSE(updated);
  EXPECT_EQ(created->record.id, "p1");
  EXPECT_EQ(created->record.name, "alpha");  // the store names it
  EXPECT_EQ(created->record.version, 1);
  EXPECT_EQ(created->record.created_ms, kT0);

  bool create_called = false;
  auto second = store.UpsertProjectByName(
      "alpha",
      [&](ProjectRecord&, Mutation&) {
        create_called = true;
        return Status::Ok();
      },
      Bump());
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_FALSE(second->created);
  EXPECT_FALSE(create_called);
  EXPECT_EQ(second->record.id, "p1");
  EXPECT_EQ(second->record.generation, 2);
  EXPECT_EQ(second->record.version, 2);
  EXPECT_THAT(Summaries(*store.ListHistory("p1", 0, 0)), ElementsAre("create", "update"));
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].record->generation, 2);
  EXPECT_THAT(Summaries(seen[1].history), ElementsAre("update"));

  // An update that changes nothing writes nothing and tells no listener.
  auto same = store.UpsertProjectByName(
      "alpha", CreateAs("p2"),
      [](ProjectRecord&, const std::vector<Credential>&, Mutation&) { return Status::Ok(); });
  ASSERT_TRUE(same.ok());
  EXPECT_FALSE(same->created);
  EXPECT_EQ(same->record.version, 2);
  EXPECT_EQ(seen.size(), 2u);
}

TEST_P(StoreContractTest, UpsertThatFailsWritesNothing) {
  Store& store = Open();
  auto refused = store.UpsertProjectByName(
      "alpha", [](ProjectRecord&, Mutation&) { return FailedPrecondition("no"); }, Bump());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(store.GetProjectByName("alpha").status().code(), StatusCode::kNotFound);
  // A create whose id is taken (by a project of another name) or invalid is refused whole.
  MustCreate(Project("p1", "beta"));
  auto taken = store.UpsertProjectByName("alpha", CreateAs("p1"), Bump());
  EXPECT_EQ(taken.status().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(taken.status().message(), HasSubstr("project id \"p1\" is taken"));
  auto bad = store.UpsertProjectByName("Not_A_Label", CreateAs("p2"), Bump());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(store.ListHistory("p1", 0, 0).value(), IsEmpty());
  EXPECT_EQ(store.ListProjects({})->size(), 1u);
  // An update that fails leaves the record as it was.
  auto failed = store.UpsertProjectByName(
      "beta", CreateAs("p3"), [](ProjectRecord& r, const std::vector<Credential>&, Mutation&) {
        ++r.generation;
        return FailedPrecondition("being deleted");
      });
  EXPECT_EQ(failed.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(store.GetProject("p1")->version, 1);
}

// Many writers putting one new name at once: it is created once and every other put updates
// that project (no "already exists", no lost update).
TEST_P(StoreContractTest, ConcurrentUpsertsOfOneNameCreateItOnce) {
  Store& store = OpenFast();
  constexpr int kThreads = 8, kPuts = 50;
  std::atomic<int> created{0};
  std::atomic<int> next_id{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPuts; ++i) {
        auto r = store.UpsertProjectByName(
            "alpha", CreateAs("p" + std::to_string(next_id.fetch_add(1))), Bump());
        ASSERT_TRUE(r.ok()) << r.status().ToString();
        if (r->created) created.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(created.load(), 1);
  auto projects = store.ListProjects({});
  ASSERT_TRUE(projects.ok());
  ASSERT_EQ(projects->size(), 1u);
  EXPECT_EQ((*projects)[0].generation, kThreads * kPuts);  // 1 create + every other put's bump
  EXPECT_EQ(store.ListHistory((*projects)[0].id, 0, 0)->size(),
            static_cast<size_t>(kThreads * kPuts));
}

TEST_P(StoreContractTest, CredentialsUpsertFindAndStateTransitions) {
  Store& store = Open();
  Mutation extra;
  extra.credentials.push_back(Cred("c-1", "tok-1", CredentialState::kActive));
  MustCreate(Project("p1", "alpha"), extra);
  MustCreate(Project("p2", "beta"));

  // Rotation: add a pending one; fn sees the existing credential.
  clock_.Advance(std::chrono::seconds(1));
  ASSERT_TRUE(
      store
          .MutateProject("p1",
                         [](ProjectRecord& rec, const std::vector<Credential>& creds, Mutation& m) {
                           EXPECT_EQ(creds.size(), 1u);
                           rec.generation++;
                           m.credentials.push_back(Cred("c-2", "tok-2", CredentialState::kPending));
                           return Status::Ok();
                         })
          .ok());
  auto pending = store.FindCredentialByToken("tok-2");
  ASSERT_TRUE(pending.ok());
  EXPECT_EQ(pending->id, "c-2");
  EXPECT_EQ(pending->project_id, "p1");
  EXPECT_EQ(pending->state, CredentialState::kPending);
  EXPECT_EQ(pending->created_ms, kT0 + 1000);

  // Promote c-2, revoke c-1: replaced by id, nothing duplicated.
  clock_.Advance(std::chrono::seconds(1));
  ASSERT_TRUE(
      store
          .MutateProject("p1",
                         [](ProjectRecord&, const std::vector<Credential>& creds, Mutation& m) {
                           for (Credential c : creds) {
                             if (c.id == "c-1") {
                               c.state = CredentialState::kRevoked;
                               c.revoked_ms = kT0 + 2000;
                             } else {
                               c.state = CredentialState::kActive;
                               c.activated_ms = kT0 + 2000;
                             }
                             m.credentials.push_back(c);
                           }
                           return Status::Ok();
                         })
          .ok());
  auto creds = store.ListCredentials("p1");
  ASSERT_TRUE(creds.ok());
  ASSERT_EQ(creds->size(), 2u);
  EXPECT_EQ((*creds)[0].id, "c-1");
  EXPECT_EQ((*creds)[0].state, CredentialState::kRevoked);
  EXPECT_EQ((*creds)[0].revoked_ms, kT0 + 2000);
  EXPECT_EQ((*creds)[0].created_ms, kT0);
  EXPECT_EQ((*creds)[1].id, "c-2");
  EXPECT_EQ((*creds)[1].state, CredentialState::kActive);
  EXPECT_EQ((*creds)[1].activated_ms, kT0 + 2000);
  EXPECT_EQ(store.FindCredentialByToken("tok-1")->state, CredentialState::kRevoked);
  auto none = store.FindCredentialByToken("tok-x");
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(none.status().message(), Not(HasSubstr("tok-x")));  // secrets are not echoed

  auto add_to_p2 = [&](Credential c) {
    return store.MutateProject("p2",
                               [c](ProjectRecord&, const std::vector<Credential>&, Mutation& m) {
                                 m.credentials.push_back(c);
                                 return Status::Ok();
                               });
  };
  // Another project's token, another project's credential id, a foreign project_id, no token.
  auto token_clash = add_to_p2(Cred("c-3", "tok-2", CredentialState::kPending));
  EXPECT_EQ(token_clash.status().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(token_clash.status().message(), HasSubstr("credential \"c-3\""));
  auto id_clash = add_to_p2(Cred("c-2", "tok-3", CredentialState::kPending));
  EXPECT_EQ(id_clash.status().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(id_clash.status().message(),
              HasSubstr("credential id \"c-2\" belongs to another project"));
  Credential foreign = Cred("c-4", "tok-4", CredentialState::kPending);
  foreign.project_id = "p1";
  auto wrong_project = add_to_p2(foreign);
  EXPECT_EQ(wrong_project.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong_project.status().message(), HasSubstr("project_id \"p1\""));
  auto no_token = add_to_p2(Cred("c-5", "", CredentialState::kPending));
  EXPECT_EQ(no_token.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(no_token.status().message(), HasSubstr("credential \"c-5\""));

  EXPECT_THAT(*store.ListCredentials("p2"), IsEmpty());
  EXPECT_EQ(store.GetProject("p2")->version, 1);
  EXPECT_EQ(store.FindCredentialByToken("tok-2")->project_id, "p1");
  EXPECT_EQ(store.FindCredentialByToken("tok-2")->state, CredentialState::kActive);
}

TEST_P(StoreContractTest, HistoryIsOrderedAndPaged) {
  Store& store = Open();
  Mutation create;
  create.history.push_back(Entry("operation", "create", 1));
  MustCreate(Project("p1", "alpha"), create);
  MustCreate(Project("p2", "beta"), create);
  for (int i = 0; i < 3; ++i) {
    for (const char* id : {"p1", "p2"}) {
      clock_.Advance(std::chrono::milliseconds(10));
      ASSERT_TRUE(
          store
              .MutateProject(id,
                             [&](ProjectRecord& rec, const std::vector<Credential>&, Mutation& m) {
                               HistoryEntry h = Entry("phase", "step-" + std::to_string(i));
                               if (i == 2) h.at_ms = 5;  // kept when given
                               h.detail_json = R"({"i":)" + std::to_string(i) + "}";
                               m.history.push_back(h);
                               rec.observed_generation = i;
                               return Status::Ok();
                             })
              .ok());
    }
  }
  auto all = store.ListHistory("p1", 0, 0);
  ASSERT_TRUE(all.ok());
  EXPECT_THAT(Summaries(*all), ElementsAre("create", "step-0", "step-1", "step-2"));
  for (size_t i = 1; i < all->size(); ++i) EXPECT_GT((*all)[i].seq, (*all)[i - 1].seq);
  EXPECT_EQ((*all)[0].at_ms, kT0);
  EXPECT_EQ((*all)[1].at_ms, kT0 + 10);
  EXPECT_EQ((*all)[3].at_ms, 5);
  EXPECT_EQ((*all)[2].detail_json, R"({"i":1})");
  EXPECT_EQ((*all)[0].generation, 1);
  // Seqs interleave across projects: store-wide, not per project.
  auto p2 = store.ListHistory("p2", 0, 0);
  ASSERT_TRUE(p2.ok());
  EXPECT_GT((*p2)[1].seq, (*all)[1].seq);
  EXPECT_LT((*p2)[1].seq, (*all)[2].seq);

  EXPECT_THAT(Summaries(*store.ListHistory("p1", (*all)[1].seq, 0)),
              ElementsAre("step-1", "step-2"));
  EXPECT_THAT(Summaries(*store.ListHistory("p1", (*all)[0].seq, 1)), ElementsAre("step-0"));
  EXPECT_THAT(*store.ListHistory("p1", (*all)[3].seq, 0), IsEmpty());
  EXPECT_THAT(*store.ListHistory("nope", 0, 0), IsEmpty());
  auto bad = store.ListHistory("p1", 0, -5);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("limit"));

  auto no_kind =
      store.MutateProject("p1", [](ProjectRecord&, const std::vector<Credential>&, Mutation& m) {
        m.history.push_back(Entry("", "x"));
        return Status::Ok();
      });
  EXPECT_EQ(no_kind.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(no_kind.status().message(), HasSubstr("kind"));
}

TEST_P(StoreContractTest, PurgeKeepsHistoryWithTombstoneAndDropsCredentials) {
  Store& store = Open();
  Mutation extra;
  extra.credentials.push_back(Cred("c-1", "tok-1", CredentialState::kActive));
  extra.history.push_back(Entry("operation", "create", 1));
  MustCreate(Project("p1", "alpha"), extra);
  std::vector<ProjectChange> changes;
  store.AddListener([&](const ProjectChange& c) { changes.push_back(c); });

  clock_.Advance(std::chrono::seconds(3));
  HistoryEntry tombstone = Entry("operation", "purged after delete", 4);  // kind forced
  ASSERT_TRUE(store.PurgeProject("p1", tombstone).ok());

  EXPECT_EQ(store.GetProject("p1").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store.GetProjectByName("alpha").status().code(), StatusCode::kNotFound);
  EXPECT_THAT(*store.ListCredentials("p1"), IsEmpty());
  EXPECT_EQ(store.FindCredentialByToken("tok-1").status().code(), StatusCode::kNotFound);
  EXPECT_THAT(*store.ListProjects({}), IsEmpty());
  auto history = store.ListHistory("p1", 0, 0);
  ASSERT_TRUE(history.ok());
  EXPECT_THAT(Summaries(*history), ElementsAre("create", "purged after delete"));
  EXPECT_EQ(history->back().kind, "purged");
  EXPECT_EQ(history->back().generation, 4);
  EXPECT_EQ(history->back().at_ms, kT0 + 3000);

  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].project_id, "p1");
  EXPECT_FALSE(changes[0].record.has_value());
  // The purged record, so a listener can name what went (the API's deletion events).
  ASSERT_TRUE(changes[0].purged.has_value());
  EXPECT_EQ(changes[0].purged->name, "alpha");
  EXPECT_EQ(changes[0].purged->version, 1);
  ASSERT_EQ(changes[0].history.size(), 1u);
  EXPECT_EQ(changes[0].history[0].seq, history->back().seq);

  Status again = store.PurgeProject("p1", tombstone);
  EXPECT_EQ(again.code(), StatusCode::kNotFound);
  EXPECT_THAT(again.message(), HasSubstr("\"p1\""));
  EXPECT_EQ(store.ListHistory("p1", 0, 0)->size(), 2u);
  // The name, and the token, are free again.
  Mutation reuse;
  reuse.credentials.push_back(Cred("c-1", "tok-1", CredentialState::kPending));
  MustCreate(Project("p2", "alpha"), reuse);
}

TEST_P(StoreContractTest, ListenersSeeChangesInOrderAndCanBeRemoved) {
  Store& store = Open();
  std::vector<std::string> first, second;
  auto describe = [](const ProjectChange& c) {
    return c.project_id + "@" + (c.record ? std::to_string(c.record->version) : "purged");
  };
  int h1 = store.AddListener([&](const ProjectChange& c) { first.push_back(describe(c)); });
  int h2 = store.AddListener([&](const ProjectChange& c) { second.push_back(describe(c)); });
  EXPECT_NE(h1, h2);
  MustCreate(Project("p1", "alpha"));
  MustCreate(Project("p2", "beta"));
  ASSERT_TRUE(store.MutateProject("p1", SetGeneration(1)).ok());
  store.RemoveListener(h1);
  ASSERT_TRUE(store.MutateProject("p2", SetGeneration(1)).ok());
  ASSERT_TRUE(store.PurgeProject("p1", Entry("purged", "gone")).ok());
  store.RemoveListener(h1);  // twice: harmless
  EXPECT_THAT(first, ElementsAre("p1@1", "p2@1", "p1@2"));
  EXPECT_THAT(second, ElementsAre("p1@1", "p2@1", "p1@2", "p2@2", "p1@purged"));
}

TEST_P(StoreContractTest, ThrowingListenerDoesNotStopDelivery) {
  Store& store = Open();
  int calls = 0;
  store.AddListener([](const ProjectChange&) { throw std::runtime_error("boom"); });
  store.AddListener([&](const ProjectChange&) { ++calls; });
  MustCreate(Project("p1", "alpha"));
  ASSERT_TRUE(store.MutateProject("p1", SetGeneration(1)).ok());
  EXPECT_EQ(calls, 2);
}

TEST_P(StoreContractTest, ListenerMayCallTheStoreAndWrite) {
  Store& store = Open();
  MustCreate(Project("a", "alpha"));
  MustCreate(Project("b", "beta"));
  std::vector<std::string> first, second;
  store.AddListener([&](const ProjectChange& c) {
    first.push_back(c.project_id);
    if (c.project_id != "a") return;
    auto read = store.GetProject("a");  // reads see the committed change
    ASSERT_TRUE(read.ok());
    EXPECT_EQ(read->generation, c.record->generation);
    auto nested = store.MutateProject("b", SetGeneration(c.record->generation));
    EXPECT_TRUE(nested.ok()) << nested.status().ToString();
  });
  store.AddListener([&](const ProjectChange& c) { second.push_back(c.project_id); });
  ASSERT_TRUE(store.MutateProject("a", SetGeneration(5)).ok());
  // The nested change is delivered after the outer one has reached every listener.
  EXPECT_THAT(first, ElementsAre("a", "b"));
  EXPECT_THAT(second, ElementsAre("a", "b"));
  EXPECT_EQ(store.GetProject("b")->generation, 5);
}

// A change committed inside a listener while another thread's commit is waiting for its turn:
// commit order (a, c, b) is delivery order, and nobody deadlocks.
TEST_P(StoreContractTest, NestedWriteAfterAnotherThreadsCommitKeepsCommitOrder) {
  Store& store = Open();
  for (const char* id : {"a", "b", "c"}) MustCreate(Project(id, std::string("n-") + id));
  std::mutex mu;
  std::vector<std::string> seen;
  std::atomic<bool> start_other{false};
  std::thread other([&] {
    ASSERT_TRUE(test_support::Eventually([&] { return start_other.load(); }));
    EXPECT_TRUE(store.MutateProject("c", SetGeneration(1)).ok());
  });
  store.AddListener([&](const ProjectChange& c) {
    {
      std::lock_guard lock(mu);
      seen.push_back(c.project_id);
    }
    if (c.project_id != "a") return;
    start_other = true;
    // Wait until the other thread has committed (not delivered: that waits for us).
    EXPECT_TRUE(test_support::Eventually([&] { return store.GetProject("c")->version == 2; }));
    EXPECT_TRUE(store.MutateProject("b", SetGeneration(1)).ok());
  });
  ASSERT_TRUE(store.MutateProject("a", SetGeneration(1)).ok());
  other.join();
  std::lock_guard lock(mu);
  EXPECT_THAT(seen, ElementsAre("a", "c", "b"));
}

TEST_P(StoreContractTest, ConcurrentMutationsAreSerialisedAndDeliveredInOrder) {
  Store& store = OpenFast();  // 1600 fsyncs would only slow the test down
  MustCreate(Project("p1", "alpha"));
  MustCreate(Project("p2", "beta"));
  std::mutex mu;
  std::map<std::string, int64_t> last_generation;
  int out_of_order = 0;
  int64_t last_seq = 0;
  store.AddListener([&](const ProjectChange& c) {
    std::lock_guard lock(mu);
    int64_t& last = last_generation[c.project_id];
    if (c.record->generation != last + 1) ++out_of_order;
    last = c.record->generation;
    if (c.history.size() != 1 || c.history[0].seq <= last_seq) ++out_of_order;
    if (!c.history.empty()) last_seq = c.history.back().seq;
  });
  constexpr int kThreads = 8, kIncrements = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kIncrements; ++i) {
        // Mostly p1; every fourth thread also touches p2, to interleave projects.
        for (const char* id :
             t % 4 == 0 ? std::vector<const char*>{"p1", "p2"} : std::vector<const char*>{"p1"}) {
          auto r = store.MutateProject(
              id, [](ProjectRecord& rec, const std::vector<Credential>&, Mutation& m) {
                ++rec.generation;
                m.history.push_back(Entry("operation", "increment", rec.generation));
                return Status::Ok();
              });
          EXPECT_TRUE(r.ok()) << r.status().ToString();
        }
        EXPECT_TRUE(store.GetProject("p1").ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  auto p1 = store.GetProject("p1");
  ASSERT_TRUE(p1.ok());
  EXPECT_EQ(p1->generation, kThreads * kIncrements);
  EXPECT_EQ(p1->version, kThreads * kIncrements + 1);
  auto history = store.ListHistory("p1", 0, 0);
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), static_cast<size_t>(kThreads * kIncrements));
  for (size_t i = 0; i < history->size(); ++i) {
    ASSERT_EQ((*history)[i].generation, static_cast<int64_t>(i + 1));
  }
  EXPECT_EQ(store.GetProject("p2")->generation, 2 * kIncrements);
  std::lock_guard lock(mu);
  EXPECT_EQ(out_of_order, 0);
  EXPECT_EQ(last_generation["p1"], kThreads * kIncrements);
}

// Issue 13, finding 7: one project could take another's hostname.
TEST_P(StoreContractTest, AHostnameIsHeldByOneProjectAtATime) {
  Store& store = Open();
  MustCreate(Project("p1", "alpha"), Hosts({"alpha.localhost", "flows.example.com"}));
  // Another project asking for one of them: refused, nothing of it written, the holder unnamed.
  auto thief =
      store.CreateProject(Project("p2", "thief"), Hosts({"thief.localhost", "flows.example.com"}));
  ASSERT_EQ(thief.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(thief.status().message(), "hostname \"flows.example.com\" is already in use");
  EXPECT_EQ(store.GetProject("p2").status().code(), StatusCode::kNotFound);
  MustCreate(Project("p2", "thief"), Hosts({"thief.localhost"}));
  auto taken = store.MutateProject("p2", ClaimHosts({"thief.localhost", "alpha.localhost"}));
  ASSERT_EQ(taken.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(taken.status().message(), "hostname \"alpha.localhost\" is already in use");
  EXPECT_EQ(store.GetProject("p2")->version, 1);
  // The holder itself may claim its hostnames again.
  ASSERT_TRUE(store.MutateProject("p1", ClaimHosts({"alpha.localhost", "flows.example.com"})).ok());
}

TEST_P(StoreContractTest, HostnamesAreReleasedByReplacementAndByPurge) {
  Store& store = Open();
  MustCreate(Project("p1", "alpha"), Hosts({"alpha.localhost", "flows.example.com"}));
  MustCreate(Project("p2", "beta"), Hosts({"beta.localhost"}));
  // p1 drops its custom hostname: p2 may take it.
  ASSERT_TRUE(store.MutateProject("p1", ClaimHosts({"alpha.localhost"})).ok());
  ASSERT_TRUE(store.MutateProject("p2", ClaimHosts({"beta.localhost", "flows.example.com"})).ok());
  // Purging p2 releases both of its hostnames.
  HistoryEntry tombstone = Entry("purged", "deleted", 2);
  ASSERT_TRUE(store.PurgeProject("p2", tombstone).ok());
  MustCreate(Project("p3", "gamma"), Hosts({"beta.localhost", "flows.example.com"}));
  EXPECT_EQ(backend_->Query("SELECT count(*) FROM hostnames"), "3");
}

TEST_P(StoreContractTest, KindsAreKeptFilteredAndNeverChange) {
  Store& store = Open();
  MustCreate(Project("p1", "alpha"));
  ProjectRecord agent = Project("a1", "mqtt-schema-agent-t-b");
  agent.kind = RecordKind::kAgent;
  MustCreate(agent);
  EXPECT_EQ(store.GetProject("a1")->kind, RecordKind::kAgent);
  EXPECT_EQ(store.GetProjectByName("alpha")->kind, RecordKind::kProject);
  ListFilter agents;
  agents.kind = RecordKind::kAgent;
  auto listed = store.ListProjects(agents);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].id, "a1");
  EXPECT_EQ(store.ListProjects({})->size(), 2u);
  // Counted by kind: one project, one agent.
  for (RecordKind kind : {RecordKind::kProject, RecordKind::kAgent}) {
    auto counts = store.CountByPhase(kind);
    ASSERT_TRUE(counts.ok());
    int64_t total = 0;
    for (const auto& [phase, n] : *counts) total += n;
    EXPECT_EQ(total, 1) << ToString(kind);
  }
  // A record's kind is fixed at create; an upsert keeps it.
  auto changed = store.MutateProject("a1", [](ProjectRecord& r, const auto&, Mutation&) {
    r.kind = RecordKind::kProject;
    return Status::Ok();
  });
  EXPECT_EQ(changed.status().code(), StatusCode::kInvalidArgument);
  auto renamed = store.MutateProject("a1", [](ProjectRecord& r, const auto&, Mutation&) {
    r.generation += 1;
    return Status::Ok();
  });
  ASSERT_TRUE(renamed.ok());
  EXPECT_EQ(store.GetProject("a1")->kind, RecordKind::kAgent);
  // One name space for both kinds: their objects would share names.
  ProjectRecord clash = Project("p2", "mqtt-schema-agent-t-b");
  EXPECT_EQ(store.CreateProject(clash, {}).status().code(), StatusCode::kAlreadyExists);
}

TEST_P(StoreContractTest, ClustersAndMovesAreKeptFilteredCountedAndChangedOnlyByAWrite) {
  Store& store = Open();
  MustCreate(Project("p1", "alpha"));  // no cluster given: the default one
  ProjectRecord east = Project("p2", "beta");
  east.cluster = "east";
  MustCreate(east);
  ProjectRecord agent = Project("a1", "mqtt-schema-agent-t-b");
  agent.kind = RecordKind::kAgent;
  agent.cluster = "east";
  MustCreate(agent);
  ProjectRecord gone = Project("p3", "gamma");
  gone.cluster = "east";
  gone.desired = DesiredState::kDeleted;
  MustCreate(gone);
  EXPECT_EQ(store.GetProject("p1")->cluster, "default");
  EXPECT_EQ(store.GetProjectByName("beta")->cluster, "east");
  ListFilter on_east;
  on_east.cluster = "east";
  auto listed = store.ListProjects(on_east);
  ASSERT_TRUE(listed.ok());
  std::vector<std::string> ids;
  for (const auto& r : *listed) ids.push_back(r.id);
  EXPECT_THAT(ids, ::testing::ElementsAre("a1", "p2", "p3"));
  // Records of every kind count, records being deleted do not.
  auto counts = store.CountByCluster();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(*counts, (std::map<std::string, int64_t>{{"default", 1}, {"east", 2}}));
  std::vector<ProjectChange> changes;
  store.AddListener([&](const ProjectChange& c) { changes.push_back(c); });
  // A move is a write like any other: it changes the columns, the version and the counts.
  auto moved = store.MutateProject("p2", [](ProjectRecord& r, const auto&, Mutation&) {
    r.moving_from = r.cluster;
    r.cluster = "west";
    r.move_order = "startFirst";
    return Status::Ok();
  });
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved->cluster, "west");
  EXPECT_EQ(moved->moving_from, "east");
  EXPECT_EQ(moved->move_order, "startFirst");
  EXPECT_EQ(moved->version, 2);
  auto read = store.GetProject("p2");
  EXPECT_EQ(read->cluster, "west");
  EXPECT_EQ(read->moving_from, "east");
  EXPECT_EQ(read->move_order, "startFirst");
  EXPECT_EQ(*store.CountByCluster(),
            (std::map<std::string, int64_t>{{"default", 1}, {"east", 1}, {"west", 1}}));
  ListFilter leaving;
  leaving.moving_from = "east";
  auto moving = store.ListProjects(leaving);
  ASSERT_TRUE(moving.ok());
  ASSERT_EQ(moving->size(), 1u);
  EXPECT_EQ(moving->front().id, "p2");
  EXPECT_TRUE(store.ListProjects(on_east)->size() == 2u);  // a1, p3: p2 is west's now
  // The move's end (the old cluster has nothing left) is a write too; an upsert that leaves the
  // cluster alone keeps it.
  auto ended = store.MutateProject("p2", [](ProjectRecord& r, const auto&, Mutation&) {
    r.moving_from.clear();
    r.move_order.clear();
    return Status::Ok();
  });
  ASSERT_TRUE(ended.ok());
  EXPECT_EQ(ended->version, 3);
  EXPECT_TRUE(store.ListProjects(leaving)->empty());
  auto kept = store.MutateProject("p2", [](ProjectRecord& r, const auto&, Mutation&) {
    r.generation += 1;
    return Status::Ok();
  });
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(store.GetProject("p2")->cluster, "west");
  // Listeners see each of them as committed (PostgreSQL's feed carries the record too).
  ASSERT_EQ(changes.size(), 3u);
  ASSERT_TRUE(changes[0].record.has_value());
  EXPECT_EQ(changes[0].record->moving_from, "east");
  EXPECT_EQ(changes[0].record->move_order, "startFirst");
  ASSERT_TRUE(changes[1].record.has_value());
  EXPECT_EQ(changes[1].record->moving_from, "");
}

TEST_P(StoreContractTest, ShardsAreAcquiredByCompareAndSetAndFenceOutTheirPastOwners) {
  Store& store = Open();
  MustCreate(Project("p1", "alpha"));
  // Never owned: epoch 0, and a fence of nobody holds nothing.
  EXPECT_EQ(store.CheckFence({7, "a", 0}).code(), StatusCode::kAborted);
  auto a = store.AcquireShard(7, "a", 0);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->owner, "a");
  EXPECT_EQ(a->epoch, 1);
  EXPECT_EQ(a->since_ms, kT0);
  Fence fa{7, "a", 1};
  EXPECT_TRUE(store.CheckFence(fa).ok());
  // A second replica that read epoch 0 too loses the race; one that read 1 takes it over.
  auto raced = store.AcquireShard(7, "b", 0);
  EXPECT_EQ(raced.status().code(), StatusCode::kAborted);
  EXPECT_THAT(raced.status().message(), HasSubstr("expected epoch 0, but it is at epoch 1"));
  auto write = [&](const std::optional<Fence>& fence, int64_t g) {
    return store.MutateProject("p1", [&](ProjectRecord& r, const auto&, Mutation& extra) {
      r.generation = g;
      extra.fence = fence;
      return Status::Ok();
    });
  };
  ASSERT_TRUE(write(fa, 2).ok());
  clock_.Advance(std::chrono::seconds(1));
  auto b = store.AcquireShard(7, "b", 1);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->epoch, 2);
  // The past owner's fenced writes and purge are refused and write nothing.
  auto refused = write(fa, 3);
  EXPECT_EQ(refused.status().code(), StatusCode::kAborted);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("shard 7 is owned by b at epoch 2; this write was fenced by a at epoch 1"));
  EXPECT_EQ(store.GetProject("p1")->generation, 2);
  EXPECT_EQ(store.PurgeProject("p1", Entry("purged", "gone"), fa).code(), StatusCode::kAborted);
  EXPECT_TRUE(store.GetProject("p1").ok());
  EXPECT_EQ(store.ReleaseShard(fa).code(), StatusCode::kAborted);
  // Unfenced writes (the API's intents) are never refused.
  ASSERT_TRUE(write(std::nullopt, 4).ok());
  Fence fb{7, "b", 2};
  ASSERT_TRUE(write(fb, 5).ok());
  // The same owner name acquiring again (a restarted process) fences its past self.
  ASSERT_TRUE(store.AcquireShard(7, "b", 2).ok());
  EXPECT_EQ(write(fb, 6).status().code(), StatusCode::kAborted);
  Fence fb3{7, "b", 3};
  // Released: nobody's fence holds, the epoch stays, the next acquisition starts from it.
  ASSERT_TRUE(store.ReleaseShard(fb3).ok());
  auto released = store.CheckFence(fb3);
  EXPECT_EQ(released.code(), StatusCode::kAborted);
  EXPECT_THAT(released.message(), HasSubstr("released at epoch 3"));
  ASSERT_TRUE(store.AcquireShard(7, "c", 3).ok());
  ASSERT_TRUE(store.PurgeProject("p1", Entry("purged", "gone"), Fence{7, "c", 4}).ok());

  auto owners = store.ListShardOwners();
  ASSERT_TRUE(owners.ok());
  ASSERT_EQ(owners->size(), 1u);
  EXPECT_EQ((*owners)[0].owner, "c");
  EXPECT_EQ((*owners)[0].epoch, 4);
  auto history = store.ListShardHistory(0, 0);
  ASSERT_TRUE(history.ok());
  std::vector<std::string> events;
  for (const ShardEvent& e : *history) {
    events.push_back((e.acquired ? "+" : "-") + e.owner + std::to_string(e.epoch));
  }
  EXPECT_THAT(events, ElementsAre("+a1", "+b2", "+b3", "-b3", "+c4"));
  auto tail = store.ListShardHistory((*history)[2].seq, 1);
  ASSERT_TRUE(tail.ok());
  ASSERT_EQ(tail->size(), 1u);
  EXPECT_FALSE((*tail)[0].acquired);
  // Bad arguments.
  EXPECT_EQ(store.AcquireShard(-1, "a", 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store.AcquireShard(65536, "a", 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store.AcquireShard(1, "", 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store.ListShardHistory(0, -1).status().code(), StatusCode::kInvalidArgument);
}

TEST_P(StoreContractTest, ChangesArePositionedInCommitOrderUnderAFeedIdThatSurvivesAReopen) {
  Store& store = Open();
  const std::string feed = store.FeedId();
  EXPECT_EQ(feed.size(), 32u);
  EXPECT_EQ(store.LastPosition().value(), 0);
  std::vector<int64_t> seen;
  store.AddListener([&](const ProjectChange& c) { seen.push_back(c.position); });
  MustCreate(Project("p1", "alpha"));
  ASSERT_TRUE(store.MutateProject("p1", SetGeneration(2)).ok());
  ASSERT_TRUE(store.MutateProject("p1", SetGeneration(2)).ok());  // a no-op: no position
  EXPECT_EQ(store.MutateProject("p2", SetGeneration(2)).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(store.PurgeProject("p1", Entry("purged", "gone")).ok());
  EXPECT_THAT(seen, ElementsAre(1, 2, 3));
  EXPECT_EQ(store.LastPosition().value(), 3);
  Store& reopened = Open();
  EXPECT_EQ(reopened.FeedId(), feed);
  EXPECT_EQ(reopened.LastPosition().value(), 3);
  seen.clear();
  reopened.AddListener([&](const ProjectChange& c) { seen.push_back(c.position); });
  MustCreate(Project("p3", "gamma"));
  EXPECT_THAT(seen, ElementsAre(4));
  // Another database has another feed.
  store_.reset();
  backend_->UseAnotherDatabase();
  EXPECT_NE(Open().FeedId(), feed);
}

TEST_P(StoreContractTest, ShardOwnershipSurvivesAReopen) {
  Open();
  ASSERT_TRUE(store_->AcquireShard(3, "a", 0).ok());
  Store& reopened = Open();
  EXPECT_TRUE(reopened.CheckFence({3, "a", 1}).ok());
  EXPECT_EQ(backend_->Query("SELECT max(version) FROM schema_migrations"),
            std::to_string(backend_->LatestSchema()));
}

TEST_P(StoreContractTest, CommandSlotsHaveOneHolderUntilReleasedOrRunOut) {
  Store& store = Open();
  constexpr auto kTtl = std::chrono::seconds(10);
  auto take = [&](std::string_view key, std::string_view holder) {
    auto taken = store.TakeSlot(key, holder, kTtl);
    EXPECT_TRUE(taken.ok()) << taken.status().ToString();
    return taken.ok() && *taken;
  };
  EXPECT_TRUE(take("pod:a", "r1"));
  EXPECT_FALSE(take("pod:a", "r2"));
  EXPECT_TRUE(take("pod:b", "r2"));  // another key is another slot
  EXPECT_TRUE(take("pod:a", "r1"));  // the holder again: extended
  // Only the holder's release ends a hold.
  ASSERT_TRUE(store.ReleaseSlot("pod:a", "r2").ok());
  EXPECT_FALSE(take("pod:a", "r2"));
  ASSERT_TRUE(store.ReleaseSlot("pod:a", "r1").ok());
  EXPECT_TRUE(take("pod:a", "r2"));
  // A hold runs out at its ttl; a late release of the holder it ran out on leaves the new one.
  clock_.Advance(kTtl - std::chrono::milliseconds(1));
  EXPECT_FALSE(take("pod:b", "r3"));
  clock_.Advance(std::chrono::milliseconds(1));
  EXPECT_TRUE(take("pod:b", "r3"));
  ASSERT_TRUE(store.ReleaseSlot("pod:b", "r2").ok());
  EXPECT_FALSE(take("pod:b", "r2"));
  // Holds survive a reopen (another process sees them).
  Store& reopened = Open();
  auto after = reopened.TakeSlot("pod:b", "r4", kTtl);
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE(*after);
  // Of many contenders at once, one takes the slot.
  std::atomic<int> winners{0};
  std::vector<std::thread> contenders;
  for (int i = 0; i < 8; ++i) {
    contenders.emplace_back([&, i] {
      auto taken = reopened.TakeSlot("pod:c", "h" + std::to_string(i), kTtl);
      if (taken.ok() && *taken) ++winners;
    });
  }
  for (auto& t : contenders) t.join();
  EXPECT_EQ(winners.load(), 1);
  // Bad arguments.
  EXPECT_EQ(reopened.TakeSlot("", "r", kTtl).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(reopened.TakeSlot("k", "", kTtl).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(reopened.TakeSlot(std::string(513, 'k'), "r", kTtl).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(reopened.TakeSlot("k", "r", std::chrono::milliseconds(0)).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(reopened.ReleaseSlot("", "r").code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace steward::store
