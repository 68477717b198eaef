// ObjectApi's lists (ListRecords, List): label and field selectors, a field selector pinned
// to one name as a point lookup, pages with continue tokens read at their first page's
// snapshot, and etcd's answers for revisions compacted away or not reached yet.
#include <algorithm>
#include <charconv>
#include <functional>

#include "cluster/apiserver/object_api.h"
#include "cluster/apiserver/selectors.h"
#include "common/base64.h"
#include "common/json_access.h"

namespace steward::cluster {
namespace {

// Fields a field selector may name, per kind (metadata.name and metadata.namespace always).
bool FieldSelectable(const ResourceType& rt, const std::string& path) {
  if (path == "metadata.name" || path == "metadata.namespace") return true;
  static const std::vector<std::pair<std::string, std::vector<std::string>>> kFields = {
      {"Pod",
       {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
        "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"}},
      {"Event",
       {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
        "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
        "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"}},
      {"Secret", {"type"}},
      {"Namespace", {"status.phase"}},
      {"ReplicaSet", {"status.replicas"}},
      {"Service", {"spec.clusterIP", "spec.type"}},
  };
  for (const auto& [kind, fields] : kFields) {
    if (kind == rt.kind) return std::find(fields.begin(), fields.end(), path) != fields.end();
  }
  return false;
}

// Continue tokens: base64 of {"rv": N, "ns": ..., "name": ...}, the key after which to resume
// (compared as the (namespace, name) pair storage orders by).
std::string EncodeContinue(uint64_t rv, const std::string& ns, const std::string& name) {
  Json token = {{"rv", rv}, {"ns", ns}, {"name", name}};
  return Base64Encode(DumpJson(token));
}

struct ContinueToken {
  uint64_t rv = 0;
  std::string ns;
  std::string name;
};

std::optional<ContinueToken> DecodeContinue(std::string_view token) {
  auto raw = Base64Decode(token);
  if (!raw) return std::nullopt;
  auto parsed = ParseJson(*raw);
  if (!parsed.ok() || !parsed->is_object()) return std::nullopt;
  ContinueToken t;
  const Json& rv = MemberOrNull(*parsed, "rv");
  const Json& ns = MemberOrNull(*parsed, "ns");
  const Json& name = MemberOrNull(*parsed, "name");
  if (!rv.is_number_unsigned() || !ns.is_string() || !name.is_string()) return std::nullopt;
  t.rv = rv.get<uint64_t>();
  t.ns = ns.get<std::string>();
  t.name = name.get<std::string>();
  return t;
}

// etcd's messages for a list at a compacted revision (the API server passes them through).
constexpr const char* kListTooOldMessage = "The resourceVersion for the provided list is too old.";
constexpr const char* kInconsistentContinueMessage =
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this response "
    "to retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list.";

std::optional<uint64_t> ParseRevision(std::string_view s) {
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// The current records a field selector naming one object selects: a point lookup instead of a
// scan (`fields.PinnedName()` is not empty).
Storage::ListResult PinnedRecords(const Storage& storage, const ResourceType& rt,
                                  std::string_view scope_ns, const FieldSelector& fields,
                                  uint64_t current) {
  std::string pinned_name = fields.PinnedName();
  Storage::ListResult all;
  std::string pinned_ns = fields.PinnedNamespace();
  std::string lookup_ns = std::string(scope_ns);
  if (lookup_ns.empty() && rt.namespaced && !pinned_ns.empty()) lookup_ns = pinned_ns;
  all.revision = current;
  if (!rt.namespaced || !lookup_ns.empty()) {
    if (auto rec = storage.Get(rt.GroupResource(), lookup_ns, pinned_name)) {
      all.items.push_back(*rec);
    }
  } else {
    for (auto& rec : storage.List(rt.GroupResource(), "").items) {
      if (rec.name == pinned_name) all.items.push_back(std::move(rec));
    }
  }
  return all;
}

// Whether a record passes the list's label and field selectors.
std::function<bool(const ObjectRecord&)> Selects(const LabelSelector& labels,
                                                 const FieldSelector& fields) {
  if (labels.Empty() && fields.Empty()) return nullptr;
  bool needs_parse = false;
  for (const auto& req : fields.requirements()) {
    if (req.path != "metadata.name" && req.path != "metadata.namespace") needs_parse = true;
  }
  return [&labels, &fields, needs_parse](const ObjectRecord& rec) {
    if (!labels.Empty() && !labels.MatchesStored(rec.labels)) return false;
    if (fields.Empty()) return true;
    if (needs_parse) return fields.Matches(rec.Parse());
    return fields.Matches(Json{{"metadata", {{"name", rec.name}, {"namespace", rec.ns}}}});
  };
}

// A storage page as the API's page, with a continue token at the snapshot's revision when
// records remain.
ObjectApi::RecordList ToRecordList(Storage::ListResult page, bool counted) {
  ObjectApi::RecordList out;
  out.revision = page.revision;
  out.items = std::move(page.items);
  if (page.remaining > 0 && !out.items.empty()) {
    out.remaining = static_cast<int64_t>(page.remaining);
    out.remaining_counted = counted;
    const auto& last = out.items.back();
    out.continue_token = EncodeContinue(out.revision, last.ns, last.name);
  }
  return out;
}

}  // namespace

StatusError TooLargeResourceVersionError(uint64_t requested, uint64_t current) {
  StatusError e;
  e.code = 504;
  e.reason = "Timeout";
  e.message = "Timeout: Too large resource version: " + std::to_string(requested) +
              ", current: " + std::to_string(current);
  e.causes.push_back({"ResourceVersionTooLarge", "Too large resource version", ""});
  e.retry_after_seconds = 1;
  return e;
}

std::optional<StatusError> CheckFieldSelector(const ResourceType& rt,
                                              const FieldSelector& selector) {
  for (const auto& req : selector.requirements()) {
    if (!FieldSelectable(rt, req.path)) {
      return BadRequestError("field label not supported: " + req.path);
    }
  }
  return std::nullopt;
}

ApiResult<ObjectApi::RecordList> ObjectApi::ListRecords(const ResourceType& rt, std::string_view ns,
                                                        const ListOptions& opts) const {
  auto labels = LabelSelector::Parse(opts.label_selector);
  if (!labels.ok()) return BadRequestError(labels.status().message());
  auto fields = FieldSelector::Parse(opts.field_selector);
  if (!fields.ok()) return BadRequestError(fields.status().message());
  if (auto err = CheckFieldSelector(rt, *fields)) return *err;
  if (opts.limit < 0) return BadRequestError("limit must be a non-negative integer");
  std::optional<ContinueToken> token;
  if (!opts.continue_token.empty()) {
    token = DecodeContinue(opts.continue_token);
    if (!token) {
      return BadRequestError("invalid continue token: " + opts.continue_token);
    }
    if (!opts.resource_version.empty() && opts.resource_version != "0") {
      return BadRequestError("specifying resource version is not allowed when using continue");
    }
  }
  std::string_view scope_ns = rt.namespaced ? ns : "";
  uint64_t current = storage_.CurrentRevision();
  // The revision to read at when it is not the current one: a continued list's (every page
  // shows its first page's snapshot) or an Exact one.
  std::optional<uint64_t> read_at;
  if (token) read_at = token->rv;
  if (!opts.resource_version.empty() && opts.resource_version != "0") {
    auto rv = ParseRevision(opts.resource_version);
    if (!rv) {
      return BadRequestError("invalid resource version: " + opts.resource_version);
    }
    if (*rv > current) return TooLargeResourceVersionError(*rv, current);
    if (opts.resource_version_match == "Exact") read_at = *rv;
  } else if (!opts.resource_version_match.empty() && opts.resource_version.empty()) {
    return BadRequestError("resourceVersionMatch is forbidden unless resourceVersion is provided");
  }

  Storage::Page page;
  page.keep = Selects(*labels, *fields);
  page.limit = static_cast<size_t>(opts.limit);
  page.count_rest = labels->Empty() && fields->Empty();
  if (!read_at && !fields->PinnedName().empty()) {
    // A field selector naming one object: a point lookup instead of a scan.
    return ToRecordList(
        Storage::CutToPage(PinnedRecords(storage_, rt, scope_ns, *fields, current), page),
        page.count_rest);
  }
  std::optional<Storage::ListFrom> after;
  if (token) after = Storage::ListFrom{token->ns, token->name};
  auto snapshot =
      storage_.ListPageAt(rt.GroupResource(), scope_ns, read_at.value_or(current), after, page);
  if (!snapshot.ok()) {
    if (snapshot.status().code() == StatusCode::kOutOfRange) {
      // etcd's answers once the revision is compacted away.
      return ExpiredError(token ? kInconsistentContinueMessage : kListTooOldMessage);
    }
    if (snapshot.status().code() == StatusCode::kInvalidArgument) {
      return TooLargeResourceVersionError(read_at.value_or(current), storage_.CurrentRevision());
    }
    return InternalError(snapshot.status().message());
  }
  return ToRecordList(std::move(snapshot).value(), page.count_rest);
}

ApiResult<Json> ObjectApi::List(const ResourceType& rt, std::string_view ns,
                                const ListOptions& opts) const {
  auto records = ListRecords(rt, ns, opts);
  if (!records.ok()) return std::move(records).error();
  Json items = Json::array();
  for (const auto& rec : records->items) items.push_back(rec.Parse());
  Json meta = {{"resourceVersion", std::to_string(records->revision)}};
  if (!records->continue_token.empty()) {
    meta["continue"] = records->continue_token;
    if (records->remaining_counted) meta["remainingItemCount"] = records->remaining;
  }
  return Json{{"kind", rt.ListKind()},
              {"apiVersion", rt.ApiVersion()},
              {"metadata", std::move(meta)},
              {"items", std::move(items)}};
}

}  // namespace steward::cluster
