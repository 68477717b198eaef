// Error mapping, value parsing and the project representation (docs/api.md).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <ctime>

#include "api/api_internal.h"
#include "common/base64.h"
#include "common/fields.h"
#include "engine/intents/intents.h"
#include "engine/model/project.h"

namespace steward::api {

ErrorAnswer MakeError(int status, std::string reason, std::string message, std::string field) {
  return ErrorAnswer{status, std::move(reason), std::move(message), std::move(field)};
}

ErrorAnswer BadArgument(std::string field, std::string message) {
  return MakeError(400, "InvalidArgument", std::move(message), std::move(field));
}

Status NoFields(const Json& body) {
  if (body.empty()) return Status::Ok();
  return InvalidField(ChildPath("", body.begin().key()),
                      "unknown field (this operation takes no body)");
}

StatusOr<std::string> TokenOf(const Json& body) {
  ASSIGN_OR_RETURN(FieldReader f, FieldReader::Of(body, ""));
  RETURN_IF_ERROR(f.OnlyKnown({"token"}));
  const Json* token = f.Find("token");
  if (token == nullptr || !token->is_string() || token->get_ref<const std::string&>().empty()) {
    return InvalidField("token", "must be a non-empty string");
  }
  return token->get<std::string>();
}

std::optional<std::vector<std::string>> PathSegments(std::string_view target) {
  target = net::RawPath(target);
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= target.size()) {
    size_t j = target.find('/', i);
    if (j == std::string_view::npos) j = target.size();
    std::string segment = net::PercentDecode(target.substr(i, j - i));
    if (segment.find('/') != std::string::npos) return std::nullopt;
    out.push_back(std::move(segment));
    i = j + 1;
  }
  return out;
}

std::optional<ErrorAnswer> CheckQuery(const std::vector<std::pair<std::string, std::string>>& query,
                                      const std::vector<std::string>& allowed) {
  for (size_t i = 0; i < query.size(); ++i) {
    const std::string& name = query[i].first;
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return BadArgument(name, "unknown query parameter \"" + name + "\" (this route takes " +
                                   (list.empty() ? std::string("none") : list) + ")");
    }
    for (size_t k = 0; k < i; ++k) {
      if (query[k].first == name) {
        return BadArgument(name, "query parameter \"" + name + "\" is given more than once");
      }
    }
  }
  return std::nullopt;
}

ErrorAnswer FromStatus(const Status& status) {
  const std::string& m = status.message();
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
      return BadArgument(status.field(), m);
    case StatusCode::kNotFound:
      return MakeError(404, "NotFound", m);
    case StatusCode::kFailedPrecondition:
    case StatusCode::kAborted:  // the state moved under the request: send it again
    case StatusCode::kAlreadyExists:
      return MakeError(409, "Conflict", m);
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
      return MakeError(503, "Unavailable", m);
    default:
      return MakeError(500, "Internal", status.ToString());
  }
}

Json ErrorJson(const ErrorAnswer& e) {
  Json err = {{"code", e.status}, {"reason", e.reason}, {"message", e.message}};
  if (!e.field.empty()) err["field"] = e.field;
  return Json{{"error", std::move(err)}};
}

std::string EncodeContinue(std::string_view last_id) {
  std::string b = Base64Encode("v1:" + std::string(last_id));
  // URL-safe alphabet without padding, so the token needs no escaping in a query string.
  std::string out;
  for (char c : b) {
    if (c == '+') {
      out += '-';
    } else if (c == '/') {
      out += '_';
    } else if (c != '=') {
      out += c;
    }
  }
  return out;
}

std::optional<std::string> DecodeContinue(std::string_view token) {
  std::string b;
  for (char c : token) {
    if (c == '-') {
      b += '+';
    } else if (c == '_') {
      b += '/';
    } else if (c == '+' || c == '/' || c == '=') {
      return std::nullopt;
    } else {
      b += c;
    }
  }
  while (b.size() % 4 != 0) b += '=';
  auto raw = Base64Decode(b);
  if (!raw || !raw->starts_with("v1:") || raw->size() == 3) return std::nullopt;
  std::string id = raw->substr(3);
  if (!engine::ValidateProjectId(id).ok()) return std::nullopt;
  return id;
}

std::string FormatTimeMs(int64_t ms) {
  std::time_t secs = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  int millis = static_cast<int>(ms - static_cast<int64_t>(secs) * 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, millis);
  return out;
}

std::string PhaseOf(const store::ProjectRecord& r) { return r.phase.empty() ? "Pending" : r.phase; }

Json StatusJson(const store::ProjectRecord& r) {
  return engine::ToJson(engine::PresentStatus(engine::ParseStoredStatus(r.status_json),
                                              engine::IntentOf(r.desired), r.generation));
}

Json ProjectJson(const store::ProjectRecord& r) {
  Json spec = Json::object();
  if (auto j = ParseJson(r.spec_json); j.ok()) spec = std::move(*j);
  // The cluster is the record's (placement decided it once); shown in the spec too, so that a
  // spec read back and put again names the same cluster.
  if (spec.is_object()) spec["cluster"] = r.cluster;
  Json status = StatusJson(r);
  status["cluster"] = r.cluster;
  Json out{{"id", r.id},
           {"kind", std::string(store::ToString(r.kind))},
           {"name", r.name},
           {"team", r.team},
           {"cluster", r.cluster},
           {"spec", std::move(spec)},
           {"desiredState", std::string(store::ToString(r.desired))},
           {"generation", r.generation},
           {"restartEpoch", r.restart_epoch},
           {"version", r.version},
           {"status", std::move(status)},
           {"createdAt", FormatTimeMs(r.created_ms)},
           {"updatedAt", FormatTimeMs(r.updated_ms)}};
  // A move under way: the cluster that may still have objects of the project, until it has
  // none (then the key is gone).
  if (!r.moving_from.empty()) out["move"] = Json{{"from", r.moving_from}, {"order", r.move_order}};
  return out;
}

bool IsDone(const store::ProjectRecord& r, int64_t generation) {
  if (r.observed_generation < generation) return false;
  const std::string phase = PhaseOf(r);
  if (phase == "Failed") return true;
  switch (r.desired) {
    case store::DesiredState::kRunning:
      return phase == "Running";
    case store::DesiredState::kSuspended:
      return phase == "Suspended";
    case store::DesiredState::kDeleted:
      return false;  // done only once purged
  }
  return false;
}

TaskPool::TaskPool(int threads, size_t max_queued) : max_queued_(max_queued) {
  for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { Run(); });
}

TaskPool::~TaskPool() { Join(); }

bool TaskPool::Post(std::function<void()> task) {
  MutexLock lock(mu_);
  if (joining_) return false;
  tasks_.push_back(std::move(task));
  cv_.NotifyOne();
  return true;
}

TaskPool::Offered TaskPool::Offer(std::function<void()> task) {
  MutexLock lock(mu_);
  if (joining_) return Offered::kStopping;
  if (max_queued_ > 0 && tasks_.size() >= max_queued_) return Offered::kFull;
  tasks_.push_back(std::move(task));
  cv_.NotifyOne();
  return Offered::kQueued;
}

size_t TaskPool::queued() const {
  MutexLock lock(mu_);
  return tasks_.size();
}

void TaskPool::Join() {
  {
    MutexLock lock(mu_);
    if (joining_ && threads_.empty()) return;
    joining_ = true;
    cv_.NotifyAll();
  }
  // Only Join removes threads (the constructor added them all), so they are joined outside the
  // lock, which the threads need to finish.
  std::vector<std::thread> threads;
  {
    MutexLock lock(mu_);
    threads.swap(threads_);
  }
  for (auto& t : threads) {
    if (!t.joinable()) continue;
    if (t.get_id() == std::this_thread::get_id()) {
      t.detach();  // Join from a task: this thread ends when the task returns
    } else {
      t.join();
    }
  }
}

void TaskPool::Run() {
  for (;;) {
    std::function<void()> task;
    {
      MutexLock lock(mu_);
      cv_.Wait(mu_, [&]() REQUIRES(mu_) { return joining_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace steward::api
