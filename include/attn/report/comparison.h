// The multi-seed comparison `attn report` draws above the per-run curves:
// seed runs (seed_runs.h) grouped by arch, each arch's test scores as
// mean ± sample sd over its seeds for every test set and model, its mean BLEU
// difference to the baseline arch over the seeds both have, and — when the
// references are given (--refs DIR holding <set>.<tgt-lang>, as
// experiments/compare.sh keeps them) — scores recomputed from the translations,
// seed-matched paired bootstrap p-values (seed_significance.h) and BLEU per
// reference length on the main test set (eval/by_length.h).
//
// Nothing in a run makes this fail except a translation file whose line
// count differs from its reference (a broken decode must not be scored).
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/eval/by_length.h"
#include "attn/report/run_summary.h"
#include "attn/report/seed_runs.h"
#include "attn/report/seed_significance.h"

namespace attn::report {

struct ComparisonOptions {
  std::optional<std::filesystem::path> refs;  // --refs DIR
  std::string tgt_lang = "en";
  std::string baseline = "transformer";
  std::size_t bootstrap_samples = 1000;  // sacreBLEU's defaults
  std::uint64_t bootstrap_seed = 12345;
};

struct SeedScore {
  int seed = 0;
  std::optional<double> bleu, chrf;
  std::string source;  // "hyp" (scored here against --refs) or the score file's name
  // BLEU's per-segment statistics when scored here (the paired tests and the claims' verdicts use them).
  std::shared_ptr<const eval::SegmentStats> bleu_stats;
};

// One arch on one output (set, model).
struct OutputSummary {
  std::vector<SeedScore> seeds;  // the seeds with this output, ascending
  Spread bleu, chrf;
  // Mean over the seeds both have of (this arch's BLEU − the baseline's); none for the baseline itself.
  std::optional<double> delta_bleu;
  std::vector<int> delta_seeds;
  std::optional<SeedPairing> paired;  // BLEU, with --refs, when both have translations of common seeds
};

struct ArchSummary {
  std::string arch;
  std::vector<int> seeds;
  std::vector<std::size_t> runs;  // indices into the runs given
  std::optional<std::int64_t> updates_min, updates_max;
  std::map<Output, OutputSummary> outputs;
  // Attention statistics: per output, each seed's stats/<set>.<model>.json (the claims read them).
  std::map<Output, std::map<int, std::filesystem::path>> attention;
  // BLEU per reference-length bucket on the main test set, per model: one spread over the seeds per bucket.
  std::map<std::string, std::vector<Spread>> by_length;
  std::vector<std::string> notes;
};

struct Comparison {
  ComparisonOptions options;
  bool has_baseline = false;                // some arch is options.baseline (it is archs[0] then)
  std::string main_set;                     // the test set itself ("test2016")
  std::vector<std::string> sets;            // the main set, then its probes by K, then any other
  std::vector<std::string> models;          // "best", "avg5", then others
  std::vector<eval::LengthBucket> buckets;  // the main set's references' buckets (with --refs)
  std::vector<ArchSummary> archs;           // empty: no seed runs (the page is the per-run page alone)
  std::vector<std::string> notes;

  const ArchSummary* baseline() const { return has_baseline ? &archs.front() : nullptr; }
};

// Throws Error for an unreadable --refs directory, a translation whose line
// count differs from its reference, or two runs of the same arch and seed.
Comparison compare_seed_runs(const std::vector<RunSummary>& runs, const ComparisonOptions& options);

// Every aggregated number: {"baseline", "refs", "main_set", "sets", "models", "length_buckets", "archs": [...],
// "notes"}.
nlohmann::json comparison_json(const Comparison& comparison);

}  // namespace attn::report
