#include "cli/record_wait.h"

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <thread>
#include <tuple>
#include <utility>

#include "cli/exit_codes.h"
#include "cli/record_text.h"
#include "common/json_access.h"

namespace steward::cli {
namespace {

using api_client::ApiClient;
using api_client::ApiClientOptions;
using api_client::WatchEvent;
using Clock = std::chrono::steady_clock;

bool Done(const Json& p, int64_t generation) {
  if (ObservedGeneration(p) < generation) return false;
  std::string phase = StatusField(p, "phase");
  std::string desired = GetString(p, "desiredState");
  return phase == "Failed" || (phase == "Running" && desired == "running") ||
         (phase == "Suspended" && desired == "suspended");
}

class StepPrinter {
 public:
  explicit StepPrinter(Clock::time_point start) : start_(start) {}
  void Print(const Json& p) {
    auto key = std::make_tuple(StatusField(p, "phase"), StatusField(p, "reason"),
                               StatusField(p, "message"));
    if (printed_ && key == last_) return;
    printed_ = true;
    last_ = key;
    Line(std::get<0>(key), std::get<1>(key), std::get<2>(key));
  }
  void Line(const std::string& phase, const std::string& reason, const std::string& message) {
    double secs = std::chrono::duration<double>(Clock::now() - start_).count();
    char head[64];
    std::snprintf(head, sizeof head, "%6.1fs  ", secs);
    std::string line = head + Pad(phase, 13) + " " + Pad(reason, 22) + " " + message;
    while (line.ends_with(' ')) line.pop_back();
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }

 private:
  Clock::time_point start_;
  bool printed_ = false;
  std::tuple<std::string, std::string, std::string> last_;
};

std::string HumanSeconds(std::chrono::milliseconds d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(d.count()) / 1000.0);
  return buf;
}

}  // namespace

// The reader thread is detached once the wait is over: it holds only the shared state and ends
// with the process (a blocking read cannot be interrupted from outside the HttpClient).
StatusOr<std::shared_ptr<WatchState>> OpenWatch(const ApiClientOptions& options,
                                                const std::string& query,
                                                std::chrono::milliseconds duration,
                                                int* http_status) {
  auto state = std::make_shared<WatchState>();
  ASSIGN_OR_RETURN(state->client, ApiClient::Create(options));
  std::chrono::milliseconds stream_timeout = duration + std::chrono::seconds(30);
  std::thread([state, query, stream_timeout] {
    Status s = state->client->Watch(
        query,
        [&state](const WatchEvent& event) {
          MutexLock lock(state->mu);
          if (event.event == "sync") {
            state->synced = true;
          } else {
            state->events.push_back(event);
          }
          state->cv.NotifyAll();
          return !state->stop;
        },
        stream_timeout);
    MutexLock lock(state->mu);
    state->ended = true;
    state->end_status = s;
    state->end_http_status = state->client->last_error().http_status;
    state->cv.NotifyAll();
  }).detach();
  MutexLock lock(state->mu);
  bool ready = state->cv.WaitFor(state->mu, options.timeout, [&]() REQUIRES(state->mu) {
    return state->synced || state->ended;
  });
  if (!ready) {
    state->stop = true;
    *http_status = 0;
    return Status(StatusCode::kDeadlineExceeded,
                  "the watch stream of " + options.server + " sent no sync event in time");
  }
  if (!state->synced) {
    *http_status = state->end_http_status;
    return Status(state->end_status.code(), "cannot watch: " + state->end_status.message());
  }
  return state;
}

// Follows the project until it is done with `answer`'s generation (or purged, for delete).
int FollowUntilDone(WatchState& watch, const Json& answer, bool deleting, Clock::time_point start,
                    std::chrono::milliseconds duration) {
  const std::string id = GetString(answer, "id");
  const std::string name = GetString(answer, "name");
  const int64_t generation = GetInt(answer, "generation");
  StepPrinter steps(start);
  Json latest = answer;
  steps.Print(answer);
  auto deadline = start + duration;
  auto finish = [&](const Json& p) {
    std::string phase = StatusField(p, "phase");
    double secs = std::chrono::duration<double>(Clock::now() - start).count();
    if (phase == "Failed") {
      return Fail(name + " failed at generation " + std::to_string(generation) + ": " +
                      StatusField(p, "reason") + ": " + StatusField(p, "message"),
                  kExitFailed);
    }
    std::string url = StatusField(p, "url");
    std::printf("%s is %s at generation %" PRId64 " after %.1fs%s\n", name.c_str(), phase.c_str(),
                generation, secs, url.empty() || phase != "Running" ? "" : (": " + url).c_str());
    std::fflush(stdout);
    return kExitOk;
  };
  if (!deleting && Done(answer, generation)) return finish(answer);
  ReleasableMutexLock lock(watch.mu);
  while (true) {
    while (!watch.events.empty()) {
      WatchEvent event = std::move(watch.events.front());
      watch.events.pop_front();
      const Json& data = event.data;
      if (!data.is_object()) continue;
      bool ours = (!id.empty() && GetString(data, "id") == id) ||
                  (id.empty() && GetString(data, "name") == name);
      if (!ours) continue;
      if (event.event == "deleted") {
        watch.stop = true;
        lock.Release();
        if (!deleting) return Fail(name + " was deleted while waiting", kExitFailed);
        steps.Line("purged", "", "");
        std::printf("%s is deleted (purged) after %.1fs\n", name.c_str(),
                    std::chrono::duration<double>(Clock::now() - start).count());
        std::fflush(stdout);
        return kExitOk;
      }
      if ((event.event != "project" && event.event != "agent") ||
          GetInt(data, "generation") < generation) {
        continue;
      }
      latest = data;
      steps.Print(data);
      if (Done(data, generation) && (!deleting || StatusField(data, "phase") == "Failed")) {
        watch.stop = true;
        lock.Release();
        return finish(data);
      }
    }
    if (watch.ended) {
      watch.stop = true;
      Status s = watch.end_status;
      const int http_status = watch.end_http_status;
      lock.Release();
      return Fail("the watch stream ended before " + name + " was done: " + s.message(),
                  ExitCodeForCall(s, http_status));
    }
    if (!watch.cv.WaitUntil(watch.mu, deadline) && watch.events.empty() && !watch.ended) {
      watch.stop = true;
      lock.Release();
      std::string want = deleting                                           ? "purged"
                         : GetString(latest, "desiredState") == "suspended" ? "Suspended"
                                                                            : "Running";
      return Fail("timed out after " + HumanSeconds(duration) + " waiting for " + name + " to be " +
                      want + " at generation " + std::to_string(generation) + " (now " +
                      OrDash(StatusField(latest, "phase")) + " at observed generation " +
                      std::to_string(ObservedGeneration(latest)) + ": " +
                      OrDash(StatusField(latest, "reason")) + ": " +
                      OrDash(StatusField(latest, "message")) + ")",
                  kExitTimeout);
    }
  }
}

}  // namespace steward::cli
