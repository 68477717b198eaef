// CuttableStore, for tests: a Store that forwards every call to another one, and fails every
// call that would reach the database (kUnavailable) while cut: a process cut off from a store
// that others still reach. Listeners, FeedId and Describe are forwarded whether cut or not.
// Ownership: borrows `inner`, which must outlive it. Thread-safe as `inner` is; cut() may be
// flipped from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "store/store.h"

namespace steward::store {

class CuttableStore final : public Store {
 public:
  explicit CuttableStore(Store& inner) : inner_(inner) {}
  std::atomic<bool> cut{false};
  // Run after each ListProjects read, before it returns (set it before the store is shared):
  // a test commits here what a reader's page must not undo.
  std::function<void()> after_list;

  StatusOr<ProjectRecord> GetProject(std::string_view id) override {
    RETURN_IF_ERROR(Gate());
    return inner_.GetProject(id);
  }
  StatusOr<ProjectRecord> GetProjectByName(std::string_view name) override {
    RETURN_IF_ERROR(Gate());
    return inner_.GetProjectByName(name);
  }
  StatusOr<std::vector<ProjectRecord>> ListProjects(const ListFilter& filter) override {
    RETURN_IF_ERROR(Gate());
    auto read = inner_.ListProjects(filter);
    if (after_list) after_list();
    return read;
  }
  StatusOr<std::map<std::string, int64_t>> CountRecords(const CountQuery& query) override {
    RETURN_IF_ERROR(Gate());
    return inner_.CountRecords(query);
  }
  StatusOr<ProjectRecord> CreateProject(const ProjectRecord& record,
                                        const Mutation& extra) override {
    RETURN_IF_ERROR(Gate());
    return inner_.CreateProject(record, extra);
  }
  StatusOr<ProjectRecord> MutateProject(std::string_view id, const MutateFn& fn) override {
    RETURN_IF_ERROR(Gate());
    return inner_.MutateProject(id, fn);
  }
  StatusOr<UpsertResult> UpsertProjectByName(std::string_view name, const CreateFn& create,
                                             const MutateFn& update) override {
    RETURN_IF_ERROR(Gate());
    return inner_.UpsertProjectByName(name, create, update);
  }
  Status PurgeProject(std::string_view id, const HistoryEntry& tombstone,
                      const std::optional<Fence>& fence = std::nullopt) override {
    RETURN_IF_ERROR(Gate());
    return inner_.PurgeProject(id, tombstone, fence);
  }
  StatusOr<ShardOwner> AcquireShard(int shard, std::string_view owner,
                                    int64_t expected_epoch) override {
    RETURN_IF_ERROR(Gate());
    return inner_.AcquireShard(shard, owner, expected_epoch);
  }
  Status ReleaseShard(const Fence& fence) override {
    RETURN_IF_ERROR(Gate());
    return inner_.ReleaseShard(fence);
  }
  Status CheckFence(const Fence& fence) override {
    RETURN_IF_ERROR(Gate());
    return inner_.CheckFence(fence);
  }
  StatusOr<std::vector<ShardOwner>> ListShardOwners() override {
    RETURN_IF_ERROR(Gate());
    return inner_.ListShardOwners();
  }
  StatusOr<std::vector<ShardEvent>> ListShardHistory(int64_t after_seq, int limit) override {
    RETURN_IF_ERROR(Gate());
    return inner_.ListShardHistory(after_seq, limit);
  }
  StatusOr<StoredLease> GetLease(const std::string& name) override {
    RETURN_IF_ERROR(Gate());
    return inner_.GetLease(name);
  }
  StatusOr<StoredLease> PutLease(const StoredLease& lease) override {
    RETURN_IF_ERROR(Gate());
    return inner_.PutLease(lease);
  }
  StatusOr<std::vector<StoredLease>> ListLeases() override {
    RETURN_IF_ERROR(Gate());
    return inner_.ListLeases();
  }
  StatusOr<bool> TakeSlot(std::string_view key, std::string_view holder,
                          std::chrono::milliseconds ttl) override {
    RETURN_IF_ERROR(Gate());
    return inner_.TakeSlot(key, holder, ttl);
  }
  Status ReleaseSlot(std::string_view key, std::string_view holder) override {
    RETURN_IF_ERROR(Gate());
    return inner_.ReleaseSlot(key, holder);
  }
  StatusOr<std::vector<ProjectRecord>> ListProjectsWithoutHostnames() override {
    RETURN_IF_ERROR(Gate());
    return inner_.ListProjectsWithoutHostnames();
  }
  StatusOr<std::map<std::string, std::string>> ClaimHostnames(
      const std::vector<std::pair<std::string, std::vector<std::string>>>& by_project) override {
    RETURN_IF_ERROR(Gate());
    return inner_.ClaimHostnames(by_project);
  }
  StatusOr<std::vector<Credential>> ListCredentials(std::string_view project_id) override {
    RETURN_IF_ERROR(Gate());
    return inner_.ListCredentials(project_id);
  }
  StatusOr<Credential> FindCredentialByToken(std::string_view token) override {
    RETURN_IF_ERROR(Gate());
    return inner_.FindCredentialByToken(token);
  }
  StatusOr<std::vector<HistoryEntry>> ListHistory(std::string_view project_id, int64_t after_seq,
                                                  int limit) override {
    RETURN_IF_ERROR(Gate());
    return inner_.ListHistory(project_id, after_seq, limit);
  }
  int AddListener(Listener listener) override { return inner_.AddListener(std::move(listener)); }
  void RemoveListener(int handle) override { inner_.RemoveListener(handle); }
  std::string FeedId() const override { return inner_.FeedId(); }
  StatusOr<int64_t> LastPosition() override {
    RETURN_IF_ERROR(Gate());
    return inner_.LastPosition();
  }
  std::string Describe() const override { return inner_.Describe(); }

 private:
  Status Gate() const {
    return cut ? Unavailable(inner_.Describe() + ": cut off by the test") : Status::Ok();
  }
  Store& inner_;
};

}  // namespace steward::store
