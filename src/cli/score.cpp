// attn score: corpus BLEU, chrF(++) and TER of one or more systems against
// one or more references, with sacreBLEU 2.x's defaults, numbers, signatures
// and output formats; paired significance tests between systems, scores per
// reference length and per segment (docs/score.md lists where it differs on
// purpose).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attn/cli/bounds.h"
#include "attn/cli/commands.h"
#include "attn/core/atomic_file.h"
#include "attn/core/checked_stream.h"
#include "attn/core/error.h"
#include "attn/core/output_preflight.h"
#include "attn/eval/by_length.h"
#include "attn/eval/comparison_report.h"
#include "attn/eval/corpus_metric.h"
#include "attn/eval/numpy_random.h"
#include "attn/eval/report.h"
#include "attn/eval/segment_file.h"
#include "attn/eval/segments.h"
#include "attn/eval/significance.h"

namespace attn::cli {
namespace {

struct ScoreArgs {
  std::vector<std::string> references;
  std::vector<std::string> inputs{"-"};
  std::vector<std::string> metrics{"bleu", "chrf"};
  std::string tokenize = "13a";
  bool lowercase = false;
  std::string smooth_method = "exp";
  double smooth_value_given = 0.0;
  std::optional<double> smooth_value;  // set when --smooth-value is given
  int chrf_char_order = 6;
  int chrf_word_order = 0;
  int chrf_beta = 2;
  bool chrf_whitespace = false;
  bool chrf_lowercase = false;
  bool chrf_eps_smoothing = false;
  bool ter_case_sensitive = false;
  bool ter_no_punct = false;
  bool sentence_level = false;
  bool paired_bs = false;
  bool paired_ar = false;
  std::size_t paired_bs_n = 1000;
  std::size_t paired_ar_n = 10000;
  std::uint64_t seed = 12345;
  bool by_length = false;
  std::string segments;        // --segments FILE: the per-segment statistics (eval/segment_file.h)
  std::string dump_resamples;  // hidden: the draws and statistics as JSON, for tools/sacrebleu_ref.py paired
  std::string format = "json";
  int width = 1;
  bool score_only = false;
};

std::string describe(const std::string& path) { return path == "-" ? "standard input" : "'" + path + "'"; }

// The requested metrics in sacreBLEU's output order (BLEU, chrF, TER).
// Sentence-level BLEU uses effective order, as sacreBLEU's command line does.
std::vector<eval::CorpusMetric> make_metrics(const ScoreArgs& args) {
  bool want_bleu = false, want_chrf = false, want_ter = false;
  for (const std::string& metric : args.metrics) {
    if (metric == "bleu") {
      want_bleu = true;
    } else if (metric == "chrf") {
      want_chrf = true;
    } else if (metric == "ter") {
      want_ter = true;
    } else {
      throw Error("unknown metric '" + metric + "'; use bleu, chrf, ter or a comma-separated list of them");
    }
  }
  std::vector<eval::CorpusMetric> metrics;
  if (want_bleu) {
    eval::BleuOptions options;
    options.tokenizer = eval::parse_tokenizer(args.tokenize);
    options.lowercase = args.lowercase;
    options.smoothing = eval::parse_smoothing(args.smooth_method);
    options.smooth_value = args.smooth_value;
    options.effective_order = args.sentence_level;
    const eval::Bleu check(options);  // validates the smoothing value
    metrics.push_back(eval::bleu_metric(options));
  }
  if (want_chrf) {
    eval::ChrfOptions options;
    options.char_order = args.chrf_char_order;
    options.word_order = args.chrf_word_order;
    options.beta = args.chrf_beta;
    options.whitespace = args.chrf_whitespace;
    options.lowercase = args.chrf_lowercase;
    options.eps_smoothing = args.chrf_eps_smoothing;
    const eval::Chrf check(options);
    metrics.push_back(eval::chrf_metric(options));
  }
  if (want_ter) {
    eval::TerOptions options;
    options.case_sensitive = args.ter_case_sensitive;
    options.no_punct = args.ter_no_punct;
    metrics.push_back(eval::ter_metric(options));
  }
  return metrics;
}

// Flag combinations that cannot work, refused before any file is read.
void check_modes(const ScoreArgs& args) {
  const bool paired = args.paired_bs || args.paired_ar;
  require(!(args.paired_bs && args.paired_ar),
          "--paired-bs and --paired-ar exclude each other (as in sacreBLEU); choose one test");
  require(!paired || args.inputs.size() >= 2,
          "paired tests compare systems with a baseline: give the baseline and at least one system, "
          "e.g. -i base.txt -i new.txt");
  require(!args.sentence_level || args.inputs.size() == 1, "--sentence-level scores one system; give a single -i");
  require(!args.sentence_level || !paired, "--sentence-level cannot be combined with paired tests");
  require(!args.by_length || args.inputs.size() == 1, "--by-length scores one system; give a single -i");
  require(!args.by_length || (!paired && !args.sentence_level),
          "--by-length cannot be combined with --sentence-level or paired tests");
  require(!args.score_only || (args.inputs.size() == 1 && !args.by_length),
          "--score-only prints one system's corpus scores; drop it with several systems or --by-length");
  require(args.segments.empty() || (args.inputs.size() == 1 && !args.sentence_level),
          "--segments keeps one system's statistics: give a single -i, without --sentence-level");
  require(args.segments != "-", "--segments needs a file name: standard output carries the scores");
  require(args.dump_resamples.empty() || paired, "--dump-resamples needs --paired-bs or --paired-ar");
  int from_stdin = 0;
  for (const std::string& input : args.inputs) from_stdin += input == "-" ? 1 : 0;
  require(from_stdin <= 1, "only one system can come from standard input");
}

// The systems' names, as sacreBLEU names them: the file path, the baseline
// prefixed with "Baseline: " in paired mode; a repeat of the baseline is
// dropped there, any other repeated path is an error.
std::vector<std::string> system_paths(const ScoreArgs& args) {
  const bool paired = args.paired_bs || args.paired_ar;
  std::vector<std::string> paths;
  for (const std::string& input : args.inputs) {
    if (std::find(paths.begin(), paths.end(), input) != paths.end()) {
      if (paired && input == paths.front()) continue;
      throw Error("'" + input + "' is given twice with -i; give each system once");
    }
    paths.push_back(input);
  }
  require(!paired || paths.size() >= 2, "paired tests need a system besides the baseline '" + paths.front() + "'");
  return paths;
}

// sacreBLEU adds the test to the signature after nrefs: "nrefs:1|bs:1000|seed:12345|case:...".
std::string paired_signature(const std::string& signature, const ScoreArgs& args) {
  const std::string test = args.paired_bs ? "|bs:" + std::to_string(args.paired_bs_n)
                                          : "|ar:" + std::to_string(args.paired_ar_n);
  const std::size_t bar = signature.find('|');
  return signature.substr(0, bar) + test + "|seed:" + std::to_string(args.seed) + signature.substr(bar);
}

void write_out(const std::string& out) {
  std::fwrite(out.data(), 1, out.size(), stdout);
  require_standard_output_written("the scores");
}

void dump_resamples(const std::string& path, const ScoreArgs& args, std::size_t segments,
                    const std::vector<eval::CorpusMetric>& metrics,
                    const std::vector<std::vector<eval::SegmentStats>>& stats, const eval::SystemTable& table) {
  nlohmann::ordered_json dump;
  dump["test"] = args.paired_bs ? "bs" : "ar";
  dump["seed"] = args.seed;
  if (args.paired_bs) {
    dump["indices"] = eval::bootstrap_indices(segments, args.paired_bs_n, args.seed);
  } else {
    dump["flips"] = eval::coin_flips(segments, args.paired_ar_n, args.seed);
  }
  dump["samples"] = args.paired_bs ? args.paired_bs_n : args.paired_ar_n;
  nlohmann::ordered_json columns = nlohmann::ordered_json::array();
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    nlohmann::ordered_json column;
    column["name"] = metrics[m].name;
    nlohmann::ordered_json systems = nlohmann::ordered_json::array();
    for (std::size_t s = 0; s < stats[m].size(); ++s) {
      const eval::PairedResult& result = table.columns[m].results[s];
      systems.push_back({{"stats", stats[m][s].values},
                         {"fields", stats[m][s].fields},
                         {"score", result.score},
                         {"p_value", result.p_value},
                         {"mean", result.ci ? result.ci->mean : 0.0},
                         {"ci", result.ci ? result.ci->half_width : 0.0}});
    }
    column["systems"] = systems;
    columns.push_back(column);
  }
  dump["metrics"] = columns;
  AtomicFile file(path);
  file.write(dump.dump() + "\n");
  file.commit();
}

// Every metric's rows of the single system and its first reference's word counts, for
// attn report to compare systems without the text (eval/segment_file.h).
void write_segment_file(const std::string& path, const std::vector<eval::CorpusMetric>& metrics,
                        const std::vector<std::vector<eval::SegmentStats>>& stats,
                        std::span<const std::string> first_reference, eval::ReferenceCount nrefs) {
  eval::SegmentFile file;
  file.reference_words = eval::word_counts(first_reference);
  for (std::size_t m = 0; m < metrics.size(); ++m)
    file.metrics.push_back({metrics[m].name, metrics[m].signature(nrefs), stats[m][0]});
  AtomicFile out(path);
  out.write(eval::format_segment_file(file));
  out.commit();
}

int run_score(const ScoreArgs& args) {
  check_modes(args);
  // Options are checked before any file is read, so a typo fails fast.
  const std::vector<eval::CorpusMetric> metrics = make_metrics(args);
  const std::vector<std::string> paths = system_paths(args);
  std::vector<NamedFile> read;
  for (const std::string& path : args.references) read.push_back({path, "-r"});
  for (const std::string& path : paths) read.push_back({path, "-i"});
  preflight_outputs(
      std::array{NamedFile{args.dump_resamples, "--dump-resamples"}, NamedFile{args.segments, "--segments"}}, read);

  std::vector<std::vector<std::string>> references;
  for (const std::string& path : args.references) {
    require(path != "-" || std::find(paths.begin(), paths.end(), "-") == paths.end(),
            "a reference cannot come from standard input while the hypotheses do; give the hypotheses with -i");
    references.push_back(eval::read_segments(path));
  }
  std::vector<std::vector<std::string>> systems;
  for (const std::string& path : paths) {
    systems.push_back(eval::read_segments(path));
    for (std::size_t k = 0; k < references.size(); ++k) {
      require(references[k].size() == systems.back().size(),
              "the hypotheses (" + describe(path) + ") have " + std::to_string(systems.back().size()) +
                  " lines but the reference " + describe(args.references[k]) + " has " +
                  std::to_string(references[k].size()) + "; every line needs its reference");
    }
    require(!systems.back().empty(),
            "the hypotheses (" + describe(path) + ") and references are empty: nothing to score");
  }
  const std::size_t segments = systems.front().size();
  const eval::ReferenceCount nrefs = eval::count_references(references);

  if (args.sentence_level) {
    std::string out;
    std::vector<std::string> names;
    for (const auto& metric : metrics) names.push_back(metric.name);
    std::vector<double> scores(metrics.size());
    std::size_t line = 0;
    eval::for_each_segment(
        systems.front(), references, [&](std::string_view hypothesis, std::span<const std::string> refs) {
          for (std::size_t m = 0; m < metrics.size(); ++m)
            scores[m] = metrics[m].score(metrics[m].segment_row(hypothesis, refs));
          out += eval::format_sentence_line(++line, names, scores, args.format == "json", args.width);
        });
    write_out(out);
    return 0;
  }

  // stats[m][s]: metric m's per-segment statistics for system s.
  std::vector<std::vector<eval::SegmentStats>> stats(metrics.size());
  for (std::size_t m = 0; m < metrics.size(); ++m)
    for (const auto& system : systems) stats[m].push_back(metrics[m].corpus_stats(system, references));

  if (!args.segments.empty()) write_segment_file(args.segments, metrics, stats, references.front(), nrefs);

  if (args.by_length) {
    eval::LengthTable table;
    table.buckets = eval::bucket_by_reference_length(references.front());
    for (std::size_t m = 0; m < metrics.size(); ++m) {
      table.metrics.push_back(metrics[m].name);
      table.signatures.push_back(metrics[m].signature(nrefs));
      std::vector<std::optional<double>> scores;
      for (const auto& bucket : table.buckets)
        scores.push_back(eval::bucket_score(bucket, stats[m][0], metrics[m].score));
      table.scores.push_back(scores);
    }
    write_out(args.format == "text" ? eval::format_length_table_text(table, args.width)
                                    : eval::format_length_table_json(table));
    return 0;
  }

  if (systems.size() == 1) {
    std::vector<eval::MetricResult> results;
    for (std::size_t m = 0; m < metrics.size(); ++m) {
      const std::vector<double> summed = stats[m][0].sum();
      results.push_back({metrics[m].name, metrics[m].score(summed), metrics[m].signature(nrefs),
                         metrics[m].verbose ? metrics[m].verbose(summed) : ""});
    }
    if (args.score_only) {
      write_out(eval::format_scores_only(results, args.width));
    } else {
      write_out(args.format == "text" ? eval::format_text(results, args.width) : eval::format_json(results));
    }
    return 0;
  }

  eval::SystemTable table;
  table.test = args.paired_bs ? eval::PairedTest::bootstrap
                              : (args.paired_ar ? eval::PairedTest::randomization : eval::PairedTest::none);
  table.samples = args.paired_bs ? args.paired_bs_n : args.paired_ar_n;
  for (std::size_t s = 0; s < paths.size(); ++s)
    table.systems.push_back(table.test != eval::PairedTest::none && s == 0 ? "Baseline: " + paths[s] : paths[s]);
  // The same draws serve every metric and system, as in sacreBLEU.
  std::vector<std::uint32_t> indices;
  std::vector<std::uint8_t> flips;
  if (args.paired_bs) indices = eval::bootstrap_indices(segments, args.paired_bs_n, args.seed);
  if (args.paired_ar) flips = eval::coin_flips(segments, args.paired_ar_n, args.seed);
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    eval::MetricColumn column;
    column.name = metrics[m].name;
    column.signature = metrics[m].signature(nrefs);
    if (table.test != eval::PairedTest::none) column.signature = paired_signature(column.signature, args);
    const eval::SegmentStats& baseline = stats[m][0];
    for (std::size_t s = 0; s < systems.size(); ++s) {
      eval::PairedResult result;
      if (args.paired_bs) {
        result = s == 0 ? eval::bootstrap_baseline(baseline, metrics[m].score, indices)
                        : eval::paired_bootstrap(baseline, stats[m][s], metrics[m].score, indices);
      } else if (args.paired_ar && s > 0) {
        result = eval::paired_approximate_randomization(baseline, stats[m][s], metrics[m].score, flips);
      } else {
        result.score = metrics[m].score(stats[m][s].sum());
      }
      column.results.push_back(result);
    }
    table.columns.push_back(std::move(column));
  }
  if (!args.dump_resamples.empty()) dump_resamples(args.dump_resamples, args, segments, metrics, stats, table);
  write_out(args.format == "text" ? eval::format_system_table_text(table, args.width)
                                  : eval::format_system_table_json(table));
  return 0;
}

}  // namespace

void add_score_command(CLI::App& app, CommonOptions& common, Action& action) {
  auto args = std::make_shared<ScoreArgs>();
  CLI::App* sub = app.add_subcommand(
      "score", "Score translations with BLEU, chrF(++) and TER as sacreBLEU 2.x does; prints JSON (-f text: text)");
  sub->footer("Examples:\n  attn score --ref test.en -i test.hyp -f text      # BLEU = 37.6 ... and chrF2 = ...\n"
              "  attn score --ref test.en -i base.hyp -i new.hyp --paired-bs -f text\n"
              "The JSON and text formats, and every mode: docs/score.md.");
  sub->option_defaults()->group("Input");
  sub->add_option("-r,--ref", args->references, "Reference file(s), one segment per line; repeat for several")
      ->required()
      ->expected(1, -1);
  sub->add_option("-i,--input", args->inputs,
                  "Hypotheses, one per line ('-': standard input); several systems as -i A -i B or -i A B, "
                  "the first being the baseline of paired tests")
      ->expected(1, -1)
      ->capture_default_str();
  sub->option_defaults()->group("Metrics (sacreBLEU's defaults)");
  sub->add_option("-m,--metrics", args->metrics, "Metrics: bleu, chrf, ter, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--tokenize,--tok", args->tokenize, "BLEU tokenizer: 13a, intl, none or char")->capture_default_str();
  sub->add_flag("--lowercase", args->lowercase, "Case-insensitive BLEU (sacreBLEU's -lc)");
  sub->add_option("--smooth-method", args->smooth_method, "BLEU smoothing: exp, floor, add-k or none")
      ->capture_default_str();
  CLI::Option* smooth_value =
      sub->add_option("--smooth-value", args->smooth_value_given, "Value for floor (default 0.1) or add-k (default 1)")
          ->check(bounded(within(0, 1e6)));
  sub->add_option("--chrf-char-order", args->chrf_char_order, "chrF character n-gram order")
      ->capture_default_str()
      ->check(bounded(within(1, 100)));
  sub->add_option("--chrf-word-order", args->chrf_word_order, "chrF word n-gram order (2: chrF++)")
      ->capture_default_str()
      ->check(bounded(within(0, 100)));
  sub->add_option("--chrf-beta", args->chrf_beta, "chrF recall weight beta")
      ->capture_default_str()
      ->check(bounded(within(0, 100)));
  sub->add_flag("--chrf-whitespace", args->chrf_whitespace, "Keep whitespace in chrF's character n-grams");
  sub->add_flag("--chrf-lowercase", args->chrf_lowercase, "Case-insensitive chrF");
  sub->add_flag("--chrf-eps-smoothing", args->chrf_eps_smoothing,
                "chrF++.py-style epsilon smoothing instead of effective order");
  sub->add_flag("--ter-case-sensitive", args->ter_case_sensitive, "Case-sensitive TER (default: lowercased)");
  sub->add_flag("--ter-no-punct", args->ter_no_punct, "Remove . , ? : ; ! \" ( ) before TER");
  sub->option_defaults()->group("Modes and paired tests");
  sub->add_flag("--sentence-level", args->sentence_level,
                "One line per segment with each metric's sentence score (BLEU with effective order)");
  sub->add_flag("--paired-bs", args->paired_bs,
                "Paired bootstrap resampling against the first -i: 95% CIs and p-values");
  sub->add_flag("--paired-ar", args->paired_ar, "Paired approximate randomization against the first -i: p-values");
  sub->add_option("--paired-bs-n", args->paired_bs_n, "Bootstrap resamples")
      ->capture_default_str()
      ->check(bounded(within(1, 1e7)));
  sub->add_option("--paired-ar-n", args->paired_ar_n, "Approximate randomization trials")
      ->capture_default_str()
      ->check(bounded(within(1, 1e8)));
  sub->add_option("--seed", args->seed, "Seed of the paired tests' draws (NumPy's default_rng, as sacreBLEU)")
      ->capture_default_str()
      ->check(bounded(within(0, 1.8e19)));
  sub->add_flag("--by-length", args->by_length,
                "Scores per bucket of first-reference length: 1-10, 11-20, 21-30, 31-40, 41-60, 61+ words");
  sub->add_option("--segments", args->segments,
                  "Also write each line's statistics of every metric to FILE (attn report reads them "
                  "in place of the translation); one -i");
  sub->add_option("--dump-resamples", args->dump_resamples)->group("");
  sub->option_defaults()->group("Output");
  sub->add_option("-f,--format", args->format, "Output: json (full-precision scores) or text")
      ->check(CLI::IsMember({"json", "text"}))
      ->capture_default_str();
  sub->add_option("-w,--width", args->width, "Decimals in text output")
      ->capture_default_str()
      ->check(bounded(within(0, 17)));
  sub->add_flag("-b,--score-only", args->score_only, "Print only the scores, one per line");
  sub->option_defaults()->group("Resources");
  add_common_options(*sub, common);
  sub->callback([&action, args, smooth_value] {
    if (smooth_value->count() > 0) args->smooth_value = args->smooth_value_given;
    action = [args]() -> int { return run_score(*args); };
  });
}

}  // namespace attn::cli
