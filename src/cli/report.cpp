// attn report: the training curves and the table of several runs on one
// self-contained page (and the table as JSON); runs named seed<N> are also
// compared by arch over their seeds. The work is in report/run_summary.h,
// report/comparison.h and report/report_page.h; this file reads flags.
#include <CLI/CLI.hpp>
#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "attn/cli/commands.h"
#include "attn/core/atomic_file.h"
#include "attn/core/checked_stream.h"
#include "attn/core/error.h"
#include "attn/core/output_preflight.h"
#include "attn/report/comparison.h"
#include "attn/report/report_page.h"
#include "attn/report/run_summary.h"

namespace attn::cli {

namespace {

struct ReportFlags {
  std::vector<std::string> runs;
  std::string output = "report.html";
  bool output_given = false;
  bool json = false;
  std::string refs;
  std::string tgt_lang = "en";
  std::string baseline = "transformer";
};

int run(const ReportFlags& f) {
  require(!(f.json && f.output == "-"), "--json and -o - both write to standard output; give -o a file name");
  const std::vector<std::filesystem::path> dirs(f.runs.begin(), f.runs.end());
  std::vector<NamedFile> read;
  for (const std::filesystem::path& dir : dirs) read.push_back({(dir / "log.jsonl").string(), "the run's log"});
  if (!f.json || f.output_given) preflight_outputs(std::array{NamedFile{f.output, "-o"}}, read);
  const std::vector<report::RunSummary> runs = report::read_runs(dirs);
  report::ComparisonOptions options;
  if (!f.refs.empty()) options.refs = f.refs;
  options.tgt_lang = f.tgt_lang;
  options.baseline = f.baseline;
  const report::Comparison comparison = report::compare_seed_runs(runs, options);
  if (f.json) {
    std::printf(
        "%s\n",
        report::report_json(runs, comparison).dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    require_standard_output_written("the JSON");
  }
  if (f.json && !f.output_given) return 0;  // --json alone: the table only
  const std::string page = report::report_page(runs, comparison);
  if (f.output == "-") {
    std::fwrite(page.data(), 1, page.size(), stdout);
    require_standard_output_written("the page");
    return 0;
  }
  AtomicFile out(f.output);
  out.write(page);
  out.commit();
  std::fprintf(stderr, "attn: report of %zu run%s written to %s\n", runs.size(), runs.size() == 1 ? "" : "s",
               f.output.c_str());
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, CommonOptions& common, Action& action) {
  auto flags = std::make_shared<ReportFlags>();
  ReportFlags& f = *flags;
  CLI::App* sub = app.add_subcommand(
      "report", "Compare training runs: curves and a table of speed, memory and scores on one HTML page");
  sub->footer(
      "Each RUN_DIR is an attn train --save-dir with its --log-json log.jsonl; test scores are read from\n"
      "score[.avg5].<M>min.json (or .txt) as experiments/quality_m30k.sh writes them.\n"
      "Run directories named seed<N> (tools/compare.sh: OUT/<arch>/seed<S>) are grouped by arch: mean and sd over\n"
      "the seeds of the scores in score/<set>.<model>.json, or of hyp/<set>.<model>.txt scored against --refs,\n"
      "which also gives seed-matched paired bootstrap p-values against --baseline and BLEU by reference length\n"
      "(docs/report.md).\n"
      "Examples:\n  attn report runs/compare/transformer runs/compare/muse -o report.html\n"
      "  attn report runs/compare/*/seed* --refs runs/compare/refs -o report.html");
  add_common_options(*sub, common);
  sub->add_option("RUN_DIR", f.runs, "run directories (attn train --save-dir)")->required()->expected(1, -1);
  CLI::Option* output = sub->add_option("-o,--output", f.output, "the HTML page ('-': stdout); written atomically")
                            ->capture_default_str();
  sub->add_flag("--json", f.json, "print the table as JSON on stdout (and write the page only when -o is given)");
  sub->add_option("--refs", f.refs,
                  "folder of references <set>.<tgt-lang> (tools/compare.sh's OUT/refs): seed runs' translations are "
                  "scored against them, with paired bootstrap p-values and BLEU by reference length");
  sub->add_option("--tgt-lang", f.tgt_lang, "the references' suffix in --refs")->capture_default_str();
  sub->add_option("--baseline", f.baseline, "the arch the others are compared with (Δ BLEU, p-values)")
      ->capture_default_str();
  sub->callback([&action, flags, output] {
    flags->output_given = output->count() > 0;
    action = [flags] { return run(*flags); };
  });
}

}  // namespace attn::cli
