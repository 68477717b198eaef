// Watch wire format: event decoding and NDJSON framing at every chunk boundary.
#include "kube/client/watch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace steward::kube {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Event(std::string_view type, std::string_view name, std::string_view rv) {
  return DumpJson(Json{{"type", type},
                       {"object",
                        {{"kind", "ConfigMap"},
                         {"apiVersion", "v1"},
                         {"metadata", {{"name", name}, {"resourceVersion", rv}}},
                         {"data", {{"text", "line one\nline two {\"quoted\"}"}}}}}}) +
         "\n";
}

// Feeds `chunks` and returns every line (as strings) or the first error.
StatusOr<std::vector<std::string>> Frame(NdjsonFramer& framer,
                                         const std::vector<std::string>& chunks) {
  std::vector<std::string> lines;
  for (const auto& chunk : chunks) {
    Status st = framer.Feed(chunk, [&](std::string_view line) {
      lines.emplace_back(line);
      return Status::Ok();
    });
    if (!st.ok()) return st;
  }
  return lines;
}

TEST(WatchDecodeTest, DecodesEveryEventType) {
  for (const char* type : {"ADDED", "MODIFIED", "DELETED", "BOOKMARK"}) {
    std::string line = Event(type, "a", "17");
    line.pop_back();
    auto ev = DecodeWatchEvent(line);
    ASSERT_TRUE(ev.ok()) << ev.status().ToString();
    EXPECT_EQ(WatchEventTypeName(ev->type), type);
    EXPECT_EQ(ev->ResourceVersion(), "17");
    EXPECT_EQ(ev->object["metadata"]["name"], "a");
  }
  auto error = DecodeWatchEvent(
      R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired",
          "metadata":{"resourceVersion":"9"}}})");
  ASSERT_TRUE(error.ok());
  EXPECT_EQ(error->type, WatchEvent::Type::kError);
  EXPECT_EQ(error->object["code"], 410);
  EXPECT_EQ(error->ResourceVersion(), "");
}

TEST(WatchDecodeTest, MalformedLinesAreRefusedNamingTheProblem) {
  struct Case {
    const char* line;
    const char* problem;
  };
  const Case cases[] = {
      {R"({"type":"ADDED","object":{)", "not JSON"},
      {R"(["ADDED"])", "not a JSON object"},
      {R"({"object":{}})", "no \"type\""},
      {R"({"type":7,"object":{}})", "no \"type\""},
      {R"({"type":"RENAMED","object":{}})", "unknown type \"RENAMED\""},
      {R"({"type":"ADDED"})", "no \"object\""},
      {R"({"type":"ADDED","object":"x"})", "no \"object\""},
  };
  for (const auto& c : cases) {
    auto ev = DecodeWatchEvent(c.line);
    ASSERT_FALSE(ev.ok()) << c.line;
    EXPECT_EQ(ev.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(ev.status().message(), HasSubstr(c.problem)) << c.line;
    EXPECT_THAT(ev.status().message(), HasSubstr("malformed watch event"));
  }
}

TEST(NdjsonFramerTest, SplitAtEveryBytePositionGivesTheSameEvents) {
  std::string stream = Event("ADDED", "a", "1") + Event("MODIFIED", "a", "2") +
                       Event("BOOKMARK", "", "3") + Event("DELETED", "a", "4");
  NdjsonFramer whole;
  auto expected = Frame(whole, {stream});
  ASSERT_TRUE(expected.ok());
  ASSERT_EQ(expected->size(), 4u);
  for (size_t i = 0; i <= stream.size(); ++i) {
    for (size_t j = i; j <= stream.size(); j += 37) {
      NdjsonFramer framer;
      auto lines = Frame(framer, {stream.substr(0, i), stream.substr(i, j - i), stream.substr(j)});
      ASSERT_TRUE(lines.ok()) << "split at " << i << "," << j;
      EXPECT_EQ(*lines, *expected) << "split at " << i << "," << j;
      EXPECT_EQ(framer.buffered(), 0u);
    }
  }
  std::vector<std::string> bytes;
  for (char c : stream) bytes.emplace_back(1, c);
  NdjsonFramer one_byte;
  auto lines = Frame(one_byte, bytes);
  ASSERT_TRUE(lines.ok());
  EXPECT_EQ(*lines, *expected);
  // Every line decodes to its event.
  std::vector<std::string> rvs;
  for (const auto& line : *lines) rvs.push_back(DecodeWatchEvent(line)->ResourceVersion());
  EXPECT_THAT(rvs, ElementsAre("1", "2", "3", "4"));
}

TEST(NdjsonFramerTest, HoldsAnIncompleteLineUntilItsNewline) {
  NdjsonFramer framer;
  auto first = Frame(framer, {"{\"a\":1}\n{\"b\""});
  ASSERT_TRUE(first.ok());
  EXPECT_THAT(*first, ElementsAre("{\"a\":1}"));
  EXPECT_EQ(framer.buffered(), 4u);
  auto second = Frame(framer, {":2}", "\n"});
  ASSERT_TRUE(second.ok());
  EXPECT_THAT(*second, ElementsAre("{\"b\":2}"));
  EXPECT_EQ(framer.buffered(), 0u);
}

TEST(NdjsonFramerTest, CrlfAndEmptyLines) {
  NdjsonFramer framer;
  auto lines = Frame(framer, {"a\r\n\r\n\nb\r", "\n\n", "c\n"});
  ASSERT_TRUE(lines.ok());
  EXPECT_THAT(*lines, ElementsAre("a", "b", "c"));
  // A '\r' inside a line is kept.
  NdjsonFramer inner;
  EXPECT_THAT(*Frame(inner, {"x\ry\n"}), ElementsAre("x\ry"));
}

TEST(NdjsonFramerTest, ALineOverTheLimitIsResourceExhausted) {
  NdjsonFramer framer(8);
  auto ok = Frame(framer, {"12345678\n", "1234", "5678\r\n"});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_THAT(*ok, ElementsAre("12345678", "12345678"));
  for (std::vector<std::string> chunks : {std::vector<std::string>{"123456789\n"},
                                          {"12345", "6789\n"},
                                          {"1234", "56789"},
                                          {std::string(100, 'x')}}) {
    NdjsonFramer small(8);
    auto lines = Frame(small, chunks);
    ASSERT_FALSE(lines.ok()) << chunks[0];
    EXPECT_EQ(lines.status().code(), StatusCode::kResourceExhausted);
    EXPECT_THAT(lines.status().message(), HasSubstr("8 bytes"));
    EXPECT_EQ(small.buffered(), 0u);  // nothing unbounded kept
  }
}

TEST(NdjsonFramerTest, AnErrorFromTheLineHandlerStopsFeeding) {
  NdjsonFramer framer;
  std::vector<std::string> seen;
  Status st = framer.Feed("a\nb\nc\n", [&](std::string_view line) {
    seen.emplace_back(line);
    return line == "b" ? InvalidArgument("bad b") : Status::Ok();
  });
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(seen, ElementsAre("a", "b"));
}

}  // namespace
}  // namespace steward::kube
