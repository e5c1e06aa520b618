// Numbers of attention maps as JSON: rounding that keeps every row's sum, so a
// row of attention weights still sums to exactly 1 after rounding. Shared by
// `attn attend`'s document and the mechanisms' extras (each mechanism shapes
// its own extras; docs/attention-json.md).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

namespace attn::nn {

// Rounds n values to `precision` decimals without losing their sum: returns
// integer units of 10^-precision, each the floor or the ceiling of the value,
// summing to round(Σ values) units (largest remainders get the spare units).
// Zeros stay exactly 0 and no unit is ever negative.
void round_preserving_sum(const float* values, std::int64_t n, int precision, std::int64_t* units);

// A row rounded with its sum kept, as JSON numbers.
nlohmann::json rounded_row(const std::vector<float>& row, int precision);
nlohmann::json rounded_row(const nlohmann::json& row, int precision);
// A row that may hold nulls (ConvSAN's dropped boundary heads): the numbers
// are rounded together, the nulls kept in place.
nlohmann::json rounded_row_with_nulls(const nlohmann::json& row, int precision);
// Every floating-point number in v rounded to `precision` decimals.
nlohmann::json rounded_numbers(const nlohmann::json& v, int precision);
// The selected heads of an array indexed by head first.
nlohmann::json select_heads(const nlohmann::json& per_head, const std::vector<std::int64_t>& heads);

}  // namespace attn::nn
