#include "common/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/log.h"

namespace steward {

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

namespace {

std::string Octal(mode_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

}  // namespace

Status CreatePrivateDir(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Status::Ok();
    return FailedPrecondition(dir + ": exists and is not a directory");
  }
  std::filesystem::path path(dir);
  if (!path.has_filename()) path = path.parent_path();  // "a/b/" names "a/b"
  if (path.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) return FailedPrecondition(dir + ": " + ec.message());
  }
  if (::mkdir(path.c_str(), 0700) != 0) {
    int err = errno;
    // Another process may have created it meanwhile; then it is theirs, as an existing one.
    if (err == EEXIST && ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      return Status::Ok();
    }
    return FailedPrecondition(dir + ": " + ErrnoText(err));
  }
  // An unusual umask (say 0277) removes owner bits from mkdir's mode too.
  if (::chmod(path.c_str(), 0700) != 0) return FailedPrecondition(dir + ": " + ErrnoText(errno));
  return Status::Ok();
}

std::string PrivateDirWarning(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || (st.st_mode & 077) == 0) return "";
  return dir + " is mode " + Octal(st.st_mode) +
         ": group or others may enter or list this directory, which holds secrets; fix: chmod "
         "700 " +
         dir;
}

StatusOr<std::string> TightenPrivateFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    int err = errno;
    if (err == ENOENT) return std::string();
    return FailedPrecondition(path + ": " + ErrnoText(err));
  }
  // Devices and the like are not ours to change; whoever opens them reports what they are.
  if (!S_ISREG(st.st_mode) || (st.st_mode & 077) == 0) return std::string();
  const mode_t tight = st.st_mode & 0700;
  if (::chmod(path.c_str(), tight) != 0) {
    return FailedPrecondition(path + ": cannot chmod " + Octal(tight) + ": " + ErrnoText(errno));
  }
  return path + " was mode " + Octal(st.st_mode) + ", open to group or others; changed to " +
         Octal(tight);
}

StatusOr<std::string> EnsurePrivateFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    int err = errno;
    if (err == EEXIST) return TightenPrivateFile(path);
    return FailedPrecondition(path + ": cannot create: " + ErrnoText(err));
  }
  // 0600 exactly, also when the umask removed owner bits.
  int rc = ::fchmod(fd, 0600);
  int err = errno;
  ::close(fd);
  if (rc != 0) return FailedPrecondition(path + ": " + ErrnoText(err));
  return std::string();
}

Status PrepareSqliteFile(const std::string& db_path) {
  if (db_path.empty() || db_path == ":memory:") return Status::Ok();
  ASSIGN_OR_RETURN(std::string warning, EnsurePrivateFile(db_path));
  if (!warning.empty()) LOG_WARN("{}", warning);
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    ASSIGN_OR_RETURN(warning, TightenPrivateFile(db_path + suffix));
    if (!warning.empty()) LOG_WARN("{}", warning);
  }
  return Status::Ok();
}

Status WritePrivateFile(const std::string& path, std::string_view content) {
  std::string temp = path + ".tmp-XXXXXX";
  int fd = ::mkostemp(temp.data(), O_CLOEXEC);  // mode 0600 (minus the umask)
  if (fd < 0)
    return FailedPrecondition(path + ": cannot create a file beside it: " + ErrnoText(errno));
  int err = 0;
  if (::fchmod(fd, 0600) != 0) err = errno;
  for (size_t done = 0; err == 0 && done < content.size();) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      err = errno;
    else
      done += static_cast<size_t>(n);
  }
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && ::rename(temp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(temp.c_str());
    return FailedPrecondition(path + ": cannot write: " + ErrnoText(err));
  }
  return Status::Ok();
}

}  // namespace steward
