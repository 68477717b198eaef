#include "torture/chaos.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "torture/monitor.h"
#include "torture/steward_reads.h"

namespace steward::torture {

using std::chrono::milliseconds;

namespace {

// While cluster `cluster` is down (SIGKILLed at `down_ms`, wall): every project placed on it
// that existed before the kill says Unknown (ClusterUnreachable) by the grace +
// kTellUnreachableMs, and none says Running from then until 2 s later. Asks every 250 ms.
void CheckToldUnreachable(const Processes& procs, const TortureOptions& options,
                          const std::string& cluster, int64_t down_ms, Record& rec) {
  const int64_t grace_ms =
      std::chrono::duration_cast<milliseconds>(options.unreachable_grace).count();
  const int64_t told_by = down_ms + grace_ms + kTellUnreachableMs;
  const int64_t until = told_by + 2000;
  std::map<std::string, int64_t> told;     // id → when first seen told (wall ms)
  std::set<std::string> reported, placed;  // ids
  int64_t latest = 0;
  auto api = procs.Api();
  while (api.ok() && WallMs() < until) {
    if (auto listed = ListProjects(**api)) {
      const int64_t now = WallMs();
      for (const auto& [id, l] : *listed) {
        if (l.cluster != cluster || l.created_ms >= down_ms) continue;
        placed.insert(id);
        if (l.phase == "Unknown" && l.reason == "ClusterUnreachable") {
          if (told.emplace(id, now).second) latest = std::max(latest, now - down_ms - grace_ms);
          continue;
        }
        if (now > told_by && reported.insert(id).second) {
          rec.Violation(l.name, "cluster down", l.phase + " (" + l.reason + ")",
                        "cluster " + cluster + " down for " + std::to_string(now - down_ms) +
                            " ms (grace " + std::to_string(grace_ms) + " ms)");
        }
      }
    }
    std::this_thread::sleep_for(milliseconds(250));
  }
  rec.Log("cluster " + cluster + " down: " + std::to_string(told.size()) + " of " +
          std::to_string(placed.size()) + " projects placed on it told Unknown, the last " +
          std::to_string(latest) + " ms after the grace");
  rec.Update([&](TortureReport& r) {
    r.told_unreachable += static_cast<int64_t>(told.size());
    r.max_told_after_grace_ms = std::max(r.max_told_after_grace_ms, latest);
  });
}

}  // namespace

std::vector<Kill> Chaos(Processes& procs, const TortureOptions& options, Record& rec,
                        std::atomic<bool>& failed, ClusterKills* cluster_kills_us) {
  std::mt19937_64 rng(options.seed * 7919 + 17);
  auto uniform_ms = [&](int lo, int hi) {
    return milliseconds(lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1)));
  };
  std::vector<Kill> kills_done;
  int kills = 0, restarts = 0, db_restarts = 0, cluster_kills = 0;
  auto left = [&] {
    return std::vector<int>{options.kill_steward - kills, options.restart_cluster - restarts,
                            options.restart_database - db_restarts,
                            options.kill_cluster - cluster_kills};
  };
  auto any_left = [&] {
    for (int n : left()) {
      if (n > 0) return true;
    }
    return false;
  };
  while (any_left()) {
    std::this_thread::sleep_for(uniform_ms(2000, 8000));
    // Which: at random among those with some left.
    std::vector<int> remaining = left(), choices;
    for (int i = 0; i < 4; ++i) {
      if (remaining[static_cast<size_t>(i)] > 0) choices.push_back(i);
    }
    const int what = choices[rng() % choices.size()];
    if (what == 0) {
      ++kills;
      int replica = static_cast<int>(rng() % static_cast<uint64_t>(procs.replicas()));
      const bool long_down = procs.replicas() > 1 && kills % 2 == 0;
      // Every other kill (of those with several replicas) is of a busy project's owner.
      std::string why;
      if (procs.replicas() > 1 && (kills / 2) % 2 == 0) {
        if (auto owner = procs.OwnerOfABusyProject(rng)) {
          replica = owner->first;
          why = ", the owner of " + owner->second + " in the middle of a step";
        }
      }
      rec.Log("SIGKILL " + procs.ReplicaName(replica) + " (" + std::to_string(kills) + "/" +
              std::to_string(options.kill_steward) + ")" + why +
              (long_down ? ", down past its lease" : ""));
      Kill k{replica, WallMs()};
      procs.KillSteward(replica);
      std::this_thread::sleep_for(long_down ? options.lease_duration + options.retry_period +
                                                  uniform_ms(2000, 4000)
                                            : uniform_ms(0, 1000));
      if (Status st = procs.StartSteward(replica); !st.ok()) {
        rec.Violation("(steward)", "restart", "steward serve after SIGKILL", st.ToString());
        failed = true;
        kills_done.push_back(k);
        return kills_done;
      }
      const int64_t ready = WallMs();
      if (ready - k.at_ms < milliseconds(options.lease_duration).count()) k.back_ms = ready;
      kills_done.push_back(k);
      rec.Update([](TortureReport& r) { ++r.steward_kills; });
    } else if (what == 1 || what == 3) {
      const bool kept_down = what == 3;
      int& count = kept_down ? cluster_kills : restarts;
      ++count;
      const int cluster = static_cast<int>(rng() % static_cast<uint64_t>(procs.clusters()));
      const std::string name = procs.ClusterName(cluster);
      rec.Log("SIGKILL cluster " + name + " (" + std::to_string(count) + "/" +
              std::to_string(kept_down ? options.kill_cluster : options.restart_cluster) + ")" +
              (kept_down ? ", down past its unreachable grace" : ""));
      procs.KillCluster(cluster);
      const int64_t down_ms = WallMs();
      (*cluster_kills_us)[static_cast<size_t>(cluster)].push_back(down_ms * 1000 + 999);
      if (kept_down) {
        rec.ClusterDown(name, down_ms);
        CheckToldUnreachable(procs, options, name, down_ms, rec);
      } else {
        std::this_thread::sleep_for(uniform_ms(500, 2000));
      }
      if (kept_down) rec.ClusterUp(name, WallMs());
      Status st = procs.StartCluster(cluster);
      if (!st.ok()) {
        rec.Violation("(cluster)", "restart", "steward cluster after SIGKILL", st.ToString());
        failed = true;
        return kills_done;
      }
      rec.Update([&](TortureReport& r) { ++(kept_down ? r.cluster_kills : r.cluster_restarts); });
    } else {
      ++db_restarts;
      rec.Log("restart PostgreSQL (" + std::to_string(db_restarts) + "/" +
              std::to_string(options.restart_database) + ")");
      if (Status st = procs.RestartDatabase(uniform_ms(500, 2000)); !st.ok()) {
        rec.Violation("(database)", "restart", "PostgreSQL restart", st.ToString());
        failed = true;
        return kills_done;
      }
      rec.Update([](TortureReport& r) { ++r.database_restarts; });
    }
  }
  return kills_done;
}

}  // namespace steward::torture
