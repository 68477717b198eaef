#include "bench_util.h"

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

namespace steward::bench {

double Seconds(BenchClock::duration d) { return std::chrono::duration<double>(d).count(); }
double Ms(BenchClock::duration d) { return Seconds(d) * 1e3; }
double Ms(std::chrono::milliseconds d) { return static_cast<double>(d.count()); }

namespace {

double TimevalSeconds(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

// "635.00us", "1.23ms", "2.01s" -> milliseconds.
double ParseDurationMs(const std::string& text) {
  double value = std::atof(text.c_str());
  if (text.find("us") != std::string::npos) return value / 1000.0;
  if (text.find("ms") != std::string::npos) return value;
  if (text.find('m') != std::string::npos) return value * 60000.0;
  if (text.find('s') != std::string::npos) return value * 1000.0;
  return value;
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace

double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return TimevalSeconds(usage.ru_utime) + TimevalSeconds(usage.ru_stime);
}

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

size_t RssBytes() { return RssBytesOf(0); }

size_t RssBytesOf(int pid) {
  std::ifstream in(pid == 0 ? std::string("/proc/self/status")
                            : "/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoul(line.substr(6)) * 1024;
  }
  return 0;
}

size_t HeapInUseBytes() {
  struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string first;
  in >> first;
  return first.empty() ? "?" : first;
}

void TrimHeap() { malloc_trim(0); }

double Percentile(std::vector<double>& values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  double rank = p / 100.0 * static_cast<double>(values.size() - 1);
  size_t index = static_cast<size_t>(std::lround(rank));
  return values[std::min(index, values.size() - 1)];
}

bool WrkAvailable() { return std::system("command -v wrk >/dev/null 2>&1") == 0; }

std::optional<WrkResult> RunWrk(const std::string& url, int threads, int connections,
                                double seconds, const std::vector<std::string>& headers) {
  int whole_seconds = std::max(1, static_cast<int>(std::ceil(seconds)));
  std::string command = "wrk --latency -t " + std::to_string(threads) + " -c " +
                        std::to_string(connections) + " -d " + std::to_string(whole_seconds) +
                        "s --timeout 10s";
  for (const auto& h : headers) command += " -H " + ShellQuote(h);
  command += " " + ShellQuote(url) + " 2>&1";
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  WrkResult result;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) result.output.append(buf, n);
  if (pclose(pipe) != 0) return std::nullopt;
  std::istringstream in(result.output);
  std::string line;
  bool found = false;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first == "Requests/sec:") {
      words >> result.requests_per_second;
      found = true;
    } else if (first == "50%" || first == "99%") {
      std::string value;
      words >> value;
      (first == "50%" ? result.latency_p50_ms : result.latency_p99_ms) = ParseDurationMs(value);
    } else if (line.find(" requests in ") != std::string::npos) {
      result.requests = std::atol(first.c_str());
    } else if (first == "Socket") {
      // "Socket errors: connect 0, read 0, write 0, timeout 0"
      for (size_t at = line.find_first_of("0123456789"); at != std::string::npos;
           at = line.find_first_of("0123456789", line.find_first_not_of("0123456789", at))) {
        result.errors += std::atol(line.c_str() + at);
        if (line.find_first_not_of("0123456789", at) == std::string::npos) break;
      }
    } else if (line.find("Non-2xx or 3xx responses:") != std::string::npos) {
      result.errors += std::atol(line.c_str() + line.find(':') + 1);
    }
  }
  if (!found) return std::nullopt;
  return result;
}

std::string DeploymentJson(const std::string& name) {
  std::string t = R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"NAME",
    "labels":{"steward.io/project":"NAME","app.kubernetes.io/managed-by":"steward"},
    "annotations":{"steward.io/spec-hash":"0123456789abcdef0123456789abcdef"}},
    "spec":{"replicas":1,"selector":{"matchLabels":{"steward.io/project":"NAME"}},
    "template":{"metadata":{"labels":{"steward.io/project":"NAME"}},"spec":{"containers":[{
    "name":"node-red","image":"nodered/node-red:4.0",
    "ports":[{"name":"web","containerPort":1880},{"name":"management","containerPort":2880}],
    "env":[{"name":"FORGE_PROJECT_ID","value":"NAME"},{"name":"FORGE_CLIENT_ID","valueFrom":
    {"secretKeyRef":{"name":"NAME-credentials","key":"clientId"}}}],
    "resources":{"requests":{"cpu":"100m","memory":"256Mi"},
    "limits":{"cpu":"100m","memory":"384Mi"}}}]}}}})";
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t at = t.find("NAME", pos);
    out += t.substr(pos, at == std::string::npos ? std::string::npos : at - pos);
    if (at == std::string::npos) break;
    out += name;
    pos = at + 4;
  }
  return out;
}

std::optional<int> ParseFlags(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::Success&) {  // --help
    std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: %s\nRun with --help for the flags.\n", app.get_name().c_str(),
                 e.what());
    return 2;
  }
}

std::string CommandLine(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) out += (i == 0 ? "" : " ") + std::string(argv[i]);
  return out;
}

}  // namespace steward::bench
