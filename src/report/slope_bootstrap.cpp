#include "attn/report/slope_bootstrap.h"

#include <string>

#include "attn/core/error.h"
#include "attn/eval/paired_t.h"
#include "attn/eval/python_random.h"

namespace attn::report {

eval::SegmentStats group_rows(const eval::SegmentStats& lines, int k, std::size_t group_size, std::size_t groups) {
  require(k >= 1 && group_size % static_cast<std::size_t>(k) == 0, "slope groups of " + std::to_string(group_size) +
                                                                       " sentences do not hold whole lines of ×" +
                                                                       std::to_string(k));
  eval::SegmentStats out;
  out.fields = lines.fields;
  out.values.assign(groups * lines.fields, 0.0);
  for (std::size_t i = 0; i < lines.segments(); ++i) {
    const std::size_t g = static_cast<std::size_t>(k) * i / group_size;
    require(g < groups, "a line of ×" + std::to_string(k) + " falls past the last sentence group");
    const std::span<const double> row = lines.row(i);
    for (std::size_t f = 0; f < lines.fields; ++f) out.values[g * lines.fields + f] += row[f];
  }
  return out;
}

double grouped_slope(const GroupedCorpus& corpus, std::span<const std::uint32_t> counts,
                     const eval::ScoreFromStats& score) {
  std::vector<double> bleu;
  for (const eval::SegmentStats& rows : corpus.per_k) {
    std::vector<double> summed(rows.fields, 0.0);
    for (std::size_t g = 0; g < rows.segments(); ++g) {
      const double times = counts.empty() ? 1.0 : static_cast<double>(counts[g]);
      if (times == 0.0) continue;
      const std::span<const double> row = rows.row(g);
      for (std::size_t f = 0; f < rows.fields; ++f) summed[f] += times * row[f];
    }
    bleu.push_back(score(summed));
  }
  return eval::least_squares_slope(corpus.ks, bleu);
}

SlopeBootstrap slope_bootstrap(const GroupedCorpus& a, const GroupedCorpus& b, const eval::ScoreFromStats& score,
                               std::size_t samples, std::uint64_t seed) {
  require(!a.per_k.empty() && a.ks == b.ks && a.per_k.size() == b.per_k.size(),
          "a slope bootstrap needs the same k for both run groups");
  const std::size_t groups = a.per_k.front().segments();
  for (const GroupedCorpus* c : {&a, &b})
    for (const eval::SegmentStats& rows : c->per_k)
      require(rows.segments() == groups, "a slope bootstrap needs the same sentence groups at every k");
  require(samples > 0 && groups > 0 && groups < (std::size_t{1} << 31), "a slope bootstrap needs resamples and groups");
  SlopeBootstrap r;
  r.a_slope = grouped_slope(a, {}, score);
  r.b_slope = grouped_slope(b, {}, score);
  r.difference = r.a_slope - r.b_slope;
  eval::PythonRandom rng(seed);
  std::vector<std::uint32_t> counts(groups);
  r.resampled.reserve(samples);
  for (std::size_t s = 0; s < samples; ++s) {
    std::fill(counts.begin(), counts.end(), 0u);
    for (std::size_t g = 0; g < groups; ++g) ++counts[rng.randrange(static_cast<std::uint32_t>(groups))];
    r.resampled.push_back(grouped_slope(a, counts, score) - grouped_slope(b, counts, score));
  }
  r.p = eval::centred_bootstrap_p(r.resampled, r.difference);
  return r;
}

}  // namespace attn::report
