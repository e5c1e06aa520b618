#include "attn/train/log_window.h"

#include <algorithm>

namespace attn::train {

namespace {
double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

void LogWindow::start() {
  start_ = drawn_ = Clock::now();
  updates_ = tokens_ = 0;
  loss_ = nll_ = 0.0;
}

void LogWindow::add(double loss, double nll, std::int64_t tokens) {
  ++updates_;
  tokens_ += tokens;
  loss_ += loss;
  nll_ += nll;
}

LogRecord LogWindow::record() const {
  const auto per_token = static_cast<double>(std::max<std::int64_t>(tokens_, 1));
  const double window_s = seconds_since(start_);
  LogRecord r;
  r.split = "train";
  r.loss = loss_ / per_token;
  r.nll = nll_ / per_token;
  r.tokens_per_s = window_s > 0 ? static_cast<double>(tokens_) / window_s : 0.0;
  r.window_updates = updates_;
  return r;
}

bool LogWindow::line_due() const { return seconds_since(drawn_) > 0.5; }

void LogWindow::line_drawn() { drawn_ = Clock::now(); }

}  // namespace attn::train
