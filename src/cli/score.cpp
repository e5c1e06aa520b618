// attn score: corpus BLEU and chrF of a hypothesis file against one or more
// references, with sacreBLEU 2.x's defaults, numbers, signature and output
// formats (docs/score.md lists where it differs on purpose).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attn/cli/commands.h"
#include "attn/core/error.h"
#include "attn/eval/bleu.h"
#include "attn/eval/chrf.h"
#include "attn/eval/report.h"
#include "attn/eval/segments.h"

namespace attn::cli {
namespace {

struct ScoreArgs {
  std::vector<std::string> references;
  std::string input = "-";
  std::vector<std::string> metrics{"bleu", "chrf"};
  std::string tokenize = "13a";
  bool lowercase = false;
  std::string smooth_method = "exp";
  double smooth_value_given = 0.0;
  std::optional<double> smooth_value;  // set when --smooth-value is given
  int chrf_char_order = 6;
  int chrf_beta = 2;
  bool chrf_whitespace = false;
  bool chrf_lowercase = false;
  bool chrf_eps_smoothing = false;
  std::string format = "json";
  int width = 1;
  bool score_only = false;
};

std::string describe(const std::string& path) { return path == "-" ? "standard input" : "'" + path + "'"; }

int run_score(const ScoreArgs& args) {
  bool want_bleu = false, want_chrf = false;
  for (const std::string& metric : args.metrics) {
    if (metric == "bleu") {
      want_bleu = true;
    } else if (metric == "chrf") {
      want_chrf = true;
    } else {
      throw Error("unknown metric '" + metric + "'; use bleu, chrf or bleu,chrf");
    }
  }
  // Options are checked before any file is read, so a typo fails fast.
  eval::BleuOptions bleu_options;
  bleu_options.tokenizer = eval::parse_tokenizer(args.tokenize);
  bleu_options.lowercase = args.lowercase;
  bleu_options.smoothing = eval::parse_smoothing(args.smooth_method);
  bleu_options.smooth_value = args.smooth_value;
  const eval::Bleu bleu(bleu_options);
  eval::ChrfOptions chrf_options;
  chrf_options.char_order = args.chrf_char_order;
  chrf_options.beta = args.chrf_beta;
  chrf_options.whitespace = args.chrf_whitespace;
  chrf_options.lowercase = args.chrf_lowercase;
  chrf_options.eps_smoothing = args.chrf_eps_smoothing;
  const eval::Chrf chrf(chrf_options);

  std::vector<std::vector<std::string>> references;
  for (const std::string& path : args.references) {
    require(path != "-" || args.input != "-",
            "a reference cannot come from standard input while the hypotheses do; give the hypotheses with -i");
    references.push_back(eval::read_segments(path));
  }
  const std::vector<std::string> hypotheses = eval::read_segments(args.input);
  for (std::size_t k = 0; k < references.size(); ++k) {
    require(references[k].size() == hypotheses.size(),
            "the hypotheses (" + describe(args.input) + ") have " + std::to_string(hypotheses.size()) +
                " lines but the reference " + describe(args.references[k]) + " has " +
                std::to_string(references[k].size()) + "; every line needs its reference");
  }
  require(!hypotheses.empty(), "the hypotheses (" + describe(args.input) + ") and references are empty: nothing to score");
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    bool any = false;
    for (const auto& stream : references) any = any || !stream[i].empty();
    require(any, "line " + std::to_string(i + 1) + " is empty in every reference file (" +
                     describe(args.references.front()) + (references.size() > 1 ? ", ..." : "") +
                     "); each line needs a non-empty reference");
  }

  const eval::ReferenceCount nrefs = eval::count_references(references);
  std::vector<eval::MetricResult> results;  // BLEU before chrF, as sacreBLEU sorts them
  if (want_bleu) {
    const eval::BleuScore score = bleu.corpus_score(hypotheses, references);
    results.push_back({"BLEU", score.score, bleu.signature(nrefs), score.verbose()});
  }
  if (want_chrf) {
    const eval::ChrfScore score = chrf.corpus_score(hypotheses, references);
    results.push_back({score.name, score.score, chrf.signature(nrefs), ""});
  }

  std::string out;
  if (args.score_only) {
    out = eval::format_scores_only(results, args.width);
  } else if (args.format == "text") {
    out = eval::format_text(results, args.width);
  } else {
    out = eval::format_json(results);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  require(std::fflush(stdout) == 0, "cannot write the scores to standard output");
  return 0;
}

}  // namespace

void add_score_command(CLI::App& app, CommonOptions& common, Action& action) {
  auto args = std::make_shared<ScoreArgs>();
  CLI::App* sub = app.add_subcommand(
      "score", "Score translations with corpus BLEU and chrF, exactly as sacreBLEU 2.x computes them");
  add_common_options(*sub, common);
  sub->add_option("-r,--ref", args->references, "Reference file(s), one segment per line; repeat for several")
      ->required()
      ->expected(1, -1);
  sub->add_option("-i,--input", args->input, "Hypotheses, one per line ('-': standard input)")
      ->capture_default_str();
  sub->add_option("-m,--metrics", args->metrics, "Metrics: bleu, chrf or both, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--tokenize,--tok", args->tokenize, "BLEU tokenizer: 13a, none or char")->capture_default_str();
  sub->add_flag("--lowercase", args->lowercase, "Case-insensitive BLEU (sacreBLEU's -lc)");
  sub->add_option("--smooth-method", args->smooth_method, "BLEU smoothing: exp, floor, add-k or none")
      ->capture_default_str();
  CLI::Option* smooth_value =
      sub->add_option("--smooth-value", args->smooth_value_given, "Value for floor (default 0.1) or add-k (default 1)")
          ->check(CLI::NonNegativeNumber);
  sub->add_option("--chrf-char-order", args->chrf_char_order, "chrF character n-gram order")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--chrf-beta", args->chrf_beta, "chrF recall weight beta")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_flag("--chrf-whitespace", args->chrf_whitespace, "Keep whitespace in chrF's character n-grams");
  sub->add_flag("--chrf-lowercase", args->chrf_lowercase, "Case-insensitive chrF");
  sub->add_flag("--chrf-eps-smoothing", args->chrf_eps_smoothing,
                "chrF++.py-style epsilon smoothing instead of effective order");
  sub->add_option("-f,--format", args->format, "Output: json (full-precision scores) or text")
      ->check(CLI::IsMember({"json", "text"}))
      ->capture_default_str();
  sub->add_option("-w,--width", args->width, "Decimals in text output")
      ->check(CLI::Range(0, 17))
      ->capture_default_str();
  sub->add_flag("-b,--score-only", args->score_only, "Print only the scores, one per line");
  sub->callback([&action, args, smooth_value] {
    if (smooth_value->count() > 0) args->smooth_value = args->smooth_value_given;
    action = [args]() -> int { return run_score(*args); };
  });
}

}  // namespace attn::cli
