// The embedded cluster's label and field selectors (?labelSelector=, ?fieldSelector=, and
// metav1.LabelSelector objects): parsing, the canonical text form, and matching.
//
// Input: line 1 a label selector, line 2 a field selector, the rest a JSON value used as a
// metav1.LabelSelector (LabelSelector::FromJson) and as the object to match (its
// metadata.labels for the label selectors).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "cluster/apiserver/selectors.h"
#include "fuzz_util.h"

namespace steward::cluster {
namespace {

using Op = LabelSelector::Op;

Labels Sorted(Labels l) {
  std::sort(l.begin(), l.end());
  l.erase(std::unique(l.begin(), l.end(),
                      [](const auto& a, const auto& b) { return a.first == b.first; }),
          l.end());
  return l;
}

Json ToJsonLabels(const Labels& l) {
  Json j = Json::object();
  for (const auto& [k, v] : l) j[k] = v;
  return j;
}

// The apimachinery semantics, written out independently of selectors.cc.
bool Reference(const LabelSelector& s, const Labels& labels) {
  for (const auto& r : s.requirements()) {
    auto it = std::find_if(labels.begin(), labels.end(),
                           [&](const auto& kv) { return kv.first == r.key; });
    const bool present = it != labels.end();
    const bool listed =
        present && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
    bool ok = false;
    switch (r.op) {
      case Op::kEquals:
      case Op::kIn:
        ok = listed;
        break;
      case Op::kNotEquals:
      case Op::kNotIn:
        ok = !listed;
        break;
      case Op::kExists:
        ok = present;
        break;
      case Op::kDoesNotExist:
        ok = !present;
        break;
    }
    if (!ok) return false;
  }
  return true;
}

// Label sets worth matching against: none, the object's, and ones built from the selector's own
// keys and values (so that matches happen at all).
std::vector<Labels> Candidates(const LabelSelector& s, const Json& object) {
  std::vector<Labels> out;
  out.push_back({});
  Labels from_object;
  if (const Json* l = FindPath(object, "metadata.labels"); l && l->is_object()) {
    for (const auto& [k, v] : l->items()) {
      if (v.is_string()) from_object.emplace_back(k, v.get<std::string>());
    }
  }
  out.push_back(Sorted(from_object));
  Labels first, other;
  for (const auto& r : s.requirements()) {
    std::string v = r.values.empty() ? "" : r.values.front();
    first.emplace_back(r.key, v);
    other.emplace_back(r.key, v + "x");
    for (const auto& value : r.values) out.push_back({{r.key, value}});
  }
  out.push_back(Sorted(first));
  out.push_back(Sorted(other));
  return out;
}

void CheckLabelSelector(const LabelSelector& s, const Json& object) {
  const std::string canonical = s.ToString();
  auto again = LabelSelector::Parse(canonical);
  FUZZ_CHECK_MSG(again.ok(), canonical + " -> " + again.status().message());
  FUZZ_CHECK_MSG(again->ToString() == canonical, canonical + " -> " + again->ToString());
  FUZZ_CHECK(s.Empty() == canonical.empty());
  for (const auto& r : s.requirements()) {
    FUZZ_CHECK(std::is_sorted(r.values.begin(), r.values.end()));
    if (r.op == Op::kEquals || r.op == Op::kNotEquals) FUZZ_CHECK(r.values.size() == 1);
  }
  for (const Labels& l : Candidates(s, object)) {
    const bool m = s.Matches(l);
    FUZZ_CHECK_MSG(m == Reference(s, l), canonical);
    FUZZ_CHECK_MSG(m == again->Matches(l), canonical);
    FUZZ_CHECK_MSG(m == s.MatchesJson(ToJsonLabels(l)), canonical);
  }
  if (const Json* l = FindPath(object, "metadata.labels")) (void)s.MatchesJson(*l);
}

std::string Escape(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == ',' || c == '=') out += '\\';
    out += c;
  }
  return out;
}

void CheckFieldSelector(const FieldSelector& f, const Json& object) {
  (void)f.Matches(object);
  // Rendered back with escapes, it parses to the same requirements.
  std::string text;
  for (const auto& r : f.requirements()) {
    if (!text.empty()) text += ',';
    text += r.path + (r.equals ? "=" : "!=") + Escape(r.value);
  }
  auto again = FieldSelector::Parse(text);
  FUZZ_CHECK_MSG(again.ok(), text + " -> " + again.status().message());
  FUZZ_CHECK(again->requirements().size() == f.requirements().size());
  for (size_t i = 0; i < f.requirements().size(); ++i) {
    const auto& a = f.requirements()[i];
    const auto& b = again->requirements()[i];
    FUZZ_CHECK_MSG(a.path == b.path && a.equals == b.equals && a.value == b.value, text);
  }
  // A pinned name (namespace) excludes every object with another one.
  if (std::string name = f.PinnedName(); !name.empty()) {
    Json other = object.is_object() ? object : Json::object();
    other["metadata"] = Json{{"name", name + "-other"}};
    FUZZ_CHECK_MSG(!f.Matches(other), text);
  }
  if (std::string ns = f.PinnedNamespace(); !ns.empty()) {
    Json other = Json{{"metadata", {{"namespace", ns + "-other"}}}};
    FUZZ_CHECK_MSG(!f.Matches(other), text);
  }
}

}  // namespace
}  // namespace steward::cluster

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace steward;
  std::string_view in = fuzz::AsView(data, size);
  std::string_view label_text = fuzz::TakeLine(in);
  std::string_view field_text = fuzz::TakeLine(in);
  Json object = Json::object();
  if (auto j = ParseJson(in); j.ok()) object = std::move(*j);

  auto label = cluster::LabelSelector::Parse(label_text);
  if (label.ok()) {
    cluster::CheckLabelSelector(*label, object);
  } else {
    FUZZ_CHECK(label.status().code() == StatusCode::kInvalidArgument);
  }
  auto from_json = cluster::LabelSelector::FromJson(object);
  if (from_json.ok()) cluster::CheckLabelSelector(*from_json, object);
  auto field = cluster::FieldSelector::Parse(field_text);
  if (field.ok()) {
    cluster::CheckFieldSelector(*field, object);
  } else {
    FUZZ_CHECK(field.status().code() == StatusCode::kInvalidArgument);
  }
  return 0;
}
