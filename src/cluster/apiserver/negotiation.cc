#include "cluster/apiserver/negotiation.h"

#include <string>
#include <utility>
#include <vector>

#include "common/ascii.h"

namespace steward::cluster {

namespace {

// One media range of an Accept header, with its parameters.
struct MediaType {
  std::string type;  // "application/json"
  std::vector<std::pair<std::string, std::string>> params;
  std::string Param(std::string_view name) const {
    for (const auto& [k, v] : params) {
      if (k == name) return v;
    }
    return "";
  }
};

std::vector<MediaType> ParseAccept(std::string_view header) {
  std::vector<MediaType> out;
  size_t i = 0;
  while (i <= header.size()) {
    size_t comma = header.find(',', i);
    if (comma == std::string_view::npos) comma = header.size();
    std::string_view item = header.substr(i, comma - i);
    MediaType mt;
    size_t semi = item.find(';');
    mt.type = AsciiLower(TrimHttpWhitespace(item.substr(0, semi)));
    while (semi != std::string_view::npos) {
      size_t next = item.find(';', semi + 1);
      std::string_view param = item.substr(
          semi + 1, next == std::string_view::npos ? std::string_view::npos : next - semi - 1);
      size_t eq = param.find('=');
      if (eq != std::string_view::npos) {
        mt.params.emplace_back(AsciiLower(TrimHttpWhitespace(param.substr(0, eq))),
                               TrimHttpWhitespace(param.substr(eq + 1)));
      }
      semi = next;
    }
    if (!mt.type.empty()) out.push_back(std::move(mt));
    i = comma + 1;
  }
  return out;
}

bool IsJsonLike(const std::string& type) {
  return type == "application/json" || type == "*/*" || type == "application/*";
}

}  // namespace

Output NegotiateResource(std::string_view accept) {
  if (TrimHttpWhitespace(accept).empty()) return Output::kJson;
  for (const auto& mt : ParseAccept(accept)) {
    if (!IsJsonLike(mt.type)) continue;
    std::string as = mt.Param("as");
    if (as.empty()) return Output::kJson;
    std::string g = mt.Param("g");
    if (as == "Table" && g == "meta.k8s.io") return Output::kTable;
    if ((as == "PartialObjectMetadata" || as == "PartialObjectMetadataList") &&
        g == "meta.k8s.io") {
      return Output::kPartialMetadata;
    }
  }
  return Output::kNone;
}

Output NegotiateDiscovery(std::string_view accept) {
  if (TrimHttpWhitespace(accept).empty()) return Output::kJson;
  for (const auto& mt : ParseAccept(accept)) {
    if (!IsJsonLike(mt.type)) continue;
    std::string as = mt.Param("as");
    if (as.empty()) return Output::kJson;
    if (as == "APIGroupDiscoveryList" && mt.Param("g") == "apidiscovery.k8s.io" &&
        mt.Param("v") == "v2") {
      return Output::kAggregatedDiscovery;
    }
  }
  return Output::kNone;
}

bool AcceptsJson(std::string_view accept) {
  bool json_ok = accept.empty();
  for (const auto& mt : ParseAccept(accept)) json_ok = json_ok || IsJsonLike(mt.type);
  return json_ok;
}

Json PartialMetadata(const Json& obj) {
  return {{"kind", "PartialObjectMetadata"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", obj.contains("metadata") ? obj["metadata"] : Json::object()}};
}

TableIncludeObject IncludeObjectParam(std::string_view v) {
  if (v == "None") return TableIncludeObject::kNone;
  if (v == "Object") return TableIncludeObject::kObject;
  return TableIncludeObject::kMetadata;
}

}  // namespace steward::cluster
