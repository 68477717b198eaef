#include "cluster/profile/profile.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

namespace steward::cluster {

namespace {

using std::chrono::milliseconds;

constexpr std::string_view kBuiltinNames = "instant, realistic, hostile";

DelaySpec Delay(int64_t fixed_ms, int64_t jitter_ms) {
  return DelaySpec{milliseconds(fixed_ms), milliseconds(jitter_ms)};
}

// The verbs a latency entry may name ("*" covers the ones not named).
const std::set<std::string, std::less<>>& LatencyVerbs() {
  static const std::set<std::string, std::less<>> kVerbs = {
      "*", "get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"};
  return kVerbs;
}

// Error context: where the profile text came from and where in it a node sits.
struct Ctx {
  std::string_view origin;
};

std::string Where(const Ctx& ctx, const YAML::Node& node) {
  std::string out(ctx.origin);
  const YAML::Mark mark = node.Mark();
  if (!mark.is_null()) {
    out += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  }
  return out;
}

Status FieldError(const Ctx& ctx, const YAML::Node& node, std::string_view field,
                  std::string_view problem) {
  return InvalidArgument(Where(ctx, node) + ": field \"" + std::string(field) +
                         "\": " + std::string(problem));
}

std::string Describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Null:
      return "null";
    case YAML::NodeType::Scalar:
      return "\"" + node.Scalar() + "\"";
    default:
      return "nothing";
  }
}

// Scalar conversions. yaml-cpp's as<T>() throws on mismatch; the adapter turns that into a Status.
template <typename T>
Status ReadScalar(const Ctx& ctx, const YAML::Node& node, std::string_view field,
                  std::string_view expected, T& out) {
  if (!node.IsScalar()) {
    return FieldError(ctx, node, field,
                      "expected " + std::string(expected) + ", got " + Describe(node));
  }
  try {
    out = node.as<T>();
  } catch (const YAML::Exception&) {
    return FieldError(ctx, node, field,
                      "expected " + std::string(expected) + ", got " + Describe(node));
  }
  return Status::Ok();
}

Status ReadNonNegativeInt(const Ctx& ctx, const YAML::Node& node, std::string_view field,
                          int64_t& out) {
  int64_t v = 0;
  RETURN_IF_ERROR(ReadScalar(ctx, node, field, "a non-negative integer", v));
  if (v < 0) return FieldError(ctx, node, field, "must not be negative");
  out = v;
  return Status::Ok();
}

Status ReadRate(const Ctx& ctx, const YAML::Node& node, std::string_view field, double& out) {
  double v = 0;
  RETURN_IF_ERROR(ReadScalar(ctx, node, field, "a number between 0 and 1", v));
  if (!std::isfinite(v) || v < 0 || v > 1) {
    return FieldError(ctx, node, field, "must be between 0 and 1, got " + node.Scalar());
  }
  out = v;
  return Status::Ok();
}

Status ReadBool(const Ctx& ctx, const YAML::Node& node, std::string_view field, bool& out) {
  return ReadScalar(ctx, node, field, "true or false", out);
}

Status ExpectMap(const Ctx& ctx, const YAML::Node& node, std::string_view field) {
  if (!node.IsMap()) return FieldError(ctx, node, field, "expected a map, got " + Describe(node));
  return Status::Ok();
}

std::string Join(std::string_view prefix, std::string_view key) {
  return prefix.empty() ? std::string(key) : std::string(prefix) + "." + std::string(key);
}

// A delay object {fixed_ms, jitter_ms}. With `reset`, keys not given become 0 (a file states
// the whole delay); without, they keep their value (a single dotted override).
Status ApplyDelay(const Ctx& ctx, const YAML::Node& node, std::string_view field, bool reset,
                  DelaySpec& delay) {
  RETURN_IF_ERROR(ExpectMap(ctx, node, field));
  if (reset) delay = DelaySpec{};
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    const std::string path = Join(field, key);
    int64_t v = 0;
    if (key == "fixed_ms") {
      RETURN_IF_ERROR(ReadNonNegativeInt(ctx, kv.second, path, v));
      delay.fixed = milliseconds(v);
    } else if (key == "jitter_ms") {
      RETURN_IF_ERROR(ReadNonNegativeInt(ctx, kv.second, path, v));
      delay.jitter = milliseconds(v);
    } else {
      return FieldError(ctx, kv.first, path, "unknown field (a delay has fixed_ms and jitter_ms)");
    }
  }
  return Status::Ok();
}

DelaySpec* DelayField(Profile& p, std::string_view key) {
  if (key == "controller") return &p.controller;
  if (key == "pod_scheduling") return &p.pod_scheduling;
  if (key == "pod_start") return &p.pod_start;
  if (key == "pod_ready") return &p.pod_ready;
  if (key == "pod_termination") return &p.pod_termination;
  if (key == "endpoints") return &p.endpoints;
  if (key == "load_balancer") return &p.load_balancer;
  if (key == "service_finalizer") return &p.service_finalizer;
  if (key == "ingress_finalizer") return &p.ingress_finalizer;
  if (key == "pvc_finalizer") return &p.pvc_finalizer;
  if (key == "pvc_binding") return &p.pvc_binding;
  if (key == "garbage_collection") return &p.garbage_collection;
  return nullptr;
}

Status ApplyFaults(const Ctx& ctx, const YAML::Node& node, bool reset, FaultSpec& f) {
  RETURN_IF_ERROR(ExpectMap(ctx, node, "faults"));
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    const std::string path = Join("faults", key);
    const YAML::Node& v = kv.second;
    if (key == "latency") {
      RETURN_IF_ERROR(ExpectMap(ctx, v, path));
      for (const auto& entry : v) {
        const std::string verb = entry.first.as<std::string>();
        const std::string verb_path = Join(path, verb);
        if (LatencyVerbs().count(verb) == 0) {
          return FieldError(ctx, entry.first, verb_path,
                            "unknown verb (use get, list, watch, create, update, patch, delete, "
                            "deletecollection or \"*\")");
        }
        RETURN_IF_ERROR(ApplyDelay(ctx, entry.second, verb_path, reset, f.latency[verb]));
      }
    } else if (key == "error_rate_429") {
      RETURN_IF_ERROR(ReadRate(ctx, v, path, f.error_rate_429));
    } else if (key == "error_rate_500") {
      RETURN_IF_ERROR(ReadRate(ctx, v, path, f.error_rate_500));
    } else if (key == "error_rate_503") {
      RETURN_IF_ERROR(ReadRate(ctx, v, path, f.error_rate_503));
    } else if (key == "reset_rate") {
      RETURN_IF_ERROR(ReadRate(ctx, v, path, f.reset_rate));
    } else if (key == "retry_after_seconds") {
      int64_t n = 0;
      RETURN_IF_ERROR(ReadNonNegativeInt(ctx, v, path, n));
      f.retry_after_seconds = static_cast<int>(n);
    } else if (key == "watch_cut_after_events") {
      int64_t n = 0;
      RETURN_IF_ERROR(ReadNonNegativeInt(ctx, v, path, n));
      f.watch_cut_after_events = static_cast<int>(n);
    } else if (key == "watch_cut_after") {
      RETURN_IF_ERROR(ApplyDelay(ctx, v, path, reset, f.watch_cut_after));
    } else if (key == "compaction_interval_ms") {
      int64_t n = 0;
      RETURN_IF_ERROR(ReadNonNegativeInt(ctx, v, path, n));
      f.compaction_interval = milliseconds(n);
    } else {
      return FieldError(ctx, kv.first, path, "unknown field");
    }
  }
  return Status::Ok();
}

// process_images: a list of {image, command, dir, env, ready_path} maps.
Status ApplyProcessImages(const Ctx& ctx, const YAML::Node& v, std::vector<ProcessImage>& out) {
  const std::string key = "process_images";
  out.clear();
  if (v.IsNull()) return Status::Ok();
  if (!v.IsSequence()) {
    return FieldError(ctx, v, key, "expected a list of {image, command} maps, got " + Describe(v));
  }
  for (size_t i = 0; i < v.size(); ++i) {
    const YAML::Node& item = v[i];
    const std::string path = key + "[" + std::to_string(i) + "]";
    if (!item.IsMap()) return FieldError(ctx, item, path, "expected a map, got " + Describe(item));
    ProcessImage pi;
    for (const auto& kv : item) {
      const std::string field = kv.first.as<std::string>();
      const std::string fpath = path + "." + field;
      if (field == "image") {
        RETURN_IF_ERROR(ReadScalar(ctx, kv.second, fpath, "an image glob (string)", pi.image));
      } else if (field == "command") {
        RETURN_IF_ERROR(ReadScalar(ctx, kv.second, fpath, "a command line (string)", pi.command));
      } else if (field == "ready_path") {
        RETURN_IF_ERROR(ReadScalar(ctx, kv.second, fpath, "a path (string)", pi.ready_path));
      } else if (field == "dir") {
        RETURN_IF_ERROR(ReadScalar(ctx, kv.second, fpath, "a directory (string)", pi.dir));
      } else if (field == "env") {
        if (!kv.second.IsMap()) {
          return FieldError(ctx, kv.second, fpath, "expected a map, got " + Describe(kv.second));
        }
        for (const auto& e : kv.second) {
          std::string value;
          const std::string name = e.first.as<std::string>();
          RETURN_IF_ERROR(ReadScalar(ctx, e.second, fpath + "." + name, "a string", value));
          pi.env[name] = std::move(value);
        }
      } else {
        return FieldError(ctx, kv.first, fpath, "unknown field");
      }
    }
    if (pi.image.empty() || pi.command.empty()) {
      return FieldError(ctx, item, path, "needs a non-empty image and command");
    }
    out.push_back(std::move(pi));
  }
  return Status::Ok();
}

// Applies the fields of a profile map onto `p` (everything but `base`, handled by the caller).
Status ApplyProfileMap(const Ctx& ctx, const YAML::Node& node, bool reset, Profile& p) {
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    if (key == "base") continue;
    if (DelaySpec* d = DelayField(p, key)) {
      RETURN_IF_ERROR(ApplyDelay(ctx, v, key, reset, *d));
    } else if (key == "name") {
      RETURN_IF_ERROR(ReadScalar(ctx, v, key, "a string", p.name));
    } else if (key == "failing_images") {
      if (v.IsNull()) {
        p.failing_images.clear();
        continue;
      }
      if (!v.IsSequence()) {
        return FieldError(ctx, v, key, "expected a list of image globs, got " + Describe(v));
      }
      std::vector<std::string> globs;
      for (const auto& item : v) {
        std::string glob;
        RETURN_IF_ERROR(ReadScalar(ctx, item, key, "an image glob (string)", glob));
        globs.push_back(std::move(glob));
      }
      p.failing_images = std::move(globs);
    } else if (key == "ingress_requires_service") {
      RETURN_IF_ERROR(ReadBool(ctx, v, key, p.ingress_requires_service));
    } else if (key == "load_balancer_ip") {
      RETURN_IF_ERROR(ReadScalar(ctx, v, key, "a string", p.load_balancer_ip));
    } else if (key == "progress_deadline_scale") {
      double scale = 0;
      RETURN_IF_ERROR(ReadScalar(ctx, v, key, "a positive number", scale));
      if (!std::isfinite(scale) || scale <= 0) {
        return FieldError(ctx, v, key, "must be a positive number, got " + v.Scalar());
      }
      p.progress_deadline_scale = scale;
    } else if (key == "faults") {
      RETURN_IF_ERROR(ApplyFaults(ctx, v, reset, p.faults));
    } else if (key == "process_images") {
      RETURN_IF_ERROR(ApplyProcessImages(ctx, v, p.process_images));
    } else {
      return FieldError(ctx, kv.first, key, "unknown field");
    }
  }
  return Status::Ok();
}

bool GlobMatch(std::string_view pattern, std::string_view text) {
  // Iterative '*' / '?' matching with single-star backtracking: linear enough for image names.
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace

StatusOr<Profile> BuiltinProfile(std::string_view name) {
  Profile p;
  if (name == "instant") {
    p.name = "instant";
    return p;
  }
  if (name == "realistic") {
    p.name = "realistic";
    p.controller = Delay(20, 80);            // 20-100 ms
    p.pod_scheduling = Delay(100, 200);      // 100-300 ms
    p.pod_start = Delay(300, 400);           // 300-700 ms
    p.pod_ready = Delay(600, 1400);          // so creation -> Ready is 1.0-3.0 s
    p.pod_termination = Delay(1000, 1000);   // 1-2 s
    p.endpoints = Delay(50, 150);            // 50-200 ms
    p.load_balancer = Delay(500, 1000);      // 0.5-1.5 s
    p.service_finalizer = Delay(500, 1500);  // 0.5-2 s
    p.ingress_finalizer = Delay(500, 1500);  // 0.5-2 s
    p.pvc_finalizer = Delay(100, 300);       // 0.1-0.4 s
    p.pvc_binding = Delay(500, 500);         // 0.5-1 s
    p.garbage_collection = Delay(100, 200);  // 100-300 ms
    return p;
  }
  if (name == "hostile") {
    p.name = "hostile";
    p.controller = Delay(50, 250);            // 50-300 ms
    p.pod_scheduling = Delay(250, 650);       // 0.25-0.9 s
    p.pod_start = Delay(750, 1350);           // 0.75-2.1 s
    p.pod_ready = Delay(1500, 3000);          // creation -> Ready 2.5-7.5 s
    p.pod_termination = Delay(2000, 3000);    // 2-5 s
    p.endpoints = Delay(100, 500);            // 0.1-0.6 s
    p.load_balancer = Delay(1000, 3500);      // 1-4.5 s
    p.service_finalizer = Delay(1000, 5000);  // 1-6 s
    p.ingress_finalizer = Delay(1000, 5000);  // 1-6 s
    p.pvc_finalizer = Delay(200, 1000);       // 0.2-1.2 s
    p.pvc_binding = Delay(1000, 2000);        // 1-3 s
    p.garbage_collection = Delay(200, 700);   // 0.2-0.9 s
    p.ingress_requires_service = true;
    p.faults.latency["*"] = Delay(0, 200);
    p.faults.error_rate_429 = 0.03;
    p.faults.retry_after_seconds = 1;
    p.faults.error_rate_500 = 0.01;
    p.faults.error_rate_503 = 0.01;
    p.faults.reset_rate = 0.005;
    p.faults.watch_cut_after_events = 200;
    p.faults.watch_cut_after = Delay(20000, 40000);  // 20-60 s
    p.faults.compaction_interval = milliseconds(30000);
    return p;
  }
  return InvalidArgument("unknown built-in profile \"" + std::string(name) +
                         "\" (built-ins: " + std::string(kBuiltinNames) + ")");
}

StatusOr<Profile> ParseProfile(std::string_view text, std::string_view origin) {
  const Ctx ctx{origin};
  YAML::Node loaded;
  try {
    loaded = YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    std::string where(origin);
    if (!e.mark.is_null()) {
      where += ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1);
    }
    return InvalidArgument(where + ": malformed profile: " + e.msg);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(std::string(origin) + ": malformed profile: " + e.what());
  }
  // Const access: a non-const operator[] on a missing key would insert it.
  const YAML::Node root = loaded;
  if (root.IsNull()) return BuiltinProfile("instant");
  if (!root.IsMap()) {
    return InvalidArgument(Where(ctx, root) + ": a profile must be a map of fields, got " +
                           Describe(root));
  }
  std::string base = "instant";
  if (const YAML::Node b = root["base"]) {
    RETURN_IF_ERROR(ReadScalar(ctx, b, "base", "a built-in profile name", base));
  }
  auto built = BuiltinProfile(base);
  if (!built.ok()) {
    return FieldError(ctx, root["base"], "base", built.error().message());
  }
  Profile p = std::move(built).value();
  try {
    RETURN_IF_ERROR(ApplyProfileMap(ctx, root, /*reset=*/true, p));
  } catch (const YAML::Exception& e) {
    // Keys that are not scalars (e.g. a map used as a key) end up here.
    return InvalidArgument(std::string(origin) + ": malformed profile: " + e.what());
  }
  return p;
}

StatusOr<Profile> LoadProfile(std::string_view name_or_path) {
  if (name_or_path == "instant" || name_or_path == "realistic" || name_or_path == "hostile") {
    return BuiltinProfile(name_or_path);
  }
  const std::string path(name_or_path);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return NotFound("profile \"" + path + "\" is neither a built-in profile (" +
                    std::string(kBuiltinNames) + ") nor a readable file");
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return InvalidArgument("profile file \"" + path + "\": read failed");
  return ParseProfile(text.str(), path);
}

Status SetProfileField(Profile& profile, std::string_view field, std::string_view value) {
  // Build the one-field document {a: {b: value}} and apply it with the file rules, so the
  // names, types and ranges checked are exactly those of a profile file.
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t dot = field.find('.', start);
    // "faults.latency.*.fixed_ms" and verbs never contain dots, so splitting is unambiguous.
    parts.emplace_back(field.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  for (const auto& part : parts) {
    if (part.empty()) return InvalidArgument("field \"" + std::string(field) + "\": empty name");
  }
  if (parts[0] == "base") {
    return InvalidArgument("field \"base\": choose the base profile by name, not as an override");
  }
  YAML::Node leaf;
  if (parts.size() == 1 && parts[0] == "failing_images") {
    leaf = YAML::Node(YAML::NodeType::Sequence);
    size_t pos = 0;
    while (pos <= value.size() && !value.empty()) {
      size_t comma = value.find(',', pos);
      std::string_view item =
          value.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
      if (!item.empty()) leaf.push_back(std::string(item));
      if (comma == std::string_view::npos) break;
      pos = comma + 1;
    }
  } else {
    leaf = YAML::Node(std::string(value));
  }
  YAML::Node doc = leaf;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    YAML::Node parent(YAML::NodeType::Map);
    parent[*it] = doc;
    doc = parent;
  }
  const std::string origin = "--profile-set " + std::string(field);
  const Ctx ctx{origin};
  Profile updated = profile;
  try {
    RETURN_IF_ERROR(ApplyProfileMap(ctx, doc, /*reset=*/false, updated));
  } catch (const YAML::Exception& e) {
    return InvalidArgument(origin + ": " + e.what());
  }
  profile = std::move(updated);
  return Status::Ok();
}

bool ImageFails(const Profile& profile, std::string_view image) {
  for (const auto& glob : profile.failing_images) {
    if (GlobMatch(glob, image)) return true;
  }
  return false;
}

const ProcessImage* ProcessImageFor(const Profile& profile, std::string_view image) {
  for (const auto& pi : profile.process_images) {
    if (GlobMatch(pi.image, image)) return &pi;
  }
  return nullptr;
}

}  // namespace steward::cluster
