#include "engine/reconciler/start_gate.h"

#include <algorithm>

namespace steward::engine {

StartGate::Admission StartGate::Admit(const std::string& id, const std::string& team) {
  Admission a;
  if (cap_ == 0) {
    a.admitted = true;
    return a;
  }
  MutexLock lock(mu_);
  const SteadyTime now = clock_.Now();
  RefillLocked(now, &a.wake);
  if (auto it = under_way_.find(id); it != under_way_.end()) {
    a.admitted = true;  // its own slot (also one handed to it while it waited)
  } else if (waiting_team_.contains(id)) {
    a.admitted = false;  // still waiting its turn
  } else if (under_way_.size() < cap_ && turns_.empty()) {
    under_way_.emplace(id, now);
    a.admitted = true;
  } else {
    waiting_team_.emplace(id, team);
    auto [queue, added] = waiting_.try_emplace(team);
    if (added) turns_.push_back(team);
    queue->second.push_back(id);
  }
  a.under_way = under_way_.size();
  a.waiting = waiting_team_.size();
  return a;
}

std::vector<std::string> StartGate::End(const std::string& id) {
  std::vector<std::string> wake;
  if (cap_ == 0) return wake;
  MutexLock lock(mu_);
  under_way_.erase(id);
  RemoveWaitingLocked(id);
  RefillLocked(clock_.Now(), &wake);
  return wake;
}

size_t StartGate::under_way() const {
  MutexLock lock(mu_);
  return under_way_.size();
}

size_t StartGate::waiting() const {
  MutexLock lock(mu_);
  return waiting_team_.size();
}

void StartGate::RefillLocked(SteadyTime now, std::vector<std::string>* wake) {
  for (auto it = under_way_.begin(); it != under_way_.end();) {
    it = now - it->second >= ttl_ ? under_way_.erase(it) : std::next(it);
  }
  while (under_way_.size() < cap_ && !turns_.empty()) {
    std::string team = std::move(turns_.front());
    turns_.pop_front();
    auto queue = waiting_.find(team);
    std::string id = std::move(queue->second.front());
    queue->second.pop_front();
    if (queue->second.empty()) {
      waiting_.erase(queue);
    } else {
      turns_.push_back(std::move(team));
    }
    waiting_team_.erase(id);
    under_way_.emplace(id, now);
    wake->push_back(std::move(id));
  }
}

void StartGate::RemoveWaitingLocked(const std::string& id) {
  auto it = waiting_team_.find(id);
  if (it == waiting_team_.end()) return;
  const std::string team = it->second;
  waiting_team_.erase(it);
  auto queue = waiting_.find(team);
  if (queue == waiting_.end()) return;
  auto& ids = queue->second;
  ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
  if (ids.empty()) {
    waiting_.erase(queue);
    turns_.erase(std::remove(turns_.begin(), turns_.end(), team), turns_.end());
  }
}

}  // namespace steward::engine
