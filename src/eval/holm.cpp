#include "attn/eval/holm.h"

#include <algorithm>

namespace attn::eval {

std::vector<std::optional<double>> holm(std::span<const std::optional<double>> p) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < p.size(); ++i)
    if (p[i]) order.push_back(i);
  // Stable: equal p's keep their order, so the result does not depend on the sort.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return *p[a] < *p[b]; });
  std::vector<std::optional<double>> adjusted(p.size());
  const std::size_t m = order.size();
  double running = 0.0;
  for (std::size_t rank = 0; rank < m; ++rank) {
    running = std::max(running, std::min(1.0, static_cast<double>(m - rank) * *p[order[rank]]));
    adjusted[order[rank]] = running;
  }
  return adjusted;
}

}  // namespace attn::eval
