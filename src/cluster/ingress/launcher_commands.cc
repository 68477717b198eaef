// The launcher stand-in's command route (POST /flowforge/command) and the MCP commands it
// forwards to a made-up MCP server in the pod (VirtualPods::ServeCommand, ServeMcp).
#include <string>

#include "cluster/ingress/launcher_answers.h"
#include "cluster/ingress/virtual_pods.h"
#include "common/ascii.h"
#include "common/json_access.h"

namespace steward::cluster::ingress {

namespace {

// What a made-up MCP server in the pod offers (the launcher's getFeatures shape per endpoint).
Json McpFeatures() {
  return {
      {"tools",
       Json::array({{{"name", "echo"},
                     {"description", "Answers its input"},
                     {"inputSchema",
                      {{"type", "object"}, {"properties", {{"text", {{"type", "string"}}}}}}}}})},
      {"resources",
       Json::array(
           {{{"uri", "nodered://flows"}, {"name", "flows"}, {"mimeType", "application/json"}}})},
      {"resourceTemplates", Json::array()},
      {"prompts", Json::array()},
      {"capabilities", {{"tools", Json::object()}, {"resources", Json::object()}}}};
}

// The launcher's normalizeEndpoint: a string, or an object with a string mcpEndpoint.
bool McpEndpointValid(const Json& e) {
  return (e.is_string() && !e.get<std::string>().empty()) ||
         (e.is_object() && e.contains("mcpEndpoint") && e["mcpEndpoint"].is_string());
}

}  // namespace

net::HttpResponse VirtualPods::ServeCommand(PodState& state, const net::HttpRequest& request) {
  // body-parser's json(): a JSON body that does not parse is Express's 400 page; anything
  // without a string cmd falls through lib/admin.js's branches to 404 {}.
  auto parsed = ParseJson(request.body);
  if (!parsed.ok()) return ExpressErrorPage(400, "Bad Request");
  if (!parsed->is_object() || !(*parsed)["cmd"].is_string()) {
    return JsonResponse(404, Json::object());
  }
  const std::string cmd = (*parsed)["cmd"].get<std::string>();
  const int64_t now = NowMs();
  auto start = [&](bool restart) {
    AppendLog(state, now, "system", "Loading project settings");
    AppendLog(state, now, "system", "Target state is 'running'");
    AppendLog(state, now, "system", "Starting Node-RED");
    AppendLog(state, now, "info", "Started flows");
    state.running = true;
    state.last_start_ms = now;
    state.cpu_baseline = false;
    state.restart_pause = restart;
    state.restarting_until =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(restart_ms_.load());
  };
  if (cmd == "start") {
    if (state.running && !Starting(state)) return JsonResponse(409, {{"err", "Already running"}});
    if (!state.running) start(false);  // while starting: start() returns at once
  } else if (cmd == "stop") {
    AppendLog(state, now, "system", "Stopping Node-RED");
    if (state.running) AppendLog(state, now, "system", "Node-RED exited rc=0 signal=SIGTERM");
    state.running = false;
  } else if (cmd == "restart") {
    // Only a running (or stopped) launcher restarts; one that is starting answers {} and goes on.
    if (!state.running || !Starting(state)) {
      if (state.running) {
        AppendLog(state, now, "system", "Stopping Node-RED");
        AppendLog(state, now, "system", "Node-RED exited rc=0 signal=SIGTERM");
      }
      start(true);
    }
  } else if (cmd == "logout") {
    AppendLog(state, now, "system", "Node-RED logout requested");
  } else if (cmd.starts_with("mcp:") && mcp_commands_.load()) {
    return ServeMcp(cmd, MemberOrNull(*parsed, "data"));
  } else {
    return JsonResponse(404, Json::object());  // the launcher answers an unknown cmd 404 {}
  }
  return JsonResponse(200, Json::object());
}

net::HttpResponse VirtualPods::ServeMcp(const std::string& cmd, const Json& data) {
  if (cmd == "mcp:get-features") {
    // An array with one {spec, features, error} per endpoint; [] without endpoints.
    Json out = Json::array();
    const Json& endpoints = MemberOrNull(data, "endpoints");
    if (endpoints.is_array()) {
      for (const Json& e : endpoints) {
        Json spec = e.is_object() ? e : Json::object();
        spec["key"] = e.is_string() ? e : MemberOrNull(e, "mcpEndpoint");
        if (!McpEndpointValid(e)) {
          out.push_back({{"spec", {{"key", "<invalid>"}, {"skip", true}}},
                         {"error",
                          "Invalid endpoint spec: must be a string or object with an "
                          "\"mcpEndpoint\" property"}});
          continue;
        }
        out.push_back({{"spec", spec}, {"features", McpFeatures()}, {"error", nullptr}});
      }
    }
    return JsonResponse(200, out);
  } else if (cmd == "mcp:call-tool" || cmd == "mcp:read-resource") {
    const bool tool = cmd == "mcp:call-tool";
    const Json& endpoint = MemberOrNull(data, "endpoint");
    const std::string what = GetString(data, tool ? "name" : "uri");
    if (endpoint.is_null() || (endpoint.is_string() && endpoint.get<std::string>().empty())) {
      return JsonResponse(500, {{"err", "endpoint is required"}});
    }
    if (what.empty()) {
      return JsonResponse(500,
                          {{"err", tool ? "Tool name is required" : "Resource URI is required"}});
    }
    if (tool) {
      if (what != "echo") {
        return JsonResponse(500, {{"err", "MCP error -32602: Tool " + what + " not found"}});
      }
      const Json& input = MemberOrNull(data, "input");
      return JsonResponse(
          200, {{"content", Json::array({{{"type", "text"}, {"text", GetString(input, "text")}}})},
                {"isError", false}});
    }
    if (what != "nodered://flows") {
      return JsonResponse(500, {{"err", "MCP error -32002: Resource " + what + " not found"}});
    }
    return JsonResponse(
        200, {{"contents",
               Json::array({{{"uri", what}, {"mimeType", "application/json"}, {"text", "[]"}}})}});
  }
  return JsonResponse(404, Json::object());
}

}  // namespace steward::cluster::ingress
