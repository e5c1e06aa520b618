// A numeric flag's allowed values, declared with the flag. CLI11 checks the
// typed text while parsing, before converting it, so a bad value (out of
// range, NaN, infinite, not a number) ends in main's one line naming the flag,
// with exit status 2, before any work. `attn CMD --help` shows the range.
#pragma once
#include <CLI/CLI.hpp>

namespace attn::cli {

struct Bounds {
  double lo, hi;  // finite, so 1e300 and -1e300 are always refused
  bool lo_open = false, hi_open = false;
};

// Closed [lo, hi]; a probability [0, 1); above(lo, hi): (lo, hi].
constexpr Bounds within(double lo, double hi) { return {lo, hi}; }
constexpr Bounds above(double lo, double hi) { return {lo, hi, true, false}; }
constexpr Bounds probability{0.0, 1.0, false, true};

// The validator CLI11 runs on the flag's text; named kBoundsName so that
// tests can find every bounded flag.
inline constexpr const char* kBoundsName = "attn-bounds";
CLI::Validator bounded(Bounds bounds);

// True when `text` is allowed (what the validator accepts), for tests.
bool allows(const Bounds& bounds, const std::string& text);

}  // namespace attn::cli
