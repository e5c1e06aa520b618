// Holm's step-down correction for a family of tests: the i-th smallest of m
// p-values is multiplied by m − i + 1, capped at 1, and made monotone (an
// adjusted p is never below that of a smaller raw p). Rejecting where the
// adjusted p < α keeps the chance of any false rejection in the family <= α.
#pragma once
#include <optional>
#include <span>
#include <vector>

namespace attn::eval {

// Adjusted p-values in the order given; nullopt (a claim without that test)
// stays nullopt and is not counted in m.
std::vector<std::optional<double>> holm(std::span<const std::optional<double>> p);

}  // namespace attn::eval
