// Label and field selectors, as in ?labelSelector= and ?fieldSelector=.
//
// Label selector grammar (apimachinery labels.Parse): comma-separated requirements, each one of
//   key=value  key==value  key!=value  key in (v1,v2)  key notin (v1,v2)  key  !key
// with keys "[prefix/]name" (DNS-1123 subdomain prefix, name up to 63 chars of [A-Za-z0-9_.-]
// starting and ending alphanumeric) and values of the same name form (or empty).
// Field selector grammar: comma-separated `path=value`, `path==value`, `path!=value`.
//
// Parsed selectors are immutable values, safe to share between threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/storage/storage.h"
#include "common/json.h"
#include "common/status.h"

namespace steward::cluster {

class LabelSelector {
 public:
  enum class Op { kEquals, kNotEquals, kIn, kNotIn, kExists, kDoesNotExist };
  struct Requirement {
    std::string key;
    Op op;
    std::vector<std::string> values;  // sorted; one value for kEquals/kNotEquals
  };

  // An empty string selects everything. Fails with kInvalidArgument and a message naming the
  // offending requirement (as apimachinery does: "unable to parse requirement: ...").
  static StatusOr<LabelSelector> Parse(std::string_view text);
  // From a metav1.LabelSelector object ({matchLabels, matchExpressions}); null/{} selects
  // everything. Fails with kInvalidArgument on an unknown operator or bad values.
  static StatusOr<LabelSelector> FromJson(const Json& selector);

  bool Empty() const { return requirements_.empty(); }
  bool Matches(const Labels& labels) const;
  // A stored object's labels (null = none), without copying them.
  bool MatchesStored(const std::shared_ptr<const Labels>& labels) const;
  // Matches against a metadata.labels JSON object (absent/null = no labels).
  bool MatchesJson(const Json& labels) const;
  const std::vector<Requirement>& requirements() const { return requirements_; }
  // Canonical text form (requirements sorted by key), e.g. "app=x,tier in (a,b)".
  std::string ToString() const;

 private:
  std::vector<Requirement> requirements_;
};

class FieldSelector {
 public:
  struct Requirement {
    std::string path;  // dotted JSON path, e.g. "metadata.name", "involvedObject.uid"
    bool equals;       // false for !=
    std::string value;
  };

  // An empty string selects everything. Fails with kInvalidArgument on bad syntax.
  static StatusOr<FieldSelector> Parse(std::string_view text);

  bool Empty() const { return requirements_.empty(); }
  // Compares the string form of the value at each path (absent = ""; numbers and booleans
  // in their JSON text) with the requirement.
  bool Matches(const Json& object) const;
  // When the selector pins metadata.name (or metadata.namespace) with '=', returns it; lets
  // callers avoid parsing every object.
  std::string PinnedName() const;
  std::string PinnedNamespace() const;
  const std::vector<Requirement>& requirements() const { return requirements_; }

 private:
  std::vector<Requirement> requirements_;
};

// Parses "k=v,k2=v2" maps as used by some flags; not a selector.
}  // namespace steward::cluster
