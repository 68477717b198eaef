// Measuring helpers for the benchmark programs: CPU time of the process and of the calling
// thread, heap and RSS figures, percentiles, and running wrk (when installed) as an external
// load generator.
//
// Everything here is for bench/ only; nothing is thread-safe unless it says so.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace steward::bench {

using BenchClock = std::chrono::steady_clock;

double Seconds(BenchClock::duration d);
// Milliseconds, as a double, of a measured duration or of a profile's delay.
double Ms(BenchClock::duration d);
double Ms(std::chrono::milliseconds d);

// CPU seconds (user + system) used so far by every thread of this process. Thread-safe.
double ProcessCpuSeconds();
// CPU seconds used so far by the calling thread. Thread-safe.
double ThreadCpuSeconds();

// Resident set size of this process, in bytes (VmRSS).
size_t RssBytes();
// The same for another process (VmRSS of /proc/<pid>/status); 0 when it cannot be read.
size_t RssBytesOf(int pid);
// Bytes handed out by malloc and not yet freed, over every arena (mallinfo2). Unlike RSS this
// does not count free memory the allocator keeps, so it is the live heap.
size_t HeapInUseBytes();
// The 1-minute load average ("3.52"), to tell a quiet machine from a busy one.
std::string LoadAverage();
// Returns free heap memory to the kernel (malloc_trim), so that RSS reflects what is live.
void TrimHeap();

// The p-th percentile (0..100) of `values` (sorted in place); 0 for an empty vector.
double Percentile(std::vector<double>& values, double p);

// A Deployment the size of a Steward project's (about 1.3 KB of JSON as sent, 1.4 KB stored),
// named and labelled `name`.
std::string DeploymentJson(const std::string& name);

// The result of one wrk run.
struct WrkResult {
  double requests_per_second = 0;
  double latency_p50_ms = 0;
  double latency_p99_ms = 0;
  long requests = 0;
  long errors = 0;     // socket errors and non-2xx/3xx responses
  std::string output;  // wrk's own report
};

// ---- flags -----------------------------------------------------------------------------------

// Declares the flag `name` ("--projects") on `app`, stored in `*value`, whose current content is
// the default --help shows. Chain ->check(CLI::Range(lo, hi)) or ->check(CLI::IsMember({...})) to
// refuse values outside a range or set.
template <class T>
CLI::Option* AddFlag(CLI::App& app, const std::string& name, T* value, const std::string& help) {
  return app.add_option(name, *value, help)->capture_default_str();
}

// Parses the command line against the flags declared on `app` ("--name value" or
// "--name=value"). nullopt when the benchmark should run; otherwise the exit code to return:
// 0 after --help (every flag with its help text and default, on stdout); 2 after an unknown
// flag, a missing value, or a value of the wrong type or out of its range or set (CLI11's message
// naming the flag, on stderr).
std::optional<int> ParseFlags(CLI::App& app, int argc, char** argv);

// The command line as typed ("build-bench/bench/x --projects 10"), for the summary.
std::string CommandLine(int argc, char** argv);

// True when a `wrk` executable is on PATH.
bool WrkAvailable();
// Runs `wrk --latency -t THREADS -c CONNECTIONS -d SECONDS -H HEADER... URL` and parses its
// report. Fails (nullopt) when wrk cannot be run or prints no "Requests/sec".
std::optional<WrkResult> RunWrk(const std::string& url, int threads, int connections,
                                double seconds, const std::vector<std::string>& headers);

}  // namespace steward::bench
