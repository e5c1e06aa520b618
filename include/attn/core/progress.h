// What long work shows on a terminal: one status line on stderr, redrawn in
// place ("\r" + erase line), ended with a newline before any other output.
// Nothing is drawn when stderr is not a terminal, so logs, pipes and test
// captures stay clean. The trainer's progress line (train/train_log.h) and
// the sentence counter of `attn translate` and `attn attend` share it.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

#include "attn/core/format.h"

namespace attn {

// isatty(STDERR_FILENO).
bool stderr_is_terminal();

// The line itself. Disabled: every call is a no-op.
class StatusLine {
 public:
  explicit StatusLine(bool enabled) : enabled_(enabled) {}
  ~StatusLine() { end(); }
  StatusLine(const StatusLine&) = delete;
  StatusLine& operator=(const StatusLine&) = delete;

  bool enabled() const { return enabled_; }
  // Replaces what the line shows.
  void show(const std::string& text);
  // Moves to a new line if something is shown (before printing anything else).
  void end();

 private:
  bool enabled_ = false, shown_ = false;
};

// "1,200/3,000 sentences (40%) | 35.1 sentences/s | ETA 0:00:51"; once done
// == total, the ETA becomes the time taken. Pure, for tests.
std::string count_progress_text(const std::string& unit, std::int64_t done, std::int64_t total, double elapsed_s);

// A counter of finished items drawn on a StatusLine at most every
// min_interval_s seconds (and always at the end), so drawing never costs
// more than the work it reports.
class CountProgress {
 public:
  CountProgress(std::string unit, std::int64_t total, bool enabled = stderr_is_terminal(),
                double min_interval_s = 0.25);
  // `done` items are finished (monotone).
  void update(std::int64_t done);
  // Draws the final count and ends the line.
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  StatusLine line_;
  std::string unit_;
  std::int64_t total_ = 0, done_ = 0, drawn_done_ = -1;
  double min_interval_s_ = 0.25;
  Clock::time_point start_, last_draw_;
  bool drawn_ = false, finished_ = false;
};

}  // namespace attn
