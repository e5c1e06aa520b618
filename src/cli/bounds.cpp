#include "attn/cli/bounds.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace attn::cli {

namespace {

// "[1, 64]", "(0, 10]", "[0, 1)": shown in --help and in the error.
std::string describe(const Bounds& b) {
  char text[96];
  std::snprintf(text, sizeof text, "%c%.15g, %.15g%c", b.lo_open ? '(' : '[', b.lo, b.hi, b.hi_open ? ')' : ']');
  return text;
}

bool parse_number(const std::string& text, double& value) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return false;
  char* end = nullptr;
  errno = 0;
  value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && errno != ERANGE;
}

}  // namespace

bool allows(const Bounds& b, const std::string& text) {
  double v = 0.0;
  if (!parse_number(text, v) || !std::isfinite(v)) return false;
  const bool above_lo = b.lo_open ? v > b.lo : v >= b.lo;
  const bool below_hi = b.hi_open ? v < b.hi : v <= b.hi;
  return above_lo && below_hi;
}

CLI::Validator bounded(Bounds b) {
  const std::string range = describe(b);
  CLI::Validator validator(
      [b, range](std::string& text) -> std::string {
        if (allows(b, text)) return "";
        return "must be a number in " + range + " (got '" + text + "')";
      },
      range, kBoundsName);
  return validator;
}

}  // namespace attn::cli
