#include "engine/reconciler/observer.h"

#include <utility>

namespace steward::engine {

Observer::Observer(const Clock& clock, std::chrono::milliseconds expectation_timeout,
                   std::string ns)
    : clock_(clock), timeout_(expectation_timeout), ns_(std::move(ns)) {}

void Observer::Add(const kube::ResourceType& type, std::shared_ptr<kube::Informer> informer) {
  MutexLock lock(informers_mu_);
  informers_[type.GroupResource()] = std::move(informer);
}

void Observer::Clear() {
  {
    MutexLock lock(informers_mu_);
    informers_.clear();
    tls_secrets_.reset();
  }
  MutexLock lock(mu_);
  expectations_.clear();
}

bool Observer::Synced() const {
  MutexLock lock(informers_mu_);
  for (const auto& [resource, informer] : informers_) {
    if (!informer->HasSynced()) return false;
  }
  return tls_secrets_ == nullptr || tls_secrets_->HasSynced();
}

std::shared_ptr<kube::Informer> Observer::Shared(const kube::ResourceType& type) const {
  MutexLock lock(informers_mu_);
  auto it = informers_.find(type.GroupResource());
  return it == informers_.end() ? nullptr : it->second;
}

kube::Informer* Observer::informer(const kube::ResourceType& type) const {
  return Shared(type).get();
}

void Observer::SetTlsSecrets(std::shared_ptr<kube::Informer> informer) {
  MutexLock lock(informers_mu_);
  tls_secrets_ = std::move(informer);
}

std::optional<kube::ObjectRef> Observer::TlsSecret(std::string_view name) const {
  std::shared_ptr<kube::Informer> informer;
  {
    MutexLock lock(informers_mu_);
    informer = tls_secrets_;
  }
  if (!informer) return std::nullopt;
  return informer->Get(ns_, name);
}

std::string Observer::Key(const kube::ResourceType& type, std::string_view name) {
  return type.GroupResource() + "/" + std::string(name);
}

void Observer::Set(const kube::ResourceType& type, std::string_view name, Kind kind,
                   std::string value) {
  MutexLock lock(mu_);
  expectations_[Key(type, name)] = Expectation{kind, std::move(value), clock_.Now()};
}

void Observer::ExpectExists(const kube::ResourceType& type, std::string_view name,
                            std::string uid) {
  Set(type, name, Kind::kExists, std::move(uid));
}
void Observer::ExpectUpdated(const kube::ResourceType& type, std::string_view name,
                             std::string old_rv) {
  Set(type, name, Kind::kUpdated, std::move(old_rv));
}
void Observer::ExpectGone(const kube::ResourceType& type, std::string_view name, std::string uid) {
  Set(type, name, Kind::kGone, std::move(uid));
}
void Observer::ExpectTerminating(const kube::ResourceType& type, std::string_view name,
                                 std::string uid) {
  Set(type, name, Kind::kTerminating, std::move(uid));
}

View Observer::Get(const kube::ResourceType& type, std::string_view name) {
  View view;
  kube::Informer* inf = informer(type);
  if (inf == nullptr) return view;
  view.object = inf->Get(ns_, name);
  view.terminating = view.object && view.object->terminating();

  MutexLock lock(mu_);
  auto it = expectations_.find(Key(type, name));
  if (it == expectations_.end()) return view;
  const Expectation& e = it->second;
  const bool expired = clock_.Now() - e.at > timeout_;
  const kube::ObjectRef& obj = view.object;
  bool met = false;
  switch (e.kind) {
    case Kind::kExists:
      met = obj && obj->uid() == e.value;
      if (!met && !expired) {
        view.stale = true;
        if (!obj) view.created_uid = e.value;
      }
      break;
    case Kind::kUpdated:
      met = !obj || obj->resource_version() != e.value;
      if (!met && !expired) view.stale = true;
      break;
    case Kind::kGone:
      met = !obj || obj->uid() != e.value;
      // The server said it is gone: the cached copy is history, not an object to wait for.
      if (!met && !expired) {
        view.object = nullptr;
        view.terminating = false;
      }
      break;
    case Kind::kTerminating:
      // An empty cache meets nothing here: absent from it is not gone from the cluster.
      met = obj && (obj->uid() != e.value || obj->terminating());
      if (!met && !expired) {
        view.terminating = true;
        if (!obj) view.deleted_uid = e.value;
      }
      break;
  }
  if (met || expired) expectations_.erase(it);
  return view;
}

std::vector<kube::ObjectRef> Observer::ByLabel(const kube::ResourceType& type, std::string_view key,
                                               std::string_view value) const {
  std::vector<kube::ObjectRef> out;
  kube::Informer* inf = informer(type);
  if (inf == nullptr) return out;
  for (auto& o : inf->ByLabel(key, value)) {
    if (o->ns() == ns_) out.push_back(std::move(o));
  }
  return out;
}

}  // namespace steward::engine
