// GET /v1/watch's ids, replay window, resume and reset (docs/api.md), against a real store and
// server: the engine is stopped in each test, so the only commits are the test's own and every
// position is known.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>

#include "api/api_internal.h"
#include "api/api_test_support.h"

namespace steward::api {

// Reaches into the server: its feed id, the fan-out's queue, a stream, the test hook.
struct WatchTestPeer {
  static std::string Feed(ApiServer& api) { return static_cast<Server&>(api).hub_->feed_; }
  static size_t Streams(ApiServer& api) {
    auto& s = *static_cast<Server&>(api).hub_;
    MutexLock lock(s.streams_mu_);
    return s.streams_.size();
  }
  static std::shared_ptr<Stream> StreamAt(ApiServer& api, size_t i) {
    auto& s = *static_cast<Server&>(api).hub_;
    MutexLock lock(s.streams_mu_);
    return i < s.streams_.size() ? s.streams_[i] : nullptr;
  }
  // The position of the last change the server has numbered.
  static uint64_t Position(ApiServer& api) {
    auto& s = *static_cast<Server&>(api).hub_;
    MutexLock lock(s.ring_mu_);
    return s.position_;
  }
  static size_t FanoutQueued(ApiServer& api) {
    auto& s = *static_cast<Server&>(api).hub_;
    MutexLock lock(s.fanout_mu_);
    return s.fanout_queue_.size();
  }
  static void SetWatchHook(ApiServer& api, std::function<void(std::string_view)> hook) {
    auto& s = *static_cast<Server&>(api).hub_;
    MutexLock lock(s.hook_mu_);
    s.watch_hook_ = std::move(hook);
  }
};

namespace testing {
namespace {

using test_support::Eventually;

TEST(WatchIdTest, ParsesOnlyCanonicalIds) {
  auto ok = ParseEventId("k3x9.42");
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->feed, "k3x9");
  EXPECT_EQ(ok->position, 42u);
  EXPECT_EQ(ParseEventId("b.0")->position, 0u);
  EXPECT_EQ(ParseEventId("b.9223372036854775807")->position, 9223372036854775807u);
  EXPECT_EQ(ParseEventId(std::string(32, 'a') + ".1")->feed, std::string(32, 'a'));
  for (const std::string& bad : std::vector<std::string>{"",
                                                         "abc",
                                                         "42",
                                                         "1.",
                                                         ".5",
                                                         ".",
                                                         "b.-1",
                                                         "-1",
                                                         "b.+1",
                                                         "b. 1",
                                                         "b.1 ",
                                                         " b.1",
                                                         "b.1.2",
                                                         "B.1",
                                                         "b-c.1",
                                                         "b.05",
                                                         "b.00",
                                                         "b.9223372036854775808",
                                                         "b.18446744073709551616",
                                                         "b.99999999999999999999999",
                                                         "b.1e3",
                                                         "b.0x10",
                                                         std::string(33, 'a') + ".1",
                                                         std::string("b.1\0", 4),
                                                         "b.\n1",
                                                         "\xff.1"}) {
    EXPECT_FALSE(ParseEventId(bad).has_value()) << bad;
  }
}

TEST(WatchIdTest, ResumesOnlyWithinTheWindowOfThisFeed) {
  // The window holds positions 8..10: resuming after 7 (nothing missed beyond the window) up to
  // the current position is possible.
  EXPECT_EQ(JudgeResume("b.7", "b", 8, 10), ResumeVerdict::kResume);
  EXPECT_EQ(JudgeResume("b.10", "b", 8, 10), ResumeVerdict::kResume);
  EXPECT_EQ(JudgeResume("b.6", "b", 8, 10), ResumeVerdict::kExpired);
  EXPECT_EQ(JudgeResume("b.0", "b", 8, 10), ResumeVerdict::kExpired);
  EXPECT_EQ(JudgeResume("b.11", "b", 8, 10), ResumeVerdict::kAhead);
  EXPECT_EQ(JudgeResume("c.9", "b", 8, 10), ResumeVerdict::kUnknownFeed);
  EXPECT_EQ(JudgeResume("9", "b", 8, 10), ResumeVerdict::kMalformed);
  // An empty window (oldest = current + 1): only the current position.
  EXPECT_EQ(JudgeResume("b.5", "b", 6, 5), ResumeVerdict::kResume);
  EXPECT_EQ(JudgeResume("b.4", "b", 6, 5), ResumeVerdict::kExpired);
  // A fresh server: position 0.
  EXPECT_EQ(JudgeResume("b.0", "b", 1, 0), ResumeVerdict::kResume);
  EXPECT_EQ(ResetReason(ResumeVerdict::kUnknownFeed), "UnknownFeed");
}

TEST(WatchIdTest, AStoresFeedIdMakesParsableIds) {
  auto store = store::OpenSqliteStore({":memory:"});
  ASSERT_TRUE(store.ok());
  const std::string feed = (*store)->FeedId();
  auto id = ParseEventId(EventId(feed, 12));
  ASSERT_TRUE(id.has_value()) << feed;
  EXPECT_EQ(id->feed, feed);
  EXPECT_EQ(id->position, 12u);
}

class WatchResumeTest : public ApiFixture {
 protected:
  void SetUp() override {
    ApiFixture::SetUp();
    engine_->Stop();  // only the tests' commits
  }

  // Restarts the API server (the same store, so the same feed), with `tweak` applied to its
  // options.
  void RestartApi(const std::function<void(ApiOptions&)>& tweak = nullptr) {
    api_->Stop();
    api_.reset();
    StartApi(tweak, /*metrics=*/false);
  }

  void Create(const std::string& name, const std::string& team = "t1",
              store::RecordKind kind = store::RecordKind::kProject) {
    store::ProjectRecord r;
    r.id = r.name = name;
    r.team = team;
    r.kind = kind;
    r.spec_json = "{}";
    ASSERT_TRUE(store_->CreateProject(r, {}).ok()) << name;
  }
  void Bump(const std::string& id) {
    auto bump = [](store::ProjectRecord& r, const std::vector<store::Credential>&,
                   store::Mutation&) {
      ++r.generation;
      return Status::Ok();
    };
    ASSERT_TRUE(store_->MutateProject(id, bump).ok()) << id;
  }
  void Purge(const std::string& id) {
    store::HistoryEntry tombstone;
    tombstone.kind = "purged";
    tombstone.summary = "purged";
    ASSERT_TRUE(store_->PurgeProject(id, tombstone).ok()) << id;
  }

  // The events of a stream opened at `target` (with Last-Event-ID `last_id` unless empty) up to
  // and including the first `until` event.
  std::vector<Event> Until(const std::string& target, const std::string& last_id,
                           const std::string& until) {
    net::Headers h;
    if (!last_id.empty()) h.Set("Last-Event-ID", last_id);
    Watcher w(api_->port(), target, Watcher::kRead, h);
    EXPECT_TRUE(Eventually([&] { return w.Has(until); })) << target << " " << last_id;
    auto events = w.events();
    auto it = std::find_if(events.begin(), events.end(),
                           [&](const Event& e) { return e.event == until; });
    if (it != events.end()) events.erase(it + 1, events.end());
    return events;
  }
  // The id of a fresh snapshot's sync: the current position.
  std::string Now() {
    auto events = Until("/v1/watch?kind=all", "", "sync");
    return events.empty() ? "" : events.back().id;
  }

  // "event name@data.name" of each event, "resumed"/"sync" alone.
  static std::vector<std::string> Names(const std::vector<Event>& events) {
    std::vector<std::string> out;
    for (const auto& e : events) {
      const std::string name = GetString(DataOf(e), "name");
      out.push_back(name.empty() ? e.event : e.event + "@" + name);
    }
    return out;
  }
};

// Resuming after N changes replays exactly those N (those the stream's filters pass), in
// commit order, with no snapshot; then `resumed` at the current position; then live changes.
TEST_F(WatchResumeTest, ResumeReplaysTheMissedChangesInOrderFilteredThenGoesLive) {
  Create("p1", "t1");
  const std::string from = Now();
  const uint64_t at = PositionOf(from);
  EXPECT_EQ(at, 1u);
  Create("p2", "t2");
  Bump("p1");
  Create("a1", "t1", store::RecordKind::kAgent);
  Purge("p2");
  Bump("p1");  // five changes: positions at+1 .. at+5

  net::Headers h;
  h.Set("Last-Event-ID", from);
  Watcher all(api_->port(), "/v1/watch?kind=all&initial=true", Watcher::kRead, h);
  ASSERT_TRUE(Eventually([&] { return all.Has("resumed"); }));
  auto events = all.events();
  EXPECT_EQ(Names(events), (std::vector<std::string>{"project@p2", "project@p1", "agent@a1",
                                                     "deleted@p2", "project@p1", "resumed"}));
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    EXPECT_EQ(PositionOf(events[i].id), at + 1 + i) << events[i].id;
  }
  EXPECT_EQ(DataOf(events[1])["version"], 2);
  EXPECT_EQ(DataOf(events[3]), (Json{{"id", "p2"}, {"name", "p2"}, {"version", 2}}));
  EXPECT_EQ(DataOf(events[4])["version"], 3);
  const Event& resumed = events.back();
  EXPECT_EQ(PositionOf(resumed.id), at + 5);
  EXPECT_EQ(FeedOf(resumed.id), FeedOf(from));
  EXPECT_EQ(DataOf(resumed), (Json{{"from", from}, {"replayed", 5}}));
  // Live: the next change once, after `resumed`.
  Bump("a1");
  ASSERT_TRUE(Eventually([&] { return all.events().size() == events.size() + 1; }));
  const Event live = all.events().back();
  EXPECT_EQ(live.event, "agent");
  EXPECT_EQ(PositionOf(live.id), at + 6);

  // The filters apply to the replay; `resumed` is at the current position whatever passed.
  auto t1 = Until("/v1/watch?team=t1", from, "resumed");
  EXPECT_EQ(Names(t1), (std::vector<std::string>{"project@p1", "project@p1", "resumed"}));
  EXPECT_EQ(PositionOf(t1[0].id), at + 2);
  EXPECT_EQ(PositionOf(t1[1].id), at + 5);
  EXPECT_EQ(PositionOf(t1.back().id), at + 6);
  EXPECT_EQ(DataOf(t1.back())["replayed"], 2);
  EXPECT_EQ(Names(Until("/v1/watch?project=p2", from, "resumed")),
            (std::vector<std::string>{"project@p2", "deleted@p2", "resumed"}));
  EXPECT_EQ(Names(Until("/v1/watch?kind=agent", from, "resumed")),
            (std::vector<std::string>{"agent@a1", "agent@a1", "resumed"}));
  EXPECT_EQ(Names(Until("/v1/watch?kind=agent&team=t2", from, "resumed")),
            (std::vector<std::string>{"resumed"}));
  // From the current position: nothing to replay.
  auto current = Until("/v1/watch?kind=all", resumed.id, "resumed");
  EXPECT_EQ(Names(current), (std::vector<std::string>{"agent@a1", "resumed"}));
  auto none = Until("/v1/watch?kind=all", live.id, "resumed");
  EXPECT_EQ(Names(none), (std::vector<std::string>{"resumed"}));
  EXPECT_EQ(none.back().id, live.id);
}

// since= serves clients that cannot set headers; the header, newer on an EventSource's
// reconnect, wins over it.
TEST_F(WatchResumeTest, SinceResumesAndTheHeaderWinsOverIt) {
  const std::string from = Now();
  Create("p1");
  const std::string mid = Now();
  Create("p2");
  EXPECT_EQ(Names(Until("/v1/watch?since=" + net::PercentEncode(from), "", "resumed")),
            (std::vector<std::string>{"project@p1", "project@p2", "resumed"}));
  EXPECT_EQ(Names(Until("/v1/watch?since=" + net::PercentEncode(from), mid, "resumed")),
            (std::vector<std::string>{"project@p2", "resumed"}));
}

// Ids count in the store's feed: a restarted server knows them. A client that left before the
// restart gets the changes committed since, with no snapshot — here a purge and a create.
TEST_F(WatchResumeTest, AnIdFromBeforeARestartResumesWithTheChangesSince) {
  Create("p1");
  Create("p2");
  const std::string before = Now();
  RestartApi();
  EXPECT_EQ(WatchTestPeer::Feed(*api_), FeedOf(before));
  Purge("p1");  // deleted while the client was away
  Create("p3");
  auto events = Until("/v1/watch?kind=all", before, "resumed");
  EXPECT_EQ(Names(events), (std::vector<std::string>{"deleted@p1", "project@p3", "resumed"}));
  EXPECT_EQ(events[2].id,
            WatchTestPeer::Feed(*api_) + "." + std::to_string(PositionOf(before) + 2));
  // Right after a restart the window is empty: the current position resumes, an older one
  // cannot (the server never saw what came between).
  const std::string now = Now();
  RestartApi();
  EXPECT_EQ(Names(Until("/v1/watch?kind=all", now, "resumed")),
            (std::vector<std::string>{"resumed"}));
  EXPECT_EQ(DataOf(Until("/v1/watch?kind=all", before, "sync")[0])["reason"], "Expired");
}

// An id of another database (another feed): `reset` UnknownFeed, then the whole snapshot (also
// with initial=false), then `sync` at this feed's position.
TEST_F(WatchResumeTest, AnIdOfAnotherFeedResetsAndServesTheSnapshot) {
  Create("p1");
  Create("p2");
  const std::string feed = WatchTestPeer::Feed(*api_);
  const std::string other = (feed[0] == 'a' ? "b" : "a") + feed.substr(1) + ".2";
  for (const std::string target : {"/v1/watch", "/v1/watch?initial=false"}) {
    auto events = Until(target, other, "sync");
    ASSERT_EQ(events.size(), 4u) << target;
    EXPECT_EQ(events[0].event, "reset");
    EXPECT_EQ(events[0].id, "");
    Json reset = DataOf(events[0]);
    EXPECT_EQ(reset["reason"], "UnknownFeed");
    EXPECT_NE(GetString(reset, "message").find(other), std::string::npos) << events[0].data;
    EXPECT_NE(GetString(reset, "message").find("another database"), std::string::npos);
    EXPECT_EQ(Names({events[1], events[2]}),
              (std::vector<std::string>{"project@p1", "project@p2"}));
    EXPECT_EQ(events[1].id, "");  // snapshot events carry no id
    EXPECT_EQ(events[3].event, "sync");
    EXPECT_EQ(events[3].id, feed + ".2");
  }
}

// Out of the window (3 changes kept, 10 made): `reset` Expired and the snapshot; the oldest
// resumable id is the one just before the window's first change.
TEST_F(WatchResumeTest, AnIdOlderThanTheWindowResetsAndServesTheSnapshot) {
  RestartApi([](ApiOptions& o) { o.watch_window_events = 3; });
  Create("p1");
  const std::string from = Now();
  for (int i = 0; i < 10; ++i) Bump("p1");
  const std::string feed = FeedOf(from);
  auto expired = Until("/v1/watch?kind=all", from, "sync");
  ASSERT_EQ(Names(expired), (std::vector<std::string>{"reset", "project@p1", "sync"}));
  EXPECT_EQ(DataOf(expired[0])["reason"], "Expired");
  EXPECT_EQ(DataOf(expired[1])["version"], 11);
  EXPECT_EQ(expired[2].id, feed + ".11");
  // Positions 9..11 are kept: after 8 they replay; after 7 they cannot.
  auto edge = Until("/v1/watch?kind=all", feed + ".8", "resumed");
  EXPECT_EQ(Names(edge),
            (std::vector<std::string>{"project@p1", "project@p1", "project@p1", "resumed"}));
  EXPECT_EQ(PositionOf(edge[0].id), 9u);
  EXPECT_EQ(DataOf(Until("/v1/watch?kind=all", feed + ".7", "sync")[0])["reason"], "Expired");

  // The byte bound: a window of 1 byte keeps no change at all.
  RestartApi([](ApiOptions& o) { o.watch_window_bytes = 1; });
  const std::string fresh = Now();
  Bump("p1");
  const std::string current = FeedOf(fresh) + "." + std::to_string(PositionOf(fresh) + 1);
  EXPECT_EQ(DataOf(Until("/v1/watch?kind=all", fresh, "sync")[0])["reason"], "Expired");
  // Nothing is kept, but the current position is still a resume (with nothing to replay).
  EXPECT_EQ(Names(Until("/v1/watch?kind=all", current, "resumed")),
            (std::vector<std::string>{"resumed"}));
}

// Ids that are not ids of this server, or not ids at all: a reset naming the reason, then the
// snapshot; never a 400, never a crash. Control characters never reach the stream raw.
TEST_F(WatchResumeTest, MalformedIdsResetAndNeverCrash) {
  Create("p1");
  const std::string now = Now();
  const std::string feed = FeedOf(now);
  struct Case {
    std::string id;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"abc", "Malformed"},
      {"1.", "Malformed"},
      {".5", "Malformed"},
      {"-1", "Malformed"},
      {"42", "Malformed"},  // an id of the earlier protocol (a record version)
      {feed + ".-1", "Malformed"},
      {feed + ".99999999999999999999999999", "Malformed"},
      {feed + ".18446744073709551617", "Malformed"},
      {std::string(8000, '7'), "Malformed"},
      {feed + ".1" + std::string(4000, '0'), "Malformed"},
      {feed + ".2", "Ahead"},
      {(feed[0] == 'a' ? "b" : "a") + feed.substr(1) + ".1", "UnknownFeed"},
  };
  for (const Case& c : cases) {
    auto events = Until("/v1/watch", c.id, "sync");
    ASSERT_EQ(Names(events), (std::vector<std::string>{"reset", "project@p1", "sync"}))
        << c.id.substr(0, 80);
    EXPECT_EQ(DataOf(events[0])["reason"], c.reason) << c.id.substr(0, 80);
    EXPECT_LT(events[0].data.size(), 600u) << "the message quotes a bounded part of the id";
    EXPECT_EQ(events[2].id, now);
  }
  // Bytes a header cannot carry, through since=: NUL, CR, LF; the message replaces them.
  auto controls =
      Until("/v1/watch?since=" + net::PercentEncode(std::string("a\0\r\n.1", 6)), "", "sync");
  ASSERT_EQ(Names(controls), (std::vector<std::string>{"reset", "project@p1", "sync"}));
  EXPECT_EQ(DataOf(controls[0])["reason"], "Malformed");
  EXPECT_NE(GetString(DataOf(controls[0]), "message").find("\"a???.1\""), std::string::npos)
      << controls[0].data;
  // An empty since= is no id at all: a plain snapshot.
  EXPECT_EQ(Names(Until("/v1/watch?since=", "", "sync")),
            (std::vector<std::string>{"project@p1", "sync"}));
  // The server still serves.
  EXPECT_EQ(Do("GET", "/v1/projects/p1").status, 200);
}

// A change committed just before a resuming stream registers is in its replay and not sent
// again by the fan-out, which still held it (the purge here would otherwise be sent twice: a
// resumed stream passes on every purge); one committed just after it registered reaches it
// after `resumed`, once.
TEST_F(WatchResumeTest, ChangesCommittedWhileAResumingStreamRegistersArriveOnce) {
  Create("p1");
  Create("gone");
  const std::string from = Now();
  Bump("p1");
  // The store hands changes to the server on its own thread: the blocker below must open after
  // this bump is numbered (else it gets it too). And Now()'s stream is closed, but the server
  // drops it a little later: until it has, it would be taken for the blocker.
  ASSERT_TRUE(Eventually([&] { return WatchTestPeer::Position(*api_) == PositionOf(from) + 1; }));
  ASSERT_TRUE(Eventually([&] { return WatchTestPeer::Streams(*api_) == 0; }));
  // A stream whose lock the test holds keeps the fan-out from taking the next changes.
  Watcher blocker(api_->port(), "/v1/watch?initial=false&kind=all");
  ASSERT_TRUE(Eventually([&] { return WatchTestPeer::Streams(*api_) == 1; }));
  std::shared_ptr<Stream> blocked = WatchTestPeer::StreamAt(*api_, 0);
  ASSERT_NE(blocked, nullptr);
  net::Headers h;
  h.Set("Last-Event-ID", from);
  std::unique_ptr<Watcher> w;
  std::atomic<size_t> queued_at_registration{0};
  {
    MutexLock hold(blocked->mu);
    Bump("p1");  // the fan-out takes it and waits for `blocked`
    ASSERT_TRUE(Eventually([&] { return WatchTestPeer::FanoutQueued(*api_) == 0; }));
    WatchTestPeer::SetWatchHook(*api_, [&](std::string_view stage) {
      if (stage == "register") {
        Purge("gone");  // queued behind the held batch, and in the window
        queued_at_registration = WatchTestPeer::FanoutQueued(*api_);
      } else {
        Create("p2");  // after the registration: through the fan-out
      }
    });
    w = std::make_unique<Watcher>(api_->port(), "/v1/watch?kind=all", Watcher::kRead, h);
    ASSERT_TRUE(Eventually([&] { return w->Has("resumed"); }));
    WatchTestPeer::SetWatchHook(*api_, nullptr);
  }
  EXPECT_EQ(queued_at_registration, 1u);  // the fan-out did hold the purge
  ASSERT_TRUE(Eventually([&] { return w->Has("project", "", "p2"); }));
  Bump("p1");  // a marker: once it arrives, anything sent before it has arrived too
  ASSERT_TRUE(Eventually([&] { return w->events().size() >= 6; }));
  auto events = w->events();
  EXPECT_EQ(Names(events), (std::vector<std::string>{"project@p1", "project@p1", "deleted@gone",
                                                     "resumed", "project@p2", "project@p1"}));
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].event == "resumed") continue;
    EXPECT_EQ(PositionOf(events[i].id), PositionOf(from) + i + (i > 3 ? 0 : 1)) << i;
  }
  EXPECT_EQ(DataOf(events[3])["replayed"], 3);
  EXPECT_EQ(PositionOf(events[3].id), PositionOf(from) + 3);
  // The blocked stream (opened after the first bump) got everything after it too, once.
  ASSERT_TRUE(Eventually([&] { return blocker.events().size() >= 4; }));
  EXPECT_EQ(Names(blocker.events()),
            (std::vector<std::string>{"project@p1", "deleted@gone", "project@p2", "project@p1"}));
}

// The snapshot's hand-over: `sync` carries the position before the snapshot was read; a change
// committed after registering (so shown by the snapshot, read later) is not sent again; a
// client cut right after the sync resumes from it with no gap (a change the snapshot already
// showed may come again, with the same version).
TEST_F(WatchResumeTest, TheSyncIdIsTheSnapshotsPositionAndResumesWithoutAGap) {
  Create("p1");
  WatchTestPeer::SetWatchHook(*api_, [&](std::string_view stage) {
    if (stage == "registered") Bump("p1");  // position 2, shown by the snapshot
  });
  net::Headers none;
  Watcher w(api_->port(), "/v1/watch", Watcher::kRead, none);
  ASSERT_TRUE(Eventually([&] { return w.Has("sync"); }));
  WatchTestPeer::SetWatchHook(*api_, nullptr);
  Bump("p1");  // position 3
  ASSERT_TRUE(Eventually([&] { return w.events().size() >= 3; }));
  auto events = w.events();
  ASSERT_EQ(Names(events), (std::vector<std::string>{"project@p1", "sync", "project@p1"}));
  EXPECT_EQ(DataOf(events[0])["version"], 2);
  EXPECT_EQ(PositionOf(events[1].id), 1u);
  EXPECT_EQ(DataOf(events[2])["version"], 3);
  EXPECT_EQ(PositionOf(events[2].id), 3u);
  auto resumed = Until("/v1/watch", events[1].id, "resumed");
  EXPECT_EQ(Names(resumed), (std::vector<std::string>{"project@p1", "project@p1", "resumed"}));
  EXPECT_EQ(DataOf(resumed[0])["version"], 2);
  EXPECT_EQ(DataOf(resumed[1])["version"], 3);
}

}  // namespace
}  // namespace testing
}  // namespace steward::api
