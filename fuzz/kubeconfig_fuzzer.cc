// Kubeconfig parsing (ParseKubeconfig from text), merging, context resolution and, for
// configurations that name no files and no exec plugin, BuildRestConfig (server URL, TLS and
// credential settings). Input: one kubeconfig file's text.
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "kube/config/kubeconfig.h"

namespace steward::kube {
namespace {

const std::string kPath = "/fuzz/kube/config";

bool NamesFiles(const ResolvedContext& r) {
  return !r.cluster.certificate_authority.empty() || !r.user.token_file.empty() ||
         !r.user.client_certificate.empty() || !r.user.client_key.empty() || r.user.exec;
}

void FuzzOne(std::string_view text) {
  auto file = ParseKubeconfig(text, kPath);
  if (!file.ok()) {
    FUZZ_CHECK(file.status().code() == StatusCode::kInvalidArgument);
    // Every error names the file.
    FUZZ_CHECK_MSG(file.status().message().starts_with("kubeconfig " + kPath),
                   file.status().message());
    return;
  }
  FUZZ_CHECK(file->path == kPath);
  for (const auto& [name, c] : file->clusters) FUZZ_CHECK(c.name == name && c.origin == kPath);
  for (const auto& [name, u] : file->users) FUZZ_CHECK(u.name == name && u.origin == kPath);
  for (const auto& [name, c] : file->contexts) FUZZ_CHECK(c.name == name && c.origin == kPath);

  // One file merged with itself is the file: the first definition wins.
  MergedKubeconfig once = MergeKubeconfigs({*file});
  MergedKubeconfig twice = MergeKubeconfigs({*file, *file});
  FUZZ_CHECK(once.clusters.size() == file->clusters.size());
  FUZZ_CHECK(once.users.size() == file->users.size());
  FUZZ_CHECK(once.contexts.size() == file->contexts.size());
  FUZZ_CHECK(once.current_context == file->current_context);
  FUZZ_CHECK(twice.clusters.size() == once.clusters.size());
  FUZZ_CHECK(twice.current_context == once.current_context);
  FUZZ_CHECK(once.all_empty == file->empty);

  auto resolved = ResolveContext(once, "");
  if (!resolved.ok()) {
    FUZZ_CHECK(resolved.status().message().starts_with("kubeconfig "));
    return;
  }
  FUZZ_CHECK(resolved->context.name == once.current_context);
  FUZZ_CHECK(resolved->cluster.name == resolved->context.cluster);
  FUZZ_CHECK(resolved->user.name == resolved->context.user);
  if (NamesFiles(*resolved)) return;
  auto rc = BuildRestConfig(once, *resolved);
  if (!rc.ok()) {
    FUZZ_CHECK_MSG(rc.status().message().starts_with("kubeconfig " + kPath), rc.status().message());
    return;
  }
  FUZZ_CHECK(!rc->namespace_name.empty());
}

}  // namespace
}  // namespace steward::kube

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  steward::kube::FuzzOne(steward::fuzz::AsView(data, size));
  return 0;
}
