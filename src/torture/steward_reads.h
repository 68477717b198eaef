// What the torture run reads from Steward through its REST API (every page of the records, a
// record's whole history) and the wall clock it stamps its observations with; shared by the
// monitor, the chaos thread and the checks after the run.
//
// Stateless functions; any thread (each caller brings its own ApiClient, which is not
// thread-safe). Internal to torture/.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api_client/api_client.h"
#include "common/json.h"

namespace steward::torture {

// Milliseconds since the epoch, by the wall clock (what Steward's and the cluster's times are
// compared with).
int64_t WallMs();

// The record's path by its name (or, with `agent` given, its id): agents under /v1/agents.
std::string RecordPath(const std::string& name_or_id, bool agent);
// By name: an agent's by its name's form (IsAgentName).
std::string RecordPath(const std::string& name);

// A project or an agent as a listing shows it.
struct Listed {
  std::string name;
  std::string cluster;      // where it is placed
  std::string moving_from;  // a move under way: the cluster it left ("" otherwise)
  std::string phase, reason;
  int64_t created_ms = 0;  // createdAt (wall ms)
};

// Steward's projects and agents by id (every page of both); nullopt when Steward did not answer.
std::optional<std::map<std::string, Listed>> ListProjects(api_client::ApiClient& api);

// A project's (or an agent's) whole history (every page, also after a purge); nullopt when
// Steward did not answer or the pages do not advance.
std::optional<std::vector<Json>> ReadHistory(api_client::ApiClient& api, const std::string& id,
                                             bool agent);

}  // namespace steward::torture
