// InstanceOps' file operations: the launcher's /flowforge/files routes, with what they cannot
// take refused before a request is sent (instance_ops.h, Files).
#include <string>
#include <string_view>
#include <utility>

#include "common/ascii.h"
#include "common/fields.h"
#include "instance/instance_ops.h"
#include "net/http.h"

namespace steward::instance {
namespace {

using net::Is2xx;

// "a b/c" -> "a%20b/c": every segment encoded, the separators kept.
std::string EncodePath(std::string_view path) {
  std::string out;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (!out.empty()) out += '/';
    out += net::PercentEncode(path.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// The media type of a Content-Type value, lower-cased, without parameters.
std::string MediaType(std::string_view content_type) {
  return AsciiLower(TrimHttpWhitespace(content_type.substr(0, content_type.find(';'))));
}

// True when a multipart/form-data body has a part named "file" (what multer's
// upload.single('file') hands the launcher's upload route).
bool HasFilePart(std::string_view content_type, std::string_view body) {
  size_t b = AsciiLower(content_type).find("boundary=");
  if (b == std::string::npos) return false;
  std::string boundary(content_type.substr(b + 9));
  if (size_t semi = boundary.find(';'); semi != std::string::npos) boundary.resize(semi);
  if (boundary.size() >= 2 && boundary.front() == '"') {
    boundary = boundary.substr(1, boundary.size() - 2);
  }
  if (boundary.empty()) return false;
  const std::string delim = "--" + boundary + "\r\n";
  for (size_t pos = body.find(delim); pos != std::string_view::npos;
       pos = body.find(delim, pos + delim.size())) {
    size_t head_end = body.find("\r\n\r\n", pos);
    if (head_end == std::string_view::npos) return false;
    std::string_view head = body.substr(pos + delim.size(), head_end - pos - delim.size());
    if (head.find("name=\"file\"") != std::string_view::npos) return true;
  }
  return false;
}

// What the launcher's files routes (lib/files, 2.29.1) cannot take without its process dying:
// their async handlers let a TypeError or a failed write become an unhandled rejection, which
// ends Node.js 20 (the pod's launcher and Node-RED restart). Such requests are refused here,
// before anything is sent. Sets *content_type to what is sent (the launcher compares
// "application/json" exactly: "; charset=utf-8" would get 406).
Status CheckFileRequest(const FileRequest& file, std::string* content_type) {
  const std::string media = MediaType(file.content_type);
  *content_type = file.content_type;
  auto path_body = [&]() -> Status {
    auto parsed = ParseJson(file.body);
    if (media != "application/json" || !parsed.ok() || !parsed->is_object() ||
        !parsed->contains("path") || !(*parsed)["path"].is_string()) {
      return InvalidField("body", "a " + file.method +
                                      " must carry a JSON object with a string \"path\" (the "
                                      "launcher's process dies on anything else)");
    }
    *content_type = "application/json";
    return Status::Ok();
  };
  if (file.method == "PUT") return path_body();
  if (file.method != "POST") return Status::Ok();
  if (media == "application/json") return path_body();
  if (media == "multipart/form-data") {
    if (file.path.empty()) {
      return InvalidField("path", "an upload needs a file's path, not the storage directory");
    }
    if (!HasFilePart(file.content_type, file.body)) {
      return InvalidField("body", "an upload must carry a multipart part named \"file\"");
    }
    return Status::Ok();
  }
  if (media.empty()) {
    return InvalidField("content_type",
                        "a POST must say its type: application/json (a directory) or "
                        "multipart/form-data (an upload)");
  }
  return Status::Ok();  // any other type: the launcher answers 406
}

// "a/b/c" -> {"a/b", "c"}; "c" -> {"", "c"}.
std::pair<std::string, std::string> SplitParent(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {"", path};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

}  // namespace

StatusOr<FileAnswer> InstanceOps::Files(const std::string& service, const FileRequest& file,
                                        size_t max_answer_bytes) const {
  if (std::string problem = FilePathProblem(file.path); !problem.empty()) {
    return InvalidField("path", problem);
  }
  const std::string& m = file.method;
  if (m != "GET" && m != "PUT" && m != "DELETE" && m != "POST") {
    return InvalidArgument("method: " + m + " is not one of GET, PUT, DELETE, POST");
  }
  Request request;
  request.method = m;
  request.path = "/flowforge/files/_/" + EncodePath(file.path);
  request.body = file.body;
  RETURN_IF_ERROR(CheckFileRequest(file, &request.content_type));
  request.max_bytes = max_answer_bytes;
  ASSIGN_OR_RETURN(std::vector<Pod> pods, ReadyPods(service));
  size_t i = 0;
  Reply reply;
  if (m == "POST" && MediaType(file.content_type) == "multipart/form-data") {
    // An upload onto a directory kills the launcher (EISDIR, unhandled): the parent is listed
    // first, on the pod that will take the upload.
    auto [parent, name] = SplitParent(file.path);
    Request list = GetRequest("/flowforge/files/_/" + EncodePath(parent));
    list.max_bytes = max_answer_bytes;
    Reply listed = CallFirst(pods, list, &i);
    if (!listed.failure.ok()) return listed.failure;
    auto parsed = ParseJson(listed.body);
    const Json* entries =
        Is2xx(listed.status) && parsed.ok() ? FindPath(*parsed, "files") : nullptr;
    for (const Json& e : entries != nullptr && entries->is_array() ? *entries : Json::array()) {
      if (e.is_object() && GetString(e, "name") == name && GetString(e, "type") == "directory") {
        return InvalidField("path", "pod " + pods[i].name + ": " + file.path +
                                        " is a directory: an upload cannot replace it");
      }
    }
    reply = Call(pods[i], request);
  } else {
    reply = CallFirst(pods, request, &i);
  }
  if (!reply.failure.ok()) return reply.failure;
  FileAnswer answer;
  answer.pod = pods[i].name;
  answer.status = reply.status;
  answer.content_type = std::move(reply.content_type);
  answer.body = std::move(reply.body);
  return answer;
}

}  // namespace steward::instance
