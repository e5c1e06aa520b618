#include "attn/core/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <utility>

namespace attn {

bool stderr_is_terminal() { return isatty(STDERR_FILENO) != 0; }

void StatusLine::show(const std::string& text) {
  if (!enabled_) return;
  std::fprintf(stderr, "\r\033[K%s", text.c_str());
  std::fflush(stderr);
  shown_ = true;
}

void StatusLine::end() {
  if (shown_) {
    std::fputc('\n', stderr);
    std::fflush(stderr);
  }
  shown_ = false;
}

std::string count_progress_text(const std::string& unit, std::int64_t done, std::int64_t total, double elapsed_s) {
  std::string text = format_count(done) + "/" + format_count(total) + " " + unit;
  if (total > 0) text += " (" + std::to_string(100 * done / total) + "%)";
  const double rate = elapsed_s > 0 ? static_cast<double>(done) / elapsed_s : 0.0;
  char buf[64];
  std::snprintf(buf, sizeof buf, " | %.1f %s/s", rate, unit.c_str());
  text += buf;
  if (done >= total)
    text += " | " + format_duration(elapsed_s);
  else
    text += " | ETA " + (rate > 0 ? format_duration(static_cast<double>(total - done) / rate) : std::string("?"));
  return text;
}

CountProgress::CountProgress(std::string unit, std::int64_t total, bool enabled, double min_interval_s)
    : line_(enabled), unit_(std::move(unit)), total_(total), min_interval_s_(min_interval_s) {
  start_ = last_draw_ = Clock::now();
}

void CountProgress::update(std::int64_t done) {
  done_ = std::max(done_, done);
  if (!line_.enabled() || finished_) return;
  const auto now = Clock::now();
  // While counting, at most one redraw per min_interval_s; the final count once.
  if (drawn_ && (done_ >= total_ ? drawn_done_ == done_
                                 : std::chrono::duration<double>(now - last_draw_).count() < min_interval_s_))
    return;
  last_draw_ = now;
  drawn_ = true;
  drawn_done_ = done_;
  line_.show(count_progress_text(unit_, done_, total_, std::chrono::duration<double>(now - start_).count()));
}

void CountProgress::finish() {
  if (finished_) return;
  if (total_ > 0) update(total_);
  finished_ = true;
  line_.end();
}

}  // namespace attn
