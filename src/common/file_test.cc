#include "common/file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "test_support/private_files.h"

namespace steward {
namespace {

using test_support::ModeOf;
using test_support::ScopedUmask;
using ::testing::HasSubstr;

class FileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("steward-file-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& content) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(FileTest, ReadsAWholeFileWithBinaryContent) {
  std::string content("a\0b\nc", 5);
  auto got = ReadSmallFile(Write("f", content));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, content);
  EXPECT_EQ(*ReadSmallFile(Write("empty", "")), "");
}

TEST_F(FileTest, ErrorsNameThePathAndTheCause) {
  auto missing = ReadSmallFile((dir_ / "nope").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.error().message(), HasSubstr("nope: No such file or directory"));

  // A directory opens fine with ifstream and reads as empty; here it is refused.
  auto dir = ReadSmallFile(dir_.string());
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(dir.error().message(), HasSubstr("not a regular file"));

  auto big = ReadSmallFile(Write("big", std::string(100, 'x')), 99);
  ASSERT_FALSE(big.ok());
  EXPECT_THAT(big.error().message(), HasSubstr("larger than 99 bytes"));
  EXPECT_TRUE(ReadSmallFile(Write("exact", std::string(99, 'x')), 99).ok());
}

TEST_F(FileTest, CreatePrivateDirMakesTheLastComponent0700WhateverTheUmask) {
  ScopedUmask umask(022);
  const std::string dir = (dir_ / "a" / "b").string();
  ASSERT_TRUE(CreatePrivateDir(dir + "/").ok());
  EXPECT_EQ(ModeOf(dir), 0700);
  EXPECT_EQ(ModeOf((dir_ / "a").string()), 0755);  // a parent, as mkdir -p makes it
  {
    ScopedUmask odd(0277);  // would leave mkdir's 0700 at 0500
    ASSERT_TRUE(CreatePrivateDir(dir + "/c").ok());
    EXPECT_EQ(ModeOf(dir + "/c"), 0700);
  }
  // An existing directory is left as it is.
  ASSERT_EQ(::chmod(dir.c_str(), 0750), 0);
  ASSERT_TRUE(CreatePrivateDir(dir).ok());
  EXPECT_EQ(ModeOf(dir), 0750);

  Status file = CreatePrivateDir(Write("f", "x"));
  EXPECT_EQ(file.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(file.message(), (dir_ / "f").string() + ": exists and is not a directory");
  EXPECT_THAT(CreatePrivateDir((dir_ / "f" / "sub").string()).message(),
              HasSubstr((dir_ / "f" / "sub").string() + ": "));
}

TEST_F(FileTest, PrivateDirWarningNamesTheModeAndTheFix) {
  const std::string dir = dir_.string();
  ASSERT_EQ(::chmod(dir.c_str(), 0700), 0);
  EXPECT_EQ(PrivateDirWarning(dir), "");
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  EXPECT_EQ(PrivateDirWarning(dir),
            dir +
                " is mode 0755: group or others may enter or list this directory, which holds "
                "secrets; fix: chmod 700 " +
                dir);
  ASSERT_EQ(::chmod(dir.c_str(), 0701), 0);  // entering alone is enough to reach known names
  EXPECT_THAT(PrivateDirWarning(dir), HasSubstr("is mode 0701"));
  ASSERT_EQ(::chmod(dir.c_str(), 0700), 0);
  EXPECT_EQ(PrivateDirWarning((dir_ / "missing").string()), "");
}

TEST_F(FileTest, EnsurePrivateFileCreates0600AndTightensALooserOne) {
  ScopedUmask umask(022);
  const std::string path = (dir_ / "db").string();
  auto created = EnsurePrivateFile(path);
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  EXPECT_EQ(*created, "");
  EXPECT_EQ(ModeOf(path), 0600);
  EXPECT_EQ(std::filesystem::file_size(path), 0u);

  std::ofstream(path) << "content";
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  auto tightened = EnsurePrivateFile(path);
  ASSERT_TRUE(tightened.ok());
  EXPECT_EQ(*tightened, path + " was mode 0644, open to group or others; changed to 0600");
  EXPECT_EQ(ModeOf(path), 0600);
  EXPECT_EQ(*ReadSmallFile(path), "content");  // never truncated
  EXPECT_EQ(*EnsurePrivateFile(path), "");     // nothing more to say

  // The owner's own bits are kept: a read-only file stays read-only.
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
  EXPECT_THAT(*TightenPrivateFile(path), HasSubstr("changed to 0400"));
  EXPECT_EQ(ModeOf(path), 0400);

  EXPECT_EQ(*TightenPrivateFile((dir_ / "absent").string()), "");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "absent"));
  auto no_dir = EnsurePrivateFile((dir_ / "no" / "db").string());
  ASSERT_FALSE(no_dir.ok());
  EXPECT_THAT(no_dir.error().message(), HasSubstr("no/db: cannot create: No such file"));
}

TEST_F(FileTest, PrepareSqliteFileCreatesTheDbAndTightensItsCompanions) {
  ScopedUmask umask(022);
  const std::string db = (dir_ / "steward.db").string();
  Write("steward.db-wal", "w");
  Write("steward.db-journal", "j");
  ASSERT_EQ(ModeOf(db + "-wal"), 0644);
  ASSERT_TRUE(PrepareSqliteFile(db).ok());
  EXPECT_EQ(ModeOf(db), 0600);
  EXPECT_EQ(ModeOf(db + "-wal"), 0600);
  EXPECT_EQ(ModeOf(db + "-journal"), 0600);
  EXPECT_FALSE(std::filesystem::exists(db + "-shm"));  // companions are never created
  EXPECT_TRUE(PrepareSqliteFile(":memory:").ok());
  EXPECT_FALSE(std::filesystem::exists(":memory:"));
}

TEST_F(FileTest, WritePrivateFileReplacesTheContentAt0600) {
  ScopedUmask umask(022);
  const std::string path = Write("kubeconfig", "old");
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  ASSERT_TRUE(WritePrivateFile(path, "new secret").ok());
  EXPECT_EQ(*ReadSmallFile(path), "new secret");
  EXPECT_EQ(ModeOf(path), 0600);
  const std::string fresh = (dir_ / "token").string();
  ASSERT_TRUE(WritePrivateFile(fresh, std::string(100000, 't')).ok());
  EXPECT_EQ(ModeOf(fresh), 0600);
  EXPECT_EQ(ReadSmallFile(fresh)->size(), 100000u);
  // Nothing is left beside them.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_),
                          std::filesystem::directory_iterator()),
            2);

  Status missing = WritePrivateFile((dir_ / "no" / "file").string(), "x");
  EXPECT_EQ(missing.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(missing.message(), HasSubstr("no/file: cannot create a file beside it"));
}

}  // namespace
}  // namespace steward
