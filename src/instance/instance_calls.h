// InstanceCalls: the operations on a running instance that Steward's REST API offers (the
// launcher's info, logs, commands, files, resources and MCP pass-through; an MQTT schema agent's
// status and commands), as an interface.
// Header only and free of Kubernetes, so that the API links this and not the client: the
// implementation is instance::InstanceOps (instance_ops.h), wired in by the app; tests may supply
// their own. Implementations are thread-safe (calls may run concurrently) and may block (the API
// calls them from its worker threads, never from an I/O thread).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/status.h"

namespace steward::instance {

// One pod's answer to a command. status 0 with `error` set when the pod could not be reached.
struct PodAnswer {
  std::string pod;
  int status = 0;
  Json body;          // the launcher's JSON answer (null when none or not JSON)
  std::string error;  // transport error, empty when an HTTP answer came
};

// A request to the launcher's files API (`/flowforge/files/_/<path>`, rooted at the instance's
// storage directory). `path` is relative, '/'-separated, "" for the storage root, and must pass
// FilePathProblem(); each segment is percent-encoded on the way (the launcher decodes it once).
struct FileRequest {
  std::string method;  // GET (list a directory), PUT (rename), DELETE, POST (mkdir or upload)
  std::string path;
  std::string body;
  std::string content_type;  // of `body`; "" when there is none
};

// The launcher's HTTP answer to a FileRequest, as it came (the launcher answers most of them
// with an empty body and a status alone).
struct FileAnswer {
  std::string pod;
  int status = 0;
  std::string content_type;
  std::string body;
};

// One pod's step of a one-at-a-time flow restart.
struct RestartStep {
  std::string pod;
  // "restarted" (the command was accepted and the pod answers running again), "failed" (the
  // command was refused or the pod did not come back in time: `error` says which) or "skipped"
  // (an earlier pod failed, nothing was sent).
  std::string outcome;
  int status = 0;          // the command's HTTP status (0: none)
  Json body;               // the command's JSON answer, when any
  std::string error;       // why it failed
  int64_t elapsed_ms = 0;  // from sending the command to the pod answering running again
};

// The problem with a storage-relative file path, or "" when there is none. Refused: NUL and
// other control characters, backslashes, a leading '/', empty segments ("a//b", a trailing
// '/'), "." and ".." segments, segments that percent-decode (however often) to "." or "..",
// segments over 255 bytes and paths over 4096 bytes. "" (the storage root) is fine here.
inline std::string FilePathProblem(std::string_view path) {
  if (path.size() > 4096) return "must be at most 4096 bytes";
  for (char c : path) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return "must not contain control characters (NUL included)";
    if (c == '\\') return "must not contain a backslash";
  }
  if (path.empty()) return "";
  if (path.front() == '/') return "must be relative (no leading '/')";
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    std::string seg(path.substr(i, j - i));
    if (seg.empty()) return "must not contain empty segments ('//' or a trailing '/')";
    if (seg.size() > 255) return "must not have a segment over 255 bytes";
    // Decode until nothing changes: "%252e%252e" is ".." to a server that decodes twice. What
    // still decodes after kRounds rounds is refused, not passed on half-decoded.
    constexpr int kRounds = 8;
    for (int round = 0;; ++round) {
      if (seg == "." || seg == "..") return "must not contain '.' or '..' segments";
      if (round == kRounds) {
        return "must not be percent-encoded more than " + std::to_string(kRounds - 1) + " times";
      }
      std::string decoded;
      for (size_t k = 0; k < seg.size(); ++k) {
        if (seg[k] == '%' && k + 2 < seg.size() && hex(seg[k + 1]) >= 0 && hex(seg[k + 2]) >= 0) {
          decoded += static_cast<char>(hex(seg[k + 1]) * 16 + hex(seg[k + 2]));
          k += 2;
        } else {
          decoded += seg[k];
        }
      }
      if (decoded == seg) break;
      if (decoded.find('/') != std::string::npos || decoded.find('\\') != std::string::npos ||
          decoded.find('\0') != std::string::npos) {
        return "must not contain an encoded '/', '\\' or NUL";
      }
      for (char c : decoded) {
        auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) return "must not contain encoded control characters";
      }
      seg = std::move(decoded);
    }
    i = j + 1;
  }
  return "";
}

class InstanceCalls {
 public:
  virtual ~InstanceCalls() = default;
  // `service` is the project's Service name (manifests::NamesFor(id, name).service). What each
  // answers, and its errors, are InstanceOps' (instance_ops.h).
  virtual StatusOr<Json> Info(const std::string& service) const = 0;
  virtual StatusOr<Json> Logs(const std::string& service) const = 0;
  virtual StatusOr<std::vector<PodAnswer>> Command(const std::string& service,
                                                   const Json& command) const = 0;
  // The command to one pod: the first ready one by name that can be reached.
  virtual StatusOr<PodAnswer> CommandOne(const std::string& service, const Json& command) const = 0;
  // The files API on one pod (the first ready one by name that can be reached); an answer over
  // `max_answer_bytes` is not read past the limit and fails (kOutOfRange).
  virtual StatusOr<FileAnswer> Files(const std::string& service, const FileRequest& request,
                                     size_t max_answer_bytes) const = 0;
  // GET /flowforge/resources of every ready pod, merged: {meta, resources, count, pods}.
  virtual StatusOr<Json> Resources(const std::string& service) const = 0;
  // {"cmd":"restart"} to one ready pod at a time, waiting (up to `per_pod`) for each to answer
  // running again before the next; stops at the first failure.
  virtual StatusOr<std::vector<RestartStep>> RestartEach(
      const std::string& service, std::chrono::milliseconds per_pod) const = 0;
  // An MQTT schema agent's Service (mqtt-schema-agent-<team>-<broker>): GET /api/v1/status from
  // its pod, and "start", "restart" or "stop" sent to it (the driver's getBrokerAgentState and
  // sendBrokerAgentCommand).
  virtual StatusOr<Json> AgentStatus(const std::string& service) const = 0;
  virtual StatusOr<PodAnswer> AgentCommand(const std::string& service,
                                           std::string_view command) const = 0;
};

}  // namespace steward::instance
