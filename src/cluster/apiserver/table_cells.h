// The cells of the tables the embedded API server prints (tables.h, as the real server's
// printers in pkg/printers/internalversion do): the field readers and formatting helpers every
// kind's printer uses, and the pod printer, the one with real logic (printPod's Ready, Status
// and Restarts). Internal to the apiserver; pure functions, any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/json.h"

namespace steward::cluster::tablecells {

// Field access by dotted path: "" / fallback / false / an empty array when absent.
std::string Str(const Json& obj, std::string_view dotted);
int64_t Int(const Json& obj, std::string_view dotted, int64_t fallback = 0);
bool Bool(const Json& obj, std::string_view dotted);
const Json& Array(const Json& obj, std::string_view dotted);
size_t MapSize(const Json& obj, std::string_view dotted);
std::optional<SystemTime> Time(const Json& obj, std::string_view dotted);

// translateTimestampSince: "<unknown>" for an unset time.
std::string Since(std::optional<SystemTime> t, SystemTime now);
std::string Age(const Json& obj, SystemTime now);  // since metadata.creationTimestamp
std::string Name(const Json& obj);
bool Terminating(const Json& obj);  // metadata.deletionTimestamp set
std::string JoinStrings(const std::vector<std::string>& parts, std::string_view sep);
// labels.FormatLabels: "k=v" pairs sorted by key, "<none>" when empty.
std::string FormatLabels(const Json& map);
// metav1.LabelSelectorAsSelector(...).String(); nullopt when the selector is invalid.
std::optional<std::string> SelectorString(const Json& selector);
// metav1.FormatLabelSelector.
std::string FormatLabelSelector(const Json& selector);
// layoutContainerCells: comma-joined container names and images.
std::pair<std::string, std::string> ContainerCells(const Json& containers);
std::string JoinHostPort(const std::string& host, int64_t port);
// `list` comma-joined; with `more` (the list holds the first `max` of `count`) followed by
// " + <count - max> more..."; "<unset>" when empty.
std::string ListWithMore(const std::vector<std::string>& list, bool more, size_t count, size_t max);
// A LoadBalancerStatus as IPs (or hostnames), de-duplicated and sorted. The server prints
// with Wide = true, so the 16-character clipping kubectl applies client-side never happens here.
std::string LoadBalancerString(const Json& status);
std::string AccessModes(const Json& modes);  // RWO, ROX, RWX, RWOP, comma-joined
std::string OrNone(std::string s);           // "<none>" for ""

// printPod's row: Name, Ready, Status, Restarts, Age, IP, Node, Nominated Node, Readiness Gates.
Json PodCells(const Json& pod, SystemTime now);

}  // namespace steward::cluster::tablecells
