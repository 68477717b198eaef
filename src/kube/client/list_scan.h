// ScanListPage: a list response read without building a document of it. An informer's first list
// of tens of thousands of objects spent most of its time building an nlohmann DOM of every page,
// then serialising every item again for its cache (docs/performance.md, issue 18 §2). The scan
// runs nlohmann's SAX parser over the page once — so it accepts and refuses exactly what
// ParseJson does: syntax errors, nesting deeper than kMaxNestingDepth, duplicate keys — and
// keeps, for every item, the text the server sent and the metadata fields a cache indexes.
// Pure functions; thread-compatible.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace steward::kube {

// One item of a list as the server sent it.
struct ScannedItem {
  // The item's JSON text, byte for byte as sent, with "apiVersion" and "kind" put first when
  // the item lacks them (items of a list omit them on a real server).
  std::string json;
  // metadata's fields ("" when absent or null). `metadata_object`: metadata is present and an
  // object. `terminating`: metadata.deletionTimestamp is present and not null.
  std::string name, ns, uid, resource_version;
  std::vector<std::pair<std::string, std::string>> labels;  // in the order sent
  bool metadata_object = false;
  bool terminating = false;
  // Set when the item cannot be cached: "metadata.name is not a string", "label x is not a
  // string", "metadata.labels is not an object"; the rest of the page is still usable.
  std::string error;
};

struct ScannedList {
  std::string resource_version;  // the list's metadata.resourceVersion
  std::string continue_token;    // "" on the last page
  std::vector<ScannedItem> items;
};

// Scans a <Kind>List body. Fails with kInvalidArgument when the body is not a JSON object (a
// syntax error, a duplicate key, too deep), when "items" is neither absent, null nor an array,
// or when an item is not an object. `api_version` and `kind` fill in items that lack them.
StatusOr<ScannedList> ScanListPage(std::string_view body, std::string_view api_version,
                                   std::string_view kind);

// Scans one object (a whole document) the same way; fails as ScanListPage does when `text` is
// not a JSON object.
StatusOr<ScannedItem> ScanObject(std::string_view text, std::string_view api_version,
                                 std::string_view kind);

}  // namespace steward::kube
