// `steward project ...` and `steward agent ...`: the command-line client of Steward's REST API
// (docs/api.md) for projects and MQTT schema agents (the same lifecycle, verbs and waits).
//
// `--wait` follows a mutating verb through the watch stream (record_wait.h): the stream is open
// (its initial `sync` seen) before the request goes out, so every transition after the commit is
// delivered; the wait ends when the project is "done" with the generation the request answered
// (api.md).
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "api_client/api_client.h"
#include "cli/api_flags.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/record_text.h"
#include "cli/record_wait.h"
#include "common/ascii.h"
#include "common/file.h"
#include "common/json.h"
#include "common/json_access.h"
#include "common/mutex.h"
#include "common/time_util.h"
#include "common/yaml.h"
#include "net/http.h"

namespace steward::cli {
namespace {

using api_client::ApiClient;
using api_client::ApiClientOptions;
using api_client::ParseDuration;
using api_client::WatchEvent;

using Clock = std::chrono::steady_clock;

struct CreateFlags {
  std::string team, image, hostname, storage, spec_file;
  int cpu = 0, memory = 0, replicas = 0;
  std::vector<std::string> env;
  bool start = false;
};

struct CommandFlags {
  GlobalFlags global;
  bool agent = false;  // `steward agent`: the record is an MQTT schema agent (/v1/agents)
  std::string name;
  std::string output;
  std::string wait;  // "" = no wait
  CreateFlags create;
  std::string team, phase, desired;  // list filters
  std::string flows_action;          // start | stop | restart
  // `steward agent put`: the agent's broker and the file holding the platform's token ("-":
  // standard input). A token is never taken from the command line (it would show in `ps`).
  std::string broker, token_file;  // token_file: --agent-token-file
  std::string agent_command;       // `steward agent command`: start | restart | stop
  // `steward project move`: the cluster, the order ("" = the server's default) and whether the
  // data of a project with storage is dropped.
  std::string move_cluster, move_order;
  bool drop_storage = false;
};

// A failed API call: the exit code follows the HTTP status of the answer, or the Status of the
// failure when there was none (cannot connect, timeout); exit_codes.h has the table.
int FailCall(const ApiClient& client, const Status& status) {
  return Fail(status.message(), ExitCodeForCall(status, client.last_error().http_status));
}

// The record's path: a project's, or an agent's for `steward agent`.
std::string RecordPath(const CommandFlags& flags) {
  return (flags.agent ? "/v1/agents/" : "/v1/projects/") + net::PercentEncode(flags.name);
}

// The watch stream's query that follows the record named in `flags`.
std::string WatchQuery(const CommandFlags& flags) {
  return "project=" + net::PercentEncode(flags.name) + (flags.agent ? "&kind=agent" : "");
}

std::string Age(const Json& project) {
  auto created = ParseRfc3339(GetString(project, "createdAt"));
  if (!created) return "-";
  return HumanDuration(std::chrono::duration_cast<std::chrono::seconds>(
      std::chrono::system_clock::now() - *created));
}

// A JSON value as table text: strings bare, numbers of milliseconds since the epoch as RFC 3339.
std::string TimeText(const Json& v) {
  if (v.is_string()) {
    // The real launcher's log ts: epoch milliseconds and a 4-digit counter, as a string.
    const std::string& s = v.get_ref<const std::string&>();
    const bool cursor =
        s.size() > 4 && s.size() <= 19 &&
        std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!cursor) return s;
    return TimeText(Json(std::stoll(s.substr(0, s.size() - 4))));
  }
  if (v.is_number_integer()) {
    // "...:19.001000Z" → "...:19.001Z": the API's times have millisecond precision.
    std::string t = FormatRfc3339Micro(SystemTime(std::chrono::milliseconds(v.get<int64_t>())));
    if (t.size() > 4 && t.ends_with("000Z")) t.replace(t.size() - 4, 4, "Z");
    return t;
  }
  if (v.is_null()) return "-";
  return DumpJson(v);
}

void PrintTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 3, ' ');
    }
    std::printf("%s\n", line.c_str());
  }
  std::fflush(stdout);
}

// An agent has no URL: its column is left out of agents' tables.
std::vector<std::string> ProjectHeader(bool wide, bool agent) {
  std::vector<std::string> h = {"NAME", "PHASE", "DESIRED", "GENERATION", "URL", "AGE"};
  if (agent) h.erase(h.begin() + 4);
  if (wide) h.insert(h.end(), {"ID", "TEAM", "OBSERVED", "REASON", "MESSAGE"});
  return h;
}

std::vector<std::string> ProjectRow(const Json& p, bool wide, bool agent) {
  std::vector<std::string> row = {GetString(p, "name"),
                                  OrDash(StatusField(p, "phase")),
                                  OrDash(GetString(p, "desiredState")),
                                  std::to_string(GetInt(p, "generation")),
                                  OrDash(StatusField(p, "url")),
                                  Age(p)};
  if (agent) row.erase(row.begin() + 4);
  if (wide) {
    row.insert(row.end(),
               {GetString(p, "id"), GetString(p, "team"), std::to_string(ObservedGeneration(p)),
                OrDash(StatusField(p, "reason")), OrDash(StatusField(p, "message"))});
  }
  return row;
}

// -o/--output with its formats: CLI11 refuses any other (a usage error), and `steward completion`
// offers exactly these.
CLI::Option* AddOutput(CLI::App& cmd, std::string& output, std::vector<std::string> formats,
                       const std::string& help) {
  return cmd.add_option("-o,--output", output, help)->check(CLI::IsMember(std::move(formats)));
}

// Sends a mutating request, with --wait following it through the watch stream.
int Mutate(const CommandFlags& flags, const std::string& verb, const std::string& watch_query,
           const std::function<StatusOr<Json>(ApiClient&)>& request) {
  auto options = ClientOptions(flags.global);
  if (!options.ok()) return Fail(options.error().message(), kExitUsage);
  auto client = ApiClient::Create(*options);
  if (!client.ok()) return Fail(client.error().message(), kExitUsage);
  std::shared_ptr<WatchState> watch;
  std::chrono::milliseconds duration{0};
  if (!flags.wait.empty()) {
    auto d = ParseDuration(flags.wait);
    if (!d.ok()) return Fail("--wait: " + d.error().message(), kExitUsage);
    duration = *d;
    int http_status = 0;
    auto opened = OpenWatch(*options, watch_query, duration, &http_status);
    if (!opened.ok()) {
      return Fail(opened.error().message(), ExitCodeForCall(opened.error(), http_status));
    }
    watch = *opened;
  }
  auto start = Clock::now();
  auto answer = request(**client);
  if (!answer.ok()) {
    if (watch) {
      MutexLock lock(watch->mu);
      watch->stop = true;
    }
    return FailCall(**client, answer.error());
  }
  const std::string name = GetString(*answer, "name");
  std::printf("%s: %s accepted (generation %" PRId64 ", desired %s)\n", name.c_str(), verb.c_str(),
              GetInt(*answer, "generation"), GetString(*answer, "desiredState").c_str());
  std::fflush(stdout);
  if (!watch) return kExitOk;
  return FollowUntilDone(*watch, *answer, verb == "delete", start, duration);
}

// ---- verbs ---------------------------------------------------------------------------------

StatusOr<Json> BuildSpec(const CreateFlags& f) {
  if (!f.spec_file.empty()) {
    ASSIGN_OR_RETURN(std::string text, ReadFlagFile(f.spec_file, "--spec-file"));
    auto spec = ParseYaml(text);
    if (!spec.ok())
      return InvalidArgument("--spec-file " + f.spec_file + ": " + spec.error().message());
    if (!spec->is_object()) {
      return InvalidArgument("--spec-file " + f.spec_file + ": the spec must be an object");
    }
    return std::move(spec).value();
  }
  if (f.team.empty()) return InvalidArgument("--team is required (or use --spec-file)");
  if (f.image.empty()) return InvalidArgument("--image is required (or use --spec-file)");
  Json spec = {{"team", f.team}, {"stack", {{"image", f.image}}}};
  if (f.cpu != 0) spec["stack"]["cpu"] = f.cpu;
  if (f.memory != 0) spec["stack"]["memory"] = f.memory;
  if (!f.env.empty()) {
    Json env = Json::object();
    for (const auto& kv : f.env) {
      size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        return InvalidArgument("--env: \"" + kv + "\" is not NAME=VALUE");
      }
      env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    spec["stack"]["env"] = env;
  }
  if (f.replicas != 0) spec["replicas"] = f.replicas;
  if (!f.hostname.empty()) spec["customHostname"] = f.hostname;
  if (!f.storage.empty()) spec["storage"] = {{"size", f.storage}};
  return spec;
}

int RunCreate(const CommandFlags& flags) {
  auto spec = BuildSpec(flags.create);
  if (!spec.ok()) return Fail(spec.error().message(), kExitUsage);
  Json body = {{"spec", *spec}};
  if (flags.create.start) body["start"] = true;
  // The stream is opened before the project exists; the server filters by name.
  return Mutate(flags, "create", WatchQuery(flags),
                [&](ApiClient& c) { return c.Put(RecordPath(flags), body); });
}

// The platform's token for an agent, from --agent-token-file (a file, or "-" for standard input):
// its first line, which must not be empty.
StatusOr<std::string> ReadToken(const std::string& path) {
  std::string text;
  if (path == "-") {
    std::getline(std::cin, text);
  } else {
    ASSIGN_OR_RETURN(text, ReadFlagFile(path, "--agent-token-file"));
    text = text.substr(0, text.find('\n'));
  }
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.pop_back();
  if (text.empty()) return InvalidArgument("--agent-token-file " + path + ": no token in it");
  return text;
}

// `steward agent put NAME --team T --broker B [--agent-token-file F] [--start]`: creates or updates
// the agent; the first put must carry the token, a later one without it keeps the one it has.
int RunAgentPut(const CommandFlags& flags) {
  Json spec = {{"team", flags.team}, {"broker", flags.broker}};
  if (!flags.token_file.empty()) {
    auto token = ReadToken(flags.token_file);
    if (!token.ok()) return Fail(token.error().message(), kExitUsage);
    spec["credentials"] = {{"token", *token}};
  }
  Json body = {{"spec", std::move(spec)}};
  if (flags.create.start) body["start"] = true;
  return Mutate(flags, "put", WatchQuery(flags),
                [&](ApiClient& c) { return c.Put(RecordPath(flags), body); });
}

int RunAction(const CommandFlags& flags, const std::string& verb) {
  return Mutate(flags, verb, WatchQuery(flags), [&](ApiClient& c) -> StatusOr<Json> {
    if (verb == "delete") return c.Delete(RecordPath(flags));
    std::string action = verb == "rotate" ? "rotate-credentials" : verb;
    return c.Post(RecordPath(flags) + "/" + action);
  });
}

// `steward project move NAME --cluster C [--order stopFirst|startFirst] [--drop-storage]`.
int RunMove(const CommandFlags& flags) {
  Json body = {{"cluster", flags.move_cluster}};
  if (!flags.move_order.empty()) body["order"] = flags.move_order;
  if (flags.drop_storage) body["storage"] = "drop";
  return Mutate(flags, "move", WatchQuery(flags),
                [&](ApiClient& c) { return c.Post(RecordPath(flags) + "/move", body); });
}

// Runs a read-only call and hands its answer to `print`.
int Read(const CommandFlags& flags, const std::function<StatusOr<Json>(ApiClient&)>& call,
         const std::function<void(const Json&)>& print) {
  auto options = ClientOptions(flags.global);
  if (!options.ok()) return Fail(options.error().message(), kExitUsage);
  auto client = ApiClient::Create(*options);
  if (!client.ok()) return Fail(client.error().message(), kExitUsage);
  auto answer = call(**client);
  if (!answer.ok()) return FailCall(**client, answer.error());
  print(*answer);
  return kExitOk;
}

void PrintStructured(const Json& j, const std::string& output) {
  std::string text = output == "yaml" ? ToYaml(j) : j.dump(2);
  std::printf("%s%s", text.c_str(), text.ends_with('\n') ? "" : "\n");
  std::fflush(stdout);
}

int RunGet(const CommandFlags& flags) {
  return Read(
      flags, [&](ApiClient& c) { return c.Get(RecordPath(flags)); },
      [&](const Json& p) {
        if (flags.output == "json" || flags.output == "yaml")
          return PrintStructured(p, flags.output);
        bool wide = flags.output == "wide";
        PrintTable({ProjectHeader(wide, flags.agent), ProjectRow(p, wide, flags.agent)});
        if (!wide) {
          std::string reason = StatusField(p, "reason");
          std::string message = StatusField(p, "message");
          if (!reason.empty() || !message.empty()) {
            std::printf("%s: %s\n", OrDash(reason).c_str(), OrDash(message).c_str());
            std::fflush(stdout);
          }
        }
      });
}

int RunList(const CommandFlags& flags) {
  std::string query;
  auto add = [&](const char* key, const std::string& value) {
    if (value.empty()) return;
    query += (query.empty() ? "?" : "&") + std::string(key) + "=" + net::PercentEncode(value);
  };
  add("team", flags.team);
  add("phase", flags.phase);
  add("desiredState", flags.desired);
  return Read(
      flags,
      [&](ApiClient& c) -> StatusOr<Json> {
        Json items = Json::array();
        std::string token;
        do {
          std::string target = (flags.agent ? "/v1/agents" : "/v1/projects") + query;
          if (!token.empty()) {
            target +=
                (query.empty() ? "?" : "&") + std::string("continue=") + net::PercentEncode(token);
          }
          ASSIGN_OR_RETURN(Json page, c.Get(target));
          if (page.contains("items") && page["items"].is_array()) {
            for (auto& item : page["items"]) items.push_back(std::move(item));
          }
          token = GetString(page, "continue");
        } while (!token.empty());
        return Json{{"items", std::move(items)}};
      },
      [&](const Json& list) {
        if (flags.output == "json" || flags.output == "yaml") {
          return PrintStructured(list, flags.output);
        }
        if (flags.output == "name") {  // for scripts and shell completion
          for (const auto& p : list["items"]) std::printf("%s\n", GetString(p, "name").c_str());
          std::fflush(stdout);
          return;
        }
        if (list["items"].empty()) {
          std::fprintf(stderr, "No %s found.\n", flags.agent ? "agents" : "projects");
          return;
        }
        bool wide = flags.output == "wide";
        std::vector<std::vector<std::string>> rows = {ProjectHeader(wide, flags.agent)};
        for (const auto& p : list["items"]) rows.push_back(ProjectRow(p, wide, flags.agent));
        PrintTable(rows);
      });
}

// `watch`: the records as a table that grows a row per change (kubectl get --watch's form):
// the current records first, then every change as it is committed, until --timeout passes
// (exit 0), the stream ends (an `error` event exits 1; a refusal or a broken stream exits with
// the code exit_codes.h gives it) or the process is interrupted. -o json prints each event as one
// JSON line.
int RunWatch(const CommandFlags& flags) {
  std::chrono::milliseconds duration = std::chrono::hours(24 * 365 * 100);
  if (!flags.wait.empty()) {
    auto d = ParseDuration(flags.wait);
    if (!d.ok()) return Fail("--timeout: " + d.error().message(), kExitUsage);
    duration = *d;
  }
  auto options = ClientOptions(flags.global);
  if (!options.ok()) return Fail(options.error().message(), kExitUsage);
  auto client = ApiClient::Create(*options);
  if (!client.ok()) return Fail(client.error().message(), kExitUsage);
  std::string query = std::string("initial=true") + (flags.agent ? "&kind=agent" : "");
  if (!flags.name.empty()) query += "&project=" + net::PercentEncode(flags.name);
  if (!flags.team.empty()) query += "&team=" + net::PercentEncode(flags.team);
  const bool json = flags.output == "json";
  const bool wide = flags.output == "wide";
  // Rows stream in, so the columns cannot be fitted to them: a fixed width per column, wide
  // enough for a name, a phase, a URL, a reason.
  const std::map<std::string, size_t> width_of = {
      {"NAME", 24}, {"PHASE", 13}, {"DESIRED", 10}, {"GENERATION", 10}, {"URL", 40},
      {"AGE", 8},   {"ID", 36},    {"TEAM", 12},    {"OBSERVED", 8},    {"REASON", 22}};
  const std::vector<std::string> header = ProjectHeader(wide, flags.agent);
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      if (i + 1 == row.size()) {
        line += row[i];
        break;
      }
      line += Pad(row[i], width_of.at(header[i])) + "   ";
    }
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  if (!json) print_row(header);
  std::string broken;
  Status s = (*client)->Watch(
      query,
      [&](const WatchEvent& e) {
        if (e.event == "error") {
          broken = GetString(e.data, "message");
          return false;
        }
        if (json) {
          Json line = {{"event", e.event}, {"data", e.data}};
          if (!e.id.empty()) line["id"] = e.id;
          std::printf("%s\n", DumpJson(line).c_str());
          std::fflush(stdout);
          return true;
        }
        if (e.event == "project" || e.event == "agent") {
          print_row(ProjectRow(e.data, wide, flags.agent));
        } else if (e.event == "deleted") {
          print_row({GetString(e.data, "name"), "Deleted"});
        }
        return true;
      },
      duration);
  if (!broken.empty()) return Fail("the watch stream ended: " + broken, kExitFailed);
  if (s.code() == StatusCode::kDeadlineExceeded) return kExitOk;
  if (!s.ok()) return FailCall(**client, s);
  return kExitOk;
}

int RunLogs(const CommandFlags& flags) {
  return Read(
      flags, [&](ApiClient& c) { return c.Get(RecordPath(flags) + "/logs"); },
      [&](const Json& logs) {
        if (flags.output == "json") return PrintStructured(logs, "json");
        const Json* items = FindPath(logs, "items");
        if (items == nullptr || !items->is_array()) return;
        for (const auto& line : *items) {
          const Json* ts = FindPath(line, "ts");
          const Json* level = FindPath(line, "level");
          std::string level_text = level == nullptr     ? "-"
                                   : level->is_string() ? level->get<std::string>()
                                                        : DumpJson(*level);
          std::printf("%s  %-5s  %s  %s\n", ts != nullptr ? TimeText(*ts).c_str() : "-",
                      level_text.c_str(), OrDash(GetString(line, "pod")).c_str(),
                      GetString(line, "msg").c_str());
        }
        std::fflush(stdout);
      });
}

int RunInfo(const CommandFlags& flags) {
  return Read(
      flags, [&](ApiClient& c) { return c.Get(RecordPath(flags) + "/instance"); },
      [&](const Json& answer) {
        const Json* instance = FindPath(answer, "instance");
        PrintStructured(instance != nullptr ? *instance : answer,
                        flags.output.empty() ? "yaml" : flags.output);
      });
}

int RunFlows(const CommandFlags& flags) {
  return Read(
      flags,
      [&](ApiClient& c) { return c.Post(RecordPath(flags) + "/flows/" + flags.flows_action); },
      [&](const Json& answer) {
        const Json* pods = FindPath(answer, "pods");
        if (pods == nullptr || !pods->is_array()) return;
        for (const auto& p : *pods) {
          std::printf("%s: flows %s: HTTP %d\n", GetString(p, "pod").c_str(),
                      flags.flows_action.c_str(), p.value("status", 0));
        }
        std::fflush(stdout);
      });
}

// `steward agent status NAME`: the agent's own status ({"connected", "error"}), as YAML or JSON.
int RunAgentStatus(const CommandFlags& flags) {
  return Read(
      flags, [&](ApiClient& c) { return c.Get(RecordPath(flags) + "/status"); },
      [&](const Json& answer) {
        const Json* status = FindPath(answer, "status");
        PrintStructured(status != nullptr ? *status : answer,
                        flags.output.empty() ? "yaml" : flags.output);
      });
}

// `steward agent command ACTION NAME`: start, restart or stop on the agent's own API. The pod's
// answer is printed; an HTTP error from the agent exits 1.
int RunAgentCommand(const CommandFlags& flags) {
  int code = kExitOk;
  int read = Read(
      flags,
      [&](ApiClient& c) { return c.Post(RecordPath(flags) + "/commands/" + flags.agent_command); },
      [&](const Json& answer) {
        const int status = answer.value("status", 0);
        std::printf("%s: %s: HTTP %d%s\n", GetString(answer, "pod").c_str(),
                    flags.agent_command.c_str(), status,
                    answer.contains("body") && !answer["body"].is_null() &&
                            !(answer["body"].is_object() && answer["body"].empty())
                        ? (" " + DumpJson(answer["body"])).c_str()
                        : "");
        std::fflush(stdout);
        if (status < 200 || status > 299) code = kExitFailed;
      });
  return read != 0 ? read : code;
}

int RunHistory(const CommandFlags& flags) {
  return Read(
      flags,
      [&](ApiClient& c) -> StatusOr<Json> {
        Json items = Json::array();
        std::string after;
        constexpr int kPage = 1000;
        while (true) {
          std::string target = RecordPath(flags) + "/history?limit=" + std::to_string(kPage);
          if (!after.empty()) target += "&after=" + after;
          ASSIGN_OR_RETURN(Json page, c.Get(target));
          const Json* got = FindPath(page, "items");
          if (got == nullptr || !got->is_array() || got->empty()) break;
          for (const auto& item : *got) items.push_back(item);
          if (got->size() < static_cast<size_t>(kPage)) break;
          const Json* seq = FindPath(got->back(), "seq");
          if (seq == nullptr) break;
          after = seq->is_string() ? seq->get<std::string>() : DumpJson(*seq);
        }
        return Json{{"items", std::move(items)}};
      },
      [&](const Json& history) {
        if (flags.output == "json") return PrintStructured(history, "json");
        std::vector<std::vector<std::string>> rows = {
            {"SEQ", "AT", "KIND", "GENERATION", "SUMMARY"}};
        for (const auto& h : history["items"]) {
          auto text = [&](const char* key) {
            const Json* v = FindPath(h, key);
            if (v == nullptr || v->is_null()) return std::string("-");
            return v->is_string() ? v->get<std::string>() : DumpJson(*v);
          };
          const Json* at = FindPath(h, "at");
          rows.push_back({text("seq"), at != nullptr ? TimeText(*at) : std::string("-"),
                          text("kind"), text("generation"), text("summary")});
        }
        PrintTable(rows);
      });
}

CLI::App* AddVerb(CLI::App& project, const std::string& verb, const std::string& help,
                  const std::shared_ptr<CommandFlags>& flags, bool needs_name) {
  auto* cmd = project.add_subcommand(verb, help);
  AddGlobalFlags(*cmd, flags->global);
  if (needs_name) {
    cmd->add_option("NAME", flags->name, flags->agent ? "Agent name or id" : "Project name or id")
        ->required();
  }
  return cmd;
}

void AddWait(CLI::App& cmd, CommandFlags& flags) {
  cmd.add_option(
         "--wait", flags.wait,
         "Follow it until it is done (Running/Suspended/purged) or DURATION "
         "passes (default 5m; give it after NAME, or as --wait=DURATION); exit 1 if it fails, 7 if "
         "it times out")
      ->expected(0, 1)
      ->default_str("5m");
}

// get, list and history: the same for projects and agents.
void AddReadVerbs(CLI::App& parent, const std::shared_ptr<CommandFlags>& flags) {
  const std::string what = flags->agent ? "agent" : "project";
  auto* get =
      AddVerb(parent, "get", "Show a" + std::string(flags->agent ? "n " : " ") + what, flags, true);
  AddOutput(*get, flags->output, {"json", "yaml", "wide"}, "Output format: json, yaml or wide");
  get->callback([flags] { SetExitCode(RunGet(*flags)); });

  auto* list = AddVerb(parent, "list", "List " + what + "s", flags, false);
  list->add_option("--team", flags->team, "Only this team's " + what + "s");
  list->add_option("--phase", flags->phase, "Only " + what + "s in this phase (e.g. Running)");
  list->add_option("--desired", flags->desired,
                   "Only this desired state (running|suspended|deleted)");
  AddOutput(*list, flags->output, {"json", "yaml", "wide", "name"},
            "Output format: json, yaml, wide or name (one name per line)");
  list->callback([flags] { SetExitCode(RunList(*flags)); });

  auto* watch = AddVerb(parent, "watch",
                        "Show " + what +
                            "s as a table that grows a row per change (as kubectl "
                            "get --watch), until --timeout or Ctrl-C",
                        flags, false);
  watch->add_option("NAME", flags->name, "Only this " + what + " (name or id)");
  watch->add_option("--team", flags->team, "Only this team's " + what + "s");
  watch->add_option("--timeout", flags->wait, "Stop after DURATION (e.g. 30s, 5m) and exit 0");
  AddOutput(*watch, flags->output, {"json", "wide"},
            "Output format: json (one event per line) or wide");
  watch->callback([flags] { SetExitCode(RunWatch(*flags)); });

  auto* history = AddVerb(
      parent, "history",
      "List a" + std::string(flags->agent ? "n " : " ") + what + "'s operations and phase changes",
      flags, true);
  AddOutput(*history, flags->output, {"json"}, "Output format: json");
  history->callback([flags] { SetExitCode(RunHistory(*flags)); });
}

}  // namespace

void AddProjectCommand(CLI::App& app) {
  auto* project = app.add_subcommand("project", "Manage projects through the Steward API");
  project->require_subcommand(1);
  auto flags = std::make_shared<CommandFlags>();

  auto* create =
      AddVerb(*project, "create", "Create a project (suspended unless --start)", flags, true);
  CreateFlags& c = flags->create;
  auto* spec_file =
      create->add_option("--spec-file", c.spec_file, "JSON or YAML file holding the whole spec");
  for (auto* o : {create->add_option("--team", c.team, "Team owning the project"),
                  create->add_option("--image", c.image, "Node-RED stack image"),
                  create->add_option("--cpu", c.cpu, "CPU in hundredths of a core"),
                  create->add_option("--memory", c.memory, "Memory in MB"),
                  create->add_option("--replicas", c.replicas, "Number of instances"),
                  create->add_option("--hostname", c.hostname, "Custom hostname"),
                  create->add_option("--storage", c.storage, "Persistent storage size (e.g. 1Gi)"),
                  create->add_option("--env", c.env, "Environment variable NAME=VALUE")}) {
    o->excludes(spec_file);
  }
  create->add_flag("--start", c.start, "Start the project once created");
  AddWait(*create, *flags);
  create->callback([flags] { SetExitCode(RunCreate(*flags)); });

  const std::vector<std::pair<std::string, std::string>> actions = {
      {"start", "Start a project"},
      {"suspend", "Suspend a project (its storage and credentials are kept)"},
      {"restart", "Restart a running project's instances"},
      {"rotate", "Rotate a project's credentials"},
      {"delete", "Delete a project and everything it owns"}};
  for (const auto& [verb, help] : actions) {
    auto* cmd = AddVerb(*project, verb, help, flags, true);
    AddWait(*cmd, *flags);
    cmd->callback([flags, verb = verb] { SetExitCode(RunAction(*flags, verb)); });
  }

  auto* move = AddVerb(*project, "move",
                       "Move a project to another cluster (started there, removed from the one it "
                       "leaves)",
                       flags, true);
  move->add_option("--cluster", flags->move_cluster, "The cluster to move it to")->required();
  move->add_option("--order", flags->move_order,
                   "stopFirst (default: started once the old cluster has nothing left) or "
                   "startFirst (removed from the old cluster once Running on the new one)")
      ->check(CLI::IsMember({"stopFirst", "startFirst"}));
  move->add_flag("--drop-storage", flags->drop_storage,
                 "Required of a project with storage: its data stays behind and is deleted with "
                 "the old cluster's claim (volumes do not cross clusters)");
  AddWait(*move, *flags);
  move->callback([flags] { SetExitCode(RunMove(*flags)); });

  AddReadVerbs(*project, flags);

  auto* logs = AddVerb(*project, "logs", "Print a running project's launcher logs", flags, true);
  AddOutput(*logs, flags->output, {"json"}, "Output format: json");
  logs->callback([flags] { SetExitCode(RunLogs(*flags)); });

  auto* info = AddVerb(*project, "info",
                       "Print a running instance's launcher info (state, versions)", flags, true);
  AddOutput(*info, flags->output, {"yaml", "json"}, "Output format: yaml (default) or json");
  info->callback([flags] { SetExitCode(RunInfo(*flags)); });

  auto* flows =
      project->add_subcommand("flows", "Start, stop or restart a running project's flows");
  AddGlobalFlags(*flows, flags->global);
  flows->add_option("ACTION", flags->flows_action, "start, stop or restart")
      ->required()
      ->check(CLI::IsMember({"start", "stop", "restart"}));
  flows->add_option("NAME", flags->name, "Project name or id")->required();
  flows->callback([flags] { SetExitCode(RunFlows(*flags)); });
}

void AddAgentCommand(CLI::App& app) {
  auto* agent = app.add_subcommand(
      "agent", "Manage MQTT schema agents (one per team broker) through the Steward API");
  agent->require_subcommand(1);
  auto flags = std::make_shared<CommandFlags>();
  flags->agent = true;

  auto* put = AddVerb(*agent, "put",
                      "Create or update an agent (NAME is mqtt-schema-agent-<team>-<broker>, "
                      "lowercased; stopped unless --start)",
                      flags, true);
  put->add_option("--team", flags->team, "The team's id")->required();
  put->add_option("--broker", flags->broker, "The broker's id, or team-broker")->required();
  put->add_option("--agent-token-file", flags->token_file,
                  "File holding the platform's token for the agent (- reads standard input); "
                  "required when the agent is created, kept when left out later");
  put->add_flag("--start", flags->create.start, "Start the agent");
  AddWait(*put, *flags);
  put->callback([flags] { SetExitCode(RunAgentPut(*flags)); });

  const std::vector<std::pair<std::string, std::string>> actions = {
      {"start", "Start an agent"},
      {"stop", "Stop an agent (its token is kept)"},
      {"restart", "Replace a running agent's pod"},
      {"delete", "Delete an agent and everything it owns"}};
  for (const auto& [verb, help] : actions) {
    auto* cmd = AddVerb(*agent, verb, help, flags, true);
    AddWait(*cmd, *flags);
    cmd->callback([flags, verb = verb] { SetExitCode(RunAction(*flags, verb)); });
  }
  AddReadVerbs(*agent, flags);

  auto* status = AddVerb(*agent, "status", "Print a running agent's own status", flags, true);
  AddOutput(*status, flags->output, {"yaml", "json"}, "Output format: yaml (default) or json");
  status->callback([flags] { SetExitCode(RunAgentStatus(*flags)); });

  auto* command = agent->add_subcommand("command", "Send start, restart or stop to an agent");
  AddGlobalFlags(*command, flags->global);
  command->add_option("ACTION", flags->agent_command, "start, restart or stop")
      ->required()
      ->check(CLI::IsMember({"start", "restart", "stop"}));
  command->add_option("NAME", flags->name, "Agent name or id")->required();
  command->callback([flags] { SetExitCode(RunAgentCommand(*flags)); });
}

}  // namespace steward::cli
