// Membership: one replica's place among several that share one store (docs/design.md §10,
// docs/operations.md "Several replicas").
//
// Each replica keeps a coordination.k8s.io/v1 Lease of its own, "steward-replica-<name>" in the
// engine's namespace, or in the shared store with `replicas.leases: store` (lease_backend.h: with
// several clusters no cluster then is the replicas' liveness) (labels
// app.kubernetes.io/managed-by=steward, steward.io/role=replica; annotation
// steward.io/shards=<count>), renewed every retry_period with an update at the read resourceVersion
// (client-go's rules: a Conflict re-reads; a holder change bumps leaseTransitions). It lists every
// replica Lease four times per retry_period and judges one live the client-go way, by the local
// time its resourceVersion was last seen to change (LeaseTracker), never by the holder's clock; a
// Lease whose holderIdentity is "" is released, gone at once.
//
// Shards go to the live replicas by rendezvous hashing of their names (AssignShards). The store
// is the fence: a replica acquires shard s (Store::AcquireShard, a compare-and-set on the epoch)
// only when s maps to it and the shard's owner is itself, nobody, or a replica whose Lease is not
// live; it gives up a shard that maps elsewhere by first making the engine stop and drain it
// (`apply`) and then releasing it; the new owner acquires once it sees the release.
//
// A renewal is a read of the store and then the Lease update: a replica whose store has not
// answered for renew_deadline / 2 (a partition from the database the others still reach) does
// not renew, so it stops acting renew_deadline later and its Lease expires, and the replicas that
// can write take its shards over; once the store answers again it renews and rejoins. A store
// outage shorter than renew_deadline / 2 (a database restart) costs no renewal.
//
// Not renewed within renew_deadline (< lease_duration, so before anyone may take over): the
// replica stops acting on every shard at once (apply({}), by a watchdog even while a request
// hangs) and is not ready until it renews again; it then acquires its shards afresh (new
// epochs). A live Lease announcing another shard count: ERROR, not ready, owns nothing.
//
// Stop() is the clean shutdown: drain (apply({})), release every shard, then release the Lease
// (holderIdentity "", leaseDurationSeconds 1, as client-go's ReleaseOnCancel), so that the others
// take over at their next retry. Abandon() (tests) stops without releasing anything: a silent
// death.
//
// Threads: a renewer (renew, list the Leases: a view of the live replicas), a rebalancer (from
// each new view: assign, release, acquire, apply — a drain or an informer sync never delays a
// renewal) and a watchdog (the renew deadline). `apply` is called from the rebalancer or the
// watchdog, never concurrently, never with a lock held that Ready() or stats() need. Ready(),
// stats() and identity() may be called from any thread. Ownership: borrows the store (which must
// outlive it) and owns its LeaseBackend.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/json.h"
#include "common/mutex.h"
#include "common/status.h"
#include "kube/client/client.h"
#include "replica/lease_backend.h"
#include "store/store.h"

namespace steward::replica {

inline constexpr std::string_view kRoleLabel = "steward.io/role";
inline constexpr std::string_view kRoleValue = "replica";
inline constexpr std::string_view kShardsAnnotation = "steward.io/shards";
inline constexpr std::string_view kLeasePrefix = "steward-replica-";

// LeaseTracker: which replicas' Leases are live, by observed time (client-go's rule: a Lease is
// live while now - (the local time its resourceVersion last changed) < leaseDurationSeconds).
// A Lease seen for the first time counts as just renewed, so a new replica waits up to a lease
// duration before declaring another dead. Not thread-safe (the membership loop owns it).
class LeaseTracker {
 public:
  struct Seen {
    std::string holder;  // holderIdentity; "" = released
    std::string resource_version;
    std::chrono::seconds duration{0};
    int shards = 0;  // the steward.io/shards annotation; 0 when absent or not a number
    SteadyTime observed{};
  };
  // The Lease of `replica` as listed at `now`.
  void Observe(const std::string& replica, const Seen& lease, SteadyTime now);
  // Forgets replicas not in `listed` (their Lease was deleted).
  void Retain(const std::set<std::string>& listed);
  bool Live(const std::string& replica, SteadyTime now) const;
  std::vector<std::string> LiveReplicas(SteadyTime now) const;  // sorted
  const std::map<std::string, Seen>& seen() const { return seen_; }

 private:
  std::map<std::string, Seen> seen_;
};

struct MembershipOptions {
  std::string name;            // this replica: a DNS label, unique per replica
  std::string ns = "steward";  // the engine's namespace: the Leases live there
  int shards = 64;             // 1..4096, as the engine's
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};  // < lease_duration
  std::chrono::milliseconds retry_period{2000};     // < renew_deadline
  // Makes the engine act for exactly these shards (engine::Engine::SetOwnedShards); returns
  // once shards that went are drained. An error: the membership owns none of the new ones.
  std::function<Status(std::map<int, store::Fence>)> apply;
  const Clock* clock = nullptr;  // null: RealClock (steady time for liveness, wall for Lease times)
};
// kInvalidArgument naming the replicas.* key for the first bad option.
Status ValidateMembershipOptions(const MembershipOptions& options);

struct MembershipStats {
  std::string identity;           // "<name>_<random>"
  std::map<int, int64_t> owned;   // shard → epoch
  std::vector<std::string> live;  // replicas whose Lease is live, by name
  bool renewing = false;          // renewed within renew_deadline
  uint64_t renewals = 0, renew_failures = 0;
  uint64_t acquired = 0, released = 0;  // handovers: shards acquired / released
  std::string not_ready;                // why Ready() is not OK ("" when it is)
};

class Membership {
 public:
  // Leases in the engine's namespace of the cluster `client` reaches (KubeLeases).
  static StatusOr<std::unique_ptr<Membership>> Create(MembershipOptions options,
                                                      std::shared_ptr<kube::Client> client,
                                                      store::Store& store);
  // Leases where `leases` keeps them (StoreLeases: in the store).
  static StatusOr<std::unique_ptr<Membership>> Create(MembershipOptions options,
                                                      std::unique_ptr<LeaseBackend> leases,
                                                      store::Store& store);
  ~Membership();  // Stop()
  Membership(const Membership&) = delete;
  Membership& operator=(const Membership&) = delete;

  void Start();    // the loop and the watchdog; returns at once
  void Stop();     // clean shutdown (see above). Idempotent.
  void Abandon();  // stops the threads, releases nothing (tests: a replica that died)

  // OK while the Lease is renewed and no shard-count conflict stands; kUnavailable with the
  // reason otherwise.
  Status Ready() const;
  MembershipStats stats() const;
  const std::string& identity() const { return identity_; }
  const std::string& name() const { return options_.name; }

 private:
  Membership(MembershipOptions options, std::unique_ptr<LeaseBackend> leases, store::Store& store);
  void RenewLoop();
  void RebalanceLoop();
  void Watchdog();
  void RenewTick();      // one renewal and its bookkeeping
  void ObserveLeases();  // one list of the replicas' Leases; a new view for the rebalancer
  Status Renew();
  Json LeaseBody(const std::optional<Json>& current, bool release) const;
  // The live replicas, or nullopt when the Leases cannot be listed (nothing is decided then).
  std::optional<std::vector<std::string>> ListLive(int* conflicting_shards);
  void Rebalance(const std::vector<std::string>& live, SteadyTime listed_at);
  // Makes the engine act for `next`; releases nothing. Returns apply's status.
  Status ApplyLocked(std::map<int, store::Fence> next) REQUIRES(transition_mu_);
  void DropAll(std::string_view why) EXCLUDES(transition_mu_);
  void ReleaseAll() EXCLUDES(transition_mu_);
  void StopThreads();
  void SetNotReady(std::string why) EXCLUDES(mu_);

  const MembershipOptions options_;
  std::unique_ptr<LeaseBackend> leases_;
  store::Store& store_;
  RealClock real_clock_;
  const Clock& clock_;
  const std::string identity_;
  const std::string lease_name_;

  // Renewer thread only (and Stop, after the threads are joined).
  std::optional<Json> lease_;  // our Lease as last written or read
  LeaseTracker tracker_;
  bool held_once_ = false;  // this process has written its Lease
  // Rebalancer thread only.
  bool conflict_logged_ = false;
  // Per shard: its holder (owner, epoch) in the owners as last read, and the read that first
  // found it. A shard held by a replica the view does not show as live is taken over only on a
  // view listed after that read: a replica writes its Lease before it acquires, so such a view
  // shows the holder if it is alive.
  struct HolderSeen {
    std::string owner;
    int64_t epoch = 0;
    SteadyTime since{};
  };
  std::map<int, HolderSeen> holders_seen_;

  // What the renewer last saw: the live replicas and, when non-zero, another shard count a live
  // Lease announces.
  struct View {
    uint64_t seq = 0;
    std::vector<std::string> live;
    int conflicting = 0;
    SteadyTime listed_at{};  // when the list of Leases it comes from began
  };

  // Ownership transitions (the loop and the watchdog): what the engine acts for.
  Mutex transition_mu_;
  std::map<int, store::Fence> owned_ GUARDED_BY(transition_mu_);

  mutable Mutex mu_;
  CondVar wake_;
  bool stopping_ GUARDED_BY(mu_) = false;
  bool stopped_ GUARDED_BY(mu_) = false;
  bool started_ GUARDED_BY(mu_) = false;
  std::optional<SteadyTime> last_renew_ GUARDED_BY(mu_);
  std::string renew_error_ GUARDED_BY(mu_);   // the last renewal's failure; "" after a success
  std::optional<SteadyTime> store_answered_;  // the renewer's last store read that answered
  SteadyTime started_at_ GUARDED_BY(mu_){};
  MembershipStats stats_ GUARDED_BY(mu_);
  std::optional<View> view_ GUARDED_BY(mu_);
  SteadyTime view_at_ GUARDED_BY(mu_){};  // when view_ was published
  std::thread renewer_, rebalancer_, watchdog_;
};

}  // namespace steward::replica
