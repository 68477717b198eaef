#include "torture/steward_reads.h"

#include <chrono>

#include "common/time_util.h"
#include "torture/plan.h"

namespace steward::torture {

std::string RecordPath(const std::string& name_or_id, bool agent) {
  return (agent ? "/v1/agents/" : "/v1/projects/") + name_or_id;
}

std::string RecordPath(const std::string& name) { return RecordPath(name, IsAgentName(name)); }

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::optional<std::map<std::string, Listed>> ListProjects(api_client::ApiClient& api) {
  std::map<std::string, Listed> out;
  for (const char* collection : {"/v1/projects", "/v1/agents"}) {
    std::string token;
    do {
      auto page = api.Get(std::string(collection) + "?limit=1000" +
                          (token.empty() ? std::string() : "&continue=" + token));
      if (!page.ok()) return std::nullopt;
      for (const Json& p : page->value("items", Json::array())) {
        Listed& l = out[GetString(p, "id")];
        l.name = GetString(p, "name");
        l.cluster = GetString(p, "cluster");
        l.moving_from = GetString(p.value("move", Json::object()), "from");
        const Json& status = p.value("status", Json::object());
        l.phase = GetString(status, "phase");
        l.reason = GetString(status, "reason");
        if (auto at = ParseRfc3339(GetString(p, "createdAt"))) {
          l.created_ms =
              std::chrono::duration_cast<std::chrono::milliseconds>(at->time_since_epoch()).count();
        }
      }
      std::string next = GetString(*page, "continue");
      if (!next.empty() && next == token) return std::nullopt;  // a token that does not advance
      token = std::move(next);
    } while (!token.empty());
  }
  return out;
}

std::optional<std::vector<Json>> ReadHistory(api_client::ApiClient& api, const std::string& id,
                                             bool agent) {
  std::vector<Json> out;
  int64_t after = 0;
  while (true) {
    auto page =
        api.Get(RecordPath(id, agent) + "/history?limit=1000&after=" + std::to_string(after));
    if (!page.ok()) return std::nullopt;
    const Json items = page->value("items", Json::array());
    for (const Json& h : items) out.push_back(h);
    if (items.size() < 1000) return out;
    const int64_t last = items.back().value("seq", int64_t{0});
    if (last <= after) return std::nullopt;
    after = last;
  }
}

}  // namespace steward::torture
