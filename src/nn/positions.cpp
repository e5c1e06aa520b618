#include "attn/nn/positions.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace attn::nn {

namespace {
constexpr std::int64_t kRowsAtOnce = 64;  // rows computed per growth: a handful of pages
}  // namespace

void sinusoidal_row(std::int64_t t, std::int64_t d, float* out) {
  const std::int64_t half = d / 2;
  const double step = half > 1 ? std::log(10000.0) / static_cast<double>(half - 1) : 0.0;
  for (std::int64_t j = 0; j < half; ++j) {
    const double angle = static_cast<double>(t) * std::exp(-static_cast<double>(j) * step);
    out[j] = static_cast<float>(std::sin(angle));
    out[half + j] = static_cast<float>(std::cos(angle));
  }
  for (std::int64_t j = 2 * half; j < d; ++j) out[j] = 0.0f;  // an odd d's last column
}

Positions::Positions(std::int64_t max_len, std::int64_t d)
    : max_len_(max_len), d_(d), table_(std::make_unique_for_overwrite<float[]>(static_cast<std::size_t>(max_len * d))) {
}

const float* Positions::rows(std::int64_t end) const {
  if (end > max_len_ || end < 0)
    throw std::out_of_range("Positions::rows: " + std::to_string(end) + " rows of " + std::to_string(max_len_));
  if (computed_.load(std::memory_order_acquire) < end) {
    const std::lock_guard lock(grow_);
    const std::int64_t from = computed_.load(std::memory_order_relaxed);
    const std::int64_t to = std::min(max_len_, std::max(end, from + kRowsAtOnce));
    for (std::int64_t t = from; t < to; ++t) sinusoidal_row(t, d_, table_.get() + t * d_);
    if (to > from) computed_.store(to, std::memory_order_release);
  }
  return table_.get();
}

}  // namespace attn::nn
