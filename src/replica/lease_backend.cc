#include "replica/lease_backend.h"

#include <charconv>
#include <utility>

#include "common/json_access.h"
#include "common/log.h"
#include "replica/membership.h"

namespace steward::replica {
namespace {

using kube::ResourceType;

class Kube final : public LeaseBackend {
 public:
  Kube(std::shared_ptr<kube::Client> client, std::string ns)
      : client_(std::move(client)), ns_(std::move(ns)) {}

  StatusOr<Json> Get(const std::string& name) override {
    auto got = client_->Get(ResourceType::Lease(), ns_, name);
    if (!got.ok()) return got.error().ToStatus();
    return std::move(*got);
  }
  StatusOr<Json> Create(const Json& lease, std::chrono::milliseconds timeout) override {
    auto created = client_->Create(ResourceType::Lease(), ns_, lease, {.timeout = timeout});
    if (!created.ok()) return created.error().ToStatus();
    return std::move(*created);
  }
  StatusOr<Json> Update(const Json& lease, std::chrono::milliseconds timeout) override {
    auto updated = client_->Update(ResourceType::Lease(), lease, {.timeout = timeout});
    if (!updated.ok()) return updated.error().ToStatus();
    return std::move(*updated);
  }
  StatusOr<std::vector<Json>> List() override {
    kube::ListOptions lo;
    lo.label_selector = std::string(kRoleLabel) + "=" + std::string(kRoleValue);
    auto listed = client_->ListAll(ResourceType::Lease(), ns_, lo);
    if (!listed.ok()) return listed.error().ToStatus();
    return std::move(listed->items);
  }
  std::string Where() const override { return "Leases in namespace " + ns_; }

 private:
  std::shared_ptr<kube::Client> client_;
  const std::string ns_;
};

class InStore final : public LeaseBackend {
 public:
  explicit InStore(store::Store& store) : store_(store) {}

  StatusOr<Json> Get(const std::string& name) override {
    ASSIGN_OR_RETURN(store::StoredLease got, store_.GetLease(name));
    return ToJson(got);
  }
  StatusOr<Json> Create(const Json& lease, std::chrono::milliseconds) override {
    store::StoredLease put{NameOf(lease), DumpJson(Stripped(lease)), 0};
    ASSIGN_OR_RETURN(store::StoredLease got, store_.PutLease(put));
    return ToJson(got);
  }
  StatusOr<Json> Update(const Json& lease, std::chrono::milliseconds) override {
    const std::string rv = GetString(MemberOrNull(lease, "metadata"), "resourceVersion");
    int64_t version = 0;
    const auto [end, ec] = std::from_chars(rv.data(), rv.data() + rv.size(), version);
    if (rv.empty() || ec != std::errc() || end != rv.data() + rv.size() || version < 1) {
      return Aborted("Lease " + NameOf(lease) + ": resourceVersion \"" + rv +
                     "\" is not one of the store's");
    }
    store::StoredLease put{NameOf(lease), DumpJson(Stripped(lease)), version};
    ASSIGN_OR_RETURN(store::StoredLease got, store_.PutLease(put));
    return ToJson(got);
  }
  StatusOr<std::vector<Json>> List() override {
    ASSIGN_OR_RETURN(std::vector<store::StoredLease> all, store_.ListLeases());
    std::vector<Json> out;
    for (const store::StoredLease& l : all) {
      auto j = ToJson(l);
      if (!j.ok()) {  // not one of ours: skipped (its replica is not counted live), said once a
                      // list
        LOG_WARN("replica Leases in the store: {}", j.error().message());
        continue;
      }
      out.push_back(std::move(*j));
    }
    return out;
  }
  std::string Where() const override { return "Leases in the store"; }

 private:
  static std::string NameOf(const Json& lease) {
    return GetString(MemberOrNull(lease, "metadata"), "name");
  }
  // What is stored: the object without its resourceVersion (the store's version is).
  static Json Stripped(const Json& lease) {
    Json j = lease;
    if (j.contains("metadata") && j["metadata"].is_object()) j["metadata"].erase("resourceVersion");
    return j;
  }
  static StatusOr<Json> ToJson(const store::StoredLease& l) {
    auto j = ParseJson(l.body);
    if (!j.ok() || !j->is_object()) return Internal("Lease " + l.name + ": stored body unreadable");
    (*j)["metadata"]["name"] = l.name;
    (*j)["metadata"]["resourceVersion"] = std::to_string(l.version);
    return std::move(*j);
  }

  store::Store& store_;
};

}  // namespace

std::unique_ptr<LeaseBackend> KubeLeases(std::shared_ptr<kube::Client> client, std::string ns) {
  return std::make_unique<Kube>(std::move(client), std::move(ns));
}
std::unique_ptr<LeaseBackend> StoreLeases(store::Store& store) {
  return std::make_unique<InStore>(store);
}

}  // namespace steward::replica
