// `steward demo`: Steward as `steward serve --embedded-cluster` runs it (app::App: the embedded
// cluster, a SQLite store, the engine and the REST API) in one process, with a few projects
// created and started through the API and their progress shown live.
#include <netdb.h>
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <utility>

#include "app/app.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cluster/embedded_cluster.h"
#include "common/file.h"
#include "common/host_port.h"
#include "common/json.h"
#include "common/log.h"
#include "common/mutex.h"
#include "engine/model/project.h"
#include "net/http_client.h"
#include "store/store.h"

namespace steward::cli {
namespace {

using SteadyClock = std::chrono::steady_clock;

struct DemoFlags {
  std::string profile = "realistic";
  uint64_t seed = 1;
  std::string data_dir;
  int projects = 3;
  int clusters = 1;  // > 1: that many embedded clusters, the projects placed over them
  std::string listen = "127.0.0.1:0";
  std::string ingress_listen = "127.0.0.1:0";
  std::string api_listen = "127.0.0.1:0";
  // Given on the command line: then they win over the addresses the data dir remembers.
  bool listen_given = false, ingress_listen_given = false, api_listen_given = false;
  std::string kubeconfig_out;
  bool exit_when_running = false;
  int timeout_seconds = 120;
  std::string log_level = "warn";
};

constexpr int kDemoClusters = 4;
constexpr const char* kClusterNames[kDemoClusters] = {"east", "west", "north", "south"};

constexpr const char* kNames[] = {"alpha", "beta",  "gamma", "delta", "epsilon", "zeta",
                                  "eta",   "theta", "iota",  "kappa", "lambda",  "mu"};

std::string ProjectName(int i) {
  constexpr int kCount = sizeof(kNames) / sizeof(kNames[0]);
  return i < kCount ? kNames[i] : "project-" + std::to_string(i + 1);
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "steward demo: %s\n", message.c_str());
  return kExitUsage;
}

// A project as one store commit left it, or (signal != 0) a signal to stop.
struct Event {
  std::string name, phase, reason, message, url, cluster;
  int64_t version = 0;
  int signal = 0;
  SteadyClock::time_point at = SteadyClock::now();  // when the change was seen
};

Event FromRecord(const store::ProjectRecord& r) {
  Event e;
  e.name = r.name;
  e.cluster = r.cluster;
  e.version = r.version;
  e.phase = r.phase.empty() ? "Pending" : r.phase;
  e.reason = "Accepted";
  e.message = "waiting for the engine";
  if (auto s = engine::ParseStoredStatus(r.status_json)) {
    e.reason = s->reason;
    e.message = s->message;
    e.url = s->url;
  }
  return e;
}

// Hands events from store listeners and the signal thread to the main thread.
class EventQueue {
 public:
  void Push(Event e) {
    MutexLock lock(mu_);
    events_.push_back(std::move(e));
    cv_.NotifyOne();
  }
  bool Pop(Event* e, SteadyClock::time_point until) {
    MutexLock lock(mu_);
    if (!cv_.WaitUntil(mu_, until, [&]() REQUIRES(mu_) { return !events_.empty(); })) return false;
    *e = std::move(events_.front());
    events_.pop_front();
    return true;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  std::deque<Event> events_ GUARDED_BY(mu_);
};

// Waits for SIGINT/SIGTERM (blocked in every thread) and forwards the first one; the destructor
// ends the wait with SIGUSR1.
class SignalThread {
 public:
  SignalThread(const sigset_t& signals, EventQueue& queue)
      : thread_([this, signals, &queue] {
          int sig = 0;
          while (sigwait(&signals, &sig) == 0 && sig == SIGUSR1) {
            if (stopping_) return;
          }
          Event e;
          e.signal = sig;
          queue.Push(std::move(e));
        }) {}
  ~SignalThread() {
    stopping_ = true;
    kill(getpid(), SIGUSR1);  // stays pending, harmlessly, if the thread already returned
    thread_.join();
  }

 private:
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

// Whether GET http://<name>.localhost:<port>/ answers 200 through the ingress listener.
bool Answers(uint16_t ingress_port, const std::string& name) {
  net::HttpClient::Options o;
  o.port = ingress_port;
  o.timeout = std::chrono::seconds(2);
  net::Headers headers;
  headers.Set("Host", name + ".localhost:" + std::to_string(ingress_port));
  auto r = net::HttpClient::Create(o)->Request("GET", "/", "", headers);
  return r.ok() && r->status == 200;
}

struct View {
  Event last;
  bool seen = false;
  double running_after = -1;  // seconds from the start to the first Running
  bool answered = false;      // its URL answered 200 while Running
};

// The port of an "http://host:port" URL (0 when there is none).
uint16_t PortOf(const std::string& url) {
  std::string_view authority = url;
  if (size_t sep = authority.find("://"); sep != std::string_view::npos) {
    authority.remove_prefix(sep + 3);
  }
  auto hp = ParseHostPort(authority.substr(0, authority.find('/')), {.port_optional = true});
  return hp.ok() ? hp->port.value_or(0) : 0;
}

// PUT /v1/projects/{name} {"spec": ..., "start": true}: the demo creates its projects the way
// the platform does. Returns the HTTP status (201 created, 200 already stored).
StatusOr<int> PutProject(const app::App& app, const std::string& name, const Json& spec) {
  net::HttpClient::Options o;
  o.port = PortOf(app.api_url());
  o.bearer_token = app.api_token();
  o.timeout = std::chrono::seconds(30);
  net::Headers headers;
  headers.Set("Content-Type", "application/json");
  const Json body = {{"spec", spec}, {"start", true}};
  auto r =
      net::HttpClient::Create(o)->Request("PUT", "/v1/projects/" + name, DumpJson(body), headers);
  if (!r.ok()) return r.error();
  if (r->status != 200 && r->status != 201) {
    return Status(StatusCode::kInternal, "PUT /v1/projects/" + name + " answered " +
                                             std::to_string(r->status) + ": " +
                                             r->body.substr(0, 500));
  }
  return r->status;
}

// The listen addresses of a run, kept in the data dir so that the next run on it serves the same
// URLs: the ingress port is in every project's URL, hence in its Deployment's environment (a new
// port would re-roll them all), and the API ports are in the printed hints and the kubeconfig.
constexpr char kPortsFile[] = "demo-ports.json";

struct ListenAddresses {
  std::string cluster, api, ingress;  // --listen, --api-listen, --ingress-listen (HOST:PORT)
};

// What `path` remembers; empty fields for a missing file or key. (A data dir that is not a
// directory is App's to refuse, by its configuration key.)
StatusOr<ListenAddresses> ReadRemembered(const std::string& path) {
  ListenAddresses out;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return out;
  auto text = ReadSmallFile(path);
  if (!text.ok()) return text.error();
  auto json = ParseJson(*text);
  if (!json.ok() || !json->is_object()) {
    return InvalidArgument(path + ": not a JSON object; remove it to take new ports");
  }
  for (auto [key, field] : {std::pair{"listen", &out.cluster}, std::pair{"apiListen", &out.api},
                            std::pair{"ingressListen", &out.ingress}}) {
    if (!json->contains(key)) continue;
    std::string host;
    uint16_t port = 0;
    const Json& v = (*json)[key];
    if (!v.is_string() || !SplitHostPort(v.get<std::string>(), &host, &port)) {
      return InvalidArgument(path + ": " + key +
                             " must be \"HOST:PORT\"; remove the file to take "
                             "new ports");
    }
    *field = v.get<std::string>();
  }
  return out;
}

std::string HostOf(const std::string& address) {
  std::string host;
  uint16_t port = 0;
  SplitHostPort(address, &host, &port);
  return host;
}

// Whether a server could listen on `address` now (bound as the servers bind: SO_REUSEADDR, so a
// port the previous run left in TIME_WAIT counts as free).
bool CanListen(const std::string& address) {
  std::string host;
  uint16_t port = 0;
  if (!SplitHostPort(address, &host, &port)) return false;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return false;
  int fd = socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol);
  int one = 1;
  bool ok = fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
            bind(fd, found->ai_addr, found->ai_addrlen) == 0;
  if (fd >= 0) close(fd);
  freeaddrinfo(found);
  return ok;
}

// The addresses of this run: a flag given on the command line, else the remembered address,
// else the flag's default. A remembered ingress port that is taken fails the run (naming it and
// the way out); a remembered API port that is taken is replaced by a free one, with a warning,
// since no project carries it.
StatusOr<ListenAddresses> ChooseAddresses(const DemoFlags& flags, const std::string& ports_file) {
  ASSIGN_OR_RETURN(ListenAddresses remembered, ReadRemembered(ports_file));
  ListenAddresses out{flags.listen, flags.api_listen, flags.ingress_listen};
  if (!flags.ingress_listen_given && !remembered.ingress.empty()) {
    if (!CanListen(remembered.ingress)) {
      return FailedPrecondition(
          "the ingress address " + remembered.ingress + " that " + ports_file +
          " remembers is in use. The projects' URLs carry its port: taking another one changes "
          "every project's Deployment. Free the port, or pass --ingress-listen " +
          JoinHostPort(HostOf(remembered.ingress), 0) + " to take a new one");
    }
    out.ingress = remembered.ingress;
  }
  for (auto [given, flag, mine, kept] :
       {std::tuple{flags.listen_given, "--listen", &out.cluster, remembered.cluster},
        std::tuple{flags.api_listen_given, "--api-listen", &out.api, remembered.api}}) {
    if (given || kept.empty()) continue;
    if (CanListen(kept)) {
      *mine = kept;
    } else {
      *mine = JoinHostPort(HostOf(kept), 0);
      LOG_WARN(
          "{} {} (remembered in {}) is in use: taking a free port instead; no project "
          "changes, but the kubeconfig and the printed hints show the new port",
          flag, kept, ports_file);
    }
  }
  return out;
}

// A demo run's configuration, from its flags.
struct DemoSetup {
  app::ServeConfig config;
  std::string ports_file;  // where the listen addresses are remembered
  std::string profile_name;
};

// Sends the log to stderr (stdout is the live view), at `level`.
void SetUpLogging(const std::string& level) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("steward"));  // stdout is the live view
  spdlog::set_level(spdlog::level::from_str(level));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
}

// Checks the flags, makes a temporary data dir when none is given and chooses the listen
// addresses. Error messages name the flag at fault.
StatusOr<DemoSetup> PrepareDemo(const DemoFlags& flags) {
  std::string host;
  uint16_t unused_port = 0;
  if (!SplitHostPort(flags.listen, &host, &unused_port)) {
    return InvalidArgument("--listen: expected HOST:PORT, got \"" + flags.listen + "\"");
  }
  if (!SplitHostPort(flags.ingress_listen, &host, &unused_port)) {
    return InvalidArgument("--ingress-listen: expected HOST:PORT, got \"" + flags.ingress_listen +
                           "\"");
  }
  // Checked here too, so the error names the flag rather than the configuration key.
  auto profile = cluster::LoadProfile(flags.profile);
  if (!profile.ok()) return InvalidArgument("--profile: " + profile.status().message());

  DemoSetup setup;
  setup.profile_name = profile->name;
  app::ServeConfig& config = setup.config;
  config.data_dir = flags.data_dir;
  if (config.data_dir.empty()) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "steward-demo-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) return Internal("cannot create a temporary data dir");
    config.data_dir = tmpl;
  }
  setup.ports_file = (std::filesystem::path(config.data_dir) / kPortsFile).string();
  ASSIGN_OR_RETURN(ListenAddresses addresses, ChooseAddresses(flags, setup.ports_file));
  config.listen = addresses.api;
  config.log_level = flags.log_level;
  config.cluster = app::ClusterSource::kEmbedded;
  config.embedded_profile = flags.profile;
  config.embedded_listen = addresses.cluster;
  config.ingress_listen = addresses.ingress;
  config.seed = flags.seed;
  config.kubeconfig_out = flags.kubeconfig_out;
  config.engine.namespace_name = "steward";
  config.engine.domain = "localhost";
  if (flags.clusters < 1 || flags.clusters > kDemoClusters) {
    return InvalidArgument("--clusters: must be between 1 and " + std::to_string(kDemoClusters) +
                           ", got " + std::to_string(flags.clusters));
  }
  if (flags.clusters > 1) {
    // Each its own embedded cluster and seed; the first keeps the remembered addresses.
    for (int i = 0; i < flags.clusters; ++i) {
      app::ServeConfig::Cluster c;
      c.name = kClusterNames[i];
      c.cluster = app::ClusterSource::kEmbedded;
      c.embedded_profile = flags.profile;
      c.embedded_listen = i == 0 ? addresses.cluster : "127.0.0.1:0";
      c.ingress_listen = i == 0 ? addresses.ingress : "127.0.0.1:0";
      c.seed = flags.seed + static_cast<uint64_t>(i);
      if (!flags.kubeconfig_out.empty()) c.kubeconfig_out = flags.kubeconfig_out + "-" + c.name;
      c.engine = config.engine;
      c.labels = {{"demo.steward.io/index", std::to_string(i + 1)}};
      config.clusters.push_back(std::move(c));
    }
  }
  return setup;
}

// Blocks SIGINT, SIGTERM and SIGUSR1 in the calling thread, hence in every thread it starts
// later, and returns them for a SignalThread to wait for.
sigset_t BlockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGINT, SIGTERM, SIGUSR1}) sigaddset(&signals, s);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

// Writes the addresses the servers listen on (the ports taken) to `ports_file`, for the next
// run on the data dir; a failure is only a warning.
void RememberAddresses(app::App& app, const app::ServeConfig& config,
                       const std::string& ports_file) {
  cluster::EmbeddedCluster& cluster = *app.embedded_cluster();
  const Json remember = {
      {"listen", JoinHostPort(HostOf(config.embedded_listen), cluster.api_port())},
      {"apiListen", JoinHostPort(HostOf(config.listen), PortOf(app.api_url()))},
      {"ingressListen", JoinHostPort(HostOf(config.ingress_listen), cluster.ingress_port())}};
  if (Status st = WritePrivateFile(ports_file, DumpJson(remember) + "\n"); !st.ok()) {
    LOG_WARN("cannot remember the ports ({}): the next run takes new ones", st.message());
  }
}

// The header of the live view: the profile, the seed and where everything is.
void PrintBanner(app::App& app, const DemoFlags& flags, const DemoSetup& setup) {
  std::printf("Steward demo (profile %s, seed %llu)\n", setup.profile_name.c_str(),
              static_cast<unsigned long long>(flags.seed));
  const std::vector<std::string> names = app.cluster_names();
  for (const std::string& name : names) {
    cluster::EmbeddedCluster& cluster = *app.embedded_cluster_of(name);
    const std::string suffix = names.size() > 1 ? " (" + name + ")" : "";
    std::printf("  API server  %s%s\n  Ingress     %s%s\n", cluster.api_url().c_str(),
                suffix.c_str(), cluster.ingress_url().c_str(), suffix.c_str());
  }
  std::printf("  Steward API %s\n  API token   %s\n  Store       %s\n  Data dir    %s\n",
              app.api_url().c_str(), app.api_token_file().c_str(), app.store().Describe().c_str(),
              setup.config.data_dir.c_str());
}

// The live view of the demo's projects: creates them, then prints their progress from the
// store's events until they all run (and answer), one fails, time runs out or a signal comes.
class LiveView {
 public:
  // The view's times count from its construction.
  LiveView(const DemoFlags& flags, app::App& app, std::string data_dir)
      : flags_(flags), app_(app), data_dir_(std::move(data_dir)), start_(SteadyClock::now()) {}

  // PUTs the projects through the API, printing each, and queues each one's stored record.
  Status CreateProjects(EventQueue& queue) {
    const Json spec = {
        {"team", "demo"},
        {"stack", {{"image", "flowfuse/node-red:4.0"}, {"cpu", 10}, {"memory", 256}}}};
    for (int i = 0; i < flags_.projects; ++i) {
      std::string name = ProjectName(i);
      auto put = PutProject(app_, name, spec);
      if (!put.ok()) return Internal("project " + name + ": " + put.error().message());
      std::printf("%s %s\n", *put == 201 ? "Created" : "Adopted stored project", name.c_str());
      views_[name];
      // The listener may have missed commits made before it was added (adoption at engine
      // start); the stored record is the starting point, later versions replace it.
      auto record = app_.store().GetProjectByName(name);
      if (!record.ok()) return Internal("project " + name + ": " + record.error().message());
      queue.Push(FromRecord(*record));
    }
    return Status::Ok();
  }

  // Shows the events of `queue` until the run ends; returns the exit code.
  int Run(EventQueue& queue) {
    const auto deadline = start_ + std::chrono::seconds(flags_.timeout_seconds);
    bool summarised = false;
    int code = -1;
    while (code < 0) {
      Event e;
      auto until = flags_.exit_when_running ? deadline : SteadyClock::now() + std::chrono::hours(1);
      if (!summarised) until = std::min(until, SteadyClock::now() + std::chrono::milliseconds(500));
      if (queue.Pop(&e, until)) {
        if (e.signal != 0) {
          std::printf("\nReceived %s, stopping\n", e.signal == SIGINT ? "SIGINT" : "SIGTERM");
          code = summarised || !flags_.exit_when_running ? kExitOk : kExitFailed;
          break;
        }
        View* v = Apply(std::move(e));
        if (v == nullptr) continue;
        if (flags_.exit_when_running && v->last.phase == "Failed") {
          std::printf("%s failed: %s: %s\n", v->last.name.c_str(), v->last.reason.c_str(),
                      v->last.message.c_str());
          code = kExitFailed;
        }
      }
      if (!summarised && AllRunning()) {
        PrintSummary();
        summarised = true;
        if (flags_.exit_when_running) code = kExitOk;
      }
      if (code < 0 && flags_.exit_when_running && SteadyClock::now() >= deadline) {
        PrintTimeout();
        code = kExitTimeout;
      }
      std::fflush(stdout);
    }
    return code;
  }

 private:
  double SinceStart(SteadyClock::time_point t) const {
    return std::chrono::duration<double>(t - start_).count();
  }

  // The ingress listener of the project's cluster: each embedded cluster has its own.
  uint16_t PortOf(const std::string& cluster) const {
    cluster::EmbeddedCluster* c = app_.embedded_cluster_of(cluster);
    return c != nullptr ? c->ingress_port() : 0;
  }
  std::string UrlOf(const std::string& name, const std::string& cluster) const {
    return "http://" + name + ".localhost:" + std::to_string(PortOf(cluster)) + "/";
  }

  // Records a project's event in its view, printing a change of phase or reason. Returns the
  // view, or null (nothing done) for an event of no shown project or not newer than the view.
  View* Apply(Event e) {
    auto it = views_.find(e.name);
    if (it == views_.end() || (it->second.seen && e.version <= it->second.last.version)) {
      return nullptr;
    }
    View& v = it->second;
    if (!v.seen || v.last.phase != e.phase || v.last.reason != e.reason) {
      std::printf("  +%.2fs %-10s %-13s %s: %s\n", SinceStart(e.at), e.name.c_str(),
                  e.phase.c_str(), e.reason.c_str(), e.message.c_str());
    }
    if (e.phase == "Running" && e.url == UrlOf(e.name, e.cluster) && v.running_after < 0) {
      v.running_after = SinceStart(e.at);
    }
    if (e.phase != "Running") v.answered = false;
    v.last = std::move(e);
    v.seen = true;
    return &v;
  }

  // Whether every project is Running at this run's URL and answers there (asked once each).
  bool AllRunning() {
    bool all_running = true;
    for (auto& [name, v] : views_) {
      // A stored status may predate this process (adoption): it counts when it carries this
      // run's URL (the same as before when the ingress port is remembered) and that URL answers.
      all_running =
          all_running && v.last.phase == "Running" && v.last.url == UrlOf(name, v.last.cluster);
      if (all_running && !v.answered) {
        all_running = v.answered = Answers(PortOf(v.last.cluster), name);
      }
    }
    return all_running;
  }

  // The table of running projects and how to reach them.
  void PrintSummary() const {
    std::printf("\nAll %d projects are Running and answer through the ingress listener:\n",
                flags_.projects);
    // The cluster column only when there are several.
    const bool several = flags_.clusters > 1;
    std::printf("  %-10s %s%-9s %-36s %s\n", "NAME", several ? "CLUSTER  " : "", "PHASE", "URL",
                "RUNNING AFTER");
    for (const auto& [name, v] : views_) {
      const std::string cluster = several ? (v.last.cluster + "         ").substr(0, 9) : "";
      std::printf("  %-10s %s%-9s %-36s %.2fs\n", name.c_str(), cluster.c_str(),
                  v.last.phase.c_str(), v.last.url.c_str(), v.running_after);
    }
    std::printf("\nOpen them:  curl %s\n", views_.begin()->second.last.url.c_str());
    if (!flags_.kubeconfig_out.empty()) {
      std::printf("Look:       kubectl --kubeconfig %s -n steward get all\n",
                  flags_.kubeconfig_out.c_str());
    }
    std::printf("API:        curl -H \"Authorization: Bearer $(cat %s)\" %s/v1/projects\n",
                app_.api_token_file().c_str(), app_.api_url().c_str());
    std::printf(
        "CLI:        export STEWARD_SERVER=%s STEWARD_TOKEN_FILE=%s\n"
        "            steward project list\n",
        app_.api_url().c_str(), app_.api_token_file().c_str());
    std::printf("Dashboard:  %s/ui (sign in with the token in %s)\n", app_.api_url().c_str(),
                app_.api_token_file().c_str());
    if (!flags_.exit_when_running) std::printf("Stop:       Ctrl-C\n");
    std::printf("State is kept in %s (run again with --data-dir %s to adopt it)\n",
                data_dir_.c_str(), data_dir_.c_str());
  }

  // The projects not running (or not answering) at --timeout.
  void PrintTimeout() const {
    std::printf("Timed out after %ds:", flags_.timeout_seconds);
    for (const auto& [name, v] : views_) {
      if (v.last.phase != "Running" || !v.answered) {
        std::printf(" %s %s (%s: %s);", name.c_str(), v.last.phase.c_str(), v.last.reason.c_str(),
                    v.last.message.c_str());
      }
    }
    std::printf("\n");
  }

  const DemoFlags& flags_;
  app::App& app_;
  const std::string data_dir_;
  const SteadyClock::time_point start_;
  std::map<std::string, View> views_;
};

int RunDemo(const DemoFlags& flags) {
  SetUpLogging(flags.log_level);
  auto setup = PrepareDemo(flags);
  if (!setup.ok()) return Fail(setup.error().message());
  const sigset_t signals = BlockStopSignals();  // before any thread starts: all inherit it

  EventQueue queue;  // outlives the app, its store and the listener
  auto started = app::App::Start(setup->config);
  if (!started.ok()) return Fail(started.error().message());
  app::App& app = **started;
  const int listener = app.store().AddListener([&queue](const store::ProjectChange& c) {
    if (c.record) queue.Push(FromRecord(*c.record));
  });
  SignalThread signal_thread(signals, queue);
  RememberAddresses(app, setup->config, setup->ports_file);

  LiveView view(flags, app, setup->config.data_dir);
  PrintBanner(app, flags, *setup);
  if (Status st = view.CreateProjects(queue); !st.ok()) return Fail(st.message());
  std::fflush(stdout);
  const int code = view.Run(queue);

  app.Stop();
  app.store().RemoveListener(listener);
  std::printf("Stopped\n");
  std::fflush(stdout);
  return code;
}

}  // namespace

void AddDemoCommand(CLI::App& app) {
  auto flags = std::make_shared<DemoFlags>();
  auto* cmd = app.add_subcommand(
      "demo",
      "Run Steward with an embedded cluster in one process (cluster, SQLite store, engine, "
      "REST API), start a few projects through the API and show their progress until "
      "SIGINT/SIGTERM");
  cmd->add_option("--profile", flags->profile,
                  "Cluster behaviour profile: instant, realistic, hostile, or a YAML/JSON file")
      ->capture_default_str();
  cmd->add_option("--seed", flags->seed, "Seed for the cluster's random choices")
      ->capture_default_str();
  cmd->add_option("--data-dir", flags->data_dir,
                  "Keep the store (steward.db), the API token (api-token), the cluster's state "
                  "(cluster/) and the listen addresses (demo-ports.json) here; a second run "
                  "adopts them and serves the same URLs (default: a fresh temporary directory)");
  cmd->add_option("--projects", flags->projects, "How many projects (alpha, beta, gamma, ...)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  cmd->add_option("--clusters", flags->clusters,
                  "How many embedded clusters (1-4: east, west, north, south), each with its own "
                  "seed (--seed, --seed+1, ...); the projects are placed over them")
      ->capture_default_str();
  auto* listen = cmd->add_option("--listen", flags->listen,
                                 "API server address HOST:PORT (port 0: any free; default: the "
                                 "one the data dir remembers, else 127.0.0.1:0)");
  auto* api_listen = cmd->add_option(
      "--api-listen", flags->api_listen,
      "Steward's REST API address HOST:PORT (port 0: any free; default: the one the data dir "
      "remembers, else 127.0.0.1:0)");
  auto* ingress_listen = cmd->add_option(
      "--ingress-listen", flags->ingress_listen,
      "Ingress listener address HOST:PORT (port 0: any free; default: the one the data dir "
      "remembers, else 127.0.0.1:0). A remembered port that is taken fails the run: the "
      "projects' URLs carry it");
  cmd->add_option("--kubeconfig-out", flags->kubeconfig_out,
                  "Write a kubeconfig for the embedded cluster to FILE");
  cmd->add_flag("--exit-when-running", flags->exit_when_running,
                "Exit 0 once every project is Running; 1 if one fails, 7 at --timeout");
  cmd->add_option("--timeout", flags->timeout_seconds,
                  "Seconds --exit-when-running waits for every project to run")
      ->capture_default_str()
      ->check(CLI::Range(1, 86400));
  cmd->add_option("--log-level", flags->log_level, "trace, debug, info, warn, error (on stderr)")
      ->capture_default_str()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  cmd->callback([flags, listen, api_listen, ingress_listen] {
    flags->listen_given = listen->count() > 0;
    flags->api_listen_given = api_listen->count() > 0;
    flags->ingress_listen_given = ingress_listen->count() > 0;
    SetExitCode(RunDemo(*flags));
  });
}

}  // namespace steward::cli
