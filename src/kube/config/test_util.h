// Test helpers for kube/config tests: a temporary directory that is removed afterwards, and
// small file utilities. Not thread-safe; one per test.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace steward::kube::test_util {

// Fake PEM blocks: the loaders check the block markers; the transport parses the real thing.
inline constexpr char kCaPem[] = "-----BEGIN CERTIFICATE-----\nQ0E=\n-----END CERTIFICATE-----\n";
inline constexpr char kCertPem[] =
    "-----BEGIN CERTIFICATE-----\nQ0VSVA==\n-----END CERTIFICATE-----\n";
inline constexpr char kKeyPem[] = "-----BEGIN PRIVATE KEY-----\nS0VZ\n-----END PRIVATE KEY-----\n";

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "steward_kcfg_XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Path(const std::string& rel) const { return path_ + "/" + rel; }

  // Writes `content` to `rel` (creating directories) with `mode`; returns the absolute path.
  std::string Write(const std::string& rel, const std::string& content, mode_t mode = 0644) const {
    std::string p = Path(rel);
    std::filesystem::create_directories(std::filesystem::path(p).parent_path());
    // Write to a new file and rename, so that a running reader never sees a half-written file
    // and an executable being replaced is never "text file busy".
    std::string tmp = p + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << content;
    }
    ::chmod(tmp.c_str(), mode);
    std::filesystem::rename(tmp, p);
    return p;
  }

 private:
  std::string path_;
};

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline int CountLines(const std::string& path) {
  std::string s = ReadAll(path);
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace steward::kube::test_util
