// InformerFactory: one shared informer per (resource, namespace, label and field selectors).
#include <map>
#include <utility>

#include "common/mutex.h"
#include "kube/informer/informer.h"

namespace steward::kube {

struct InformerFactory::Impl {
  std::shared_ptr<Client> client;
  InformerOptions defaults;
  Mutex mu;
  std::map<std::string, std::shared_ptr<Informer>> informers GUARDED_BY(mu);  // by Key()

  static std::string Key(const ResourceType& type, const std::string& ns,
                         const std::string& label_selector, const std::string& field_selector) {
    return type.group + "/" + type.version + "/" + type.resource + "|" + ns + "|" + label_selector +
           "|" + field_selector;
  }

  std::vector<std::shared_ptr<Informer>> All() EXCLUDES(mu) {
    MutexLock lock(mu);
    std::vector<std::shared_ptr<Informer>> out;
    for (const auto& [key, informer] : informers) out.push_back(informer);
    return out;
  }
};

InformerFactory::InformerFactory(std::shared_ptr<Client> client, InformerOptions defaults)
    : impl_(std::make_unique<Impl>()) {
  impl_->client = std::move(client);
  impl_->defaults = std::move(defaults);
}

InformerFactory::~InformerFactory() { StopAll(); }

std::shared_ptr<Informer> InformerFactory::For(const ResourceType& type, const std::string& ns,
                                               const std::string& label_selector,
                                               std::function<void(Json&)> transform,
                                               const std::string& field_selector) {
  MutexLock lock(impl_->mu);
  auto& slot = impl_->informers[Impl::Key(type, ns, label_selector, field_selector)];
  if (!slot) {
    InformerOptions options = impl_->defaults;
    if (options.name.empty()) options.name = type.resource;
    if (transform) options.transform = std::move(transform);
    slot = std::make_shared<Informer>(
        MakeListerWatcher(impl_->client, type, ns, label_selector, field_selector),
        std::move(options));
  }
  return slot;
}

void InformerFactory::StartAll() {
  for (const auto& informer : impl_->All()) informer->Start();
}

void InformerFactory::StopAll() {
  for (const auto& informer : impl_->All()) informer->Stop();
}

bool InformerFactory::WaitForAllSynced(Millis timeout) {
  SteadyTime deadline = std::chrono::steady_clock::now() + timeout;
  for (const auto& informer : impl_->All()) {
    auto left = std::chrono::duration_cast<Millis>(deadline - std::chrono::steady_clock::now());
    if (!informer->WaitForSync(std::max(left, Millis(0)))) return false;
  }
  return true;
}

}  // namespace steward::kube
