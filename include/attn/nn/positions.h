// The sinusoidal position table of sinusoidal_positions (nn/embedding.h), its
// rows computed the first time a forward asks for them, into memory that is
// not touched before: a model loaded to translate short sentences holds the
// rows it has used, not all max_len of them (1 MB at 1,024 × 256). The same
// values bit for bit. Thread-safe: serve decodes with one model in several threads.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

namespace attn::nn {

// Row t of the table: out: [d].
void sinusoidal_row(std::int64_t t, std::int64_t d, float* out);

class Positions {
 public:
  Positions(std::int64_t max_len, std::int64_t d);
  Positions(const Positions&) = delete;
  Positions& operator=(const Positions&) = delete;

  // Row 0 of the table [max_len, d], rows [0, end) computed; std::out_of_range past max_len.
  const float* rows(std::int64_t end) const;
  std::int64_t max_len() const { return max_len_; }
  std::int64_t d() const { return d_; }

 private:
  std::int64_t max_len_, d_;
  std::unique_ptr<float[]> table_;  // [max_len, d]: large enough that malloc maps it, its pages untouched until written
  mutable std::mutex grow_;
  mutable std::atomic<std::int64_t> computed_{0};  // rows written
};

}  // namespace attn::nn
