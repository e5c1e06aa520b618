// attn report: the training curves and the table of several runs on one
// self-contained page (and the table as JSON); runs named seed<N> are also
// compared by arch over their seeds, and a claims file's verdicts decided
// on them. The work is in report/run_summary.h, report/comparison.h,
// report/verdicts.h and report/report_page.h; this file reads flags.
#include <CLI/CLI.hpp>
#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "attn/cli/commands.h"
#include "attn/core/atomic_file.h"
#include "attn/core/checked_stream.h"
#include "attn/core/error.h"
#include "attn/core/output_preflight.h"
#include "attn/report/comparison.h"
#include "attn/report/report_page.h"
#include "attn/report/run_summary.h"
#include "attn/report/verdicts.h"

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
  std::string claims;
  std::string markdown;
  bool markdown_given = false;
};

int run(const ReportFlags& f) {
  require(!f.markdown_given || !f.claims.empty(), "--markdown writes the verdicts of --claims FILE; give --claims");
  // Standard output takes one thing: the JSON, the verdicts' Markdown (--claims alone) or the page (-o -).
  const bool markdown_out = f.markdown_given || (!f.claims.empty() && !f.json);
  const std::string markdown = f.markdown_given ? f.markdown : "-";
  // --json alone and --claims alone print; the page is written when -o is given or neither prints.
  const bool page_out = f.output_given || (!f.json && f.claims.empty());
  std::vector<std::string> to_stdout;
  if (f.json) to_stdout.push_back("--json");
  if (markdown_out && markdown == "-") to_stdout.push_back(f.markdown_given ? "--markdown -" : "--claims' Markdown");
  if (page_out && f.output == "-") to_stdout.push_back("-o -");
  require(to_stdout.size() < 2, to_stdout.size() < 2 ? ""
                                                     : to_stdout[0] + " and " + to_stdout[1] +
                                                           " both write to standard output; give one of them a file "
                                                           "name (-o FILE, --markdown FILE)");
  const std::vector<std::filesystem::path> dirs(f.runs.begin(), f.runs.end());
  std::vector<NamedFile> read;
  for (const std::filesystem::path& dir : dirs) read.push_back({(dir / "log.jsonl").string(), "the run's log"});
  if (!f.claims.empty()) read.push_back({f.claims, "--claims"});
  std::vector<NamedFile> written;
  if (page_out) written.push_back({f.output, "-o"});
  if (markdown_out) written.push_back({markdown, "--markdown"});
  preflight_outputs(written, read);
  // The claims first: a typo in them is found before the runs are scored.
  const std::optional<report::ClaimsFile> claims = f.claims.empty() ? std::nullopt
                                                                    : std::optional(report::read_claims(f.claims));
  const std::vector<report::RunSummary> runs = report::read_runs(dirs);
  report::ComparisonOptions options;
  if (!f.refs.empty()) options.refs = f.refs;
  options.tgt_lang = f.tgt_lang;
  options.baseline = f.baseline;
  const report::Comparison comparison = report::compare_seed_runs(runs, options);
  std::optional<report::Verdicts> verdicts;
  if (claims) {
    require(!comparison.archs.empty(), "--claims: none of the runs is a seed run (<group>/seed<N>), so no claim can "
                                       "be decided; give the comparison's run directories");
    verdicts = report::judge_claims(*claims, comparison);
  }
  const report::Verdicts* judged = verdicts ? &*verdicts : nullptr;
  if (f.json) {
    std::printf("%s\n", report::report_json(runs, comparison, judged)
                            .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                            .c_str());
    require_standard_output_written("the JSON");
  }
  if (markdown_out) {
    const std::string text = report::verdicts_markdown(*verdicts);
    if (markdown == "-") {
      std::fwrite(text.data(), 1, text.size(), stdout);
      require_standard_output_written("the verdicts");
    } else {
      AtomicFile out(markdown);
      out.write(text);
      out.commit();
    }
  }
  if (!page_out) return 0;
  const std::string page = report::report_page(runs, comparison, judged);
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
      "Each RUN_DIR is a run directory as attn writes it (docs/report.md): attn train --save-dir's "
      "log.jsonl and checkpoints, translations in hyp/<set>.<model>.txt (attn translate -o), their "
      "scores in score/<set>.<model>.json (attn score --format json) and, in their place in an archive, their "
      "per-segment statistics in segments/<set>.<model>.tsv (attn score --segments).\n"
      "Run directories named seed<N> (OUT/<arch>/seed<S>) are grouped by arch: mean and sd over "
      "the seeds of the scores in score/, or of the translations in hyp/ scored against --refs or their "
      "segments/, which also gives seed-matched paired bootstrap p-values against --baseline and BLEU by reference length "
      "(docs/report.md).\n"
      "--claims FILE decides the claims in FILE (one a line: 'A beats B on SET', 'A within 0.5 of B on SET', "
      "'A slope above B on SET', ...) by the paired t over seeds and the pooled bootstrap, Holm over the file "
      "(docs/verdicts.md); also claims on attention statistics (the runs' stats/<set>.<model>.json): "
      "'A encoder layer last max_weight above layer 0 on SET', "
      "'A encoder layer all normalised_entropy slope above 0 on SET', 'A ... slope below B on SET'.\n"
      "Examples:\n  attn report runs/compare/transformer runs/compare/muse -o report.html\n"
      "  attn report runs/compare/*/seed* --refs runs/compare/refs -o report.html\n"
      "  attn report runs/compare/*/seed* --refs runs/compare/refs --claims experiments/claims/cmp7.claims");
  add_common_options(*sub, common);
  sub->add_option("RUN_DIR", f.runs, "run directories (attn train --save-dir)")->required()->expected(1, -1);
  CLI::Option* output = sub->add_option("-o,--output", f.output, "the HTML page ('-': stdout); written atomically")
                            ->capture_default_str();
  sub->add_flag("--json", f.json,
                "print the table (and the verdicts) as JSON on stdout (and write the page only when -o is given)");
  sub->add_option("--refs", f.refs,
                  "folder of references <set>.<tgt-lang>: seed runs' translations in hyp/ are scored against "
                  "them, with paired bootstrap p-values and BLEU by reference length (segments/ are checked "
                  "against them)");
  sub->add_option("--tgt-lang", f.tgt_lang, "the references' suffix in --refs")->capture_default_str();
  sub->add_option("--baseline", f.baseline, "the arch the others are compared with (Δ BLEU, p-values)")
      ->capture_default_str();
  sub->add_option("--claims", f.claims,
                  "a claims file (docs/verdicts.md): their verdicts as Markdown on stdout, in the JSON and on the page "
                  "(written only when -o is given)");
  CLI::Option* markdown =
      sub->add_option("--markdown", f.markdown, "write the verdicts' Markdown to this file ('-': stdout) instead");
  sub->callback([&action, flags, output, markdown] {
    flags->output_given = output->count() > 0;
    flags->markdown_given = markdown->count() > 0;
    action = [flags] { return run(*flags); };
  });
}

}  // namespace attn::cli
