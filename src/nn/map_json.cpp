#include "attn/nn/map_json.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace attn::nn {

using nlohmann::json;

namespace {

double pow10(int precision) { return std::pow(10.0, precision); }

}  // namespace

void round_preserving_sum(const float* values, std::int64_t n, int precision, std::int64_t* units) {
  const double scale = pow10(precision);
  // (remainder, index) of each value that was rounded down; the spare units go
  // to the largest remainders, ties to the earlier index.
  static thread_local std::vector<std::pair<double, std::int64_t>> remainders;
  remainders.clear();
  double total = 0.0;
  std::int64_t sum = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double x = std::max(0.0, static_cast<double>(values[i])) * scale;  // weights are never negative
    total += x;
    const auto down = static_cast<std::int64_t>(std::floor(x));
    units[i] = down;
    sum += down;
    if (x > static_cast<double>(down)) remainders.emplace_back(x - static_cast<double>(down), i);
  }
  const std::int64_t spare =
      std::min<std::int64_t>(std::llround(total) - sum, static_cast<std::int64_t>(remainders.size()));
  if (spare <= 0) return;
  std::partial_sort(remainders.begin(), remainders.begin() + spare, remainders.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (std::int64_t k = 0; k < spare; ++k) ++units[remainders[static_cast<std::size_t>(k)].second];
}

json rounded_row(const std::vector<float>& row, int precision) {
  std::vector<std::int64_t> units(row.size());
  round_preserving_sum(row.data(), static_cast<std::int64_t>(row.size()), precision, units.data());
  const double scale = pow10(precision);
  json out = json::array();
  for (std::int64_t u : units) out.push_back(static_cast<double>(u) / scale);
  return out;
}

json rounded_row(const json& row, int precision) { return rounded_row(row.get<std::vector<float>>(), precision); }

json rounded_row_with_nulls(const json& row, int precision) {
  std::vector<float> values;
  for (const json& v : row)
    if (!v.is_null()) values.push_back(v.get<float>());
  const json rounded = rounded_row(values, precision);
  json out = json::array();
  std::size_t k = 0;
  for (const json& v : row) out.push_back(v.is_null() ? json(nullptr) : rounded[k++]);
  return out;
}

json rounded_numbers(const json& v, int precision) {
  if (v.is_number_float()) return std::round(v.get<double>() * pow10(precision)) / pow10(precision);
  if (v.is_array() || v.is_object()) {
    json out = v;
    for (auto it = out.begin(); it != out.end(); ++it) *it = rounded_numbers(*it, precision);
    return out;
  }
  return v;
}

json select_heads(const json& per_head, const std::vector<std::int64_t>& heads) {
  json out = json::array();
  for (std::int64_t h : heads) out.push_back(per_head.at(static_cast<std::size_t>(h)));
  return out;
}

}  // namespace attn::nn
