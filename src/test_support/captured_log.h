// CapturedLog: what is logged through spdlog's default logger while it lives (at warn and
// above unless told otherwise), for tests that assert a warning is given. The previous default
// logger and level come back at destruction. Not for concurrent use with another CapturedLog.
#pragma once

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace steward::test_support {

class CapturedLog {
 public:
  CapturedLog()
      : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1000)),
        old_(spdlog::default_logger()),
        old_level_(spdlog::get_level()) {
    auto logger = std::make_shared<spdlog::logger>("captured", sink_);
    logger->set_pattern("%l %v");
    spdlog::set_default_logger(logger);
  }
  ~CapturedLog() {
    spdlog::set_default_logger(old_);
    spdlog::set_level(old_level_);
  }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;

  // Every line so far, "<level> <message>\n" each.
  std::string Text() const {
    std::string out;
    for (const auto& line : sink_->last_formatted()) out += line;
    return out;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> old_;
  spdlog::level::level_enum old_level_;
};

}  // namespace steward::test_support
