#include "torture/chaos.h"

#include <chrono>
#include <random>
#include <string>
#include <thread>

#include "torture/steward_reads.h"

namespace steward::torture {

using std::chrono::milliseconds;

std::vector<Kill> Chaos(Processes& procs, const TortureOptions& options, Record& rec,
                        std::atomic<bool>& failed, std::vector<int64_t>* cluster_kills_us) {
  std::mt19937_64 rng(options.seed * 7919 + 17);
  auto uniform_ms = [&](int lo, int hi) {
    return milliseconds(lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1)));
  };
  std::vector<Kill> kills_done;
  int kills = 0, restarts = 0, db_restarts = 0;
  auto left = [&] {
    return std::vector<int>{options.kill_steward - kills, options.restart_cluster - restarts,
                            options.restart_database - db_restarts};
  };
  while (kills < options.kill_steward || restarts < options.restart_cluster ||
         db_restarts < options.restart_database) {
    std::this_thread::sleep_for(uniform_ms(2000, 8000));
    // Which: at random among those with some left.
    std::vector<int> remaining = left(), choices;
    for (int i = 0; i < 3; ++i) {
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
    } else if (what == 1) {
      ++restarts;
      rec.Log("SIGKILL cluster (" + std::to_string(restarts) + "/" +
              std::to_string(options.restart_cluster) + ")");
      procs.KillCluster();
      cluster_kills_us->push_back(WallMs() * 1000 + 999);  // gone by the end of this ms
      std::this_thread::sleep_for(uniform_ms(500, 2000));
      if (Status st = procs.StartCluster(); !st.ok()) {
        rec.Violation("(cluster)", "restart", "steward cluster after SIGKILL", st.ToString());
        failed = true;
        return kills_done;
      }
      rec.Update([](TortureReport& r) { ++r.cluster_restarts; });
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
