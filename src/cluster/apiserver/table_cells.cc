#include "cluster/apiserver/table_cells.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "common/ascii.h"
#include "common/json_access.h"
#include "common/time_util.h"

namespace steward::cluster::tablecells {

std::string Str(const Json& obj, std::string_view dotted) { return StringAtPath(obj, dotted); }

int64_t Int(const Json& obj, std::string_view dotted, int64_t fallback) {
  return NumberAtPath(obj, dotted, fallback);
}

bool Bool(const Json& obj, std::string_view dotted) {
  const Json& v = PathOrNull(obj, dotted);
  return v.is_boolean() && v.get<bool>();
}

const Json& Array(const Json& obj, std::string_view dotted) {
  static const Json kEmpty = Json::array();
  const Json& v = PathOrNull(obj, dotted);
  return v.is_array() ? v : kEmpty;
}

size_t MapSize(const Json& obj, std::string_view dotted) {
  const Json& v = PathOrNull(obj, dotted);
  return v.is_object() ? v.size() : 0;
}

std::optional<SystemTime> Time(const Json& obj, std::string_view dotted) {
  const Json& v = PathOrNull(obj, dotted);
  if (!v.is_string()) return std::nullopt;
  return ParseRfc3339(v.get<std::string>());
}

// translateTimestampSince: "<unknown>" for an unset time.
std::string Since(std::optional<SystemTime> t, SystemTime now) {
  if (!t) return "<unknown>";
  return HumanDuration(std::chrono::duration_cast<std::chrono::seconds>(now - *t));
}

std::string Age(const Json& obj, SystemTime now) {
  return Since(Time(obj, "metadata.creationTimestamp"), now);
}

std::string Name(const Json& obj) { return Str(obj, "metadata.name"); }

bool Terminating(const Json& obj) {
  return PathOrNull(obj, "metadata.deletionTimestamp").is_string();
}

std::string JoinStrings(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

// labels.FormatLabels: "k=v" pairs sorted by key, "<none>" when empty.
std::string FormatLabels(const Json& map) {
  if (!map.is_object() || map.empty()) return "<none>";
  std::vector<std::string> parts;
  for (const auto& [k, v] : map.items()) {  // nlohmann objects iterate in key order
    parts.push_back(k + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
  }
  return JoinStrings(parts, ",");
}

// metav1.LabelSelectorAsSelector(...).String(); nullopt when the selector is invalid.
std::optional<std::string> SelectorString(const Json& selector) {
  if (!selector.is_object()) return std::string();
  std::vector<std::pair<std::string, std::string>> reqs;  // (key, text)
  const Json& labels = PathOrNull(selector, "matchLabels");
  if (labels.is_object()) {
    for (const auto& [k, v] : labels.items()) {
      reqs.emplace_back(k, k + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
    }
  }
  for (const auto& expr : Array(selector, "matchExpressions")) {
    const std::string key = Str(expr, "key");
    const std::string op = Str(expr, "operator");
    std::set<std::string> values;
    for (const auto& v : Array(expr, "values")) {
      if (v.is_string()) values.insert(v.get<std::string>());
    }
    std::vector<std::string> sorted(values.begin(), values.end());
    if (op == "In") {
      reqs.emplace_back(key, key + " in (" + JoinStrings(sorted, ",") + ")");
    } else if (op == "NotIn") {
      reqs.emplace_back(key, key + " notin (" + JoinStrings(sorted, ",") + ")");
    } else if (op == "Exists") {
      reqs.emplace_back(key, key);
    } else if (op == "DoesNotExist") {
      reqs.emplace_back(key, "!" + key);
    } else {
      return std::nullopt;
    }
  }
  std::stable_sort(reqs.begin(), reqs.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> parts;
  for (auto& r : reqs) parts.push_back(std::move(r.second));
  return JoinStrings(parts, ",");
}

// metav1.FormatLabelSelector.
std::string FormatLabelSelector(const Json& selector) {
  auto s = SelectorString(selector);
  if (!s) return "<error>";
  return s->empty() ? "<none>" : *s;
}

// layoutContainerCells: comma-joined container names and images.
std::pair<std::string, std::string> ContainerCells(const Json& containers) {
  std::vector<std::string> names, images;
  if (containers.is_array()) {
    for (const auto& c : containers) {
      names.push_back(Str(c, "name"));
      images.push_back(Str(c, "image"));
    }
  }
  return {JoinStrings(names, ","), JoinStrings(images, ",")};
}

std::string JoinHostPort(const std::string& host, int64_t port) {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

std::string ListWithMore(const std::vector<std::string>& list, bool more, size_t count,
                         size_t max) {
  std::string ret = JoinStrings(list, ",");
  if (more) return ret + " + " + std::to_string(count - max) + " more...";
  if (ret.empty()) return "<unset>";
  return ret;
}

// A LoadBalancerStatus as IPs (or hostnames), de-duplicated and sorted. The server prints
// with Wide = true, so the 16-character clipping kubectl applies client-side never happens here.
std::string LoadBalancerString(const Json& status) {
  std::set<std::string> result;
  for (const auto& ing : Array(status, "ingress")) {
    const std::string ip = Str(ing, "ip");
    const std::string host = Str(ing, "hostname");
    if (!ip.empty()) {
      result.insert(ip);
    } else if (!host.empty()) {
      result.insert(host);
    }
  }
  return JoinStrings(std::vector<std::string>(result.begin(), result.end()), ",");
}

std::string AccessModes(const Json& modes) {
  std::set<std::string> have;
  for (const auto& m : modes.is_array() ? modes : Json::array()) {
    if (m.is_string()) have.insert(m.get<std::string>());
  }
  std::vector<std::string> out;
  if (have.count("ReadWriteOnce")) out.push_back("RWO");
  if (have.count("ReadOnlyMany")) out.push_back("ROX");
  if (have.count("ReadWriteMany")) out.push_back("RWX");
  if (have.count("ReadWriteOncePod")) out.push_back("RWOP");
  return JoinStrings(out, ",");
}

std::string OrNone(std::string s) { return s.empty() ? "<none>" : s; }

}  // namespace steward::cluster::tablecells
