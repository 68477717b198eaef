#include "kube/config/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace steward::kube::config_internal {

std::string ErrnoText(int err) {
  char buf[256];
  // GNU strerror_r returns the message (which may or may not be `buf`).
  return std::string(strerror_r(err, buf, sizeof(buf)));
}

StatusOr<std::string> ReadSmallFile(const std::string& path, size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    std::string msg = path + ": " + ErrnoText(err);
    if (err == ENOENT) return NotFound(msg);
    return FailedPrecondition(msg);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return FailedPrecondition(path + ": not a regular file");
  }
  std::string out;
  char buf[16384];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return FailedPrecondition(path + ": " + ErrnoText(err));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      ::close(fd);
      return FailedPrecondition(path + ": larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
  ::close(fd);
  return out;
}

bool PathExists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string AbsoluteDirOf(const std::string& file) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(file, ec);
  if (ec) p = file;
  return p.lexically_normal().parent_path().string();
}

std::string ResolveAgainst(const std::string& base_dir, const std::string& path) {
  if (path.empty() || path.front() == '/') return path;
  return (std::filesystem::path(base_dir) / path).lexically_normal().string();
}

std::string TrimWhitespace(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n\f\v";
  size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(kSpace);
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace steward::kube::config_internal
