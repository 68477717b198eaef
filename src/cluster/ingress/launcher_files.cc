// The launcher stand-in's files API (/flowforge/files/_/...: list, read, upload, rename, delete
// under the pod's userDir), as nr-launcher's lib/admin/files.js answers it
// (VirtualPods::ServeFiles).
#include <optional>
#include <string>

#include "cluster/ingress/launcher_answers.h"
#include "cluster/ingress/virtual_pods.h"
#include "common/ascii.h"
#include "common/json_access.h"
#include "common/time_util.h"

namespace steward::cluster::ingress {

namespace {

net::HttpResponse Bare(int status) {
  net::HttpResponse r;
  r.status = status;
  return r;
}

// The real launcher's process dies on this request (status 0: ServeManagement restarts it).
net::HttpResponse Crash(std::string why) {
  net::HttpResponse r;
  r.status = 0;
  r.body = std::move(why);
  return r;
}

// path.normalize(path.join(BASE, rest)) relative to BASE; nullopt when it leaves BASE.
std::optional<std::string> Normalize(std::string_view rest) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= rest.size()) {
    size_t j = rest.find('/', i);
    if (j == std::string_view::npos) j = rest.size();
    std::string_view seg = rest.substr(i, j - i);
    i = j + 1;
    if (seg.empty() || seg == ".") continue;
    if (seg == "..") {
      if (parts.empty()) return std::nullopt;
      parts.pop_back();
      continue;
    }
    parts.emplace_back(seg);
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "/") + p;
  return out;
}

std::string Parent(const std::string& p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? "" : p.substr(0, slash);
}

// The part named "file" of a multipart/form-data body (what multer's upload.single('file')
// reads); nullopt when there is none.
std::optional<std::string> MultipartFile(std::string_view content_type, std::string_view body) {
  size_t b = content_type.find("boundary=");
  if (b == std::string_view::npos) return std::nullopt;
  std::string boundary(content_type.substr(b + 9));
  if (size_t semi = boundary.find(';'); semi != std::string::npos) boundary.resize(semi);
  if (boundary.size() >= 2 && boundary.front() == '"')
    boundary = boundary.substr(1, boundary.size() - 2);
  const std::string delim = "--" + boundary;
  size_t pos = body.find(delim);
  while (pos != std::string_view::npos) {
    size_t head = pos + delim.size();
    if (body.substr(head, 2) == "--") return std::nullopt;
    head += 2;  // CRLF
    size_t head_end = body.find("\r\n\r\n", head);
    if (head_end == std::string_view::npos) return std::nullopt;
    std::string_view headers = body.substr(head, head_end - head);
    size_t next = body.find("\r\n" + delim, head_end + 4);
    if (next == std::string_view::npos) return std::nullopt;
    if (headers.find("name=\"file\"") != std::string_view::npos) {
      return std::string(body.substr(head_end + 4, next - head_end - 4));
    }
    pos = next + 2;
  }
  return std::nullopt;
}

}  // namespace

net::HttpResponse VirtualPods::ServeFiles(PodState& state, std::string_view rest,
                                          const net::HttpRequest& request, int64_t now_ms) {
  auto norm = Normalize(rest);
  auto& files = state.files;
  auto is_dir = [&](const std::string& p) {
    auto it = files.find(p);
    return p.empty() || (it != files.end() && it->second.dir);
  };
  auto exists = [&](const std::string& p) { return p.empty() || files.count(p) != 0; };
  const std::string& m = request.method;
  const std::string_view ct = request.headers.Get("Content-Type");
  const bool json =
      AsciiEqualsIgnoreCase(TrimHttpWhitespace(ct.substr(0, ct.find(';'))), "application/json");
  // body-parser.json() runs before the routes: a JSON body that does not parse is its 400.
  if (json && !request.body.empty() && !ParseJson(request.body).ok()) {
    return ExpressErrorPage(400, "Bad Request");
  }
  if (m == "GET" || m == "HEAD") {
    if (!norm) return JsonResponse(200, Json::array());  // the launcher's answer outside BASE
    if (!exists(*norm)) return Bare(404);
    if (!is_dir(*norm)) return Bare(400);  // ENOTDIR
    Json list = Json::array();
    const std::string prefix = norm->empty() ? "" : *norm + "/";
    for (const auto& [p, node] : files) {
      if (!p.starts_with(prefix) || p.find('/', prefix.size()) != std::string::npos) continue;
      Json rep = {
          {"name", p.substr(prefix.size())},
          {"lastModified", FormatRfc3339(SystemTime(std::chrono::milliseconds(node.mtime_ms)))}};
      if (node.dir) {
        rep["type"] = "directory";
      } else {
        rep["type"] = "file";
        rep["size"] = node.content.size();
      }
      list.push_back(std::move(rep));
    }
    const size_t count = list.size();
    return JsonResponse(200,
                        {{"meta", Json::object()}, {"files", std::move(list)}, {"count", count}});
  }
  if (m == "PUT") {
    auto body = ParseJson(request.body);
    if (!json || !body.ok() || !body->is_object() || !(*body)["path"].is_string()) {
      return Crash("TypeError: the \"path\" argument must be of type string");
    }
    auto to = Normalize((*body)["path"].get<std::string>());
    if (!norm || !to) return Bare(403);
    if (!exists(*norm) || !is_dir(Parent(*to)) || norm->empty()) return Bare(404);
    // rename(2): the node and everything under it move.
    std::map<std::string, FileNode> moved;
    for (auto it = files.begin(); it != files.end();) {
      if (it->first == *norm || it->first.starts_with(*norm + "/")) {
        moved.emplace(*to + it->first.substr(norm->size()), std::move(it->second));
        it = files.erase(it);
      } else {
        ++it;
      }
    }
    for (auto& [p, node] : moved) {
      if (auto old = files.find(p); old != files.end())
        state.file_bytes -= old->second.content.size();
      files[p] = std::move(node);
    }
    return Bare(202);
  }
  if (m == "POST") {
    if (!norm) return Bare(403);
    if (ct == "application/json") {
      auto body = ParseJson(request.body);
      if (!body.ok() || !body->is_object() || !(*body)["path"].is_string()) {
        return Crash("TypeError: the \"path\" argument must be of type string");
      }
      auto dir = Normalize(*norm + "/" + (*body)["path"].get<std::string>());
      if (!dir) return Bare(500);
      // mkdir -p: every missing ancestor too; a file in the way is an error.
      for (size_t end = 0; end != std::string::npos && !dir->empty();) {
        end = dir->find('/', end == 0 ? 0 : end + 1);
        const std::string walk = dir->substr(0, end);
        auto it = files.find(walk);
        if (it != files.end() && !it->second.dir) return Bare(500);
        if (it == files.end()) files[walk] = FileNode{true, "", now_ms};
      }
      return Bare(201);
    }
    if (ct.empty()) return Crash("TypeError: cannot read properties of undefined");
    if (!ct.starts_with("multipart/form-data")) return Bare(406);
    auto content = MultipartFile(ct, request.body);
    if (!content) return Crash("TypeError: cannot read properties of undefined (the file)");
    if (!is_dir(Parent(*norm))) return Bare(404);
    auto it = files.find(*norm);
    if (norm->empty() || (it != files.end() && it->second.dir)) {
      return Crash("EISDIR: illegal operation on a directory");
    }
    const size_t old = it == files.end() ? 0 : it->second.content.size();
    if (state.file_bytes - old + content->size() > kMaxStorageBytes) {
      return Crash("ENOSPC: no space left on device");
    }
    state.file_bytes = state.file_bytes - old + content->size();
    files[*norm] = FileNode{false, std::move(*content), now_ms};
    return Bare(201);
  }
  if (m == "DELETE") {
    if (!norm || norm->empty()) return Bare(403);
    if (!exists(*norm)) return Bare(404);
    for (auto it = files.begin(); it != files.end();) {
      if (it->first == *norm || it->first.starts_with(*norm + "/")) {
        state.file_bytes -= it->second.content.size();
        it = files.erase(it);
      } else {
        ++it;
      }
    }
    return Bare(204);
  }
  return Bare(404);
}

}  // namespace steward::cluster::ingress
