#include "replica/membership.h"

#include <algorithm>
#include <charconv>
#include <random>
#include <utility>

#include "common/json_access.h"
#include "common/log.h"
#include "common/time_util.h"
#include "engine/manifests/manifests.h"
#include "engine/model/project.h"
#include "engine/model/shard.h"

namespace steward::replica {
namespace {

using Millis = std::chrono::milliseconds;

std::string RandomSuffix() {
  std::random_device rd;
  std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  uint64_t v = gen();
  for (int i = 0; i < 12; ++i, v >>= 4) out += kHex[v & 15];
  return out;
}

int ParseShards(std::string_view text) {
  int v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && ptr == text.data() + text.size() ? v : 0;
}

}  // namespace

void LeaseTracker::Observe(const std::string& replica, const Seen& lease, SteadyTime now) {
  auto it = seen_.find(replica);
  if (it != seen_.end() && it->second.resource_version == lease.resource_version) return;
  Seen next = lease;
  next.observed = now;
  seen_[replica] = std::move(next);
}

void LeaseTracker::Retain(const std::set<std::string>& listed) {
  std::erase_if(seen_, [&](const auto& entry) { return !listed.contains(entry.first); });
}

bool LeaseTracker::Live(const std::string& replica, SteadyTime now) const {
  auto it = seen_.find(replica);
  if (it == seen_.end() || it->second.holder.empty()) return false;
  return now - it->second.observed < it->second.duration;
}

std::vector<std::string> LeaseTracker::LiveReplicas(SteadyTime now) const {
  std::vector<std::string> out;
  for (const auto& [name, lease] : seen_) {
    if (Live(name, now)) out.push_back(name);
  }
  return out;
}

Status ValidateMembershipOptions(const MembershipOptions& o) {
  if (!engine::IsDns1123Label(o.name)) {
    return InvalidArgument(
        "replicas.name: must be a DNS label ([a-z0-9]([-a-z0-9]*[a-z0-9])?, at "
        "most 63 characters; got \"" +
        o.name.substr(0, 80) + "\")");
  }
  if (kLeasePrefix.size() + o.name.size() > 253) {
    return InvalidArgument("replicas.name: too long");
  }
  if (o.shards < 1 || o.shards > engine::kMaxShards) {
    return InvalidArgument("replicas.shards: must be between 1 and " +
                           std::to_string(engine::kMaxShards) + " (got " +
                           std::to_string(o.shards) + ")");
  }
  if (o.lease_duration < std::chrono::seconds(1) ||
      o.lease_duration % std::chrono::seconds(1) != Millis(0)) {
    return InvalidArgument(
        "replicas.leaseDuration: must be a whole number of seconds, at least 1s");
  }
  if (o.renew_deadline >= o.lease_duration) {
    return InvalidArgument("replicas.renewDeadline: must be less than replicas.leaseDuration");
  }
  if (o.retry_period <= Millis(0) || o.retry_period >= o.renew_deadline) {
    return InvalidArgument(
        "replicas.retryPeriod: must be more than 0 and less than replicas.renewDeadline");
  }
  if (!o.apply) return InvalidArgument("replicas: no engine to apply the shards to");
  return Status::Ok();
}

StatusOr<std::unique_ptr<Membership>> Membership::Create(MembershipOptions options,
                                                         std::shared_ptr<kube::Client> client,
                                                         store::Store& store) {
  std::string ns = options.ns;
  return Create(std::move(options), KubeLeases(std::move(client), std::move(ns)), store);
}
StatusOr<std::unique_ptr<Membership>> Membership::Create(MembershipOptions options,
                                                         std::unique_ptr<LeaseBackend> leases,
                                                         store::Store& store) {
  RETURN_IF_ERROR(ValidateMembershipOptions(options));
  if (!leases) return InvalidArgument("replicas: no place for the Leases");
  return std::unique_ptr<Membership>(new Membership(std::move(options), std::move(leases), store));
}

Membership::Membership(MembershipOptions options, std::unique_ptr<LeaseBackend> leases,
                       store::Store& store)
    : options_(std::move(options)),
      leases_(std::move(leases)),
      store_(store),
      clock_(options_.clock != nullptr ? *options_.clock : real_clock_),
      identity_(options_.name + "_" + RandomSuffix()),
      lease_name_(std::string(kLeasePrefix) + options_.name) {
  MutexLock lock(mu_);
  stats_.identity = identity_;
  stats_.not_ready = "replica " + options_.name + ": has not renewed its Lease yet";
}

Membership::~Membership() { Stop(); }

void Membership::Start() {
  MutexLock lock(mu_);
  if (started_) return;
  started_ = true;
  started_at_ = clock_.Now();
  renewer_ = std::thread([this] { RenewLoop(); });
  rebalancer_ = std::thread([this] { RebalanceLoop(); });
  watchdog_ = std::thread([this] { Watchdog(); });
}

void Membership::StopThreads() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  wake_.NotifyAll();
  if (renewer_.joinable()) renewer_.join();
  if (rebalancer_.joinable()) rebalancer_.join();
  if (watchdog_.joinable()) watchdog_.join();
}

void Membership::Stop() {
  {
    MutexLock lock(mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  StopThreads();
  {
    MutexLock lock(mu_);
    if (!started_) return;
  }
  // Drain, release every shard, then the Lease: the others take over at their next retry.
  ReleaseAll();
  if (lease_) {
    const auto timeout = options_.retry_period;
    auto released = leases_->Update(LeaseBody(lease_, true), timeout);
    if (!released.ok() && released.error().code() == StatusCode::kAborted) {
      if (auto again = leases_->Get(lease_name_); again.ok()) {
        released = leases_->Update(LeaseBody(*again, true), timeout);
      }
    }
    if (!released.ok()) {
      LOG_WARN("replica {}: releasing Lease {}: {}", options_.name, lease_name_,
               released.error().ToString());
    }
  }
  SetNotReady("replica " + options_.name + ": stopped");
  LOG_INFO("replica {}: stopped; shards and Lease released", options_.name);
}

void Membership::Abandon() {
  {
    MutexLock lock(mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  StopThreads();
  SetNotReady("replica " + options_.name + ": abandoned");
}

Status Membership::Ready() const {
  MutexLock lock(mu_);
  if (stats_.not_ready.empty()) return Status::Ok();
  return Unavailable(stats_.not_ready);
}

MembershipStats Membership::stats() const {
  MutexLock lock(mu_);
  return stats_;
}

void Membership::SetNotReady(std::string why) {
  MutexLock lock(mu_);
  stats_.not_ready = std::move(why);
}

void Membership::RenewLoop() {
  // Renews every retry_period, and lists the replicas' Leases four times as often: a Lease is
  // judged by when its change was first seen, so seeing it sooner takes a dead replica's share
  // over sooner (within lease_duration + retry_period / 2 of its last renewal, rather than + 2 ×
  // retry_period with one list per renewal).
  const Millis step = std::max(Millis(10), options_.retry_period / 4);
  std::optional<SteadyTime> next_renew;
  for (;;) {
    {
      MutexLock lock(mu_);
      if (stopping_) return;
    }
    if (!next_renew || clock_.Now() >= *next_renew) {
      next_renew = clock_.Now() + options_.retry_period;
      RenewTick();
    }
    ObserveLeases();
    MutexLock lock(mu_);
    if (wake_.WaitFor(mu_, step, [this]() REQUIRES(mu_) { return stopping_; })) return;
  }
}

void Membership::RebalanceLoop() {
  uint64_t seen = 0;
  for (;;) {
    View view;
    {
      MutexLock lock(mu_);
      wake_.WaitFor(mu_, options_.retry_period,
                    [&]() REQUIRES(mu_) { return stopping_ || (view_ && view_->seq != seen); });
      if (stopping_) return;
      if (!view_ || view_->seq == seen) continue;
      view = *view_;
      seen = view.seq;
      // A view is acted on only while the Lease it came with is still within its deadline.
      if (!last_renew_ || clock_.Now() - *last_renew_ >= options_.renew_deadline) continue;
    }
    if (view.conflicting != 0) {
      const std::string why = "replica " + options_.name + ": a live replica Lease announces " +
                              std::to_string(view.conflicting) + " shards, this replica " +
                              std::to_string(options_.shards) +
                              " (replicas.shards must be the same on every replica)";
      if (!conflict_logged_) LOG_ERROR("{}", why);
      conflict_logged_ = true;
      ReleaseAll();
      SetNotReady(why);
      continue;
    }
    conflict_logged_ = false;
    SetNotReady("");
    Rebalance(view.live, view.listed_at);
  }
}

void Membership::Watchdog() {
  // Checks the renew deadline four times per retry period, so a renewal that hangs (a cluster
  // that stopped answering) still stops the engine within the deadline plus a fraction.
  const Millis step = std::max(Millis(10), options_.retry_period / 4);
  for (;;) {
    bool expired = false;
    std::string why = "cannot renew its Lease within renewDeadline";
    {
      MutexLock lock(mu_);
      if (wake_.WaitFor(mu_, step, [this]() REQUIRES(mu_) { return stopping_; })) return;
      const SteadyTime since = last_renew_ ? *last_renew_ : started_at_;
      expired = clock_.Now() - since >= options_.renew_deadline;
      if (!renew_error_.empty()) why += " (last: " + renew_error_ + ")";
    }
    if (expired) DropAll(why);
  }
}

Json Membership::LeaseBody(const std::optional<Json>& current, bool release) const {
  Json lease = current ? *current
                       : Json{{"apiVersion", "coordination.k8s.io/v1"},
                              {"kind", "Lease"},
                              {"metadata", {{"name", lease_name_}, {"namespace", options_.ns}}},
                              {"spec", Json::object()}};
  Json& meta = lease["metadata"];
  meta["labels"][std::string(engine::kManagedByLabel)] = std::string(engine::kManagedByValue);
  meta["labels"][std::string(kRoleLabel)] = std::string(kRoleValue);
  meta["annotations"][std::string(kShardsAnnotation)] = std::to_string(options_.shards);
  Json& spec = lease["spec"];
  const std::string now = FormatRfc3339Micro(clock_.WallNow());
  if (release) {
    spec["holderIdentity"] = "";
    spec["leaseDurationSeconds"] = 1;
    spec["renewTime"] = now;
    return lease;
  }
  const std::string holder = GetString(spec, "holderIdentity");
  if (holder != identity_) {
    // Ours by name, held by a past process of this replica (or released): taken over.
    const Json* transitions = FindPath(spec, "leaseTransitions");
    const int64_t n = transitions != nullptr && transitions->is_number_integer()
                          ? transitions->get<int64_t>()
                          : 0;
    spec["leaseTransitions"] = current && !holder.empty() ? n + 1 : n;
    spec["acquireTime"] = now;
    spec["holderIdentity"] = identity_;
  }
  spec["leaseDurationSeconds"] =
      std::chrono::duration_cast<std::chrono::seconds>(options_.lease_duration).count();
  spec["renewTime"] = now;
  return lease;
}

Status Membership::Renew() {
  // A Lease says "this replica acts for its shards"; it cannot while its writes cannot reach the
  // store. Not renewing hands its shards to replicas that can. A store that has answered within
  // half the renew deadline is given the benefit of the doubt: a database restart of a few
  // seconds does not make every replica drop its shards.
  const SteadyTime asked = clock_.Now();
  if (!store_answered_) store_answered_ = asked;  // the first ask: counted from here
  if (StatusOr<int64_t> store = store_.LastPosition(); store.ok()) {
    store_answered_ = asked;
  } else if (asked - *store_answered_ >= options_.renew_deadline / 2) {
    return Unavailable("the store does not answer: " + store.error().message());
  }
  // Half the renew deadline per write: a slow answer still lands in time, a hung one leaves
  // time for a second try before the watchdog stops the engine.
  const auto write = std::max(options_.retry_period, options_.renew_deadline / 2);
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!lease_) {
      auto got = leases_->Get(lease_name_);
      if (got.ok()) {
        const std::string holder = GetString(MemberOrNull(*got, "spec"), "holderIdentity");
        if (held_once_ && !holder.empty() && holder != identity_) {
          // Ours by name, so taken back; but someone else renewed it: two processes under one
          // replica name fence each other out in turn (every acquisition bumps the epoch).
          LOG_ERROR(
              "replica {}: Lease {} was renewed by {}: is another process running as "
              "replica {}? Names must be unique per replica",
              options_.name, lease_name_, holder, options_.name);
        }
        lease_ = std::move(*got);
      } else if (got.error().code() == StatusCode::kNotFound) {
        auto created = leases_->Create(LeaseBody(std::nullopt, false), write);
        if (created.ok()) {
          lease_ = std::move(*created);
          held_once_ = true;
          return Status::Ok();
        }
        if (created.error().code() != StatusCode::kAlreadyExists) return created.error();
        continue;  // created meanwhile (a past process of ours): read it and take it over
      } else {
        return got.error();
      }
    }
    auto updated = leases_->Update(LeaseBody(lease_, false), write);
    if (updated.ok()) {
      lease_ = std::move(*updated);
      held_once_ = true;
      return Status::Ok();
    }
    lease_.reset();  // re-read: a Conflict (someone wrote it) or NotFound (deleted)
    if (updated.error().code() != StatusCode::kAborted &&
        updated.error().code() != StatusCode::kNotFound) {
      return updated.error();
    }
  }
  return Aborted("Lease " + lease_name_ + " changed while renewing it");
}

std::optional<std::vector<std::string>> Membership::ListLive(int* conflicting_shards) {
  auto listed = leases_->List();
  if (!listed.ok()) {
    LOG_WARN("replica {}: listing replica Leases: {}", options_.name, listed.error().ToString());
    return std::nullopt;
  }
  const SteadyTime now = clock_.Now();
  std::set<std::string> names;
  for (const Json& lease : *listed) {
    const Json& meta = MemberOrNull(lease, "metadata");
    const std::string name = GetString(meta, "name");
    if (!name.starts_with(kLeasePrefix)) continue;
    const std::string replica = name.substr(kLeasePrefix.size());
    LeaseTracker::Seen seen;
    seen.holder = GetString(MemberOrNull(lease, "spec"), "holderIdentity");
    seen.resource_version = GetString(meta, "resourceVersion");
    const Json* d = FindPath(lease, "spec.leaseDurationSeconds");
    seen.duration =
        std::chrono::seconds(d != nullptr && d->is_number_integer() ? d->get<int64_t>() : 0);
    seen.shards = ParseShards(GetString(MemberOrNull(meta, "annotations"), kShardsAnnotation));
    tracker_.Observe(replica, seen, now);
    names.insert(replica);
  }
  tracker_.Retain(names);
  *conflicting_shards = 0;
  for (const std::string& replica : tracker_.LiveReplicas(now)) {
    const int s = tracker_.seen().at(replica).shards;
    if (replica != options_.name && s != 0 && s != options_.shards) *conflicting_shards = s;
  }
  return tracker_.LiveReplicas(now);
}

void Membership::RenewTick() {
  Status renewed = Renew();
  const SteadyTime now = clock_.Now();
  {
    MutexLock lock(mu_);
    if (renewed.ok()) {
      last_renew_ = now;
      ++stats_.renewals;
      stats_.renewing = true;
      renew_error_.clear();
    } else {
      ++stats_.renew_failures;
      renew_error_ = renewed.message();
      const SteadyTime since = last_renew_ ? *last_renew_ : started_at_;
      stats_.renewing = now - since < options_.renew_deadline;
    }
  }
  if (!renewed.ok()) {
    // The watchdog stops the engine once the deadline passes.
    LOG_WARN("replica {}: renewing Lease {}: {}", options_.name, lease_name_, renewed.message());
  }
}

void Membership::ObserveLeases() {
  {
    MutexLock lock(mu_);
    if (!last_renew_) return;  // nothing is decided before this replica's own Lease is written
  }
  int conflicting = 0;
  const SteadyTime listed_at = clock_.Now();
  auto live = ListLive(&conflicting);
  if (!live) return;
  {
    MutexLock lock(mu_);
    if (view_ && view_->live == *live && view_->conflicting == conflicting &&
        clock_.Now() - view_at_ < options_.retry_period) {
      return;  // nothing new: the rebalancer still gets a fresh view every retry_period
    }
    stats_.live = *live;
    const uint64_t seq = view_ ? view_->seq + 1 : 1;
    view_ = View{seq, std::move(*live), conflicting, listed_at};
    view_at_ = clock_.Now();
  }
  wake_.NotifyAll();  // the rebalancer
}

Status Membership::ApplyLocked(std::map<int, store::Fence> next) {
  Status applied = options_.apply(next);
  if (applied.ok()) {
    owned_ = std::move(next);
  } else {
    owned_.clear();  // the engine acts for none after a failed swap
  }
  std::map<int, int64_t> epochs;
  for (const auto& [shard, fence] : owned_) epochs[shard] = fence.epoch;
  MutexLock lock(mu_);
  stats_.owned = std::move(epochs);
  return applied;
}

void Membership::Rebalance(const std::vector<std::string>& live_names, SteadyTime listed_at) {
  std::vector<std::string> live = live_names;
  if (std::find(live.begin(), live.end(), options_.name) == live.end()) {
    live.push_back(options_.name);  // renewed just now: live, whatever the list said
  }
  const std::vector<std::string> assigned = engine::AssignShards(options_.shards, live);
  auto owners = store_.ListShardOwners();
  if (!owners.ok()) {
    LOG_WARN("replica {}: reading shard owners: {}", options_.name, owners.error().ToString());
    return;
  }
  const SteadyTime read_at = clock_.Now();
  std::map<int, store::ShardOwner> rows;
  for (const auto& row : *owners) {
    rows[row.shard] = row;
    HolderSeen& seen = holders_seen_[row.shard];
    if (seen.owner != row.owner || seen.epoch != row.epoch) seen = {row.owner, row.epoch, read_at};
  }
  // A holder missing from the view may have written its Lease after the view was listed (and
  // acquired since): it is judged only by a view listed after the read that first found it.
  auto judged_dead = [&](int shard) { return listed_at >= holders_seen_[shard].since; };
  const std::set<std::string> live_set(live.begin(), live.end());

  MutexLock transition(transition_mu_);
  // First give up what maps elsewhere (or what the store says is no longer ours): drain, then
  // release, so that its new owner never overlaps with us.
  std::map<int, store::Fence> keep;
  std::vector<store::Fence> release;
  for (const auto& [shard, fence] : owned_) {
    auto row = rows.find(shard);
    const bool still_ours =
        row != rows.end() && row->second.owner == fence.owner && row->second.epoch == fence.epoch;
    if (!still_ours) continue;  // acquired by another: dropped without a release
    if (assigned[shard] == options_.name) {
      keep[shard] = fence;
    } else {
      release.push_back(fence);
    }
  }
  if (keep.size() != owned_.size()) {
    if (Status s = ApplyLocked(keep); !s.ok()) {
      LOG_ERROR("replica {}: the engine could not drop shards: {}", options_.name, s.message());
    }
    for (const store::Fence& fence : release) {
      Status s = store_.ReleaseShard(fence);
      if (s.ok()) {
        MutexLock lock(mu_);
        ++stats_.released;
      } else {
        LOG_WARN("replica {}: releasing shard {}: {}", options_.name, fence.shard, s.message());
      }
    }
  }
  // Then take what maps here and is free: never owned, released, ours from a past process, or
  // held by a replica whose Lease is not live (in a view listed after that holder was found).
  std::map<int, store::Fence> next = owned_;
  std::vector<int> acquired;
  const SteadyTime acquiring_since = clock_.Now();
  for (int shard = 0; shard < options_.shards; ++shard) {
    if (assigned[shard] != options_.name || next.contains(shard)) continue;
    auto row = rows.find(shard);
    int64_t epoch = 0;
    if (row != rows.end()) {
      const std::string& owner = row->second.owner;
      if (!owner.empty() && owner != options_.name &&
          (live_set.contains(owner) || !judged_dead(shard))) {
        continue;
      }
      epoch = row->second.epoch;
    }
    auto got = store_.AcquireShard(shard, options_.name, epoch);
    if (!got.ok()) continue;  // lost the race: re-read next tick
    next[shard] = store::Fence{shard, options_.name, got->epoch};
    acquired.push_back(shard);
  }
  if (acquired.empty()) return;
  {
    MutexLock lock(mu_);
    stats_.acquired += acquired.size();
  }
  // How long the acquisitions took (one store transaction each) and how old the view was: a
  // replica's handover time is mostly these two.
  LOG_INFO("replica {}: acquired {} shard(s) in {} ms (view listed {} ms before), acting for {}",
           options_.name, acquired.size(),
           std::chrono::duration_cast<Millis>(clock_.Now() - acquiring_since).count(),
           std::chrono::duration_cast<Millis>(acquiring_since - listed_at).count(), next.size());
  if (Status s = ApplyLocked(next); !s.ok()) {
    LOG_ERROR("replica {}: the engine could not take shards: {}; releasing them", options_.name,
              s.message());
    for (const auto& [shard, fence] : next) (void)store_.ReleaseShard(fence);
  }
}

void Membership::DropAll(std::string_view why) {
  MutexLock transition(transition_mu_);
  {
    // Again under the transition lock: a renewal may have landed since the watchdog looked.
    MutexLock lock(mu_);
    const SteadyTime since = last_renew_ ? *last_renew_ : started_at_;
    if (clock_.Now() - since < options_.renew_deadline) return;
    stats_.renewing = false;
  }
  if (owned_.empty()) {
    SetNotReady("replica " + options_.name + ": " + std::string(why));
    return;
  }
  LOG_ERROR("replica {}: {}; stopping work on its {} shard(s) until it renews", options_.name, why,
            owned_.size());
  SetNotReady("replica " + options_.name + ": " + std::string(why));
  (void)ApplyLocked({});
}

void Membership::ReleaseAll() {
  MutexLock transition(transition_mu_);
  const std::map<int, store::Fence> held = owned_;
  if (held.empty()) return;
  (void)ApplyLocked({});
  for (const auto& [shard, fence] : held) {
    Status s = store_.ReleaseShard(fence);
    if (s.ok()) {
      MutexLock lock(mu_);
      ++stats_.released;
    }
  }
}

}  // namespace steward::replica
