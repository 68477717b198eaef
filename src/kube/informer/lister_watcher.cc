// MakeListerWatcher: the informer's ListerWatcher over a kube::Client.
#include <utility>

#include "kube/informer/informer.h"

namespace steward::kube {

Result<ScannedList> ListerWatcher::ListScanned(const ListOptions& options) {
  Result<ObjectList> page = List(options);
  if (!page.ok()) return std::move(page).error();
  ScannedList scanned;
  scanned.resource_version = std::move(page->resource_version);
  scanned.continue_token = std::move(page->continue_token);
  scanned.items.reserve(page->items.size());
  for (const Json& item : page->items) {
    // List() filled in apiVersion and kind, so the scan adds nothing.
    auto one = ScanObject(DumpJson(item), "", "");
    if (!one.ok()) {
      return LocalApiError(StatusCode::kInvalidArgument, one.status().message());
    }
    scanned.items.push_back(std::move(one).value());
  }
  return scanned;
}

namespace {

class ClientListerWatcher final : public ListerWatcher {
 public:
  ClientListerWatcher(std::shared_ptr<Client> client, ResourceType type, std::string ns,
                      std::string label_selector, std::string field_selector)
      : client_(std::move(client)),
        type_(std::move(type)),
        ns_(std::move(ns)),
        label_selector_(std::move(label_selector)),
        field_selector_(std::move(field_selector)) {}

  Result<ObjectList> List(const ListOptions& options) override {
    ListOptions o = options;
    Select(o);
    return client_->List(type_, ns_, o);
  }

  Result<ScannedList> ListScanned(const ListOptions& options) override {
    ListOptions o = options;
    Select(o);
    return client_->ListScanned(type_, ns_, o);
  }

  Result<WatchEnd> Watch(const WatchOptions& options,
                         const std::function<bool(const WatchEvent&)>& on_event) override {
    WatchOptions o = options;
    Select(o);
    return client_->Watch(type_, ns_, o, on_event);
  }

  std::string Describe() const override {
    std::string out = type_.GroupResource();
    out += ns_.empty() ? " in all namespaces" : " in namespace " + ns_;
    if (!label_selector_.empty()) out += ", selector " + label_selector_;
    if (!field_selector_.empty()) out += ", field selector " + field_selector_;
    return out;
  }

 private:
  std::shared_ptr<Client> client_;
  ResourceType type_;
  std::string ns_;
  std::string label_selector_;
  std::string field_selector_;

  void Select(ListOptions& o) const {
    o.label_selector = label_selector_;
    o.field_selector = field_selector_;
  }
};

}  // namespace

std::unique_ptr<ListerWatcher> MakeListerWatcher(std::shared_ptr<Client> client, ResourceType type,
                                                 std::string ns, std::string label_selector,
                                                 std::string field_selector) {
  return std::make_unique<ClientListerWatcher>(std::move(client), std::move(type), std::move(ns),
                                               std::move(label_selector),
                                               std::move(field_selector));
}

}  // namespace steward::kube
