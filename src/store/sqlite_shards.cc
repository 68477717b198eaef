// The SQLite store's shard ownership (epochs, handovers, their history) and command slots
// (sqlite_store_impl.h).
#include "store/sqlite_store_impl.h"

namespace steward::store::sqlite {

StatusOr<ShardOwner> LoadShard(const Db& db, int shard) {
  Statement s = db.Prepare("SELECT owner, epoch, since_ms FROM shard_owners WHERE shard = ?");
  s.Bind(int64_t{shard});
  ShardOwner o;
  o.shard = shard;
  if (s.Step()) {
    o.owner = s.Text(0);
    o.epoch = s.Int(1);
    o.since_ms = s.Int(2);
  }
  RETURN_IF_ERROR(db.Check(s, "read shard owner"));
  return o;
}

Status CheckFenceIn(const Db& db, const Fence& fence) {
  ASSIGN_OR_RETURN(ShardOwner now, LoadShard(db, fence.shard));
  if (now.owner == fence.owner && now.epoch == fence.epoch && !fence.owner.empty()) {
    return Status::Ok();
  }
  return FencedOut(fence, now);
}

Status AppendShardEvent(const Db& db, const ShardOwner& now, bool acquired) {
  Statement s = db.Prepare(
      "INSERT INTO shard_history (shard, owner, epoch, at_ms, acquired) "
      "VALUES (?, ?, ?, ?, ?)");
  s.Bind(int64_t{now.shard}).Bind(now.owner).Bind(now.epoch).Bind(now.since_ms);
  s.Bind(int64_t{acquired ? 1 : 0}).Step();
  return db.Check(s, "append shard history");
}

StatusOr<ShardOwner> SqliteStore::AcquireShard(int shard, std::string_view owner,
                                               int64_t expected_epoch) {
  RETURN_IF_ERROR(ValidateShardAndOwner(shard, owner));
  MutexLock lock(mu_);
  Transaction tx(db_);
  RETURN_IF_ERROR(tx.Begin());
  ASSIGN_OR_RETURN(ShardOwner now, LoadShard(db_, shard));
  if (now.epoch != expected_epoch) return AcquireRaced(shard, expected_epoch, now);
  now.owner = std::string(owner);
  now.epoch = expected_epoch + 1;
  now.since_ms = NowMs();
  Statement s = db_.Prepare(
      "INSERT INTO shard_owners (shard, owner, epoch, since_ms) VALUES (?, ?, ?, ?) "
      "ON CONFLICT (shard) DO UPDATE SET owner = excluded.owner, epoch = excluded.epoch, "
      "since_ms = excluded.since_ms");
  s.Bind(int64_t{shard}).Bind(now.owner).Bind(now.epoch).Bind(now.since_ms).Step();
  RETURN_IF_ERROR(db_.Check(s, "acquire shard"));
  RETURN_IF_ERROR(AppendShardEvent(db_, now, true));
  RETURN_IF_ERROR(tx.Commit());
  return now;
}

Status SqliteStore::ReleaseShard(const Fence& fence) {
  RETURN_IF_ERROR(ValidateShardAndOwner(fence.shard, fence.owner));
  MutexLock lock(mu_);
  Transaction tx(db_);
  RETURN_IF_ERROR(tx.Begin());
  RETURN_IF_ERROR(CheckFenceIn(db_, fence));
  ShardOwner released{fence.shard, fence.owner, fence.epoch, NowMs()};
  Statement s = db_.Prepare("UPDATE shard_owners SET owner = '', since_ms = ? WHERE shard = ?");
  s.Bind(released.since_ms).Bind(int64_t{fence.shard}).Step();
  RETURN_IF_ERROR(db_.Check(s, "release shard"));
  RETURN_IF_ERROR(AppendShardEvent(db_, released, false));
  return tx.Commit();
}

StatusOr<std::vector<ShardOwner>> SqliteStore::ListShardOwners() {
  MutexLock lock(mu_);
  Statement s =
      db_.Prepare("SELECT shard, owner, epoch, since_ms FROM shard_owners ORDER BY shard");
  std::vector<ShardOwner> out;
  while (s.Step()) {
    out.push_back({static_cast<int>(s.Int(0)), s.Text(1), s.Int(2), s.Int(3)});
  }
  RETURN_IF_ERROR(db_.Check(s, "list shard owners"));
  return out;
}

StatusOr<std::vector<ShardEvent>> SqliteStore::ListShardHistory(int64_t after_seq, int limit) {
  if (limit < 0) return InvalidArgument("limit: must not be negative");
  MutexLock lock(mu_);
  Statement s = db_.Prepare(
      "SELECT seq, shard, owner, epoch, at_ms, acquired FROM shard_history "
      "WHERE seq > ? ORDER BY seq LIMIT ?");
  s.Bind(after_seq).Bind(limit == 0 ? int64_t{-1} : int64_t{limit});
  std::vector<ShardEvent> out;
  while (s.Step()) {
    out.push_back(
        {s.Int(0), static_cast<int>(s.Int(1)), s.Text(2), s.Int(3), s.Int(4), s.Int(5) != 0});
  }
  RETURN_IF_ERROR(db_.Check(s, "list shard history"));
  return out;
}

StatusOr<bool> SqliteStore::TakeSlot(std::string_view key, std::string_view holder,
                                     std::chrono::milliseconds ttl) {
  RETURN_IF_ERROR(ValidateSlot(key, holder, ttl.count()));
  MutexLock lock(mu_);
  Transaction tx(db_);
  RETURN_IF_ERROR(tx.Begin());
  const int64_t now = NowMs();
  Statement expired = db_.Prepare("DELETE FROM command_slots WHERE expires_ms <= ?");
  expired.Bind(now).Step();
  RETURN_IF_ERROR(db_.Check(expired, "drop expired command slots"));
  Statement s = db_.Prepare(
      "INSERT INTO command_slots (key, holder, expires_ms) VALUES (?, ?, ?) "
      "ON CONFLICT (key) DO UPDATE SET expires_ms = excluded.expires_ms "
      "WHERE command_slots.holder = excluded.holder");
  s.Bind(key).Bind(holder).Bind(now + ttl.count()).Step();
  RETURN_IF_ERROR(db_.Check(s, "take command slot"));
  const bool taken = sqlite3_changes(db_.handle) > 0;
  RETURN_IF_ERROR(tx.Commit());
  return taken;
}

Status SqliteStore::ReleaseSlot(std::string_view key, std::string_view holder) {
  RETURN_IF_ERROR(ValidateSlot(key, holder, 1));
  MutexLock lock(mu_);
  Statement s = db_.Prepare("DELETE FROM command_slots WHERE key = ? AND holder = ?");
  s.Bind(key).Bind(holder).Step();
  return db_.Check(s, "release command slot");
}

}  // namespace steward::store::sqlite
