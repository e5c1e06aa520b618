// The pooled test of a slope claim: how fast BLEU falls with the join factor
// k, resampled over groups of consecutive test sentences. Line i of a ×k probe
// holds test sentences k·i … k·i + k − 1, so with groups of lcm(k…) sentences
// every probe line lies inside one group, and a resample of groups is the same
// sentences at every k. A group's row is the BLEU statistics of its lines,
// summed over the seeds pooled.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "attn/eval/significance.h"

namespace attn::report {

// The rows of one ×k output ([lines * fields]) summed per group of group_size
// test sentences: [groups * fields]. Throws Error when group_size is not a
// multiple of k or a line falls past the last group.
eval::SegmentStats group_rows(const eval::SegmentStats& lines, int k, std::size_t group_size, std::size_t groups);

// One run group's pooled statistics: per k, one row per sentence group.
struct GroupedCorpus {
  std::vector<double> ks;
  std::vector<eval::SegmentStats> per_k;  // [ks], each [groups * fields]
};

// The least-squares slope of BLEU against k, each group weighted by counts[g]
// (a resample: how often group g was drawn); empty counts: every group once.
double grouped_slope(const GroupedCorpus& corpus, std::span<const std::uint32_t> counts,
                     const eval::ScoreFromStats& score);

struct SlopeBootstrap {
  double a_slope = 0.0, b_slope = 0.0;  // on the pooled corpora, every group once
  double difference = 0.0;              // a_slope − b_slope
  double p = 1.0;                       // sacreBLEU's centred two-sided p (eval::centred_bootstrap_p)
  std::vector<double> resampled;        // the resampled differences
};

// Paired bootstrap of slope(a) − slope(b): each resample draws `groups` groups
// with replacement with CPython's random.Random(seed).randrange (python_random.h),
// the same draw for both and every k.
SlopeBootstrap slope_bootstrap(const GroupedCorpus& a, const GroupedCorpus& b, const eval::ScoreFromStats& score,
                               std::size_t samples, std::uint64_t seed);

}  // namespace attn::report
