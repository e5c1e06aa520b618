#include "attn/report/verdicts.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "attn/core/error.h"
#include "attn/eval/corpus_metric.h"
#include "attn/eval/holm.h"
#include "attn/eval/numpy_random.h"
#include "attn/report/slope_bootstrap.h"
#include "attn/report/statistic_claims.h"

namespace attn::report {

namespace {

const ArchSummary* find_group(const Comparison& c, const std::string& name) {
  for (const ArchSummary& a : c.archs)
    if (a.arch == name) return &a;
  return nullptr;
}

std::string group_names(const Comparison& c) {
  std::string names;
  for (const ArchSummary& a : c.archs) names += (names.empty() ? "" : ", ") + a.arch;
  return names.empty() ? "none" : names;
}

const SeedScore* seed_score(const OutputSummary& o, int seed) {
  for (const SeedScore& s : o.seeds)
    if (s.seed == seed && s.bleu) return &s;
  return nullptr;
}

std::vector<int> seeds_with_bleu(const OutputSummary& o) {
  std::vector<int> seeds;
  for (const SeedScore& s : o.seeds)
    if (s.bleu) seeds.push_back(s.seed);
  return seeds;
}

std::vector<int> common(const std::vector<int>& x, const std::vector<int>& y) {
  std::vector<int> out;
  std::set_intersection(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(out));
  return out;
}

}  // namespace

void add_seed_tests(ClaimVerdict& v) {
  const std::optional<eval::PairedT> t = eval::paired_t(v.differences);
  if (!t) {
    v.notes.push_back("no seed-level test (fewer than 2 common seeds)");
    return;
  }
  SeedTest s;
  s.t = *t;
  if (v.claim.equivalence()) s.equivalence = eval::paired_t_equivalence(v.differences, *v.claim.margin);
  v.seed = s;
}

namespace {

void judge_output(ClaimVerdict& v, const ArchSummary& a, const ArchSummary& b, const ComparisonOptions& options) {
  const Claim& c = v.claim;
  const Output output{c.set, c.model};
  const auto oa = a.outputs.find(output), ob = b.outputs.find(output);
  if (oa == a.outputs.end() || ob == b.outputs.end()) {
    v.absent = "no " + c.set + " " + c.model + " output of " +
               (oa == a.outputs.end() && ob == b.outputs.end() ? c.a + " or " + c.b
                : oa == a.outputs.end()                        ? c.a
                                                               : c.b);
    return;
  }
  v.seeds = common(seeds_with_bleu(oa->second), seeds_with_bleu(ob->second));
  if (v.seeds.empty()) {
    v.absent = c.a + " and " + c.b + " have no seed in common on " + c.set + " " + c.model;
    return;
  }
  std::vector<int> paired;
  std::vector<const eval::SegmentStats*> a_stats, b_stats;
  for (int seed : v.seeds) {
    const SeedScore *sa = seed_score(oa->second, seed), *sb = seed_score(ob->second, seed);
    v.a_values.push_back(*sa->bleu);
    v.b_values.push_back(*sb->bleu);
    v.differences.push_back(*sa->bleu - *sb->bleu);
    if (sa->bleu_stats && sb->bleu_stats) {
      paired.push_back(seed);
      a_stats.push_back(sa->bleu_stats.get());
      b_stats.push_back(sb->bleu_stats.get());
    }
  }
  v.mean_difference = std::accumulate(v.differences.begin(), v.differences.end(), 0.0) /
                      static_cast<double>(v.differences.size());
  add_seed_tests(v);
  if (paired.empty()) {
    v.notes.push_back("no pooled test: no translations scored against --refs and no segments/");
    return;
  }
  if (paired.size() < v.seeds.size()) v.notes.push_back("pooled test on the seeds with translations only");
  const eval::ScoreFromStats bleu = eval::bleu_metric({}).score;
  const SeedPairing pairing =
      pair_seeds(paired, b_stats, a_stats, bleu, options.bootstrap_samples, options.bootstrap_seed);
  if (paired.size() == v.seeds.size()) v.p_per_seed = pairing.p_per_seed;
  PooledTest p;
  p.what = "paired bootstrap of " + std::to_string(paired.size()) + " seed" + (paired.size() == 1 ? "" : "s") +
           "' translations pooled";
  p.a_value = pairing.pooled_score;
  p.b_value = pairing.pooled_baseline_score;
  p.difference = p.a_value - p.b_value;
  p.p = pairing.p_pooled;
  // On the paired bootstrap's own resamples (NumPy's draws), differences A* − B*.
  if (c.equivalence()) p.equivalence = eval::bootstrap_equivalence(pairing.pooled_differences, *c.margin);
  v.pooled = p;
}

void judge_slope(ClaimVerdict& v, const ArchSummary& a, const ArchSummary& b, const Comparison& comparison) {
  const Claim& c = v.claim;
  // SET itself (k = 1) and its probes, in the comparison's order (by k), that both groups have.
  std::vector<std::string> sets;
  for (const std::string& s : comparison.sets)
    if (base_set(s) == c.set && a.outputs.count({s, c.model}) && b.outputs.count({s, c.model})) sets.push_back(s);
  if (sets.size() < 2 || joined_sentences(sets.front()) != 1) {
    v.absent = "needs " + c.a + " and " + c.b + " outputs of " + c.set + " and at least one " + c.set +
               ".join<K> probe (" + c.model + ")";
    return;
  }
  std::vector<int> seeds;
  bool first = true;
  for (const ArchSummary* x : {&a, &b})
    for (const std::string& s : sets) {
      const std::vector<int> have = seeds_with_bleu(x->outputs.at({s, c.model}));
      seeds = first ? have : common(seeds, have);
      first = false;
    }
  if (seeds.empty()) {
    v.absent = "no seed has every set of the slope in both " + c.a + " and " + c.b;
    return;
  }
  v.seeds = seeds;
  std::vector<double> ks;
  for (const std::string& s : sets) {
    v.ks.push_back(joined_sentences(s));
    ks.push_back(joined_sentences(s));
  }
  const auto slope_of = [&](const ArchSummary& x, int seed) {
    std::vector<double> bleu;
    for (const std::string& s : sets) bleu.push_back(*seed_score(x.outputs.at({s, c.model}), seed)->bleu);
    return eval::least_squares_slope(ks, bleu);
  };
  for (int seed : seeds) {
    v.a_values.push_back(slope_of(a, seed));
    v.b_values.push_back(slope_of(b, seed));
    v.differences.push_back(v.a_values.back() - v.b_values.back());
  }
  v.mean_difference = std::accumulate(v.differences.begin(), v.differences.end(), 0.0) /
                      static_cast<double>(v.differences.size());
  add_seed_tests(v);

  // Pooled: every seed's lines summed per group of lcm(k) consecutive test sentences.
  std::size_t group_size = 1;
  for (int k : v.ks) group_size = std::lcm(group_size, static_cast<std::size_t>(k));
  std::size_t groups = 0;
  for (const ArchSummary* x : {&a, &b})
    for (std::size_t i = 0; i < sets.size(); ++i)
      for (int seed : seeds) {
        const SeedScore* s = seed_score(x->outputs.at({sets[i], c.model}), seed);
        if (!s->bleu_stats) {
          v.notes.push_back("no pooled test: " + x->arch + " seed " + std::to_string(seed) + " " + sets[i] +
                            " has no per-segment statistics (hyp/ with --refs, or segments/)");
          return;
        }
        if (const std::size_t lines = s->bleu_stats->segments(); lines > 0)
          groups = std::max(groups, static_cast<std::size_t>(v.ks[i]) * (lines - 1) / group_size + 1);
      }
  const auto grouped = [&](const ArchSummary& x) {
    GroupedCorpus corpus;
    corpus.ks = ks;
    for (std::size_t i = 0; i < sets.size(); ++i) {
      eval::SegmentStats summed;
      for (int seed : seeds) {
        const eval::SegmentStats rows =
            group_rows(*seed_score(x.outputs.at({sets[i], c.model}), seed)->bleu_stats, v.ks[i], group_size, groups);
        if (summed.fields == 0)
          summed = rows;
        else
          for (std::size_t f = 0; f < rows.values.size(); ++f) summed.values[f] += rows.values[f];
      }
      corpus.per_k.push_back(std::move(summed));
    }
    return corpus;
  };
  const ComparisonOptions& options = comparison.options;
  const SlopeBootstrap boot = slope_bootstrap(grouped(a), grouped(b), eval::bleu_metric({}).score,
                                              options.bootstrap_samples, options.bootstrap_seed);
  PooledTest p;
  p.what = "bootstrap over " + std::to_string(groups) + " groups of " + std::to_string(group_size) +
           " consecutive test sentences of the slope on the " + std::to_string(seeds.size()) + " seeds' pooled BLEU";
  p.a_value = boot.a_slope;
  p.b_value = boot.b_slope;
  p.difference = boot.difference;
  p.p = boot.p;
  if (c.equivalence()) p.equivalence = eval::bootstrap_equivalence(boot.resampled, *c.margin);
  v.pooled = p;
}

// Holm over every p of one kind the file has: the difference tests' and the equivalence tests'.
template <typename Test>
std::size_t correct(std::vector<ClaimVerdict>& claims, std::optional<Test> ClaimVerdict::*test) {
  std::vector<std::optional<double>> ps;
  for (const ClaimVerdict& v : claims) {
    const std::optional<Test>& t = v.*test;
    if constexpr (std::is_same_v<Test, SeedTest>)
      ps.push_back(t ? std::optional<double>(t->t.p) : std::nullopt);
    else
      ps.push_back(t ? std::optional<double>(t->p) : std::nullopt);
    ps.push_back(t && t->equivalence ? std::optional<double>(t->equivalence->p()) : std::nullopt);
  }
  const std::vector<std::optional<double>> adjusted = eval::holm(ps);
  for (std::size_t i = 0; i < claims.size(); ++i) {
    std::optional<Test>& t = claims[i].*test;
    if (!t) continue;
    t->p_holm = adjusted[2 * i];
    t->equivalence_p_holm = adjusted[2 * i + 1];
  }
  return static_cast<std::size_t>(std::count_if(ps.begin(), ps.end(), [](const auto& p) { return p.has_value(); }));
}

TestOutcome outcome(const std::optional<PooledTest>& p) {
  if (!p) return {};
  return {true, p->difference, p->p_holm.value_or(1.0), p->equivalence_p_holm};
}

TestOutcome outcome(const std::optional<SeedTest>& s) {
  if (!s) return {};
  return {true, s->t.mean, s->p_holm.value_or(1.0), s->equivalence_p_holm};
}

}  // namespace

Verdicts judge_claims(const ClaimsFile& file, const Comparison& comparison) {
  Verdicts out;
  out.path = file.path;
  out.alpha = file.alpha;
  out.samples = comparison.options.bootstrap_samples;
  out.bootstrap_seed = comparison.options.bootstrap_seed;
  for (const Claim& claim : file.claims) {
    ClaimVerdict v;
    v.claim = claim;
    // A statistic claim against a constant has no group B.
    const ArchSummary *a = find_group(comparison, claim.a),
                      *b = claim.constant ? nullptr : find_group(comparison, claim.b);
    if (!a || (!b && !claim.constant)) {
      const std::string missing = !a && !b ? claim.a + " or " + claim.b : !a ? claim.a : claim.b;
      v.absent = "no seed runs named " + missing + " (the runs' groups: " + group_names(comparison) + ")";
    } else if (claim.statistic()) {
      judge_statistic(v, *a, b, comparison.options);
    } else if (claim.slope) {
      judge_slope(v, *a, *b, comparison);
    } else {
      judge_output(v, *a, *b, comparison.options);
    }
    out.claims.push_back(std::move(v));
  }
  out.pooled_family = correct(out.claims, &ClaimVerdict::pooled);
  out.seed_family = correct(out.claims, &ClaimVerdict::seed);
  for (ClaimVerdict& v : out.claims)
    v.decision = v.absent.empty() ? decide(v.claim, outcome(v.pooled), outcome(v.seed), out.alpha)
                                  : Decision{"not measured", v.absent};
  return out;
}

}  // namespace attn::report
