// The PostgreSQL store's shard ownership (epochs, handovers, their history) and command slots
// (postgres_store_impl.h).
#include "store/postgres_store_impl.h"
#include "store/store_impl.h"

namespace steward::store::pg {

StatusOr<ShardOwner> LoadShard(PgConn& c, int shard, bool for_update) {
  ASSIGN_OR_RETURN(PgResult r, c.Exec("read shard owner",
                                      std::string("SELECT owner, epoch, since_ms FROM "
                                                  "shard_owners WHERE shard = $1") +
                                          (for_update ? " FOR UPDATE" : ""),
                                      {shard}));
  ShardOwner o;
  o.shard = shard;
  if (r.Rows() > 0) {
    o.owner = r.Text(0, 0);
    o.epoch = r.Int(0, 1);
    o.since_ms = r.Int(0, 2);
  }
  return o;
}

Status CheckFenceOn(PgConn& c, const Fence& fence, bool for_update) {
  ASSIGN_OR_RETURN(ShardOwner now, LoadShard(c, fence.shard, for_update));
  if (now.owner == fence.owner && now.epoch == fence.epoch && !fence.owner.empty()) {
    return Status::Ok();
  }
  return FencedOut(fence, now);
}

Status PostgresStore::CheckFence(const Fence& fence) {
  return Read<bool>("check fence",
                    [&](PgConn& c) -> StatusOr<bool> {
                      RETURN_IF_ERROR(CheckFenceOn(c, fence, false));
                      return true;
                    })
      .status();
}

Status AppendShardEvent(PgConn& c, const ShardOwner& now, bool acquired) {
  return c
      .Exec("append shard history",
            "INSERT INTO shard_history (shard, owner, epoch, at_ms, acquired) "
            "VALUES ($1, $2, $3, $4, $5)",
            {now.shard, now.owner, now.epoch, now.since_ms, acquired ? "true" : "false"})
      .status();
}

StatusOr<ShardOwner> PostgresStore::AcquireShard(int shard, std::string_view owner,
                                                 int64_t expected_epoch) {
  RETURN_IF_ERROR(ValidateShardAndOwner(shard, owner));
  ShardOwner now;
  auto body = [&](PgConn& c) -> StatusOr<bool> {
    RETURN_IF_ERROR(
        c.Exec("lock shard ownership", "SELECT pg_advisory_xact_lock($1)", {kShardLock}).status());
    ASSIGN_OR_RETURN(now, LoadShard(c, shard, /*for_update=*/true));
    if (now.epoch != expected_epoch) return AcquireRaced(shard, expected_epoch, now);
    now.owner = std::string(owner);
    now.epoch = expected_epoch + 1;
    now.since_ms = NowMs();
    RETURN_IF_ERROR(c.Exec("acquire shard",
                           "INSERT INTO shard_owners (shard, owner, epoch, since_ms) VALUES ($1, "
                           "$2, $3, $4) ON CONFLICT (shard) DO UPDATE SET owner = excluded.owner, "
                           "epoch = excluded.epoch, since_ms = excluded.since_ms",
                           {shard, now.owner, now.epoch, now.since_ms})
                        .status());
    RETURN_IF_ERROR(AppendShardEvent(c, now, true));
    return true;
  };
  const Status done = Transact("acquire shard", body);
  if (!done.ok()) return done;
  return now;
}

Status PostgresStore::ReleaseShard(const Fence& fence) {
  RETURN_IF_ERROR(ValidateShardAndOwner(fence.shard, fence.owner));
  return Transact("release shard", [&](PgConn& c) -> StatusOr<bool> {
    RETURN_IF_ERROR(
        c.Exec("lock shard ownership", "SELECT pg_advisory_xact_lock($1)", {kShardLock}).status());
    RETURN_IF_ERROR(CheckFenceOn(c, fence, /*for_update=*/true));
    ShardOwner released{fence.shard, fence.owner, fence.epoch, NowMs()};
    RETURN_IF_ERROR(c.Exec("release shard",
                           "UPDATE shard_owners SET owner = '', since_ms = $1 WHERE shard = $2",
                           {released.since_ms, fence.shard})
                        .status());
    RETURN_IF_ERROR(AppendShardEvent(c, released, false));
    return true;
  });
}

StatusOr<std::vector<ShardOwner>> PostgresStore::ListShardOwners() {
  return Read<std::vector<ShardOwner>>(
      "list shard owners", [&](PgConn& c) -> StatusOr<std::vector<ShardOwner>> {
        ASSIGN_OR_RETURN(PgResult r, c.Exec("list shard owners",
                                            "SELECT shard, owner, epoch, since_ms FROM "
                                            "shard_owners ORDER BY shard"));
        std::vector<ShardOwner> out;
        for (int i = 0; i < r.Rows(); ++i) {
          out.push_back({static_cast<int>(r.Int(i, 0)), r.Text(i, 1), r.Int(i, 2), r.Int(i, 3)});
        }
        return out;
      });
}

StatusOr<std::vector<ShardEvent>> PostgresStore::ListShardHistory(int64_t after_seq, int limit) {
  if (limit < 0) return InvalidArgument("limit: must not be negative");
  return Read<std::vector<ShardEvent>>(
      "list shard history", [&](PgConn& c) -> StatusOr<std::vector<ShardEvent>> {
        ASSIGN_OR_RETURN(PgResult r,
                         c.Exec("list shard history",
                                "SELECT seq, shard, owner, epoch, at_ms, acquired FROM "
                                "shard_history WHERE seq > $1 ORDER BY seq LIMIT $2",
                                {after_seq, limit == 0 ? Arg(std::nullopt) : Arg(limit)}));
        std::vector<ShardEvent> out;
        for (int i = 0; i < r.Rows(); ++i) {
          out.push_back({r.Int(i, 0), static_cast<int>(r.Int(i, 1)), r.Text(i, 2), r.Int(i, 3),
                         r.Int(i, 4), r.Bool(i, 5)});
        }
        return out;
      });
}

StatusOr<bool> PostgresStore::TakeSlot(std::string_view key, std::string_view holder,
                                       std::chrono::milliseconds ttl) {
  RETURN_IF_ERROR(ValidateSlot(key, holder, ttl.count()));
  bool taken = false;
  const Status done = Transact("take command slot", [&](PgConn& c) -> StatusOr<bool> {
    const int64_t now = NowMs();
    RETURN_IF_ERROR(c.Exec("drop expired command slots",
                           "DELETE FROM command_slots WHERE expires_ms <= $1", {now})
                        .status());
    // Two processes inserting one key: the second waits for the first's commit, then finds the
    // conflict and takes the slot only when it holds it already.
    ASSIGN_OR_RETURN(PgResult r,
                     c.Exec("take command slot",
                            "INSERT INTO command_slots (key, holder, expires_ms) VALUES ($1, $2, "
                            "$3) ON CONFLICT (key) DO UPDATE SET expires_ms = excluded.expires_ms "
                            "WHERE command_slots.holder = excluded.holder RETURNING key",
                            {std::string(key), std::string(holder), now + ttl.count()}));
    taken = r.Rows() > 0;
    return true;
  });
  if (!done.ok()) return done;
  return taken;
}

Status PostgresStore::ReleaseSlot(std::string_view key, std::string_view holder) {
  RETURN_IF_ERROR(ValidateSlot(key, holder, 1));
  return Read<bool>("release command slot",
                    [&](PgConn& c) -> StatusOr<bool> {
                      RETURN_IF_ERROR(c.Exec("release command slot",
                                             "DELETE FROM command_slots WHERE key = $1 AND "
                                             "holder = $2",
                                             {std::string(key), std::string(holder)})
                                          .status());
                      return true;
                    })
      .status();
}

namespace {
Status ValidateLease(const StoredLease& lease) {
  if (lease.name.empty() || lease.name.size() > 253) {
    return InvalidArgument("lease name: must be 1-253 bytes");
  }
  if (lease.body.size() > 64 * 1024) return InvalidArgument("lease body: at most 64 KiB");
  if (lease.version < 0) return InvalidArgument("lease version: must not be negative");
  return Status::Ok();
}
}  // namespace

StatusOr<StoredLease> PostgresStore::GetLease(const std::string& name) {
  return Read<StoredLease>("read lease", [&](PgConn& c) -> StatusOr<StoredLease> {
    ASSIGN_OR_RETURN(
        PgResult r,
        c.Exec("read lease", "SELECT body, version FROM replica_leases WHERE name = $1", {name}));
    if (r.Rows() == 0) return NotFound("lease " + name + ": not found");
    return StoredLease{name, r.Text(0, 0), r.Int(0, 1)};
  });
}

StatusOr<StoredLease> PostgresStore::PutLease(const StoredLease& lease) {
  RETURN_IF_ERROR(ValidateLease(lease));
  StoredLease now = lease;
  now.version = lease.version + 1;
  const Status done = Transact("write lease", [&](PgConn& c) -> StatusOr<bool> {
    if (lease.version == 0) {
      ASSIGN_OR_RETURN(PgResult r,
                       c.Exec("create lease",
                              "INSERT INTO replica_leases (name, body, version) VALUES ($1, $2, "
                              "1) ON CONFLICT (name) DO NOTHING",
                              {lease.name, lease.body}));
      if (r.Affected() == 0) return AlreadyExists("lease " + lease.name + ": already exists");
      return true;
    }
    ASSIGN_OR_RETURN(PgResult r, c.Exec("update lease",
                                        "UPDATE replica_leases SET body = $1, version = $2 "
                                        "WHERE name = $3 AND version = $4",
                                        {lease.body, now.version, lease.name, lease.version}));
    if (r.Affected() == 1) return true;
    ASSIGN_OR_RETURN(
        PgResult there,
        c.Exec("read lease", "SELECT version FROM replica_leases WHERE name = $1", {lease.name}));
    if (there.Rows() == 0) return NotFound("lease " + lease.name + ": not found");
    return Aborted("lease " + lease.name + ": version " + std::to_string(lease.version) +
                   " is not the stored one (" + std::to_string(there.Int(0, 0)) + ")");
  });
  if (!done.ok()) return done;
  return now;
}

StatusOr<std::vector<StoredLease>> PostgresStore::ListLeases() {
  return Read<std::vector<StoredLease>>(
      "list leases", [&](PgConn& c) -> StatusOr<std::vector<StoredLease>> {
        ASSIGN_OR_RETURN(
            PgResult r,
            c.Exec("list leases", "SELECT name, body, version FROM replica_leases ORDER BY name"));
        std::vector<StoredLease> out;
        for (int i = 0; i < r.Rows(); ++i) out.push_back({r.Text(i, 0), r.Text(i, 1), r.Int(i, 2)});
        return out;
      });
}

}  // namespace steward::store::pg
