// The ChangeFeed on its own, driven as a store drives it: a ticket taken under the "store" lock
// right after the "commit", the change delivered after the unlock.
#include "store/change_feed.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/mutex.h"
#include "test_support/eventually.h"

namespace steward::store {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

ProjectChange Change(std::string id, int64_t version = 1) {
  ProjectChange c;
  c.project_id = id;
  c.record.emplace();
  c.record->id = std::move(id);
  c.record->version = version;
  return c;
}

// A minimal store: commits are numbered under its lock, as a real store's are.
class FakeStore {
 public:
  explicit FakeStore(ChangeFeed& feed) : feed_(feed) {}
  // "Commits" a change of `id` and delivers it; returns the commit's sequence number.
  int64_t Commit(const std::string& id) {
    uint64_t ticket = 0;
    int64_t seq = 0;
    {
      MutexLock lock(mu_);
      seq = ++committed_;
      ticket = feed_.TakeTicket();
    }
    feed_.Deliver(ticket, Change(id, seq));
    return seq;
  }
  int64_t committed() {
    MutexLock lock(mu_);
    return committed_;
  }

 private:
  ChangeFeed& feed_;
  Mutex mu_;
  int64_t committed_ GUARDED_BY(mu_) = 0;
};

// Listener bookkeeping shared with other threads.
class Seen {
 public:
  void Add(const std::string& s) {
    MutexLock lock(mu_);
    seen_.push_back(s);
  }
  std::vector<std::string> Get() {
    MutexLock lock(mu_);
    return seen_;
  }
  size_t Size() {
    MutexLock lock(mu_);
    return seen_.size();
  }

 private:
  Mutex mu_;
  std::vector<std::string> seen_ GUARDED_BY(mu_);
};

TEST(ChangeFeedTest, TicketsCountFromZero) {
  ChangeFeed feed;
  EXPECT_EQ(feed.TakeTicket(), 0u);
  EXPECT_EQ(feed.TakeTicket(), 1u);
  EXPECT_EQ(feed.TakeTicket(), 2u);
}

TEST(ChangeFeedTest, DeliversToEveryListenerInTicketOrderAndReturnsAfterDelivery) {
  ChangeFeed feed;
  std::vector<std::string> first, second;
  feed.AddListener([&](const ProjectChange& c) { first.push_back(c.project_id); });
  feed.AddListener([&](const ProjectChange& c) { second.push_back(c.project_id); });
  for (const char* id : {"a", "b", "c"}) {
    feed.Deliver(feed.TakeTicket(), Change(id));
    EXPECT_EQ(first.back(), id);  // delivered before Deliver returned
  }
  EXPECT_THAT(first, ElementsAre("a", "b", "c"));
  EXPECT_THAT(second, ElementsAre("a", "b", "c"));
}

// A later ticket handed over first waits for the earlier one.
TEST(ChangeFeedTest, ALaterTicketWaitsForTheEarlierOne) {
  for (int round = 0; round < 50; ++round) {
    ChangeFeed feed;
    Seen seen;
    feed.AddListener([&](const ProjectChange& c) { seen.Add(c.project_id); });
    const uint64_t t0 = feed.TakeTicket(), t1 = feed.TakeTicket();
    std::thread later([&] { feed.Deliver(t1, Change("second")); });
    feed.Deliver(t0, Change("first"));
    later.join();
    ASSERT_THAT(seen.Get(), ElementsAre("first", "second"));
  }
}

TEST(ChangeFeedTest, ConcurrentCommittersAreDeliveredInCommitOrder) {
  ChangeFeed feed;
  FakeStore store(feed);
  std::mutex mu;
  std::vector<int64_t> order;
  std::atomic<int64_t> delivered{0};
  feed.AddListener([&](const ProjectChange& c) {
    std::lock_guard lock(mu);
    order.push_back(c.record->version);
    delivered = c.record->version;
  });
  constexpr int kThreads = 8, kCommits = 500;
  std::atomic<int> late{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCommits; ++i) {
        int64_t seq = store.Commit("p" + std::to_string(t));
        // The commit's own change (and so every earlier one) was delivered before it returned.
        if (delivered.load() < seq) ++late;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(late.load(), 0);
  std::lock_guard lock(mu);
  ASSERT_EQ(order.size(), static_cast<size_t>(kThreads * kCommits));
  for (size_t i = 0; i < order.size(); ++i) ASSERT_EQ(order[i], static_cast<int64_t>(i + 1));
}

TEST(ChangeFeedTest, AChangeDeliveredFromInsideAListenerIsParkedUntilItReturns) {
  ChangeFeed feed;
  std::vector<std::string> first, second;
  feed.AddListener([&](const ProjectChange& c) {
    first.push_back(c.project_id);
    if (c.project_id != "a") return;
    feed.Deliver(feed.TakeTicket(), Change("b"));
    // Parked: nobody has seen it yet, and this call did not wait for its turn.
    EXPECT_THAT(first, ElementsAre("a"));
  });
  feed.AddListener([&](const ProjectChange& c) { second.push_back(c.project_id); });
  feed.Deliver(feed.TakeTicket(), Change("a"));
  // The nested change reached every listener, after the outer one, before the outer call ended.
  EXPECT_THAT(first, ElementsAre("a", "b"));
  EXPECT_THAT(second, ElementsAre("a", "b"));
}

// A change committed inside a listener while another thread's commit waits for its turn: commit
// order (a, c, b) is delivery order, the parked b is delivered by the thread that finishes c,
// and nobody deadlocks.
TEST(ChangeFeedTest, AParkedChangeIsDeliveredByTheThreadThatFinishesTheTicketBefore) {
  ChangeFeed feed;
  FakeStore store(feed);
  Seen seen;
  std::atomic<bool> start_other{false};
  std::thread::id b_delivered_on, other_id;
  std::thread other([&] {
    other_id = std::this_thread::get_id();
    ASSERT_TRUE(test_support::Eventually([&] { return start_other.load(); }));
    store.Commit("c");
  });
  feed.AddListener([&](const ProjectChange& c) {
    seen.Add(c.project_id);
    if (c.project_id == "b") b_delivered_on = std::this_thread::get_id();
    if (c.project_id != "a") return;
    start_other = true;
    // Wait until the other thread has committed (not delivered: that waits for us).
    EXPECT_TRUE(test_support::Eventually([&] { return store.committed() == 2; }));
    store.Commit("b");
  });
  store.Commit("a");
  other.join();
  EXPECT_THAT(seen.Get(), ElementsAre("a", "c", "b"));
  EXPECT_EQ(b_delivered_on, other_id);
}

TEST(ChangeFeedTest, ListenersCanBeRemovedAlsoFromInsideOne) {
  ChangeFeed feed;
  std::vector<std::string> first, second, third;
  int h1 = feed.AddListener([&](const ProjectChange& c) { first.push_back(c.project_id); });
  int h3 = 0;
  int h2 = feed.AddListener([&](const ProjectChange& c) {
    second.push_back(c.project_id);
    if (c.project_id == "b") feed.RemoveListener(h3);  // from inside a delivery
  });
  h3 = feed.AddListener([&](const ProjectChange& c) { third.push_back(c.project_id); });
  EXPECT_NE(h1, h2);
  EXPECT_NE(h2, h3);
  feed.Deliver(feed.TakeTicket(), Change("a"));
  feed.RemoveListener(h1);
  feed.Deliver(feed.TakeTicket(), Change("b"));
  feed.Deliver(feed.TakeTicket(), Change("c"));
  feed.RemoveListener(h1);  // twice: harmless
  feed.RemoveListener(12345);
  EXPECT_THAT(first, ElementsAre("a"));
  EXPECT_THAT(second, ElementsAre("a", "b", "c"));
  // Removed during the delivery of b, before b reached it: never called again.
  EXPECT_THAT(third, ElementsAre("a"));
  feed.RemoveListener(h2);
  feed.Deliver(feed.TakeTicket(), Change("d"));
  EXPECT_THAT(second, ElementsAre("a", "b", "c"));
}

// A listener may capture what its remover destroys right after: RemoveListener on another thread
// returns only once the call under way has returned. From inside the listener itself, removing it
// returns at once.
TEST(ChangeFeedTest, RemoveListenerWaitsForACallUnderWayOnAnotherThread) {
  ChangeFeed feed;
  std::atomic<bool> entered{false}, release{false}, removed{false}, removed_before_return{false};
  const int h = feed.AddListener([&](const ProjectChange&) {
    entered = true;
    while (!release) std::this_thread::yield();
    removed_before_return = removed.load();
  });
  std::thread deliverer([&] { feed.Deliver(feed.TakeTicket(), Change("a")); });
  ASSERT_TRUE(test_support::Eventually([&] { return entered.load(); }));
  std::thread remover([&] {
    feed.RemoveListener(h);
    removed = true;
  });
  // Without the wait, RemoveListener returns at once; with it, not before the call returns.
  EXPECT_FALSE(
      test_support::Eventually([&] { return removed.load(); }, std::chrono::milliseconds(300)));
  release = true;
  remover.join();
  deliverer.join();
  EXPECT_TRUE(removed);
  EXPECT_FALSE(removed_before_return) << "RemoveListener returned while its listener ran";
}

TEST(ChangeFeedTest, AListenerRemovingItselfDoesNotWaitForItself) {
  ChangeFeed feed;
  int calls = 0;
  int self = 0;
  self = feed.AddListener([&](const ProjectChange&) {
    ++calls;
    feed.RemoveListener(self);  // its own call is under way: returns at once
  });
  feed.Deliver(feed.TakeTicket(), Change("a"));
  feed.Deliver(feed.TakeTicket(), Change("b"));
  EXPECT_EQ(calls, 1);
}

TEST(ChangeFeedTest, AListenerAddedFromInsideOneSeesTheNextChange) {
  ChangeFeed feed;
  std::vector<std::string> late;
  bool added = false;
  feed.AddListener([&](const ProjectChange&) {
    if (added) return;
    added = true;
    feed.AddListener([&](const ProjectChange& c) { late.push_back(c.project_id); });
  });
  feed.Deliver(feed.TakeTicket(), Change("a"));
  EXPECT_THAT(late, IsEmpty());
  feed.Deliver(feed.TakeTicket(), Change("b"));
  EXPECT_THAT(late, ElementsAre("b"));
}

TEST(ChangeFeedTest, AThrowingListenerIsSkippedAndDeliveryGoesOn) {
  ChangeFeed feed;
  FakeStore store(feed);
  std::vector<std::string> seen;
  feed.AddListener([](const ProjectChange&) { throw std::runtime_error("boom"); });
  feed.AddListener([](const ProjectChange&) { throw 42; });  // not even an exception
  feed.AddListener([&](const ProjectChange& c) { seen.push_back(c.project_id); });
  store.Commit("a");
  store.Commit("b");
  // A committer on another thread is not stalled behind the throwing ones either.
  std::thread other([&] { store.Commit("c"); });
  other.join();
  EXPECT_THAT(seen, ElementsAre("a", "b", "c"));
}

}  // namespace
}  // namespace steward::store
