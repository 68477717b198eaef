#include "api/project_view.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "api/api_internal.h"
#include "engine/intents/intents.h"
#include "store/cuttable_store.h"

namespace steward::api {
namespace {

Json Spec(const std::string& team) {
  return Json{{"team", team},
              {"stack", {{"image", "flowfuse/node-red:4.0"}, {"cpu", 10}, {"memory", 256}}}};
}

class ProjectViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/steward-view-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    store::SqliteOptions so;
    so.path = dir_ + "/steward.db";
    so.synchronous_full = false;
    auto s = store::OpenSqliteStore(so);
    ASSERT_TRUE(s.ok()) << s.error().ToString();
    store_ = std::move(*s);
    intents_ = std::make_unique<engine::Intents>(*store_, nullptr);
    listener_ = store_->AddListener([this](const store::ProjectChange& c) {
      std::shared_ptr<const std::string> json;
      if (c.record) json = std::make_shared<const std::string>(DumpJson(ProjectJson(*c.record)));
      view_.Apply(c, json);
    });
  }
  void TearDown() override {
    store_->RemoveListener(listener_);
    intents_.reset();
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::string Put(const std::string& name, const std::string& team = "t1") {
    auto put = intents_->Put(name, Spec(team));
    EXPECT_TRUE(put.ok()) << put.error().ToString();
    return put.ok() ? put->record.id : "";
  }
  void Purge(const std::string& id) {
    store::HistoryEntry tombstone;
    tombstone.project_id = id;
    tombstone.kind = "purged";
    ASSERT_TRUE(store_->PurgeProject(id, tombstone).ok());
  }
  // The view's items as "<name>@<version>" (names read from the rendered text).
  std::vector<std::string> Items(const store::ListFilter& f = {}) {
    std::vector<std::string> out;
    for (const auto& item : view_.List(f)) {
      auto j = ParseJson(*item->json);
      EXPECT_TRUE(j.ok());
      out.push_back(j.ok() ? (*j)["name"].get<std::string>() + "@" + std::to_string(item->version)
                           : "?");
    }
    return out;
  }
  int64_t Version(const std::string& id) {
    auto r = store_->GetProject(id);
    EXPECT_TRUE(r.ok());
    return r.ok() ? r->version : -1;
  }

  std::string dir_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<engine::Intents> intents_;
  ProjectView view_;
  int listener_ = -1;
};

// Changes committed between a page's read and its insertion win: a record purged meanwhile
// does not come back, a newer version is not rolled back by the page's older one.
TEST_F(ProjectViewTest, ChangesCommittedWhileLoadingAreNotUndoneByTheLoadedPage) {
  const std::string a = Put("a"), b = Put("b");
  Put("c");
  store::CuttableStore reader(*store_);
  int lists = 0;
  reader.after_list = [&] {
    if (lists++ > 0) return;
    ASSERT_TRUE(intents_->Start(b).ok());  // b: a newer version than the page holds
    Purge(a);
  };
  ASSERT_TRUE(view_.Load(reader).ok());
  std::vector<std::string> items = Items();
  std::sort(items.begin(), items.end());
  EXPECT_EQ(items, (std::vector<std::string>{"b@" + std::to_string(Version(b)), "c@1"}));
  EXPECT_TRUE(view_.loaded());
  auto last = store_->LastPosition();
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(view_.position(), *last);
}

// Find: the item of an id as last committed (what a PUT's answer reuses), null when absent or
// purged.
TEST_F(ProjectViewTest, FindGivesTheLatestItemOfAnId) {
  const std::string a = Put("a");
  ASSERT_NE(view_.Find(a), nullptr);
  EXPECT_EQ(view_.Find(a)->version, Version(a));
  ASSERT_TRUE(intents_->Start(a).ok());
  auto item = view_.Find(a);
  ASSERT_NE(item, nullptr);
  EXPECT_EQ(item->version, Version(a));
  EXPECT_EQ(*item->json, DumpJson(ProjectJson(*store_->GetProject(a))));
  EXPECT_EQ(view_.Find("nope"), nullptr);
  Purge(a);
  EXPECT_EQ(view_.Find(a), nullptr);
}

TEST_F(ProjectViewTest, PagesOfLoadAndFiltersAsTheStoresLists) {
  for (int i = 0; i < 7; ++i) Put("p" + std::to_string(i), i % 3 == 0 ? "t2" : "t1");
  ASSERT_TRUE(view_.Load(*store_, /*page=*/3).ok());
  EXPECT_EQ(view_.size(), 7u);
  auto names = [](const std::vector<store::ProjectRecord>& rs) {
    std::vector<std::string> out;
    for (const auto& r : rs) out.push_back(r.name + "@" + std::to_string(r.version));
    return out;
  };
  std::vector<store::ListFilter> filters(5);
  filters[1].team = "t2";
  filters[2].limit = 2;
  filters[3].desired = store::DesiredState::kSuspended;
  auto all = store_->ListProjects({});
  ASSERT_TRUE(all.ok());
  filters[4].after_id = (*all)[3].id;
  filters[4].limit = 2;
  for (const auto& f : filters) {
    auto stored = store_->ListProjects(f);
    ASSERT_TRUE(stored.ok());
    EXPECT_EQ(Items(f), names(*stored));
  }
  // No status written: every record is Pending and none is Running.
  store::ListFilter pending;
  pending.phase = "Pending";
  EXPECT_EQ(Items(pending).size(), 7u);
  store::ListFilter running;
  running.phase = "Running";
  EXPECT_TRUE(Items(running).empty());
}

TEST_F(ProjectViewTest, WaitForWaitsForTheLoadAndThePosition) {
  Put("a");
  const auto soon = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  EXPECT_FALSE(view_.WaitFor(0, soon)) << "not loaded";
  ASSERT_TRUE(view_.Load(*store_).ok());
  auto last = store_->LastPosition();
  ASSERT_TRUE(last.ok());
  EXPECT_TRUE(view_.WaitFor(*last, std::chrono::steady_clock::now()));
  EXPECT_FALSE(
      view_.WaitFor(*last + 1, std::chrono::steady_clock::now() + std::chrono::milliseconds(50)));
  Put("b");  // delivered before Put returns
  EXPECT_TRUE(view_.WaitFor(*last + 1, std::chrono::steady_clock::now()));
  EXPECT_EQ(Items().size(), 2u);
}

// A change after a gap (a commit this process was never told of) unloads the view until it is
// loaded again, which brings in the record it missed.
TEST_F(ProjectViewTest, AGapInThePositionsUnloadsTheViewUntilItIsLoadedAgain) {
  Put("a");
  ASSERT_TRUE(view_.Load(*store_).ok());
  store::SqliteOptions so;
  so.path = dir_ + "/steward.db";
  so.synchronous_full = false;
  auto other = store::OpenSqliteStore(so);
  ASSERT_TRUE(other.ok());
  engine::Intents elsewhere(**other, nullptr);
  ASSERT_TRUE(elsewhere.Put("missed", Spec("t1")).ok());
  EXPECT_TRUE(view_.loaded()) << "nothing told it yet";
  Put("b");
  EXPECT_FALSE(view_.loaded());
  EXPECT_TRUE(view_.needs_reload());
  ASSERT_TRUE(view_.Load(*store_).ok());
  EXPECT_TRUE(view_.loaded());
  EXPECT_FALSE(view_.needs_reload());
  EXPECT_EQ(Items().size(), 3u);
}

}  // namespace
}  // namespace steward::api
