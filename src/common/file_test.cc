#include "common/file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace steward {
namespace {

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

}  // namespace
}  // namespace steward
