#include "attn/report/statistic_claims.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "attn/core/error.h"
#include "attn/core/format.h"
#include "attn/eval/paired_t.h"
#include "attn/report/attention_file.h"
#include "attn/report/slope_bootstrap.h"

namespace attn::report {

namespace fs = std::filesystem;

namespace {

// One side of a claim: whose files, which layer; or a constant.
struct Side {
  const ArchSummary* group = nullptr;  // nullptr: the constant
  std::string layer;
  double constant = 0.0;
  std::string name;  // as the verdict names it
};

std::vector<int> seeds_with(const ArchSummary& g, const Output& output) {
  std::vector<int> seeds;
  if (const auto it = g.attention.find(output); it != g.attention.end())
    for (const auto& [seed, file] : it->second) seeds.push_back(seed);
  return seeds;
}

std::vector<int> common(const std::vector<int>& x, const std::vector<int>& y) {
  std::vector<int> out;
  std::set_intersection(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(out));
  return out;
}

std::string files_of(const Claim& c, const std::string& set) { return "stats/" + set + "." + c.model + ".json"; }

// A side's files: [set][seed], read once.
struct SideFiles {
  std::vector<std::vector<AttentionFile>> files;
  std::vector<std::vector<std::vector<std::size_t>>> layers;  // [set][seed]: the layers its statistic pools
};

}  // namespace

void judge_statistic(ClaimVerdict& v, const ArchSummary& a, const ArchSummary* b, const ComparisonOptions& options) {
  const Claim& c = v.claim;
  const StatTerm& term = *c.stat;
  const std::size_t statistic = statistic_index(term.statistic);
  Side sides[2];
  sides[0] = {&a, term.layer, 0.0, c.a_side()};
  if (c.constant)
    sides[1] = {nullptr, "", *c.constant, c.b_side()};
  else
    sides[1] = {b ? b : &a, c.b_layer.empty() ? term.layer : c.b_layer, 0.0, c.b_side()};
  const auto groups_named = [&] { return sides[1].group && sides[1].group != &a ? c.a + " and " + c.b : c.a; };

  // SET itself, and for a slope every SET.join<K> probe, that every group of the claim has.
  std::vector<std::string> sets;
  for (const auto& [output, seeds] : a.attention) {
    if (output.model != c.model || (c.slope ? base_set(output.set) != c.set : output.set != c.set)) continue;
    if (sides[1].group && !sides[1].group->attention.count(output)) continue;
    sets.push_back(output.set);
  }
  std::stable_sort(sets.begin(), sets.end(), [](const std::string& x, const std::string& y) {
    return joined_sentences(x) < joined_sentences(y);
  });
  if (!c.slope && sets.empty()) {
    v.absent = "no " + files_of(c, c.set) + " of " + groups_named() + " (experiments/attn_stats_runs.sh writes them)";
    return;
  }
  if (c.slope && (sets.size() < 2 || joined_sentences(sets.front()) != 1)) {
    v.absent = "needs " + files_of(c, c.set) + " and at least one " + files_of(c, c.set + ".join<K>") + " of " +
               groups_named() + " (experiments/attn_stats_runs.sh writes them)";
    return;
  }
  std::vector<int> seeds;
  bool first = true;
  for (const Side& side : sides)
    if (side.group)
      for (const std::string& s : sets) {
        const std::vector<int> have = seeds_with(*side.group, {s, c.model});
        seeds = first ? have : common(seeds, have);
        first = false;
      }
  if (seeds.empty()) {
    v.absent = "no seed has " + (c.slope ? "the stats files of every set of the slope" : files_of(c, c.set)) + " in " +
               groups_named();
    return;
  }

  // Every file the claim reads, and its statistic per seed and set.
  SideFiles read[2];
  std::vector<std::vector<double>> value[2];  // [side][set][seed]
  try {
    for (int k = 0; k < 2; ++k) {
      const Side& side = sides[k];
      value[k].assign(sets.size(), std::vector<double>(seeds.size(), 0.0));
      for (std::size_t i = 0; i < sets.size(); ++i) {
        if (!side.group) {
          std::fill(value[k][i].begin(), value[k][i].end(), side.constant);
          continue;
        }
        read[k].files.emplace_back();
        read[k].layers.emplace_back();
        for (std::size_t s = 0; s < seeds.size(); ++s) {
          const fs::path& path = side.group->attention.at({sets[i], c.model}).at(seeds[s]);
          AttentionFile file = read_attention_file(path);
          const std::vector<std::size_t> layers = resolve_layers(side.layer, file.components.at(term.component).size());
          const std::string where = side.group->arch + " seed " + std::to_string(seeds[s]) + " " + files_of(c, sets[i]);
          if (layers.empty())
            throw Error(where + " has no " + term.component + " layer " + side.layer + " (its layers: 0 to " +
                        std::to_string(file.components.at(term.component).size() - 1) + ")");
          const std::optional<double> mean = pooled_mean(file, term.component, layers, statistic);
          if (!mean) throw Error(where + " has no " + term.component + " rows with two keys or more");
          value[k][i][s] = *mean;
          read[k].files.back().push_back(std::move(file));
          read[k].layers.back().push_back(layers);
        }
      }
    }
  } catch (const Error& e) {
    v.absent = e.what();
    return;
  }
  if (!c.b_layer.empty() && read[0].layers == read[1].layers) {
    v.absent = "layer " + term.layer + " and layer " + c.b_layer + " are the same layer of " + c.a;
    return;
  }
  v.seeds = seeds;
  std::vector<double> ks;
  for (const std::string& s : sets) {
    ks.push_back(joined_sentences(s));
    if (c.slope) v.ks.push_back(joined_sentences(s));
  }
  for (std::size_t s = 0; s < seeds.size(); ++s) {
    double per_side[2];
    for (int k = 0; k < 2; ++k) {
      if (!c.slope) {
        per_side[k] = value[k][0][s];
      } else if (!sides[k].group) {
        per_side[k] = sides[k].constant;  // a constant slope
      } else {
        std::vector<double> y;
        for (std::size_t i = 0; i < sets.size(); ++i) y.push_back(value[k][i][s]);
        per_side[k] = eval::least_squares_slope(ks, y);
      }
    }
    v.a_values.push_back(per_side[0]);
    v.b_values.push_back(per_side[1]);
    v.differences.push_back(per_side[0] - per_side[1]);
  }
  v.mean_difference = std::accumulate(v.differences.begin(), v.differences.end(), 0.0) /
                      static_cast<double>(v.differences.size());
  add_seed_tests(v);

  // Pooled: the seeds' rows and sums added line by line, per set and side.
  std::vector<std::int64_t> lines(sets.size(), -1);
  for (int k = 0; k < 2; ++k)
    for (std::size_t i = 0; i < read[k].files.size(); ++i)
      for (std::size_t s = 0; s < seeds.size(); ++s) {
        const AttentionFile& f = read[k].files[i][s];
        const std::string where = sides[k].group->arch + " seed " + std::to_string(seeds[s]) + " " +
                                  files_of(c, sets[i]);
        if (!f.per_sentence) {
          v.notes.push_back("no pooled test: " + where +
                            " has no per-sentence sums (attn attn-stats --per-sentence writes them)");
          return;
        }
        if (lines[i] >= 0 && lines[i] != f.sentences) {
          v.notes.push_back("no pooled test: " + where + " has " + std::to_string(f.sentences) + " lines, another of " +
                            sets[i] + "'s files " + std::to_string(lines[i]));
          return;
        }
        lines[i] = f.sentences;
      }
  const auto pooled_rows = [&](int k, std::size_t i) {
    eval::SegmentStats rows;
    rows.fields = 2;
    if (!sides[k].group) {
      // A constant as a side whose every line has statistic c (for a slope: c·k, whose slope is c).
      const double at = c.slope ? sides[k].constant * ks[i] : sides[k].constant;
      for (std::int64_t n = 0; n < lines[i]; ++n) rows.append(std::vector<double>{1.0, at});
      return rows;
    }
    for (std::size_t s = 0; s < seeds.size(); ++s) {
      const eval::SegmentStats one = line_sums(read[k].files[i][s], term.component, read[k].layers[i][s], statistic);
      if (rows.values.empty())
        rows = one;
      else
        for (std::size_t f = 0; f < rows.values.size(); ++f) rows.values[f] += one.values[f];
    }
    return rows;
  };
  // "the 2 seeds' rows", "the 1 seed's rows"
  const std::string pooled_seeds = std::to_string(seeds.size()) + (seeds.size() == 1 ? " seed's" : " seeds'");
  PooledTest p;
  if (!c.slope) {
    const eval::SegmentStats rows_a = pooled_rows(0, 0), rows_b = pooled_rows(1, 0);
    if (rows_a.segments() == 0) {
      v.notes.push_back("no pooled test: " + c.set + " has no lines");
      return;
    }
    const eval::PairedResult r =
        eval::paired_bootstrap(rows_b, rows_a, ratio_of_sums, options.bootstrap_samples, options.bootstrap_seed);
    p.what = "paired bootstrap over " + std::to_string(rows_a.segments()) + " test sentences of the " + pooled_seeds +
             " rows pooled";
    p.a_value = r.score;
    p.b_value = ratio_of_sums(rows_b.sum());
    p.p = r.p_value;
    if (c.equivalence()) p.equivalence = eval::bootstrap_equivalence(r.differences, *c.margin);
  } else {
    std::size_t group_size = 1;
    for (int k : v.ks) group_size = std::lcm(group_size, static_cast<std::size_t>(k));
    std::size_t groups = 0;
    for (std::size_t i = 0; i < sets.size(); ++i)
      if (lines[i] > 0)
        groups = std::max(groups,
                          static_cast<std::size_t>(v.ks[i]) * static_cast<std::size_t>(lines[i] - 1) / group_size + 1);
    if (groups == 0) {
      v.notes.push_back("no pooled test: the sets have no lines");
      return;
    }
    GroupedCorpus grouped[2];
    for (int k = 0; k < 2; ++k) {
      grouped[k].ks = ks;
      for (std::size_t i = 0; i < sets.size(); ++i)
        grouped[k].per_k.push_back(group_rows(pooled_rows(k, i), v.ks[i], group_size, groups));
    }
    const SlopeBootstrap boot =
        slope_bootstrap(grouped[0], grouped[1], ratio_of_sums, options.bootstrap_samples, options.bootstrap_seed);
    p.what = "bootstrap over " + std::to_string(groups) + " groups of " + std::to_string(group_size) +
             " consecutive test sentences of the slope on the " + pooled_seeds + " rows pooled";
    p.a_value = boot.a_slope;
    p.b_value = boot.b_slope;
    p.p = boot.p;
    if (c.equivalence()) p.equivalence = eval::bootstrap_equivalence(boot.resampled, *c.margin);
  }
  p.difference = p.a_value - p.b_value;
  v.pooled = p;
}

}  // namespace attn::report
