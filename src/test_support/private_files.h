// Test helpers for the modes of secret-holding files: a umask set for a scope, and the entries
// of a directory tree whose modes are not private (files 0600, directories 0700).
#pragma once

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace steward::test_support {

// Sets the process umask for its lifetime (tests run it on the main thread, before starting
// anything that creates files) and restores the previous one.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : old_(::umask(mask)) {}
  ~ScopedUmask() { ::umask(old_); }
  ScopedUmask(const ScopedUmask&) = delete;
  ScopedUmask& operator=(const ScopedUmask&) = delete;

 private:
  mode_t old_;
};

// The mode bits of `path` (07777), or -1 when it cannot be stat'ed.
inline int ModeOf(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return -1;
  return static_cast<int>(st.st_mode & 07777);
}

// "PATH MODE" for `root` and every entry under it that is not private: a directory not 0700, a
// file not 0600, anything else (a symbolic link, a socket). Empty when all are private.
inline std::vector<std::string> NotPrivate(const std::string& root) {
  std::vector<std::string> out;
  auto check = [&](const std::filesystem::path& p) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return;  // removed meanwhile (SQLite's -shm at close)
    const unsigned mode = st.st_mode & 07777;
    const bool ok = S_ISDIR(st.st_mode) ? mode == 0700 : S_ISREG(st.st_mode) ? mode == 0600 : false;
    if (!ok) {
      char buf[16];
      std::snprintf(buf, sizeof(buf), "%04o", mode);
      out.push_back(p.string() + " " + buf);
    }
  };
  check(root);
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    check(it->path());
  }
  return out;
}

// The names of the files and directories under `root` (relative paths), to show a test looked.
inline std::vector<std::string> EntriesUnder(const std::string& root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    out.push_back(std::filesystem::relative(it->path(), root).string());
  }
  return out;
}

}  // namespace steward::test_support
