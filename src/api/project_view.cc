#include "api/project_view.h"

#include <algorithm>
#include <utility>

#include "api/api_internal.h"

namespace steward::api {

ProjectView::ItemPtr ProjectView::MakeItem(const store::ProjectRecord& record,
                                           std::shared_ptr<const std::string> json) {
  auto item = std::make_shared<Item>();
  item->kind = record.kind;
  item->id = record.id;
  item->team = record.team;
  item->cluster = record.cluster;
  item->phase = record.phase;
  item->desired = record.desired;
  item->version = record.version;
  item->json = std::move(json);
  return item;
}

Status ProjectView::Load(store::Store& store, int page) {
  {
    WriterMutexLock lock(mu_);
    items_.clear();
    purged_while_loading_.clear();
    loading_ = true;
    MutexLock position_lock(position_mu_);
    loaded_ = false;
    needs_reload_ = false;
  }
  auto finish = [&](const Status& status) {
    WriterMutexLock lock(mu_);
    loading_ = false;
    purged_while_loading_.clear();
    return status;
  };
  auto start = store.LastPosition();
  if (!start.ok()) return finish(start.error());
  std::string after;
  for (;;) {
    store::ListFilter f;
    f.after_id = after;
    f.limit = page;
    auto got = store.ListProjects(f);
    if (!got.ok()) return finish(got.error());
    std::vector<ItemPtr> rendered;  // outside the lock
    rendered.reserve(got->size());
    for (const auto& r : *got) {
      rendered.push_back(
          MakeItem(r, std::make_shared<const std::string>(DumpJson(ProjectJson(r)))));
    }
    {
      WriterMutexLock lock(mu_);
      for (auto& item : rendered) {
        if (!purged_while_loading_.contains(item->id)) PutLocked(std::move(item));
      }
    }
    if (got->size() < static_cast<size_t>(page)) break;
    after = got->back().id;
  }
  {
    WriterMutexLock lock(mu_);
    loading_ = false;
    purged_while_loading_.clear();
    MutexLock position_lock(position_mu_);
    position_ = std::max(position_, *start);
    loaded_ = !needs_reload_;
  }
  applied_cv_.NotifyAll();
  return Status::Ok();
}

bool ProjectView::loaded() const {
  MutexLock lock(position_mu_);
  return loaded_;
}

bool ProjectView::needs_reload() const {
  MutexLock lock(position_mu_);
  return needs_reload_;
}

void ProjectView::PutLocked(ItemPtr item) {
  auto [it, inserted] = items_.try_emplace(item->id, item);
  if (!inserted && item->version > it->second->version) it->second = std::move(item);
}

void ProjectView::Apply(const store::ProjectChange& change,
                        std::shared_ptr<const std::string> json) {
  {
    WriterMutexLock lock(mu_);
    if (change.record) {
      PutLocked(MakeItem(*change.record, std::move(json)));
    } else {
      if (auto it = items_.find(change.project_id); it != items_.end()) items_.erase(it);
      if (loading_) purged_while_loading_.insert(change.project_id);
    }
    MutexLock position_lock(position_mu_);
    // Positions come one after another; a jump means changes this view was never given.
    if (loaded_ && change.position > position_ + 1) {
      loaded_ = false;
      needs_reload_ = true;
    }
    position_ = std::max(position_, change.position);
  }
  applied_cv_.NotifyAll();
}

bool ProjectView::WaitFor(int64_t position, std::chrono::steady_clock::time_point deadline) const {
  MutexLock lock(position_mu_);
  return applied_cv_.WaitUntil(position_mu_, deadline, [&]() REQUIRES(position_mu_) {
    return loaded_ && position_ >= position;
  });
}

int64_t ProjectView::position() const {
  MutexLock lock(position_mu_);
  return position_;
}

std::vector<ProjectView::ItemPtr> ProjectView::List(const store::ListFilter& filter) const {
  const size_t limit = filter.limit > 0 ? static_cast<size_t>(filter.limit) : SIZE_MAX;
  std::vector<ItemPtr> out;
  ReaderMutexLock lock(mu_);
  auto it = filter.after_id.empty() ? items_.begin() : items_.upper_bound(filter.after_id);
  for (; it != items_.end() && out.size() < limit; ++it) {
    const Item& item = *it->second;
    if (filter.kind && item.kind != *filter.kind) continue;
    if (filter.team && item.team != *filter.team) continue;
    if (filter.cluster && item.cluster != *filter.cluster) continue;
    if (filter.desired && item.desired != *filter.desired) continue;
    if (filter.phase && item.phase != *filter.phase &&
        !(*filter.phase == "Pending" && item.phase.empty())) {
      continue;
    }
    out.push_back(it->second);
  }
  return out;
}

ProjectView::ItemPtr ProjectView::Find(std::string_view id) const {
  ReaderMutexLock lock(mu_);
  auto it = items_.find(id);
  return it == items_.end() ? nullptr : it->second;
}

size_t ProjectView::size() const {
  ReaderMutexLock lock(mu_);
  return items_.size();
}

}  // namespace steward::api
