// attn report: the training curves and the table of several runs on one
// self-contained page (and the table as JSON). The work is in
// report/run_summary.h and report/report_page.h; this file reads flags.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "attn/cli/commands.h"
#include "attn/core/atomic_file.h"
#include "attn/core/error.h"
#include "attn/report/report_page.h"
#include "attn/report/run_summary.h"

namespace attn::cli {

namespace {

struct ReportFlags {
  std::vector<std::string> runs;
  std::string output = "report.html";
  bool output_given = false;
  bool json = false;
};

int run(const ReportFlags& f) {
  require(!(f.json && f.output == "-"), "--json and -o - both write to standard output; give -o a file name");
  const std::vector<std::filesystem::path> dirs(f.runs.begin(), f.runs.end());
  const std::vector<report::RunSummary> runs = report::read_runs(dirs);
  if (f.json) {
    std::printf("%s\n", report::runs_json(runs).dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    require(std::fflush(stdout) == 0, "cannot write the JSON to standard output");
  }
  if (f.json && !f.output_given) return 0;  // --json alone: the table only
  const std::string page = report::report_page(runs);
  if (f.output == "-") {
    std::fwrite(page.data(), 1, page.size(), stdout);
    require(std::fflush(stdout) == 0, "cannot write the page to standard output");
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
      "score[.avg5].<M>min.json (or .txt) as tools/quality_m30k.sh writes them.\n"
      "Example:\n  attn report runs/compare/transformer runs/compare/muse -o report.html");
  add_common_options(*sub, common);
  sub->add_option("RUN_DIR", f.runs, "run directories (attn train --save-dir)")->required()->expected(1, -1);
  CLI::Option* output =
      sub->add_option("-o,--output", f.output, "the HTML page ('-': stdout); written atomically")->capture_default_str();
  sub->add_flag("--json", f.json, "print the table as JSON on stdout (and write the page only when -o is given)");
  sub->callback([&action, flags, output] {
    flags->output_given = output->count() > 0;
    action = [flags] { return run(*flags); };
  });
}

}  // namespace attn::cli
