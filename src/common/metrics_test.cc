#include "common/metrics.h"

#include <gtest/gtest.h>

#include <thread>

namespace steward {
namespace {

TEST(MetricsTest, EmptyRegistryIsEmptyText) {
  MetricsRegistry r;
  EXPECT_EQ(r.Text(), "");
}

TEST(MetricsTest, CounterAndGaugeExpositionIsExact) {
  MetricsRegistry r;
  auto& c = r.Counter("b_requests_total", "Requests served.", {"method", "code"});
  auto& g = r.Gauge("a_depth", "Queue depth.");
  c.Add({"GET", "200"});
  c.Add({"GET", "200"}, 2);
  c.Add({"PUT", "400"}, 0.5);
  g.Set({}, 7);
  // Families in name order, series in label order.
  EXPECT_EQ(r.Text(),
            "# HELP a_depth Queue depth.\n"
            "# TYPE a_depth gauge\n"
            "a_depth 7\n"
            "# HELP b_requests_total Requests served.\n"
            "# TYPE b_requests_total counter\n"
            "b_requests_total{method=\"GET\",code=\"200\"} 3\n"
            "b_requests_total{method=\"PUT\",code=\"400\"} 0.5\n");
  EXPECT_EQ(c.Value({"GET", "200"}), 3);
  EXPECT_EQ(c.Value({"DELETE", "200"}), 0);
  EXPECT_EQ(g.Value({}), 7);
}

TEST(MetricsTest, FamilyWithoutSeriesStillHasHelpAndType) {
  MetricsRegistry r;
  r.Counter("x_total", "Nothing yet.", {"a"});
  EXPECT_EQ(r.Text(), "# HELP x_total Nothing yet.\n# TYPE x_total counter\n");
}

TEST(MetricsTest, LabelValuesAndHelpAreEscaped) {
  MetricsRegistry r;
  auto& g = r.Gauge("g", "Line one\nback\\slash \"quoted\"", {"path"});
  g.Set({"a\\b\"c\nd"}, 1);
  EXPECT_EQ(r.Text(),
            "# HELP g Line one\\nback\\\\slash \"quoted\"\n"
            "# TYPE g gauge\n"
            "g{path=\"a\\\\b\\\"c\\nd\"} 1\n");
}

TEST(MetricsTest, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  MetricsRegistry r;
  auto& h = r.Histogram("lat_seconds", "Latency.", {0.1, 1, 2.5}, {"route"});
  h.Observe({"/a"}, 0.05);
  h.Observe({"/a"}, 0.1);  // on the bound: counts in le="0.1"
  h.Observe({"/a"}, 2);
  h.Observe({"/a"}, 30);  // only +Inf
  EXPECT_EQ(r.Text(),
            "# HELP lat_seconds Latency.\n"
            "# TYPE lat_seconds histogram\n"
            "lat_seconds_bucket{route=\"/a\",le=\"0.1\"} 2\n"
            "lat_seconds_bucket{route=\"/a\",le=\"1\"} 2\n"
            "lat_seconds_bucket{route=\"/a\",le=\"2.5\"} 3\n"
            "lat_seconds_bucket{route=\"/a\",le=\"+Inf\"} 4\n"
            "lat_seconds_sum{route=\"/a\"} 32.15\n"
            "lat_seconds_count{route=\"/a\"} 4\n");
  EXPECT_EQ(h.Count({"/a"}), 4u);
  EXPECT_DOUBLE_EQ(h.Sum({"/a"}), 32.15);
  EXPECT_EQ(h.Count({"/b"}), 0u);
}

TEST(MetricsTest, HistogramWithoutLabels) {
  MetricsRegistry r;
  auto& h = r.Histogram("h", "H.", {1});
  h.Observe({}, 0.5);
  EXPECT_EQ(r.Text(),
            "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 1\n"
            "h_sum 0.5\nh_count 1\n");
}

TEST(MetricsTest, GaugeReplaceDropsOldSeries) {
  MetricsRegistry r;
  auto& g = r.Gauge("projects", "P.", {"phase"});
  g.Set({"Running"}, 3);
  g.Replace({{{"Suspended"}, 1}});
  EXPECT_EQ(g.Value({"Running"}), 0);
  EXPECT_EQ(r.Text(),
            "# HELP projects P.\n# TYPE projects gauge\nprojects{phase=\"Suspended\"} 1\n");
}

TEST(MetricsTest, CollectorsRunBeforeEveryScrape) {
  MetricsRegistry r;
  auto& g = r.Gauge("scrapes", "S.");
  int n = 0;
  r.OnCollect([&] { g.Set({}, ++n); });
  EXPECT_NE(r.Text().find("scrapes 1\n"), std::string::npos);
  EXPECT_NE(r.Text().find("scrapes 2\n"), std::string::npos);
}

TEST(MetricsTest, SpecialValues) {
  MetricsRegistry r;
  auto& g = r.Gauge("g", "G.", {"k"});
  g.Set({"inf"}, std::numeric_limits<double>::infinity());
  g.Set({"nan"}, std::numeric_limits<double>::quiet_NaN());
  g.Set({"neg"}, -2.25);
  g.Set({"small"}, 1e-9);
  std::string t = r.Text();
  EXPECT_NE(t.find("g{k=\"inf\"} +Inf\n"), std::string::npos) << t;
  EXPECT_NE(t.find("g{k=\"nan\"} NaN\n"), std::string::npos) << t;
  EXPECT_NE(t.find("g{k=\"neg\"} -2.25\n"), std::string::npos) << t;
  EXPECT_NE(t.find("g{k=\"small\"} 1e-09\n"), std::string::npos) << t;
}

TEST(MetricsTest, ConcurrentUpdatesAreCounted) {
  MetricsRegistry r;
  auto& c = r.Counter("c_total", "C.", {"t"});
  auto& h = r.Histogram("h", "H.", DefaultLatencyBuckets());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        c.Add({"x"});
        h.Observe({}, 0.01);
        if (i % 100 == 0) (void)r.Text();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.Value({"x"}), 4000);
  EXPECT_EQ(h.Count({}), 4000u);
}

TEST(MetricsTest, DefaultLatencyBucketsIncreaseFrom5msTo60s) {
  auto b = DefaultLatencyBuckets();
  ASSERT_FALSE(b.empty());
  EXPECT_DOUBLE_EQ(b.front(), 0.005);
  EXPECT_DOUBLE_EQ(b.back(), 60);
  for (size_t i = 1; i < b.size(); ++i) EXPECT_GT(b[i], b[i - 1]);
}

using MetricsDeathTest = ::testing::Test;

TEST(MetricsDeathTest, InvalidNamesAbort) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(MetricsRegistry().Counter("1abc", "x"), "invalid metric name \"1abc\"");
  EXPECT_DEATH(MetricsRegistry().Counter("a-b", "x"), "invalid metric name");
  EXPECT_DEATH(MetricsRegistry().Counter("", "x"), "invalid metric name");
  EXPECT_DEATH(MetricsRegistry().Gauge("ok", "x", {"bad-label"}), "invalid label name");
  EXPECT_DEATH(MetricsRegistry().Gauge("ok", "x", {"__reserved"}), "invalid label name");
  EXPECT_DEATH(MetricsRegistry().Gauge("ok", "x", {"a", "a"}), "duplicate label");
  EXPECT_DEATH(MetricsRegistry().Histogram("ok", "x", {1}, {"le"}), "may not have a label");
  EXPECT_DEATH(MetricsRegistry().Histogram("ok", "x", {2, 1}), "bounds must increase");
  EXPECT_DEATH(
      {
        MetricsRegistry r;
        r.Counter("dup_total", "x");
        r.Gauge("dup_total", "y");
      },
      "second family named dup_total");
  EXPECT_DEATH(
      {
        MetricsRegistry r;
        r.Counter("c_total", "x", {"a", "b"}).Add({"only-one"});
      },
      "1 label values, family has 2 labels");
}

TEST(MetricsTest, ColonsAndDigitsAreValidInNames) {
  MetricsRegistry r;
  r.Gauge("ns:sub_1", "ok", {"l1"}).Set({"v"}, 1);
  EXPECT_NE(r.Text().find("ns:sub_1{l1=\"v\"} 1\n"), std::string::npos);
}

}  // namespace
}  // namespace steward
