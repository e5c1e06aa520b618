// The updates since the last train record: their loss and target tokens and
// the time they took. A train record (written every --log-every updates) is
// the mean over its own window, so consecutive records never overlap and a
// loss curve drawn from them is as smooth as the training; between records,
// the progress line on a terminal shows the window so far, redrawn at most
// every half second.
#pragma once
#include <chrono>
#include <cstdint>

#include "attn/train/train_log.h"

namespace attn::train {

class LogWindow {
 public:
  // Starts the first window (a session's start: after a resume, the first
  // record covers the updates since the resume).
  void start();
  // An update is done: its loss and nll sums and target tokens, over ranks.
  void add(double loss, double nll, std::int64_t tokens);
  // A train record of the window so far (split, loss and nll per target
  // token, tokens/s, window_updates); the caller adds the update's own fields.
  LogRecord record() const;
  // Half a second since the window started or the progress line was drawn.
  bool line_due() const;
  void line_drawn();
  // The window's record is written: the next one starts empty.
  void restart() { start(); }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_, drawn_;
  std::int64_t updates_ = 0, tokens_ = 0;
  double loss_ = 0.0, nll_ = 0.0;
};

}  // namespace attn::train
