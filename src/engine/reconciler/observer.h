// Observer: what the engine knows of the cluster — the informers' caches, corrected by the
// results of the engine's own recent writes until the caches show them ("expectations", as
// client-go's controllers keep). Without them, a run that starts before the watch event of a
// create arrives would see the object as missing and create it again.
//
// Thread-safe. Expectations are keyed by kind and name; the reconciler sets them after each
// write and the observer clears them once the cache agrees (or after a timeout, when the cache
// is trusted again).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "kube/client/resource.h"
#include "kube/informer/informer.h"

namespace steward::engine {

struct View {
  kube::ObjectRef object;  // null: absent (or known gone)
  bool stale = false;      // the cache has not caught up with our write yet: wait
  bool terminating = false;
  // While a create is not yet in the cache (stale, object null): the uid the create answered
  // with, so that a delete need not wait for the watch.
  std::string created_uid;
  // While a delete answered "terminating" and the cache has no object of that name (it never
  // showed the object, or has caught up past its end): the uid deleted, with `terminating` set.
  // The cache cannot tell which; only the server can (a run asks it before calling it gone).
  std::string deleted_uid;
};

class Observer {
 public:
  Observer(const Clock& clock, std::chrono::milliseconds expectation_timeout, std::string ns);

  // Registers the informer that serves `type` (same namespace for all), replacing any.
  void Add(const kube::ResourceType& type, std::shared_ptr<kube::Informer> informer);
  // Forgets every informer and expectation (sharded mode, when the engine swaps its informers
  // for a new set of shards). Only while no run reads the observer: the informer() pointers
  // runs hold would dangle.
  void Clear();
  // The informer of `type`, or null. informer() is for runs (valid until Clear); Shared() for
  // other threads, which may outlive a Clear.
  kube::Informer* informer(const kube::ResourceType& type) const;
  std::shared_ptr<kube::Informer> Shared(const kube::ResourceType& type) const;
  // True once every registered cache (the TLS Secrets' too) holds its first list. A cache that
  // has not is empty, not the truth: no run decides from it (Reconciler::Reconcile waits).
  bool Synced() const;

  // The cache of the namespace's kubernetes.io/tls Secrets (the certificates cert-manager makes
  // for the projects' Ingresses, kept without their data), replacing any; Clear forgets it.
  void SetTlsSecrets(std::shared_ptr<kube::Informer> informer);
  // nullopt when there is no such cache (the caller asks the server); else the cached Secret
  // named `name`, null when the cache has none.
  std::optional<kube::ObjectRef> TlsSecret(std::string_view name) const;

  View Get(const kube::ResourceType& type, std::string_view name);
  // Objects of `type` labelled key=value in the namespace.
  std::vector<kube::ObjectRef> ByLabel(const kube::ResourceType& type, std::string_view key,
                                       std::string_view value) const;

  // After a create answered with an object of this uid.
  void ExpectExists(const kube::ResourceType& type, std::string_view name, std::string uid);
  // After an update from resourceVersion `old_rv`: until the cache moves off it, it is stale.
  void ExpectUpdated(const kube::ResourceType& type, std::string_view name, std::string old_rv);
  // After a delete: gone (the server said so) or terminating.
  void ExpectGone(const kube::ResourceType& type, std::string_view name, std::string uid);
  void ExpectTerminating(const kube::ResourceType& type, std::string_view name, std::string uid);

  const std::string& ns() const { return ns_; }

 private:
  enum class Kind { kExists, kUpdated, kGone, kTerminating };
  struct Expectation {
    Kind kind;
    std::string value;  // uid, or the old resourceVersion
    SteadyTime at;
  };
  static std::string Key(const kube::ResourceType& type, std::string_view name);
  void Set(const kube::ResourceType& type, std::string_view name, Kind kind, std::string value)
      EXCLUDES(mu_);

  const Clock& clock_;
  const std::chrono::milliseconds timeout_;
  const std::string ns_;
  mutable Mutex informers_mu_;
  std::map<std::string, std::shared_ptr<kube::Informer>> informers_
      GUARDED_BY(informers_mu_);  // by resource
  std::shared_ptr<kube::Informer> tls_secrets_ GUARDED_BY(informers_mu_);
  mutable Mutex mu_;
  std::map<std::string, Expectation> expectations_ GUARDED_BY(mu_);
};

}  // namespace steward::engine
