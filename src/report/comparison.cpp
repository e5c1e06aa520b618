#include "attn/report/comparison.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "attn/core/error.h"
#include "attn/eval/corpus_metric.h"
#include "attn/eval/segment_file.h"
#include "attn/eval/segments.h"

namespace attn::report {

namespace fs = std::filesystem;

namespace {

// One translation scored against its reference: BLEU's rows (for the paired
// tests and the length buckets) and both corpus scores.
struct Scored {
  std::shared_ptr<const eval::SegmentStats> bleu;
  double bleu_score = 0.0, chrf_score = 0.0;
  std::string source;                         // "hyp" or "segments"
  std::vector<std::int64_t> reference_words;  // from a segment file (empty from a translation)
};

using ScoredKey = std::pair<const SeedRun*, Output>;

std::string seed_list(const std::vector<int>& seeds) {
  std::string text;
  for (int s : seeds) text += (text.empty() ? "" : ", ") + std::to_string(s);
  return text;
}

std::vector<int> minus(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// The sets in reading order: each test set, then its probes by K.
std::vector<std::string> ordered_sets(const std::set<std::string>& sets) {
  std::vector<std::string> out(sets.begin(), sets.end());
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    return std::make_tuple(base_set(a), joined_sentences(a), a) < std::make_tuple(base_set(b), joined_sentences(b), b);
  });
  return out;
}

std::vector<std::string> ordered_models(const std::set<std::string>& models) {
  std::vector<std::string> out;
  for (const char* known : {"best", "avg5"})
    if (models.count(known)) out.push_back(known);
  for (const std::string& m : models)
    if (m != "best" && m != "avg5") out.push_back(m);
  return out;
}

std::map<std::string, std::vector<std::string>> read_references(const Comparison& c, std::vector<std::string>& notes) {
  std::map<std::string, std::vector<std::string>> refs;
  const fs::path& dir = *c.options.refs;
  std::error_code ec;
  require(fs::is_directory(dir, ec), dir.string() + ": no such directory (--refs DIR: the references <set>." +
                                         c.options.tgt_lang + " of the sets in the runs' hyp/)");
  for (const std::string& set : c.sets) {
    const fs::path file = dir / (set + "." + c.options.tgt_lang);
    if (fs::exists(file, ec))
      refs[set] = eval::read_segments(file.string());
    else
      notes.push_back("no reference " + file.string() + ": " + set +
                      " is read from the score files, without p-values (--tgt-lang names the suffix)");
  }
  return refs;
}

// A sacreBLEU signature without its version field: statistics do not change with attn's version.
std::string without_version(std::string_view signature) {
  const std::size_t at = signature.find("|version:");
  if (at == std::string_view::npos) return std::string(signature);
  const std::size_t end = signature.find('|', at + 1);
  return std::string(signature.substr(0, at)) +
         (end == std::string_view::npos ? "" : std::string(signature.substr(end)));
}

// The statistics of a segment file, checked to be what attn report computes (BLEU and chrF2
// with sacreBLEU's defaults) and, when the set's reference is given, against its lines' word counts.
Scored read_segment_file(const fs::path& file, const std::string& set, const std::vector<std::int64_t>* reference_words,
                         const eval::CorpusMetric& bleu, const eval::CorpusMetric& chrf, const Comparison& c) {
  const eval::SegmentFile read = eval::parse_segment_file(read_text(file), file.string());
  Scored s;
  for (const eval::CorpusMetric* metric : {&bleu, &chrf}) {
    const eval::SegmentFile::Metric* m = read.find(metric->name);
    const std::string expected = metric->signature(1);
    require(m != nullptr && without_version(m->signature) == without_version(expected),
            file.string() + ": " +
                (m ? "its " + metric->name + " was computed as " + m->signature
                   : "no " + metric->name + " statistics") +
                "; attn report compares " + expected + " (attn score --segments with the default options)");
    require(m->stats.fields == metric->segment_row("", std::vector<std::string>{""}).size(),
            file.string() + ": " + metric->name + " rows of " + std::to_string(m->stats.fields) + " numbers");
    const double score = metric->score(m->stats.sum());
    if (metric == &bleu) {
      s.bleu = std::make_shared<const eval::SegmentStats>(m->stats);
      s.bleu_score = score;
    } else {
      s.chrf_score = score;
    }
  }
  if (reference_words) {
    const fs::path ref_file = *c.options.refs / (set + "." + c.options.tgt_lang);
    require(reference_words->size() == read.segments(), file.string() + " has " + std::to_string(read.segments()) +
                                                            " segments but the reference " + ref_file.string() +
                                                            " has " + std::to_string(reference_words->size()) +
                                                            "; it was scored against another one");
    for (std::size_t i = 0; i < reference_words->size(); ++i)
      require((*reference_words)[i] == read.reference_words[i],
              file.string() + ": segment " + std::to_string(i + 1) + " was scored against a reference of " +
                  std::to_string(read.reference_words[i]) + " words, not the " + ref_file.string() +
                  " line; it was scored against another reference");
  }
  s.reference_words = read.reference_words;
  return s;
}

// Scores every translation that has a reference, else reads its segment file; a line count that
// differs is an Error.
std::map<ScoredKey, Scored> score_translations(const std::vector<SeedRun>& runs,
                                               const std::map<std::string, std::vector<std::string>>& refs,
                                               const Comparison& c) {
  const eval::CorpusMetric bleu = eval::bleu_metric({}), chrf = eval::chrf_metric({});
  std::map<ScoredKey, Scored> scored;
  std::map<std::string, std::vector<std::int64_t>> reference_words;  // per set with a reference, counted once
  for (const SeedRun& run : runs) {
    for (const auto& [output, file] : run.hyps) {
      const auto ref = refs.find(output.set);
      if (ref == refs.end()) continue;
      const std::vector<std::string> lines = eval::read_segments(file.string());
      require(lines.size() == ref->second.size(),
              file.string() + " has " + std::to_string(lines.size()) + " lines but its reference " +
                  (*c.options.refs / (output.set + "." + c.options.tgt_lang)).string() + " has " +
                  std::to_string(ref->second.size()) + "; translate the set again");
      const std::vector<std::vector<std::string>> references{ref->second};
      Scored s;
      s.bleu = std::make_shared<const eval::SegmentStats>(bleu.corpus_stats(lines, references));
      s.bleu_score = bleu.score(s.bleu->sum());
      s.chrf_score = chrf.score(chrf.corpus_stats(lines, references).sum());
      s.source = "hyp";
      scored.emplace(ScoredKey{&run, output}, std::move(s));
    }
    for (const auto& [output, file] : run.segments) {
      if (scored.count({&run, output})) continue;
      const std::vector<std::int64_t>* words = nullptr;
      if (const auto ref = refs.find(output.set); ref != refs.end()) {
        auto [counted, fresh] = reference_words.try_emplace(output.set);
        if (fresh) counted->second = eval::word_counts(ref->second);
        words = &counted->second;
      }
      Scored s = read_segment_file(file, output.set, words, bleu, chrf, c);
      s.source = "segments";
      scored.emplace(ScoredKey{&run, output}, std::move(s));
    }
  }
  return scored;
}

// The main set's length buckets: from its reference, else from the reference word counts its
// segment files were written with (all the same, or they were scored against different references).
std::vector<eval::LengthBucket> main_set_buckets(const std::map<std::string, std::vector<std::string>>& refs,
                                                 const std::map<ScoredKey, Scored>& scored, const Comparison& c) {
  if (const auto main_refs = refs.find(c.main_set); main_refs != refs.end())
    return eval::bucket_by_reference_length(main_refs->second);
  const std::vector<std::int64_t>* words = nullptr;
  const SeedRun* first = nullptr;
  for (const auto& [key, s] : scored) {
    if (key.second.set != c.main_set || s.reference_words.empty()) continue;
    if (!words) {
      words = &s.reference_words;
      first = key.first;
    } else {
      require(*words == s.reference_words, (key.first->dir / "segments").string() + " and " +
                                               (first->dir / "segments").string() + " scored " + c.main_set +
                                               " against different references; give --refs and write them again");
    }
  }
  return words ? eval::bucket_by_word_count(*words) : std::vector<eval::LengthBucket>{};
}

std::vector<double> values(const std::vector<SeedScore>& seeds, std::optional<double> SeedScore::*field) {
  std::vector<double> out;
  for (const SeedScore& s : seeds)
    if (s.*field) out.push_back(*(s.*field));
  return out;
}

const SeedRun* run_of(const ArchGroup& group, int seed) {
  for (const SeedRun* r : group.runs)
    if (r->seed == seed) return r;
  return nullptr;
}

ArchSummary summarise_arch(const ArchGroup& group, const std::vector<RunSummary>& runs,
                           const std::map<ScoredKey, Scored>& scored, const Comparison& c) {
  ArchSummary a;
  a.arch = group.arch;
  a.seeds = group.seeds();
  for (const SeedRun* r : group.runs) {
    a.runs.push_back(r->run);
    if (const auto u = runs[r->run].updates) {
      a.updates_min = std::min(a.updates_min.value_or(*u), *u);
      a.updates_max = std::max(a.updates_max.value_or(*u), *u);
    }
    for (const std::string& n : r->notes) a.notes.push_back("seed " + std::to_string(r->seed) + ": " + n);
    for (const auto& [output, file] : r->stats) a.attention[output][r->seed] = file;
  }
  for (const std::string& set : c.sets)
    for (const std::string& model : c.models) {
      const Output output{set, model};
      OutputSummary o;
      for (const SeedRun* r : group.runs) {
        SeedScore s{r->seed, std::nullopt, std::nullopt, "", nullptr};
        if (const auto it = scored.find({r, output}); it != scored.end()) {
          s.bleu = it->second.bleu_score;
          s.chrf = it->second.chrf_score;
          s.source = it->second.source;
          s.bleu_stats = it->second.bleu;
        } else if (const auto file = r->score_files.find(output); file != r->score_files.end()) {
          s.bleu = file->second.bleu;
          s.chrf = file->second.chrf;
          s.source = file->second.file;
        } else {
          continue;
        }
        o.seeds.push_back(s);
      }
      if (o.seeds.empty()) continue;
      o.bleu = spread(values(o.seeds, &SeedScore::bleu));
      o.chrf = spread(values(o.seeds, &SeedScore::chrf));
      a.outputs[output] = std::move(o);
    }
  return a;
}

// Δ BLEU and the paired tests of `a` against the baseline, output by output.
void compare_with_baseline(ArchSummary& a, const ArchGroup& group, const ArchSummary& base, const ArchGroup& base_group,
                           const std::map<ScoredKey, Scored>& scored, const Comparison& c) {
  const eval::ScoreFromStats bleu = eval::bleu_metric({}).score;
  for (auto& [output, o] : a.outputs) {
    const auto b = base.outputs.find(output);
    if (b == base.outputs.end()) continue;
    double sum = 0.0;
    std::vector<int> paired_seeds;
    std::vector<const eval::SegmentStats*> base_stats, arch_stats;
    for (const SeedScore& s : o.seeds) {
      const auto bs = std::find_if(b->second.seeds.begin(), b->second.seeds.end(),
                                   [&](const SeedScore& x) { return x.seed == s.seed; });
      if (bs == b->second.seeds.end() || !s.bleu || !bs->bleu) continue;
      sum += *s.bleu - *bs->bleu;
      o.delta_seeds.push_back(s.seed);
      const auto mine = scored.find({run_of(group, s.seed), output});
      const auto theirs = scored.find({run_of(base_group, s.seed), output});
      if (mine == scored.end() || theirs == scored.end()) continue;
      paired_seeds.push_back(s.seed);
      arch_stats.push_back(mine->second.bleu.get());
      base_stats.push_back(theirs->second.bleu.get());
    }
    if (!o.delta_seeds.empty()) o.delta_bleu = sum / static_cast<double>(o.delta_seeds.size());
    if (!paired_seeds.empty())
      o.paired =
          pair_seeds(paired_seeds, base_stats, arch_stats, bleu, c.options.bootstrap_samples, c.options.bootstrap_seed);
  }
  const std::vector<int> only_here = minus(a.seeds, base.seeds), only_there = minus(base.seeds, a.seeds);
  if (!only_here.empty() || !only_there.empty()) {
    std::string why;
    if (!only_there.empty()) why = a.arch + " has no seed " + seed_list(only_there);
    if (!only_here.empty()) why += (why.empty() ? "" : " and ") + base.arch + " has no seed " + seed_list(only_here);
    const std::vector<int> common = minus(a.seeds, only_here);
    a.notes.push_back(common.empty() ? "no seed in common with " + base.arch + " (" + why + "): no Δ and no p-values"
                                     : "compared with " + base.arch + " on the common seeds " + seed_list(common) +
                                           " only: " + why);
  }
}

// BLEU per reference-length bucket of the main set: per model, a spread over the seeds per bucket.
void profile_by_length(ArchSummary& a, const ArchGroup& group, const std::map<ScoredKey, Scored>& scored,
                       const Comparison& c) {
  const eval::ScoreFromStats bleu = eval::bleu_metric({}).score;
  for (const std::string& model : c.models) {
    std::vector<std::vector<double>> per_bucket(c.buckets.size());
    bool any = false;
    for (const SeedRun* r : group.runs) {
      const auto it = scored.find({r, Output{c.main_set, model}});
      if (it == scored.end()) continue;
      any = true;
      for (std::size_t b = 0; b < c.buckets.size(); ++b)
        if (const auto score = eval::bucket_score(c.buckets[b], *it->second.bleu, bleu))
          per_bucket[b].push_back(*score);
    }
    if (!any) continue;
    std::vector<Spread>& profile = a.by_length[model];
    for (const std::vector<double>& v : per_bucket) profile.push_back(spread(v));
  }
}

}  // namespace

Comparison compare_seed_runs(const std::vector<RunSummary>& runs, const ComparisonOptions& options) {
  Comparison c;
  c.options = options;
  const std::vector<SeedRun> seed_runs = find_seed_runs(runs);
  if (seed_runs.empty()) return c;
  const std::vector<ArchGroup> groups = group_by_arch(seed_runs, options.baseline);
  c.has_baseline = groups.front().arch == options.baseline;
  if (!c.has_baseline)
    c.notes.push_back("no seed runs of the baseline " + options.baseline +
                      ": no Δ and no p-values (--baseline names one of the archs)");

  std::set<std::string> sets, models;
  for (const SeedRun& r : seed_runs) {
    for (const auto& [output, score] : r.score_files) {
      sets.insert(output.set);
      models.insert(output.model);
    }
    for (const auto& files : {r.hyps, r.segments})
      for (const auto& [output, file] : files) {
        sets.insert(output.set);
        models.insert(output.model);
      }
  }
  c.sets = ordered_sets(sets);
  c.models = ordered_models(models);
  for (const std::string& set : c.sets)
    if (joined_sentences(set) == 1) {
      c.main_set = set;
      break;
    }
  if (c.main_set.empty() && !c.sets.empty()) c.main_set = c.sets.front();
  if (c.sets.empty())
    c.notes.push_back(
        "no run has hyp/<set>.<model>.txt, segments/<set>.<model>.tsv or score/<set>.<model>.json: no test scores");

  std::map<std::string, std::vector<std::string>> refs;
  if (options.refs) refs = read_references(c, c.notes);
  const std::map<ScoredKey, Scored> scored = score_translations(seed_runs, refs, c);
  if (!options.refs && scored.empty() && !c.sets.empty())
    c.notes.push_back("no --refs and no segments/: the scores come from the runs' score files; no p-values and no "
                      "BLEU by reference length (attn report ... --refs OUT/refs)");
  c.buckets = main_set_buckets(refs, scored, c);

  for (const ArchGroup& g : groups) {
    c.archs.push_back(summarise_arch(g, runs, scored, c));
    if (!c.buckets.empty()) profile_by_length(c.archs.back(), g, scored, c);
  }
  if (c.has_baseline)
    for (std::size_t k = 1; k < c.archs.size(); ++k)
      compare_with_baseline(c.archs[k], groups[k], c.archs[0], groups[0], scored, c);
  return c;
}

namespace {

nlohmann::json spread_json(const Spread& s) {
  if (s.n == 0) return nullptr;
  return {{"n", s.n}, {"mean", s.mean}, {"sd", s.sd ? nlohmann::json(*s.sd) : nlohmann::json(nullptr)}};
}

template <typename T>
nlohmann::json optional_json(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json comparison_json(const Comparison& c) {
  nlohmann::json j;
  j["baseline"] = c.has_baseline ? nlohmann::json(c.options.baseline) : nlohmann::json(nullptr);
  j["refs"] = c.options.refs ? nlohmann::json(c.options.refs->string()) : nlohmann::json(nullptr);
  j["main_set"] = c.main_set;
  j["sets"] = c.sets;
  j["models"] = c.models;
  j["bootstrap"] = {{"samples", c.options.bootstrap_samples}, {"seed", c.options.bootstrap_seed}};
  nlohmann::json buckets = nlohmann::json::array();
  for (const eval::LengthBucket& b : c.buckets)
    buckets.push_back({{"label", b.label}, {"segments", b.segments.size()}, {"words", b.words}});
  j["length_buckets"] = buckets;
  nlohmann::json archs = nlohmann::json::array();
  for (const ArchSummary& a : c.archs) {
    nlohmann::json arch;
    arch["arch"] = a.arch;
    arch["seeds"] = a.seeds;
    arch["updates_min"] = optional_json(a.updates_min);
    arch["updates_max"] = optional_json(a.updates_max);
    nlohmann::json outputs = nlohmann::json::array();
    for (const auto& [output, o] : a.outputs) {
      nlohmann::json entry = {{"set", output.set}, {"model", output.model}, {"K", joined_sentences(output.set)}};
      nlohmann::json per_seed = nlohmann::json::array();
      for (const SeedScore& s : o.seeds)
        per_seed.push_back(
            {{"seed", s.seed}, {"bleu", optional_json(s.bleu)}, {"chrf", optional_json(s.chrf)}, {"source", s.source}});
      entry["per_seed"] = per_seed;
      entry["bleu"] = spread_json(o.bleu);
      entry["chrf"] = spread_json(o.chrf);
      entry["delta_bleu"] = optional_json(o.delta_bleu);
      entry["delta_seeds"] = o.delta_seeds;
      if (o.paired) {
        entry["paired_bootstrap"] = {{"seeds", o.paired->seeds},
                                     {"p_per_seed", o.paired->p_per_seed},
                                     {"p_pooled", o.paired->p_pooled},
                                     {"pooled_bleu", o.paired->pooled_score},
                                     {"pooled_baseline_bleu", o.paired->pooled_baseline_score},
                                     {"verdict", o.delta_bleu
                                                     ? nlohmann::json(verdict(*o.delta_bleu, o.paired->p_pooled))
                                                     : nlohmann::json(nullptr)}};
      } else {
        entry["paired_bootstrap"] = nullptr;
      }
      outputs.push_back(std::move(entry));
    }
    arch["outputs"] = outputs;
    nlohmann::json by_length = nlohmann::json::object();
    for (const auto& [model, profile] : a.by_length) {
      nlohmann::json list = nlohmann::json::array();
      for (const Spread& s : profile) list.push_back(spread_json(s));
      by_length[model] = list;
    }
    arch["bleu_by_length"] = by_length;
    arch["notes"] = a.notes;
    archs.push_back(std::move(arch));
  }
  j["archs"] = archs;
  j["notes"] = c.notes;
  return j;
}

}  // namespace attn::report
