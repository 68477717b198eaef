// Intents against a SQLite store in a temp dir (no cluster): validation, idempotency,
// generations and history, preconditions, credentials, and the enqueue callback.
#include "engine/intents/intents.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "engine/model/test_util.h"
#include "store/store.h"

namespace steward::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::IsInvalid;

class IntentsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/steward-intents-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    store::SqliteOptions so;
    so.path = dir_ + "/steward.db";
    so.synchronous_full = false;
    auto s = store::OpenSqliteStore(so);
    ASSERT_TRUE(s.ok()) << s.error().ToString();
    store_ = std::move(*s);
    intents_ = std::make_unique<Intents>(*store_, [this](const store::ProjectRecord& record) {
      const std::string& id = record.id;
      MutexLock lock(mu_);
      enqueued_.push_back(id);
    });
  }
  void TearDown() override {
    intents_.reset();
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  static Json Spec(std::string image = "flowfuse/node-red:4.0") {
    return Json{{"team", "t1"}, {"stack", {{"image", image}, {"memory", 256}}}};
  }

  std::vector<std::string> Enqueued() {
    MutexLock lock(mu_);
    return enqueued_;
  }

  // "kind:summary@generation" for every history line of the project.
  std::vector<std::string> History(const std::string& id) {
    auto h = store_->ListHistory(id, 0, 1000);
    EXPECT_TRUE(h.ok()) << h.error().ToString();
    std::vector<std::string> out;
    if (!h.ok()) return out;
    for (const auto& e : *h) {
      out.push_back(e.kind + ":" + e.summary + "@" + std::to_string(e.generation));
    }
    return out;
  }

  size_t ProjectCount() {
    auto all = store_->ListProjects({});
    EXPECT_TRUE(all.ok());
    return all.ok() ? all->size() : 0;
  }

  store::ProjectRecord Create(const std::string& name, bool start = false) {
    auto put = intents_->Put(name, Spec(), "", start);
    EXPECT_TRUE(put.ok()) << put.error().ToString();
    return put.ok() ? put->record : store::ProjectRecord{};
  }

  std::vector<store::Credential> Creds(const std::string& id) {
    auto c = store_->ListCredentials(id);
    EXPECT_TRUE(c.ok());
    return c.ok() ? *c : std::vector<store::Credential>{};
  }

  std::string dir_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Intents> intents_;
  Mutex mu_;
  std::vector<std::string> enqueued_ GUARDED_BY(mu_);
};

// ---- Put: validation ----

TEST_F(IntentsTest, PutRefusesABadNameNamingItAndWritesNothing) {
  for (const char* bad : {"Alpha", "a_b", "-a", "a.b", ""}) {
    auto put = intents_->Put(bad, Spec(), "", true);
    ASSERT_FALSE(put.ok()) << bad;
    EXPECT_EQ(put.error().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(put.error().message(), HasSubstr("project name")) << bad;
  }
  auto too_long = intents_->Put(std::string(64, 'a'), Spec());
  ASSERT_FALSE(too_long.ok());
  EXPECT_THAT(too_long.error().message(), HasSubstr("at most 63 characters (got 64)"));
  EXPECT_EQ(ProjectCount(), 0u);
  EXPECT_TRUE(Enqueued().empty());
}

TEST_F(IntentsTest, PutRefusesABadSpecFieldNamingItsPathAndWritesNothing) {
  Json low_memory = Spec();
  low_memory["stack"]["memory"] = 0;
  EXPECT_TRUE(
      IsInvalid(intents_->Put("alpha", low_memory, "", true), "spec.stack.memory", "(got 0)"));
  Json no_team = Spec();
  no_team.erase("team");
  EXPECT_TRUE(IsInvalid(intents_->Put("alpha", no_team), "spec.team"));
  Json unknown = Spec();
  unknown["replica"] = 2;
  EXPECT_TRUE(IsInvalid(intents_->Put("alpha", unknown), "spec.replica"));
  Json replicas = Spec();
  replicas["replicas"] = 11;
  EXPECT_TRUE(IsInvalid(intents_->Put("alpha", replicas), "spec.replicas", "(got 11)"));
  EXPECT_EQ(ProjectCount(), 0u);
  EXPECT_TRUE(History("alpha").empty());
  EXPECT_TRUE(Enqueued().empty());
}

TEST_F(IntentsTest, PutWithABadSpecOnAnExistingProjectChangesNothing) {
  store::ProjectRecord rec = Create("alpha");
  Json bad = Spec();
  bad["stack"]["cpu"] = 0.5;
  EXPECT_TRUE(IsInvalid(intents_->Put("alpha", bad), "spec.stack.cpu"));
  auto now = store_->GetProject(rec.id);
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(now->generation, 1);
  EXPECT_EQ(now->spec_json, rec.spec_json);
  EXPECT_EQ(now->version, rec.version);
  EXPECT_EQ(History(rec.id).size(), 1u);
}

TEST_F(IntentsTest, PutRefusesABadIdNamingItAndWritesNothing) {
  auto put = intents_->Put("alpha", Spec(), "Bad_Id");
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(put.error().message(), HasSubstr("project id \"Bad_Id\""));
  EXPECT_EQ(ProjectCount(), 0u);
  EXPECT_TRUE(Enqueued().empty());
}

// ---- Put: create, update, idempotency ----

TEST_F(IntentsTest, PutCreatesSuspendedOrRunningWithGenerationOneAndOneActiveCredential) {
  auto a = intents_->Put("alpha", Spec());
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->created);
  EXPECT_TRUE(a->changed);
  EXPECT_EQ(a->record.generation, 1);
  EXPECT_EQ(a->record.desired, store::DesiredState::kSuspended);
  EXPECT_EQ(a->record.team, "t1");
  EXPECT_THAT(History(a->record.id), ElementsAre("operation:create@1"));

  auto b = intents_->Put("beta", Spec(), "", true);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->record.desired, store::DesiredState::kRunning);
  EXPECT_THAT(History(b->record.id), ElementsAre("operation:create+start@1"));

  auto creds = Creds(b->record.id);
  ASSERT_EQ(creds.size(), 1u);
  EXPECT_EQ(creds[0].state, store::CredentialState::kActive);
  EXPECT_EQ(creds[0].token.size(), 64u);
  EXPECT_EQ(creds[0].id.rfind("c-", 0), 0u);
  EXPECT_THAT(Enqueued(), ElementsAre(a->record.id, b->record.id));
}

TEST_F(IntentsTest, PutOfTheSameSpecChangesNothing) {
  store::ProjectRecord rec = Create("alpha", true);
  // The same spec written differently (key order, a default spelled out) is the same spec.
  Json same = Json{{"stack", {{"memory", 256}, {"image", "flowfuse/node-red:4.0"}}},
                   {"team", "t1"},
                   {"replicas", 1}};
  auto again = intents_->Put("alpha", same, "", /*start=*/true);
  ASSERT_TRUE(again.ok()) << again.error().ToString();
  EXPECT_FALSE(again->created);
  EXPECT_FALSE(again->changed);
  EXPECT_EQ(again->record.generation, 1);
  EXPECT_EQ(again->record.version, rec.version);
  EXPECT_THAT(History(rec.id), ElementsAre("operation:create+start@1"));
  EXPECT_THAT(Enqueued(), ElementsAre(rec.id));  // the create only
}

TEST_F(IntentsTest, PutOfANewSpecBumpsTheGenerationOnce) {
  store::ProjectRecord rec = Create("alpha");
  auto changed = intents_->Put("alpha", Spec("flowfuse/node-red:4.1"));
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(changed->created);
  EXPECT_TRUE(changed->changed);
  EXPECT_EQ(changed->record.generation, 2);
  EXPECT_EQ(changed->record.id, rec.id);
  EXPECT_EQ(changed->record.desired, store::DesiredState::kSuspended);  // update keeps desired
  EXPECT_THAT(changed->record.spec_json, HasSubstr("flowfuse/node-red:4.1"));
  // start=true on a suspended project with an unchanged spec still starts it.
  auto started = intents_->Put("alpha", Spec("flowfuse/node-red:4.1"), "", true);
  ASSERT_TRUE(started.ok());
  EXPECT_TRUE(started->changed);
  EXPECT_EQ(started->record.generation, 3);
  EXPECT_EQ(started->record.desired, store::DesiredState::kRunning);
  EXPECT_THAT(History(rec.id),
              ElementsAre("operation:create@1", "operation:update@2", "operation:update+start@3"));
  EXPECT_THAT(Enqueued(), ElementsAre(rec.id, rec.id, rec.id));
}

TEST_F(IntentsTest, GivenIdIsKeptAndGeneratedIdsAreValidAndDistinct) {
  auto given = intents_->Put("alpha", Spec(), "proj-1");
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(given->record.id, "proj-1");
  ASSERT_TRUE(store_->GetProject("proj-1").ok());

  std::set<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    auto put = intents_->Put("gen" + std::to_string(i), Spec());
    ASSERT_TRUE(put.ok());
    const std::string& id = put->record.id;
    EXPECT_TRUE(ValidateProjectId(id).ok()) << id;
    EXPECT_EQ(id.size(), 36u) << id;
    EXPECT_EQ(id[14], '4') << id;  // UUID v4 layout
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 5u);
  // On update the id may be left out (the name finds the project) or repeated.
  auto by_name = intents_->Put("alpha", Spec("a/b:2"));
  ASSERT_TRUE(by_name.ok());
  EXPECT_EQ(by_name->record.id, "proj-1");
  auto same_id = intents_->Put("alpha", Spec("a/b:3"), "proj-1");
  ASSERT_TRUE(same_id.ok());
  EXPECT_EQ(same_id->record.generation, 3);
}

TEST_F(IntentsTest, NameTakenByAnotherIdIsAlreadyExistsAndChangesNothing) {
  store::ProjectRecord rec = Create("alpha");
  auto clash = intents_->Put("alpha", Spec("a/b:2"), "other-id");
  ASSERT_FALSE(clash.ok());
  EXPECT_EQ(clash.error().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(clash.error().message(), HasSubstr("alpha"));
  EXPECT_THAT(clash.error().message(), HasSubstr(rec.id));
  EXPECT_EQ(store_->GetProject(rec.id)->generation, 1);
  EXPECT_FALSE(store_->GetProject("other-id").ok());
  // And an id taken by another name.
  auto id_clash = intents_->Put("beta", Spec(), rec.id);
  ASSERT_FALSE(id_clash.ok());
  EXPECT_EQ(id_clash.error().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(ProjectCount(), 1u);
  EXPECT_THAT(Enqueued(), ElementsAre(rec.id));
}

// Ids and names share the API's {project}: a project whose id is another's name (or whose name
// is another's id) would shadow it there (issue 34). Refused when stored, whichever comes first;
// a project may still have its own name as its id.
TEST_F(IntentsTest, AnIdOrNameThatIsAnotherProjectsNameOrIdIsAlreadyExists) {
  const store::ProjectRecord fp = Create("fp");
  auto shadow = intents_->Put("dupid3", Spec(), "fp");
  ASSERT_EQ(shadow.status().code(), StatusCode::kAlreadyExists) << shadow.status().ToString();
  EXPECT_THAT(shadow.status().message(),
              HasSubstr("\"fp\" is already another record's id or name"));
  auto by_id = intents_->Put("other", Spec(), "pid-1");
  ASSERT_TRUE(by_id.ok()) << by_id.status().ToString();
  EXPECT_EQ(intents_->Put("pid-1", Spec()).status().code(), StatusCode::kAlreadyExists);
  // A rename to another project's id is refused the same way.
  ASSERT_TRUE(intents_->Suspend("other").ok());
  ASSERT_TRUE(store_
                  ->MutateProject(by_id->record.id,
                                  [](store::ProjectRecord& r, const auto&, store::Mutation&) {
                                    r.phase = "Suspended";
                                    return Status::Ok();
                                  })
                  .ok());
  EXPECT_EQ(intents_->Rename("other", fp.id).status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(intents_->Find("fp")->id, fp.id);
  EXPECT_EQ(intents_->Find("pid-1")->name, "other");
  EXPECT_EQ(ProjectCount(), 2u);
  // Its own name as its id is one word, one record.
  auto same = intents_->Put("self", Spec(), "self");
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  // Once a project is purged, its words are free again.
  store::HistoryEntry tombstone;
  tombstone.kind = "purged";
  ASSERT_TRUE(store_->PurgeProject(fp.id, tombstone).ok());
  EXPECT_TRUE(intents_->Put("dupid3", Spec(), "fp").ok());
}

// ---- operations ----

TEST_F(IntentsTest, OperationsBumpTheGenerationAndAppendHistoryInOrder) {
  store::ProjectRecord rec = Create("alpha");
  auto start = intents_->Start("alpha");  // by name
  ASSERT_TRUE(start.ok());
  EXPECT_EQ(start->generation, 2);
  EXPECT_EQ(start->desired, store::DesiredState::kRunning);
  auto restart = intents_->Restart(rec.id);  // by id
  ASSERT_TRUE(restart.ok());
  EXPECT_EQ(restart->generation, 3);
  EXPECT_EQ(restart->restart_epoch, rec.restart_epoch + 1);
  auto rotate = intents_->Rotate(rec.id);
  ASSERT_TRUE(rotate.ok());
  EXPECT_EQ(rotate->generation, 4);
  EXPECT_EQ(rotate->restart_epoch, restart->restart_epoch);  // rotation alone is no restart
  auto suspend = intents_->Suspend(rec.id);
  ASSERT_TRUE(suspend.ok());
  EXPECT_EQ(suspend->generation, 5);
  EXPECT_EQ(suspend->desired, store::DesiredState::kSuspended);
  auto del = intents_->Delete("alpha");
  ASSERT_TRUE(del.ok());
  EXPECT_EQ(del->generation, 6);
  EXPECT_EQ(del->desired, store::DesiredState::kDeleted);

  EXPECT_THAT(History(rec.id),
              ElementsAre("operation:create@1", "operation:start@2", "operation:restart@3",
                          "operation:rotate@4", "operation:suspend@5", "operation:delete@6"));
  // Every committed change enqueued the project once.
  EXPECT_EQ(Enqueued(), std::vector<std::string>(6, rec.id));
  // The rotate line names the pending credential.
  auto h = store_->ListHistory(rec.id, 0, 100);
  ASSERT_TRUE(h.ok());
  std::string pending;
  for (const auto& c : Creds(rec.id)) {
    if (c.state == store::CredentialState::kPending) pending = c.id;
  }
  ASSERT_FALSE(pending.empty());
  EXPECT_THAT((*h)[3].detail_json, HasSubstr(pending));
}

TEST_F(IntentsTest, RepeatedStartOrSuspendIsANoOpWithoutHistoryOrEnqueue) {
  store::ProjectRecord rec = Create("alpha");
  auto suspend = intents_->Suspend(rec.id);  // already suspended
  ASSERT_TRUE(suspend.ok());
  EXPECT_EQ(suspend->generation, 1);
  EXPECT_EQ(suspend->version, rec.version);
  ASSERT_TRUE(intents_->Start(rec.id).ok());
  auto again = intents_->Start(rec.id);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->generation, 2);
  EXPECT_THAT(History(rec.id), ElementsAre("operation:create@1", "operation:start@2"));
  EXPECT_THAT(Enqueued(), ElementsAre(rec.id, rec.id));
}

TEST_F(IntentsTest, RestartOfASuspendedProjectIsFailedPrecondition) {
  store::ProjectRecord rec = Create("alpha");
  auto restart = intents_->Restart(rec.id);
  ASSERT_FALSE(restart.ok());
  EXPECT_EQ(restart.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(restart.error().message(), HasSubstr("alpha is not running"));
  auto now = store_->GetProject(rec.id);
  EXPECT_EQ(now->generation, 1);
  EXPECT_EQ(now->restart_epoch, 0);
  EXPECT_THAT(History(rec.id), ElementsAre("operation:create@1"));
  EXPECT_THAT(Enqueued(), ElementsAre(rec.id));
}

TEST_F(IntentsTest, EveryOperationOnADeletingProjectIsFailedPrecondition) {
  store::ProjectRecord rec = Create("alpha", true);
  ASSERT_TRUE(intents_->Delete(rec.id).ok());
  const size_t enqueued = Enqueued().size();
  auto expect_refused = [&](const Status& s, const char* op) {
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << op << ": " << s.ToString();
    EXPECT_THAT(s.message(), HasSubstr("alpha is being deleted")) << op;
  };
  expect_refused(intents_->Start(rec.id).status(), "start");
  expect_refused(intents_->Suspend(rec.id).status(), "suspend");
  expect_refused(intents_->Restart(rec.id).status(), "restart");
  expect_refused(intents_->Rotate(rec.id).status(), "rotate");
  expect_refused(intents_->Put("alpha", Spec("a/b:2")).status(), "put (new spec)");
  expect_refused(intents_->Put("alpha", Spec()).status(), "put (same spec)");
  expect_refused(intents_->Put("alpha", Spec(), "", true).status(), "put+start");
  // A second delete is accepted as the no-op it is (delete is idempotent).
  auto again = intents_->Delete(rec.id);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->generation, 2);

  auto now = store_->GetProject(rec.id);
  EXPECT_EQ(now->generation, 2);
  EXPECT_EQ(now->desired, store::DesiredState::kDeleted);
  EXPECT_EQ(Creds(rec.id).size(), 1u);
  EXPECT_THAT(History(rec.id), ElementsAre("operation:create+start@1", "operation:delete@2"));
  EXPECT_EQ(Enqueued().size(), enqueued);
}

TEST_F(IntentsTest, UnknownProjectIsNotFoundForEveryOperation) {
  for (auto op : {&Intents::Start, &Intents::Suspend, &Intents::Restart, &Intents::Rotate,
                  &Intents::Delete, &Intents::Find}) {
    auto r = (intents_.get()->*op)("ghost", store::RecordKind::kProject);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), StatusCode::kNotFound);
    EXPECT_THAT(r.error().message(), HasSubstr("ghost"));
  }
  EXPECT_EQ(ProjectCount(), 0u);
  EXPECT_TRUE(Enqueued().empty());
}

// ---- credentials ----

TEST_F(IntentsTest, RotateAddsPendingCredentialsAndKeepsTheOlderOnesValid) {
  store::ProjectRecord rec = Create("alpha", true);
  const store::Credential active = Creds(rec.id).front();

  ASSERT_TRUE(intents_->Rotate(rec.id).ok());
  auto creds = Creds(rec.id);
  ASSERT_EQ(creds.size(), 2u);
  store::Credential first_pending;
  for (const auto& c : creds) {
    if (c.id == active.id) {
      EXPECT_EQ(c.state, store::CredentialState::kActive);
    } else {
      first_pending = c;
      EXPECT_EQ(c.state, store::CredentialState::kPending);
    }
  }
  ASSERT_FALSE(first_pending.token.empty());
  EXPECT_NE(first_pending.token, active.token);

  auto check_active = intents_->CheckCredential(active.token);
  ASSERT_TRUE(check_active.ok());
  EXPECT_TRUE(check_active->valid);
  EXPECT_EQ(check_active->state, "active");
  EXPECT_EQ(check_active->project_id, rec.id);
  EXPECT_EQ(check_active->project_name, "alpha");
  auto check_pending = intents_->CheckCredential(first_pending.token);
  ASSERT_TRUE(check_pending.ok());
  EXPECT_TRUE(check_pending->valid);
  EXPECT_EQ(check_pending->state, "pending");

  // A second rotation while one is pending: all three are accepted.
  ASSERT_TRUE(intents_->Rotate(rec.id).ok());
  creds = Creds(rec.id);
  ASSERT_EQ(creds.size(), 3u);
  int pending = 0;
  for (const auto& c : creds) {
    pending += c.state == store::CredentialState::kPending;
    auto check = intents_->CheckCredential(c.token);
    ASSERT_TRUE(check.ok());
    EXPECT_TRUE(check->valid) << c.id;
  }
  EXPECT_EQ(pending, 2);
  EXPECT_EQ(intents_->CheckCredential(active.token)->state, "active");
  EXPECT_EQ(intents_->CheckCredential(first_pending.token)->state, "pending");
}

TEST_F(IntentsTest, CheckCredentialOfAnUnknownTokenIsInvalidWithNoState) {
  Create("alpha");
  for (const std::string& token : {std::string("nope"), std::string(), NewToken()}) {
    auto check = intents_->CheckCredential(token);
    ASSERT_TRUE(check.ok()) << check.error().ToString();
    EXPECT_FALSE(check->valid);
    EXPECT_EQ(check->state, "");
    EXPECT_EQ(check->project_id, "");
    EXPECT_EQ(check->project_name, "");
  }
}

TEST_F(IntentsTest, TokensAndCredentialIdsAreFreshHex) {
  const std::string a = NewToken(), b = NewToken();
  EXPECT_EQ(a.size(), 64u);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos) << a;
  const std::string id = NewCredentialId();
  EXPECT_EQ(id.size(), 18u);
  EXPECT_EQ(id.rfind("c-", 0), 0u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef", 2), std::string::npos) << id;
}

// ---- enqueue ----

TEST_F(IntentsTest, EnqueueIsCalledOncePerCommittedChangeAndNeverForNoOpsOrErrors) {
  store::ProjectRecord a = Create("alpha");
  store::ProjectRecord b = Create("beta", true);
  std::vector<std::string> want = {a.id, b.id};
  auto step = [&](bool ok, bool changes, const std::string& id) {
    EXPECT_TRUE(ok);
    if (changes) want.push_back(id);
    EXPECT_EQ(Enqueued(), want);
  };
  step(intents_->Put("alpha", Spec()).ok(), false, a.id);        // same spec
  step(intents_->Put("alpha", Spec("a/b:2")).ok(), true, a.id);  // new spec
  step(intents_->Suspend("alpha").ok(), false, a.id);            // already suspended
  step(intents_->Start("beta").ok(), false, b.id);               // already running
  step(intents_->Start("alpha").ok(), true, a.id);
  step(intents_->Restart("beta").ok(), true, b.id);
  step(intents_->Rotate("beta").ok(), true, b.id);
  step(!intents_->Restart("ghost").ok(), false, "");
  step(intents_->Suspend("beta").ok(), true, b.id);
  step(!intents_->Restart("beta").ok(), false, b.id);  // suspended
  step(intents_->Delete("beta").ok(), true, b.id);
  step(intents_->Delete("beta").ok(), false, b.id);  // already deleting
  step(!intents_->Start("beta").ok(), false, b.id);
  step(intents_->Find("alpha").ok(), false, a.id);
}

TEST_F(IntentsTest, WithoutAnEnqueueCallbackOperationsStillCommit) {
  Intents bare(*store_, nullptr);
  auto put = bare.Put("alpha", Spec(), "", true);
  ASSERT_TRUE(put.ok());
  ASSERT_TRUE(bare.Restart("alpha").ok());
  EXPECT_EQ(store_->GetProject(put->record.id)->generation, 2);
}

// ---- hostnames (issue 13, finding 7) ----

Json SpecWithHost(const std::string& host) {
  Json spec = Json{{"team", "t1"}, {"stack", {{"image", "flowfuse/node-red:4.0"}}}};
  spec["customHostname"] = host;
  return spec;
}

TEST_F(IntentsTest, AHostnameOfAnotherProjectIsRefusedWithoutNamingIt) {
  Create("alpha");
  ASSERT_TRUE(intents_->Put("beta", SpecWithHost("flows.example.com")).ok());
  // Another project's custom hostname.
  auto taken = intents_->Put("thief", SpecWithHost("flows.example.com"));
  ASSERT_EQ(taken.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(taken.status().message(), "hostname \"flows.example.com\" is already in use");
  // A project named after another's custom hostname's first label cannot squat on it either:
  // create "flows" under a domain where that is its generated host.
  EngineConfig config;
  config.domain = "example.com";
  Intents other_domain(*store_, nullptr, &config);
  auto squat = other_domain.Put("flows", Spec());
  ASSERT_EQ(squat.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(squat.status().message(), "hostname \"flows.example.com\" is already in use");
  EXPECT_EQ(ProjectCount(), 2u);
  // An existing project changing to a taken hostname: refused, its spec unchanged.
  auto before = *intents_->Find("alpha");
  auto change = intents_->Put("alpha", SpecWithHost("flows.example.com"));
  ASSERT_EQ(change.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(intents_->Find("alpha")->version, before.version);
  // Released when beta gives it up.
  ASSERT_TRUE(intents_->Put("beta", Spec()).ok());
  EXPECT_TRUE(intents_->Put("alpha", SpecWithHost("flows.example.com")).ok());
}

TEST_F(IntentsTest, CustomHostnamesFollowTheOperatorsPolicy) {
  Create("alpha");
  // The shape of a generated host (the demo's domain is localhost), even one no project has yet.
  EXPECT_TRUE(IsInvalid(intents_->Put("thief", SpecWithHost("alpha.localhost")).status(),
                        "spec.customHostname", "reserved for project names"));
  EXPECT_TRUE(IsInvalid(intents_->Put("thief", SpecWithHost("future.localhost")).status(),
                        "spec.customHostname", "reserved for project names"));
  EXPECT_TRUE(IsInvalid(intents_->Put("thief", SpecWithHost("localhost.localhost")).status(),
                        "spec.customHostname", "reserved"));
  // Deeper names under the domain, and other domains, are fine by default.
  EXPECT_TRUE(intents_->Put("p1", SpecWithHost("p1.custom.localhost")).ok());
  EXPECT_TRUE(intents_->Put("p2", SpecWithHost("nodered.customer.com")).ok());
  // With allowedDomains only those.
  EngineConfig config;
  config.custom_hostname.allowed_domains = {"customers.example.com"};
  config.forge_url = "https://forge.customers.example.com/";
  Intents strict(*store_, nullptr, &config);
  EXPECT_TRUE(IsInvalid(strict.Put("p3", SpecWithHost("nodered.other.com")).status(),
                        "spec.customHostname", "allowedDomains: customers.example.com"));
  EXPECT_TRUE(IsInvalid(strict.Put("p3", SpecWithHost("forge.customers.example.com")).status(),
                        "spec.customHostname", "the platform's own host"));
  EXPECT_TRUE(strict.Put("p3", SpecWithHost("a.customers.example.com")).ok());
  EXPECT_TRUE(strict.Put("p4", SpecWithHost("customers.example.com")).ok());
  EXPECT_EQ(ProjectCount(), 5u);
}

// ---- hostnames that are no DNS names, the forge host, other projects' names (policy
// hardening, finding B) ----

TEST_F(IntentsTest, PutRefusesIpAddressesAsHostnames) {
  for (const char* host : {"127.0.0.1", "0x7f.0.0.1", "127.1", "10.0.0.0x1", "nr.example.123"}) {
    EXPECT_TRUE(IsInvalid(intents_->Put("p", SpecWithHost(host)).status(), "spec.customHostname",
                          "address"))
        << host;
    Json url = Spec();
    url["url"] = std::string("https://") + host;
    EXPECT_TRUE(IsInvalid(intents_->Put("p", url).status(), "spec.url", "address")) << host;
  }
  for (const char* host : {"::1", "2130706433"}) {
    EXPECT_TRUE(IsInvalid(intents_->Put("p", SpecWithHost(host)).status(), "spec.customHostname"))
        << host;
  }
  Json v6 = Spec();
  v6["url"] = "http://[::1]:1880";
  EXPECT_TRUE(IsInvalid(intents_->Put("p", v6).status(), "spec.url", "not an IP address"));
  EXPECT_EQ(ProjectCount(), 0u);
  EXPECT_TRUE(Enqueued().empty());
}

TEST_F(IntentsTest, PutRefusesHostnamesUnderTheForgeHost) {
  EngineConfig config;
  config.domain = "nr.example.com";
  config.forge_url = "https://forge.example.com";
  Intents intents(*store_, nullptr, &config);
  for (const char* host : {"forge.example.com", "x.forge.example.com", "a.b.forge.example.com"}) {
    EXPECT_TRUE(
        IsInvalid(intents.Put("p", SpecWithHost(host)).status(), "spec.customHostname", "platform"))
        << host;
  }
  EXPECT_EQ(ProjectCount(), 0u);
  EXPECT_TRUE(intents.Put("p", SpecWithHost("nodered.customer.com")).ok());
}

// A kept URL on <name>.<domain> of a project not created yet used to be accepted and claimed,
// and that project could then never be created. A renamed project keeps its old name's URL.
TEST_F(IntentsTest, AKeptUrlCannotClaimAnotherProjectsName) {
  auto with_url = [](const std::string& url) {
    Json spec = Spec();
    spec["url"] = url;
    return spec;
  };
  EXPECT_TRUE(IsInvalid(intents_->Put("alpha", with_url("http://beta.localhost")).status(),
                        "spec.url", "reserved for project names"));
  EXPECT_EQ(ProjectCount(), 0u);
  ASSERT_TRUE(intents_->Put("beta", Spec()).ok());
  ASSERT_TRUE(intents_->Put("alpha", with_url("http://alpha.localhost:8080")).ok());

  // Renamed while suspended (as FlowFuse renames: stop, rename, start), a project keeps its old
  // name's URL: the platform's next PUT carries it, whether the project kept it in spec.url
  // already or served on its generated host (FlowFuse saved that as project.url).
  // What the engine reports once a suspended project is down (Rename needs it).
  auto settle = [&](const std::string& name) {
    const std::string id = intents_->Find(name)->id;
    EXPECT_TRUE(store_
                    ->MutateProject(id,
                                    [](store::ProjectRecord& rec, const auto&, store::Mutation&) {
                                      rec.phase = "Suspended";
                                      return Status::Ok();
                                    })
                    .ok());
  };
  ASSERT_TRUE(intents_->Put("old", with_url("http://old.localhost")).ok());
  settle("old");
  ASSERT_TRUE(intents_->Rename("old", "new").ok());
  auto again = intents_->Put("new", with_url("http://old.localhost"), "", true);
  ASSERT_TRUE(again.ok()) << again.error().ToString();
  Create("first");
  settle("first");
  ASSERT_TRUE(intents_->Rename("first", "second").ok());
  settle("second");
  ASSERT_TRUE(intents_->Rename("second", "third").ok());
  auto kept = intents_->Put("third", with_url("http://first.localhost"), "", true);
  ASSERT_TRUE(kept.ok()) << kept.error().ToString();
  EXPECT_THAT(kept->record.spec_json, HasSubstr("http://first.localhost"));
  // Not another project, nor the renamed one for a name it never had.
  EXPECT_TRUE(IsInvalid(intents_->Put("other", with_url("http://old.localhost")).status(),
                        "spec.url", "reserved for project names"));
  EXPECT_TRUE(IsInvalid(intents_->Put("new", with_url("http://fourth.localhost")).status(),
                        "spec.url", "reserved for project names"));
  EXPECT_EQ(ProjectCount(), 4u);
}

// ---- create-or-update and purges (issue 13, finding 8) ----
// Put's look-up and write are one store transaction (Store::UpsertProjectByName): there is no
// window between them for a purge or another create to land in.

TEST_F(IntentsTest, PutAfterAPurgeCreatesANewProject) {
  const store::ProjectRecord old = Create("alpha", true);
  ASSERT_TRUE(intents_->Delete("alpha").ok());
  store::HistoryEntry tombstone;
  tombstone.kind = "purged";
  ASSERT_TRUE(store_->PurgeProject(old.id, tombstone).ok());
  auto put = intents_->Put("alpha", Spec("flowfuse/node-red:4.1"), "", true);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  EXPECT_TRUE(put->created);
  EXPECT_NE(put->record.id, old.id);
  EXPECT_EQ(put->record.generation, 1);
}

TEST_F(IntentsTest, PutOnAProjectBeingDeletedIsFailedPreconditionNeverNotFound) {
  Create("alpha", true);
  ASSERT_TRUE(intents_->Delete("alpha").ok());
  auto put = intents_->Put("alpha", Spec("flowfuse/node-red:4.1"));
  ASSERT_EQ(put.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(put.status().message(), HasSubstr("being deleted"));
}

TEST_F(IntentsTest, PutWithAnIdOfAnotherProjectsNameIsAlreadyExists) {
  const store::ProjectRecord alpha = Create("alpha");
  auto put = intents_->Put("alpha", Spec("flowfuse/node-red:4.1"), "other-id");
  ASSERT_EQ(put.status().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(put.status().message(), HasSubstr("taken by project " + alpha.id));
  EXPECT_EQ(intents_->Find("alpha")->generation, 1);
}

// Concurrent Puts of one new name, each with its own spec: one creates it, every other one
// updates that project; the generation counts every accepted change.
TEST_F(IntentsTest, ConcurrentPutsOfANewNameCreateItOnce) {
  constexpr int kThreads = 4, kPuts = 25;
  std::atomic<int> created{0}, changed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPuts; ++i) {
        auto put = intents_->Put(
            "alpha", Spec("flowfuse/node-red:4." + std::to_string(t) + "." + std::to_string(i)));
        ASSERT_TRUE(put.ok()) << put.error().ToString();
        if (put->created) created.fetch_add(1);
        if (put->changed) changed.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(created.load(), 1);
  EXPECT_EQ(changed.load(), kThreads * kPuts);  // every spec differs from the one before it
  EXPECT_EQ(ProjectCount(), 1u);
  EXPECT_EQ(intents_->Find("alpha")->generation, kThreads * kPuts);
}

// ---- the phase a reader sees right after an intent (issue 13, finding 15) ----

TEST_F(IntentsTest, AnAcceptedIntentNeverLeavesRunningInThePhaseColumn) {
  const store::ProjectRecord rec = Create("alpha", true);
  // The engine's status at generation 1: Running.
  ASSERT_TRUE(store_
                  ->MutateProject(rec.id,
                                  [](store::ProjectRecord& r, const auto&, store::Mutation&) {
                                    ProjectStatus s;
                                    s.phase = Phase::kRunning;
                                    s.reason = "Running";
                                    s.observed_generation = r.generation;
                                    r.status_json = DumpJson(ToJson(s));
                                    r.phase = "Running";
                                    r.observed_generation = r.generation;
                                    return Status::Ok();
                                  })
                  .ok());
  auto restarted = intents_->Restart("alpha");
  ASSERT_TRUE(restarted.ok());
  EXPECT_EQ(restarted->phase, "Updating");
  auto suspended = intents_->Suspend("alpha");
  ASSERT_TRUE(suspended.ok());
  EXPECT_EQ(suspended->phase, "Suspending");
  EXPECT_EQ(store_->CountByPhase(store::RecordKind::kProject)->count("Running"), 0u);
  auto deleted = intents_->Delete("alpha");
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted->phase, "Deleting");
  // What was observed stays as it was.
  EXPECT_EQ(deleted->observed_generation, 1);
  EXPECT_THAT(deleted->status_json, HasSubstr("\"Running\""));
}

// Projects stored before hostnames were claimed (schema 1) get theirs at engine start; a clash
// between two of them keeps the first holder and leaves the other unclaimed (logged).
TEST_F(IntentsTest, ProjectsWithoutHostnamesClaimThemOnce) {
  Create("alpha");
  ASSERT_TRUE(intents_->Put("beta", SpecWithHost("flows.example.com")).ok());
  ASSERT_TRUE(intents_->Put("gamma", SpecWithHost("other.example.com")).ok());
  // As a schema-1 Steward left them: nothing claimed, and gamma now wants beta's custom host.
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ + "/steward.db").c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "DELETE FROM hostnames; UPDATE projects SET spec_json = "
                           "replace(spec_json, 'other.example.com', 'flows.example.com'); "
                           "UPDATE projects SET created_ms = created_ms + 100000 "
                           "WHERE name = 'gamma'",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  EXPECT_EQ(store_->ListProjectsWithoutHostnames()->size(), 3u);
  const int64_t beta_version = intents_->Find("beta")->version;
  auto claimed = intents_->ClaimUnclaimedHostnames();
  ASSERT_TRUE(claimed.ok()) << claimed.error().ToString();
  EXPECT_EQ(*claimed, 3);
  EXPECT_TRUE(store_->ListProjectsWithoutHostnames()->empty());
  EXPECT_EQ(*intents_->ClaimUnclaimedHostnames(), 0);
  // No record was written for it.
  EXPECT_EQ(intents_->Find("beta")->version, beta_version);
  // The older of the two (beta) kept it: its own spec change goes through, gamma's is refused.
  Json beta = SpecWithHost("flows.example.com");
  beta["stack"]["image"] = "flowfuse/node-red:4.1";
  auto beta_changed = intents_->Put("beta", beta);
  ASSERT_TRUE(beta_changed.ok()) << beta_changed.error().ToString();
  EXPECT_TRUE(beta_changed->changed);
  Json gamma = SpecWithHost("flows.example.com");
  gamma["stack"]["image"] = "flowfuse/node-red:4.1";
  EXPECT_EQ(intents_->Put("gamma", gamma).status().code(), StatusCode::kAlreadyExists);
  // Held now: a new project cannot take them.
  EXPECT_EQ(intents_->Put("delta", SpecWithHost("flows.example.com")).status().code(),
            StatusCode::kAlreadyExists);
  EngineConfig config;
  config.domain = "example.com";
  Intents other_domain(*store_, nullptr, &config);
  EXPECT_EQ(other_domain.Put("flows", Spec()).status().code(), StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace steward::engine

namespace steward::engine {
namespace {

// The operator's policy is enforced on Put: refused naming the field and the key, nothing
// stored; an operator that allows it gets the spec stored.
TEST_F(IntentsTest, PutEnforcesTheSpecPolicy) {
  Json privileged = Spec();
  privileged["containerSecurityContext"] = Json{{"privileged", true}};
  privileged["podSecurityContext"] = Json{{"runAsUser", 0}};
  auto refused = intents_->Put("alpha", privileged, "", true);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(IsInvalid(refused.error(), "spec.containerSecurityContext.privileged",
                        "engine.policy.allowPrivileged"));
  EXPECT_EQ(intents_->Find("alpha").error().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Enqueued().empty());

  EngineConfig open;
  open.policy.allow_privileged = true;
  open.policy.allow_run_as_root = true;
  Intents permissive(*store_, {}, &open);
  auto accepted = permissive.Put("alpha", privileged, "", true);
  ASSERT_TRUE(accepted.ok()) << accepted.error().ToString();
  EXPECT_THAT(accepted->record.spec_json, HasSubstr("\"privileged\":true"));
}

// Finding A of the policy hardening: pod-level hostProcess and SELinux options were accepted.
TEST_F(IntentsTest, PutEnforcesTheBaselineAtPodLevel) {
  for (const auto& [field, context] : std::vector<std::pair<std::string, Json>>{
           {"spec.podSecurityContext.windowsOptions.hostProcess",
            Json{{"windowsOptions", {{"hostProcess", true}}}}},
           {"spec.podSecurityContext.seLinuxOptions.type",
            Json{{"seLinuxOptions", {{"type", "spc_t"}}}}},
           {"spec.podSecurityContext.seLinuxOptions.user",
            Json{{"seLinuxOptions", {{"user", "system_u"}}}}},
           {"spec.podSecurityContext.sysctls[0].name",
            Json{{"sysctls", Json::array({{{"name", "kernel.panic"}, {"value", "1"}}})}}},
       }) {
    Json spec = Spec();
    spec["podSecurityContext"] = context;
    EXPECT_TRUE(IsInvalid(intents_->Put("alpha", spec, "", true).status(), field,
                          "engine.policy.allowPrivileged: false"))
        << field;
  }
  EXPECT_EQ(ProjectCount(), 0u);
  // At the restricted level a spec's contexts must also pass that level.
  auto restricted = ParseEngineConfig(Json::parse(R"({"policy":{"level":"restricted"},
      "podSecurityContext":{"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"}},
      "containerSecurityContext":{"allowPrivilegeEscalation":false,
                                  "capabilities":{"drop":["ALL"]}}})"));
  ASSERT_TRUE(restricted.ok()) << restricted.error().ToString();
  Intents strict(*store_, nullptr, &*restricted);
  Json spec = Spec();
  spec["containerSecurityContext"] = Json{{"allowPrivilegeEscalation", false}};
  EXPECT_TRUE(IsInvalid(strict.Put("alpha", spec).status(),
                        "spec.containerSecurityContext.capabilities.drop",
                        "engine.policy.level: restricted"));
  EXPECT_TRUE(strict.Put("alpha", Spec()).ok());
}

}  // namespace
}  // namespace steward::engine

namespace steward::engine {
namespace {

// ---- names and object claims (issue 15 §4) ----

TEST_F(IntentsTest, ProjectsWhoseObjectNamesWouldClashAreRefusedWhenStored) {
  // "shop" with a custom hostname has the Ingress "shop-custom"; a project named "shop-custom"
  // would have an Ingress of that name too.
  ASSERT_TRUE(intents_->Put("shop", SpecWithHost("shop.customer.org")).ok());
  auto clash = intents_->Put("shop-custom", Spec());
  ASSERT_EQ(clash.status().code(), StatusCode::kAlreadyExists) << clash.status().ToString();
  EXPECT_THAT(clash.status().message(), HasSubstr("object name Ingress/shop-custom"));
  EXPECT_EQ(ProjectCount(), 1u);
  // The other way round: "shop-custom" first, then "shop" asks for a custom hostname.
  ASSERT_TRUE(intents_->Put("shop", Spec()).ok());  // drops the hostname and its claims
  ASSERT_TRUE(intents_->Put("shop-custom", Spec()).ok());
  auto later = intents_->Put("shop", SpecWithHost("shop.customer.org"));
  ASSERT_EQ(later.status().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(later.status().message(), HasSubstr("object name Ingress/shop-custom"));
  // A digit-first name's Service is srv-<name>, which a project of that name would also have.
  ASSERT_TRUE(intents_->Put("1shop", Spec()).ok());
  auto service = intents_->Put("srv-1shop", Spec());
  ASSERT_EQ(service.status().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(service.status().message(), HasSubstr("object name Service/srv-1shop"));
}

TEST_F(IntentsTest, LongAndTrailingDashNamesAreStoredAndClaimDerivedNames) {
  const std::string longest(63, 'n');
  ASSERT_TRUE(intents_->Put(longest, Spec()).ok());
  auto dashed = intents_->Put("dash-", Spec());
  ASSERT_TRUE(dashed.ok()) << dashed.error().ToString();
  EXPECT_EQ(dashed->record.name, "dash-");
  // Its hostname is the derived label's, so "dash" is a different project with its own names.
  const std::vector<std::string> claims =
      ProjectClaims(EngineConfig{}, dashed->record.id, "dash-", ProjectSpec{});
  const std::string label = DnsLabelOf("dash-");
  EXPECT_THAT(claims, ::testing::Contains(label + ".localhost"));
  EXPECT_THAT(claims, ::testing::Contains("Deployment/" + label));
  ASSERT_TRUE(intents_->Put("dash", Spec()).ok());
}

// ---- supplied credentials (issue 15 §1) ----

class RecordingVault : public CredentialVault {
 public:
  StatusOr<std::string> Put(const std::string& id, const std::string& name,
                            const SuppliedCredentials& values) override {
    MutexLock lock(mu_);
    if (!fail_.ok()) return fail_;
    puts_.push_back({id, name, values.env});
    return "v" + std::to_string(puts_.size());
  }
  void Discard(const std::string& id, const std::string& fingerprint,
               const std::string& version) override {
    MutexLock lock(mu_);
    discarded_.push_back(id + "/" + fingerprint + "@" + version);
  }
  std::vector<std::string> Discarded() {
    MutexLock lock(mu_);
    return discarded_;
  }
  struct Call {
    std::string id, name;
    StringMap env;
  };
  std::vector<Call> Calls() {
    MutexLock lock(mu_);
    return puts_;
  }
  void FailWith(Status s) {
    MutexLock lock(mu_);
    fail_ = std::move(s);
  }

 private:
  Mutex mu_;
  std::vector<Call> puts_ GUARDED_BY(mu_);
  std::vector<std::string> discarded_ GUARDED_BY(mu_);
  Status fail_ GUARDED_BY(mu_);
};

Json Credentials(const std::string& token) {
  return Json{
      {"clientId", "ffp_client"},
      {"clientSecret", "s3cret-" + token},
      {"token", "ffpt_" + token},
      {"broker", {{"url", "mqtts://broker:8883"}, {"username", "u"}, {"password", "p-" + token}}}};
}

class SuppliedCredentialsTest : public IntentsTest {
 protected:
  void SetUp() override {
    IntentsTest::SetUp();
    with_vault_ = std::make_unique<Intents>(*store_, nullptr, nullptr, &vault_);
  }
  void TearDown() override {
    with_vault_.reset();
    IntentsTest::TearDown();
  }
  StatusOr<Intents::PutResult> PutWith(const Json& credentials, bool start = false) {
    Json spec = Spec();
    if (!credentials.is_null()) spec["credentials"] = credentials;
    return with_vault_->Put("alpha", spec, "", start);
  }
  // Everything the store holds of the project, as text: spec, status, history, credentials.
  std::string StoredText(const std::string& id) {
    std::string all = store_->GetProject(id)->spec_json;
    auto history = store_->ListHistory(id, 0, 1000);
    auto creds = store_->ListCredentials(id);
    if (!history.ok() || !creds.ok()) return "(unreadable)";
    for (const auto& h : *history) all += h.summary + h.detail_json;
    for (const auto& c : *creds) all += c.token;
    return all;
  }
  RecordingVault vault_;
  std::unique_ptr<Intents> with_vault_;
};

TEST_F(SuppliedCredentialsTest, ValuesGoToTheVaultAndOnlyTheFingerprintIsStored) {
  auto put = PutWith(Credentials("one"), true);
  ASSERT_TRUE(put.ok()) << put.error().ToString();
  const std::string id = put->record.id;
  ASSERT_EQ(vault_.Calls().size(), 1u);
  EXPECT_EQ(vault_.Calls()[0].id, id);  // the Secret is labelled with the id the record gets
  EXPECT_EQ(vault_.Calls()[0].name, "alpha");
  EXPECT_EQ(vault_.Calls()[0].env.at("FORGE_PROJECT_TOKEN"), "ffpt_one");
  EXPECT_EQ(vault_.Calls()[0].env.at("FORGE_BROKER_PASSWORD"), "p-one");

  Json stored = *ParseJson(store_->GetProject(id)->spec_json);
  SuppliedCredentials values;
  values.env = vault_.Calls()[0].env;
  EXPECT_EQ(stored["credentials"]["fingerprint"], values.Ref().fingerprint);
  EXPECT_EQ(stored["credentials"]["keys"],
            Json::parse(R"(["FORGE_BROKER_PASSWORD","FORGE_BROKER_URL","FORGE_BROKER_USERNAME",
                            "FORGE_CLIENT_ID","FORGE_CLIENT_SECRET","FORGE_PROJECT_TOKEN"])"));
  const std::string text = StoredText(id);
  for (const char* secret : {"ffpt_one", "s3cret-one", "p-one"}) {
    EXPECT_EQ(text.find(secret), std::string::npos) << secret << " in " << text;
  }
}

TEST_F(SuppliedCredentialsTest, OmittedKeepsTheSameValuesChangeNothingAndEmptyDropsThem) {
  auto first = PutWith(Credentials("one"));
  ASSERT_TRUE(first.ok());
  const std::string fp = ParseJson(first->record.spec_json)->at("credentials")["fingerprint"];
  // The same values again: same fingerprint, no new generation.
  auto again = PutWith(Credentials("one"));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->changed);
  EXPECT_EQ(again->record.generation, 1);
  // A spec without credentials (a CLI user changing the stack) keeps them.
  Json spec = Spec("flowfuse/node-red:4.1");
  auto kept = with_vault_->Put("alpha", spec);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(ParseJson(kept->record.spec_json)->at("credentials")["fingerprint"], fp);
  // The fingerprint form a GET shows is accepted back when it is the current one...
  auto echoed = PutWith(ParseJson(kept->record.spec_json)->at("credentials"));
  ASSERT_TRUE(echoed.ok()) << echoed.error().ToString();
  // ...and refused when it is not.
  Json other = ParseJson(kept->record.spec_json)->at("credentials");
  other["fingerprint"] = "0123456789abcdef";
  EXPECT_TRUE(IsInvalid(PutWith(other), "spec.credentials.fingerprint", "not the project's"));
  // New values: a new fingerprint and generation.
  auto rotated = PutWith(Credentials("two"));
  ASSERT_TRUE(rotated.ok());
  EXPECT_TRUE(rotated->changed);
  EXPECT_NE(ParseJson(rotated->record.spec_json)->at("credentials")["fingerprint"], fp);
  // {} goes back to Steward's own credentials.
  auto dropped = PutWith(Json::object());
  ASSERT_TRUE(dropped.ok());
  EXPECT_FALSE(ParseJson(dropped->record.spec_json)->contains("credentials"));
  EXPECT_EQ(vault_.Calls().size(), 3u);  // one, one again (idempotent Secret), two
}

TEST_F(SuppliedCredentialsTest, AVaultFailureCommitsNothing) {
  vault_.FailWith(Unavailable("spec.credentials: cannot create the credentials Secret"));
  auto put = PutWith(Credentials("one"), true);
  ASSERT_EQ(put.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(ProjectCount(), 0u);
  Create("alpha");
  auto update = PutWith(Credentials("one"));
  ASSERT_EQ(update.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(store_->GetProjectByName("alpha")->generation, 1);
}

TEST_F(SuppliedCredentialsTest, WithoutAVaultSuppliedValuesAreRefused) {
  Json spec = Spec();
  spec["credentials"] = Credentials("one");
  auto put = intents_->Put("alpha", spec);
  ASSERT_EQ(put.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(put.status().message(), HasSubstr("spec.credentials"));
  EXPECT_EQ(ProjectCount(), 0u);
}

TEST_F(SuppliedCredentialsTest, BadShapesNameTheFieldAndNeverEchoAValue) {
  const std::pair<Json, std::string> kBad[] = {
      {Json{{"clientId", "a"}, {"token", "t"}}, "spec.credentials.clientSecret"},
      {Json{{"clientId", "a"}, {"clientSecret", 7}, {"token", "t"}},
       "spec.credentials.clientSecret"},
      {Json{{"clientId", "a"}, {"clientSecret", "has space hunter2"}, {"token", "t"}},
       "spec.credentials.clientSecret"},
      {Json{{"clientId", "a"}, {"clientSecret", "b"}, {"token", "t"}, {"broker", {{"url", "x"}}}},
       "spec.credentials.broker.url"},
      {Json{{"clientId", "a"},
            {"clientSecret", "b"},
            {"token", "t"},
            {"broker", {{"url", "mqtt://b"}, {"username", "u"}}}},
       "spec.credentials.broker.password"},
      {Json{{"clientId", "a"}, {"clientSecret", "b"}, {"token", "t"}, {"extra", "hunter2"}},
       "spec.credentials.extra"},
      {Json{{"clientId", "a"}, {"fingerprint", "0123456789abcdef"}}, "spec.credentials"},
      {Json{{"fingerprint", "xyz"}, {"keys", Json::array()}}, "spec.credentials.fingerprint"},
      {Json{{"clientId", "a"}, {"clientSecret", std::string(5000, 'x')}, {"token", "t"}},
       "spec.credentials.clientSecret"},
  };
  for (const auto& [bad, field] : kBad) {
    auto put = PutWith(bad);
    EXPECT_TRUE(IsInvalid(put, field)) << bad.dump();
    if (!put.ok()) {
      EXPECT_EQ(put.error().message().find("hunter2"), std::string::npos) << put.error().message();
    }
  }
  EXPECT_EQ(ProjectCount(), 0u);
  EXPECT_TRUE(vault_.Calls().empty());
}

// Found by the torture run: a PUT with credentials against a project being deleted wrote its
// Secret, was refused, and left the Secret behind the purged project.
TEST_F(SuppliedCredentialsTest, NothingIsWrittenForAProjectBeingDeletedAndARefusedCommitDiscards) {
  ASSERT_TRUE(PutWith(Credentials("one"), true).ok());
  ASSERT_TRUE(with_vault_->Delete("alpha").ok());
  auto refused = PutWith(Credentials("two"));
  ASSERT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(vault_.Calls().size(), 1u);  // nothing written for "two"
  // A commit refused after the Secret was written (here: a hostname another project holds)
  // discards what it wrote.
  ASSERT_TRUE(with_vault_->Put("beta", SpecWithHost("flows.example.com")).ok());
  Json spec = SpecWithHost("flows.example.com");
  spec["credentials"] = Credentials("three");
  auto clash = with_vault_->Put("gamma", spec);
  ASSERT_EQ(clash.status().code(), StatusCode::kAlreadyExists);
  ASSERT_EQ(vault_.Calls().size(), 2u);
  SuppliedCredentials three;
  three.env = vault_.Calls()[1].env;
  // Only what this Put created: the version its Put answered.
  EXPECT_THAT(vault_.Discarded(),
              ElementsAre(vault_.Calls()[1].id + "/" + three.Ref().fingerprint + "@v2"));
}

// Agents share the {project} words with projects (issue 34): neither kind may take the other's.
TEST_F(SuppliedCredentialsTest, AnAgentAndAProjectCannotShadowEachOther) {
  const store::ProjectRecord fp = Create("fp");
  const Json agent = {{"team", "TM1"}, {"broker", "BRK7"}, {"credentials", {{"token", "fftt_x"}}}};
  const std::string agent_name = "mqtt-schema-agent-tm1-brk7";
  auto shadow = with_vault_->PutAgent(agent_name, agent, "fp", false);
  ASSERT_EQ(shadow.status().code(), StatusCode::kAlreadyExists) << shadow.status().ToString();
  auto made = with_vault_->PutAgent(agent_name, agent, "agent-1", false);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(with_vault_->Put("agent-1", Spec()).status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(with_vault_->Put("dup", Spec(), agent_name).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(intents_->Find("fp")->id, fp.id);
  EXPECT_EQ(intents_->Find("agent-1", store::RecordKind::kAgent)->name, agent_name);
}

// (aBc, b) and (AbC, b), or (x-y, z) and (x, y-z), give one agent name: the second pair is
// another agent and must neither take the first over nor touch its token (issue 34, item 6).
TEST_F(SuppliedCredentialsTest, AnotherTeamsOrBrokersAgentOfTheSameNameIsAlreadyExists) {
  auto agent = [](const std::string& team, const std::string& broker, const std::string& token) {
    return Json{{"team", team}, {"broker", broker}, {"credentials", {{"token", token}}}};
  };
  auto first =
      with_vault_->PutAgent("mqtt-schema-agent-abc-b", agent("aBc", "b", "fftt_1"), "", true);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto dashed =
      with_vault_->PutAgent("mqtt-schema-agent-x-y-z", agent("x-y", "z", "fftt_2"), "", true);
  ASSERT_TRUE(dashed.ok()) << dashed.status().ToString();
  const size_t calls = vault_.Calls().size();
  const std::string spec_before = store_->GetProject(first->record.id)->spec_json;
  for (const auto& [name, spec] :
       {std::pair{"mqtt-schema-agent-abc-b", agent("AbC", "b", "fftt_3")},
        std::pair{"mqtt-schema-agent-x-y-z", agent("x", "y-z", "fftt_4")}}) {
    auto taken = with_vault_->PutAgent(name, spec, "", true);
    ASSERT_EQ(taken.status().code(), StatusCode::kAlreadyExists) << name;
    EXPECT_THAT(taken.status().message(), HasSubstr("another team or broker"));
  }
  EXPECT_EQ(vault_.Calls().size(), calls);  // no token written for either
  EXPECT_EQ(store_->GetProject(first->record.id)->spec_json, spec_before);
  // The same pair again is the same agent.
  EXPECT_TRUE(
      with_vault_->PutAgent("mqtt-schema-agent-abc-b", agent("aBc", "b", "fftt_5"), "", true).ok());
}

// A project's team changes only by a put that names its id (a platform moving its instance);
// by name alone it would hand another team's project to the caller (issue 34, item 6).
TEST_F(SuppliedCredentialsTest, APutByNameAloneCannotChangeAProjectsTeam) {
  auto made = PutWith(Credentials("one"));
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  const size_t calls = vault_.Calls().size();
  Json other = Spec();
  other["team"] = "t2";
  other["credentials"] = Credentials("two");
  auto by_name = with_vault_->Put("alpha", other);
  ASSERT_EQ(by_name.status().code(), StatusCode::kAlreadyExists) << by_name.status().ToString();
  EXPECT_THAT(by_name.status().message(), HasSubstr("belongs to another team"));
  EXPECT_EQ(vault_.Calls().size(), calls);  // the other team's values never reached a Secret
  EXPECT_EQ(store_->GetProject(made->record.id)->team, "t1");
  auto moved = with_vault_->Put("alpha", other, made->record.id);
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_EQ(moved->record.team, "t2");
  EXPECT_EQ(moved->record.generation, 2);
}

TEST_F(SuppliedCredentialsTest, RotateIsRefusedForSuppliedCredentials) {
  ASSERT_TRUE(PutWith(Credentials("one"), true).ok());
  auto rotate = with_vault_->Rotate("alpha");
  ASSERT_EQ(rotate.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(rotate.status().message(), HasSubstr("supplied"));
}

// None of Steward's credentials for a project created with supplied ones (nothing would read
// them); new ones, active, when it goes back to Steward's; none added while live ones remain.
TEST_F(SuppliedCredentialsTest, NoneOfStewardsAreMadeForSuppliedOnesAndNewOnesComeWithGenerated) {
  auto created = PutWith(Credentials("one"), true);
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  const std::string id = created->record.id;
  EXPECT_TRUE(store_->ListCredentials(id)->empty());
  auto back = PutWith(Json::object());
  ASSERT_TRUE(back.ok()) << back.error().ToString();
  auto creds = store_->ListCredentials(id);
  ASSERT_TRUE(creds.ok());
  ASSERT_EQ(creds->size(), 1u);
  EXPECT_EQ(creds->front().state, store::CredentialState::kActive);
  auto check = with_vault_->CheckCredential(creds->front().token);
  ASSERT_TRUE(check.ok());
  EXPECT_TRUE(check->valid);
  // Supplied again and back before the engine revoked anything: the live one is kept.
  ASSERT_TRUE(PutWith(Credentials("two")).ok());
  ASSERT_TRUE(PutWith(Json::object()).ok());
  EXPECT_EQ(store_->ListCredentials(id)->size(), 1u);
}

}  // namespace
}  // namespace steward::engine
