// GET /v1/projects/{p}/resources and its live stream (SSE or WebSocket): every ready pod's
// launcher samples, merged; the stream polls on the pool and ends when a pod it began with goes.
#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/instance_handlers.h"
#include "common/fields.h"
#include "common/log.h"

namespace steward::api {

void InstanceHandlers::HandleResources(const CallPtr& call) {
  auto rec = RunningProject(call);
  if (!rec) return;
  auto resources = deps_.InstanceFor(*rec)->Resources(ServiceOf(*rec));
  if (!resources.ok()) {
    server_.ReplyError(call, FromInstance(*rec, resources.error()));
    return;
  }
  server_.Reply(call, 200, *resources);
}

// ---- resources stream ----

namespace {

std::string SseEvent(std::string_view event, const Json& data) {
  return "event: " + std::string(event) + "\ndata: " + DumpJson(data) + "\n\n";
}

// The WebSocket form of an event: its data with the event's name as "event".
std::string WsEvent(std::string_view event, const Json& data) {
  Json m = data;
  m["event"] = event;
  return DumpJson(m);
}

double SampleTs(const Json& s) {
  auto it = s.find("ts");
  return it != s.end() && it->is_number() ? it->get<double>() : 0;
}

// A resources stream whose client leaves more than this unsent is ended (SlowConsumer).
constexpr size_t kResourcesPendingLimit = 1 << 20;

// The close code that ends the WebSocket form of a resources stream for an `end` reason.
uint16_t ResourcesCloseCode(std::string_view reason) {
  if (reason == "PodGone") return net::kWsNormal;
  if (reason == "SlowConsumer") return net::kWsPolicyViolation;
  if (reason == "Stopping") return net::kWsGoingAway;
  return net::kWsInternalError;  // Unavailable
}

}  // namespace

void InstanceHandlers::HandleResourcesStream(const CallPtr& call) {
  // The WebSocket form: a bad handshake is refused before anything else is asked.
  const bool websocket = net::IsWebSocketUpgrade(call->request);
  if (websocket) {
    if (auto refusal = net::CheckWebSocketHandshake(call->request)) {
      server_.ReplyError(
          call,
          MakeError(refusal->status, refusal->status == 426 ? "UpgradeRequired" : "BadHandshake",
                    refusal->message),
          refusal->headers);
      return;
    }
  }
  auto rec = RunningProject(call);
  if (!rec) return;
  // The first read answers errors (no ready pod: 409) before the stream begins; its samples
  // are history: the stream sends what comes after them.
  auto first = deps_.InstanceFor(*rec)->Resources(ServiceOf(*rec));
  if (!first.ok()) {
    server_.ReplyError(call, FromInstance(*rec, first.error()));
    return;
  }
  auto s = std::make_shared<ResourceStream>();
  s->call = call;
  s->project = rec->name;
  s->service = ServiceOf(*rec);
  s->calls = deps_.InstanceFor(*rec);
  {
    MutexLock lock(s->mu);
    for (const Json& pod : (*first)["pods"]) s->last_ts[pod.get<std::string>()] = 0;
    for (const Json& sample : (*first)["resources"]) {
      double& last = s->last_ts[GetString(sample, "pod")];
      last = std::max(last, SampleTs(sample));
    }
    if (websocket) {
      net::WebSocketOptions wo;
      wo.max_message_bytes = 4096;  // the client has nothing to say
      // Back-stop only: the stream ends itself (SlowConsumer) at kResourcesPendingLimit.
      wo.max_queued_bytes = 4 * kResourcesPendingLimit;
      // Pings every keep-alive interval; a client that answers nothing for two is dropped.
      wo.idle_timeout =
          std::max<std::chrono::milliseconds>(2 * options_.keepalive, std::chrono::seconds(10));
      s->ws = call->writer->AcceptWebSocket(std::move(wo));
      if (s->ws == nullptr) return;  // the client went
      call->answered = true;
      server_.RecordMetrics(*call, 101);
    } else {
      server_.BeginEventStream(call);
    }
    s->last_write = std::chrono::steady_clock::now();
    if (!WriteResourcesLocked(s, {{"sync", Json{{"pods", (*first)["pods"]}}}})) {
      s->ended = true;
      return;
    }
  }
  {
    MutexLock lock(streams_mu_);
    if (stopping_) {
      MutexLock slock(s->mu);
      EndResourcesLocked(s, "Stopping", "the server is stopping");
      return;
    }
    streams_.push_back(s);
  }
  // OnClose runs on an I/O thread and must not block: the removal happens on the pool.
  std::weak_ptr<ResourceStream> weak = s;
  auto drop = [this, weak] {
    if (auto st = weak.lock()) pool_.Post([this, st] { DropResourceStream(st); });
  };
  if (s->ws) {
    s->ws->OnClose([drop](const net::WebSocketClose&) { drop(); });
  } else {
    call->writer->OnClose(drop);
  }
  MutexLock lock(s->mu);
  if (s->ended) return;
  s->timer = scheduler_.Schedule(options_.resources_poll, [this, s] {
    if (!pool_.Post([this, s] { PollResources(s); })) DropResourceStream(s);
  });
}

void InstanceHandlers::PollResources(const std::shared_ptr<ResourceStream>& s) {
  {
    MutexLock lock(s->mu);
    if (s->ended) return;
    s->timer = 0;
  }
  if (stopping_) return;
  auto now = s->calls->Resources(s->service);
  MutexLock lock(s->mu);
  if (s->ended) return;
  if (!now.ok()) {
    const bool no_pod = now.error().code() == StatusCode::kFailedPrecondition;
    EndResourcesLocked(s, no_pod ? "PodGone" : "Unavailable",
                       "project " + s->project + ": " + now.error().message());
    return;
  }
  std::set<std::string> pods;
  for (const Json& pod : (*now)["pods"]) pods.insert(pod.get<std::string>());
  for (const auto& [pod, ts] : s->last_ts) {
    if (pods.count(pod) == 0) {
      EndResourcesLocked(s, "PodGone",
                         "pod " + pod + " of project " + s->project +
                             " is no longer ready; reconnect to follow the pods there are now");
      return;
    }
  }
  std::vector<std::pair<std::string, Json>> events;
  for (const Json& sample : (*now)["resources"]) {
    const std::string pod = GetString(sample, "pod");
    auto it = s->last_ts.find(pod);
    const double ts = SampleTs(sample);
    if (it == s->last_ts.end()) {  // a pod that became ready since: followed from now on
      it = s->last_ts.emplace(pod, 0).first;
    }
    if (ts <= it->second) continue;
    it->second = ts;
    events.emplace_back("sample", sample);
  }
  for (const std::string& pod : pods) s->last_ts.try_emplace(pod, 0);
  const auto now_time = std::chrono::steady_clock::now();
  // An idle SSE stream gets a comment; a WebSocket is kept alive by its pings.
  const bool keepalive =
      events.empty() && s->ws == nullptr && now_time - s->last_write >= options_.keepalive;
  if (!events.empty() || keepalive) {
    const size_t pending = s->ws ? s->ws->pending_bytes() : s->call->writer->pending_bytes();
    if (pending > kResourcesPendingLimit) {
      EndResourcesLocked(s, "SlowConsumer",
                         "the client did not keep up with the stream (" + std::to_string(pending) +
                             " bytes unsent)");
      return;
    }
    const bool written =
        keepalive ? s->call->writer->Write(": keep-alive\n\n") : WriteResourcesLocked(s, events);
    if (!written) {
      s->ended = true;
      return;
    }
    s->last_write = now_time;
  }
  if (stopping_) return;
  s->timer = scheduler_.Schedule(options_.resources_poll, [this, s] {
    if (!pool_.Post([this, s] { PollResources(s); })) DropResourceStream(s);
  });
}

bool InstanceHandlers::WriteResourcesLocked(
    const std::shared_ptr<ResourceStream>& s,
    const std::vector<std::pair<std::string, Json>>& events) {
  if (s->ws == nullptr) {
    std::string out;
    for (const auto& [event, data] : events) out += SseEvent(event, data);
    return s->call->writer->Write(std::move(out));
  }
  for (const auto& [event, data] : events) {
    if (!s->ws->Send(WsEvent(event, data))) return false;
  }
  return true;
}

void InstanceHandlers::EndResourcesLocked(const std::shared_ptr<ResourceStream>& s,
                                          const std::string& reason, const std::string& message) {
  if (s->ended) return;
  s->ended = true;
  if (s->timer != 0) scheduler_.Cancel(s->timer);
  s->timer = 0;
  WriteResourcesLocked(s, {{"end", Json{{"reason", reason}, {"message", message}}}});
  if (s->ws) {
    // The close frame carries the reason; the message (maybe longer than a close frame holds)
    // is in the `end` message before it.
    s->ws->Close(ResourcesCloseCode(reason), reason);
  } else {
    s->call->writer->End();
  }
}

void InstanceHandlers::DropResourceStream(const std::shared_ptr<ResourceStream>& s) {
  {
    MutexLock lock(s->mu);
    if (!s->ended) {
      s->ended = true;
      if (s->timer != 0) scheduler_.Cancel(s->timer);
      s->timer = 0;
      if (s->ws) {
        s->ws->Close(net::kWsNormal, "");
      } else {
        s->call->writer->End();
      }
    }
  }
  MutexLock lock(streams_mu_);
  streams_.erase(std::remove(streams_.begin(), streams_.end(), s), streams_.end());
}

void InstanceHandlers::Stop() {
  std::vector<std::shared_ptr<ResourceStream>> streams;
  {
    MutexLock lock(streams_mu_);
    streams.swap(streams_);
  }
  for (auto& s : streams) {
    MutexLock lock(s->mu);
    EndResourcesLocked(s, "Stopping", "the server is stopping");
  }
}

}  // namespace steward::api
