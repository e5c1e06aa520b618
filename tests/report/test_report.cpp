// attn report's table and page: the table's numbers and the plotted points
// equal those in the logs of two synthetic runs with known numbers (library
// and CLI: --json prints the same table, -o writes the page atomically);
// runs not named seed<N> give the page and JSON without a comparison; a
// missing RUN_DIR is one line and exit status 2; headless Chromium renders
// one curve per run in each plot and one table row per run.
// GCC 12 at -O3 reports a false -Warray-bounds in the inlined std::string and
// nlohmann::json code this file instantiates (as in tests/cli/test_attend.cpp).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "../cli/run_attn.h"
#include "../support.h"
#include "browser.h"
#include "report_fixtures.h"
#include "attn/report/comparison.h"
#include "attn/report/report_page.h"
#include "attn/report/run_summary.h"

using namespace attn;
using attn::test::lines_of;
using attn::test::notes_of;
using attn::test::require_series;
using attn::test::require_user_error;
using attn::test::run_attn;
using attn::test::train_line;
using attn::test::valid_line;
using attn::test::write_file;
using attn::test::write_model;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Run "alpha": 40 train lines without peak memory, validations at 10..40 with the best BLEU twice (the first
// counts), test scores of best and avg5 in score/, and files of no run layout beside them (/usr/bin/time's text in
// train.log, a budget's score file of an older script), which the report does not read.
// Run "beta": 30 train lines with peak_rss_mb, validations with chrF, no test scores.
struct Synthetic {
  test::ScratchDir dir;
  fs::path alpha, beta;
  std::vector<json> alpha_log, beta_log;
  std::int64_t alpha_params = 0, beta_params = 0;

  Synthetic() {
    alpha = dir.path() / "alpha";
    beta = dir.path() / "beta";
    fs::create_directories(alpha);
    fs::create_directories(beta);
    const double bleus[] = {10.0, 25.0, 24.0, 25.0};
    for (int u = 1; u <= 40; ++u) {
      alpha_log.push_back(train_line(u, false));
      if (u % 10 == 0) alpha_log.push_back(valid_line(u, bleus[u / 10 - 1]));
    }
    for (int u = 1; u <= 30; ++u) {
      beta_log.push_back(train_line(u, true));
      if (u % 10 == 0) beta_log.push_back(valid_line(u, 1.0 * u, 20.0 + u));
    }
    write_file(alpha / "log.jsonl", lines_of(alpha_log));
    write_file(beta / "log.jsonl", lines_of(beta_log));
    write_file(alpha / "train.log", "epoch 1 ...\n\tMaximum resident set size (kbytes): 1048576\n");
    write_file(alpha / "score.60min.json", R"([{"name": "BLEU", "score": 30.0}, {"name": "chrF2", "score": 50.0}])");
    fs::create_directories(alpha / "score");
    write_file(alpha / "score" / "test2016.best.json",
               "[\n{\n \"name\": \"BLEU\",\n \"score\": 35.55,\n \"signature\": \"nrefs:1\"\n},\n"
               "{\n \"name\": \"chrF2\",\n \"score\": 55.125\n}\n]\n");
    write_file(alpha / "score" / "test2016.avg5.json", R"({"name": "BLEU", "score": 36.0})");
    write_file(alpha / "score" / "test2016.best-20min.json", R"([{"name": "BLEU", "score": 29.0}])");
    // Checkpoints after the log, as the trainer writes them.
    alpha_params = write_model(alpha / "best.attn", "transformer");
    write_model(alpha / "last.attn", "transformer");
    beta_params = write_model(beta / "best.attn", "muse");
    write_model(beta / "last.attn", "muse");
  }
};

std::vector<std::string> polyline_points(const std::string& page, const std::string& run) {
  std::vector<std::string> found;
  const std::regex re("<polyline class=\"curve\" data-run=\"" + run + "\" data-points=\"[0-9]+\" points=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), re); it != std::sregex_iterator(); ++it)
    found.push_back((*it)[1].str());
  return found;
}

std::size_t point_count(const std::string& points) {
  return points.empty() ? 0 : test::count_occurrences(points, " ") + 1;
}

fs::path output_dir(const std::string& name) {
  const char* bin = std::getenv("ATTN_BIN");
  REQUIRE(bin != nullptr);
  const fs::path out = fs::absolute(fs::path(bin).parent_path() / "test-output" / name);
  fs::create_directories(out);
  return out;
}

}  // namespace

TEST_CASE("report: the table and the plotted points equal the logs of two synthetic runs", "[report][e2e]") {
  Synthetic s;
  const std::vector<report::RunSummary> runs = report::read_runs({s.alpha, s.beta});
  REQUIRE(runs.size() == 2);
  const report::RunSummary& a = runs[0];
  const report::RunSummary& b = runs[1];
  INFO("notes: " << notes_of(a) << notes_of(b));
  REQUIRE(a.notes.empty());
  REQUIRE(b.notes.empty());

  REQUIRE(a.name == "alpha");
  REQUIRE(a.arch == "transformer");
  REQUIRE(*a.parameters == s.alpha_params);
  REQUIRE(*a.median_tokens_per_s == 1225.0);
  REQUIRE_FALSE(a.peak_rss_mb);  // not recorded: train.log is not read
  REQUIRE(*a.best_valid_bleu == 25.0);
  REQUIRE(*a.best_update == 20);  // the first of the two 25s
  REQUIRE(*a.best_elapsed_s == 1.5 * 20 + 0.25);
  REQUIRE_FALSE(a.valid_chrf_at_best);
  REQUIRE(*a.updates == 40);
  REQUIRE(*a.elapsed_s == 1.5 * 40 + 0.25);
  REQUIRE(a.test);
  REQUIRE(a.test->set == "test2016");
  REQUIRE(a.test->best->file == "score/test2016.best.json");
  REQUIRE(*a.test->best->bleu == 35.55);
  REQUIRE(*a.test->best->chrf == 55.125);
  REQUIRE(a.test->avg5->file == "score/test2016.avg5.json");
  REQUIRE(*a.test->avg5->bleu == 36.0);
  REQUIRE_FALSE(a.test->avg5->chrf);
  REQUIRE_FALSE(a.in_progress);

  REQUIRE(b.arch == "muse");
  REQUIRE(*b.parameters == s.beta_params);
  REQUIRE(*b.median_tokens_per_s == 1000.0 + 10.0 * 17);  // updates 4..30: 27 values, the middle is update 17
  REQUIRE(*b.peak_rss_mb == 130.0);
  REQUIRE(*b.best_valid_bleu == 30.0);
  REQUIRE(*b.valid_chrf_at_best == 50.0);
  REQUIRE(*b.best_update == 30);
  REQUIRE_FALSE(b.test);

  // The curves are the logged points.
  require_series(a.train_loss, s.alpha_log, "train", "loss");
  require_series(a.valid_ppl, s.alpha_log, "valid", "ppl");
  require_series(a.valid_bleu, s.alpha_log, "valid", "bleu");
  require_series(b.train_loss, s.beta_log, "train", "loss");
  require_series(b.valid_bleu, s.beta_log, "valid", "bleu");

  // The page: six plots, one polyline per run in each, with one vertex per logged point.
  const std::string page = report::report_page(runs);
  REQUIRE(test::count_occurrences(page, "<figure class=\"plot\"") == 6);
  for (const auto* run : {&a, &b}) {
    const std::vector<std::string> lines = polyline_points(page, run->name);
    REQUIRE(lines.size() == 6);
    const std::size_t want[] = {run->train_loss.size(), run->train_loss.size(), run->valid_ppl.size(),
                                run->valid_ppl.size(),  run->valid_bleu.size(), run->valid_bleu.size()};
    for (std::size_t k = 0; k < 6; ++k) REQUIRE(point_count(lines[k]) == want[k]);
  }
  // Against updates, x grows with the update; against time, with elapsed_s; higher loss is drawn higher (smaller y).
  const std::string loss_line = polyline_points(page, "alpha")[0];
  std::vector<std::pair<double, double>> xy;
  const std::regex pair_re("([0-9.]+),([0-9.]+)");
  for (std::sregex_iterator it(loss_line.begin(), loss_line.end(), pair_re), end; it != end; ++it)
    xy.push_back({std::stod((*it)[1].str()), std::stod((*it)[2].str())});
  REQUIRE(xy.size() == 40);
  for (std::size_t i = 1; i < xy.size(); ++i) {
    REQUIRE(xy[i].first > xy[i - 1].first);
    REQUIRE(xy[i].second > xy[i - 1].second);  // the loss falls
  }
  REQUIRE(test::count_occurrences(page, "<tr class=\"run\"") == 2);
  REQUIRE(test::count_occurrences(page, ">not recorded</td>") == 1);  // alpha's peak memory
  REQUIRE(page.find(">130 MB</td>") != std::string::npos);
  REQUIRE(page.find("<script src") == std::string::npos);  // offline: nothing loaded
  REQUIRE(page.find("http") == std::string::npos);

  // Two runs of the same name are told apart by their parent folders.
  fs::create_directories(s.dir.path() / "other" / "alpha");
  write_file(s.dir.path() / "other" / "alpha" / "log.jsonl", lines_of({train_line(1, false)}));
  const auto twins = report::read_runs({s.alpha, s.dir.path() / "other" / "alpha"});
  REQUIRE(twins[0].name == s.dir.path().filename().string() + "/alpha");
  REQUIRE(twins[1].name == "other/alpha");

  // The CLI: --json prints the same table; the page is written atomically where -o says.
  const fs::path html = s.dir.path() / "out" / "report.html";
  fs::create_directories(html.parent_path());
  const auto r = run_attn("report " + s.alpha.string() + " " + s.beta.string() + " --json");
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  const json table = json::parse(r.out);
  REQUIRE(table == report::runs_json(runs));
  REQUIRE(table["runs"][0]["median_target_tokens_per_s"] == 1225.0);
  REQUIRE(table["runs"][0]["test"]["best"]["bleu"] == 35.55);
  REQUIRE(table["runs"][1]["test"].is_null());
  REQUIRE(table["runs"][1]["notes"] == json::array());
  const auto w = run_attn("report " + s.alpha.string() + " " + s.beta.string() + "/ -o " + html.string());
  REQUIRE(w.status == 0);
  REQUIRE(w.out.empty());
  REQUIRE(w.err.find(html.string()) != std::string::npos);
  const std::string written = test::slurp(html);
  REQUIRE(test::count_occurrences(written, "<polyline class=\"curve\"") == 12);
  REQUIRE(written.find("data-run=\"beta\"") != std::string::npos);  // "beta/" is named beta too
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(html.parent_path())) left.push_back(e.path().filename().string());
  REQUIRE(left == std::vector<std::string>{"report.html"});  // no temporary left behind
}

TEST_CASE("report: runs not named seed<N> give no comparison, and the page and JSON of before", "[report]") {
  Synthetic s;
  const std::vector<report::RunSummary> runs = report::read_runs({s.alpha, s.beta});
  report::ComparisonOptions options;
  options.refs = s.dir.path();  // not read: no seed runs
  const report::Comparison c = report::compare_seed_runs(runs, options);
  REQUIRE(c.archs.empty());
  REQUIRE(report::report_page(runs, c) == report::report_page(runs));
  REQUIRE(report::report_json(runs, c) == report::runs_json(runs));
  REQUIRE(report::report_page(runs).find("id=\"comparison\"") == std::string::npos);
}

TEST_CASE("report (cli): a missing run directory is one line and exit status 2, nothing written",
          "[report][cli][e2e]") {
  Synthetic s;
  const fs::path html = s.dir.path() / "r.html";
  require_user_error(run_attn("report " + s.alpha.string() + " " + (s.dir.path() / "nope").string() + " -o " +
                              html.string()),
                     "nope: no such run directory");
  REQUIRE_FALSE(fs::exists(html));
  require_user_error(run_attn("report " + (s.alpha / "log.jsonl").string() + " -o " + html.string()),
                     "not a directory");
  require_user_error(run_attn("report -o " + html.string()), "RUN_DIR");
  REQUIRE_FALSE(fs::exists(html));
}

TEST_CASE("report (cli): headless chromium renders one curve per run in each plot and one row per run",
          "[report][cli][browser][e2e]") {
  if (!fs::exists(test::kChromium)) {
    ATTN_SKIP("chromium is not installed (apt-get install chromium)");
  }
  Synthetic s;
  const fs::path novalid = s.dir.path() / "gamma";
  fs::create_directories(novalid);
  std::vector<json> train;
  for (int u = 1; u <= 25; ++u) train.push_back(train_line(u, true));
  for (json& j : train) j["loss"] = j["loss"].get<double>() + 0.8;
  write_file(novalid / "log.jsonl", lines_of(train));
  write_model(novalid / "last.attn", "fastdisa");

  const fs::path out_dir = output_dir("report");
  const fs::path page = out_dir / "report.html";
  const auto r =
      run_attn("report " + s.alpha.string() + " " + s.beta.string() + " " + novalid.string() + " -o " + page.string());
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);

  // A probe run in the page: per plot, the curves the browser laid out with a non-zero length.
  std::string dom;
  const std::string seen = test::probe_page(
      s.dir.path(), page,
      "  const out = [];\n"
      "  document.querySelectorAll('figure.plot').forEach((f) => {\n"
      "    const drawn = Array.from(f.querySelectorAll('polyline.curve')).filter((p) => p.getTotalLength() > 0 &&\n"
      "      p.getBoundingClientRect().width > 0);\n"
      "    out.push(f.dataset.plot + ':' + drawn.map((p) => p.dataset.run).join('+'));\n"
      "  });\n"
      "  out.push('rows:' + document.querySelectorAll('#runs tbody tr.run').length);\n"
      "  document.body.setAttribute('data-probe', out.join(' '));\n",
      dom);
  INFO("probe: " << seen);
  for (const char* x : {"updates", "time"}) {
    REQUIRE(seen.find(std::string("train-loss-") + x + ":alpha+beta+gamma") != std::string::npos);
    REQUIRE(seen.find(std::string("valid-ppl-") + x + ":alpha+beta ") != std::string::npos);
    REQUIRE(seen.find(std::string("valid-bleu-") + x + ":alpha+beta ") != std::string::npos);
  }
  REQUIRE(seen.find("rows:3") != std::string::npos);
  REQUIRE(test::count_occurrences(dom, "<tr class=\"run\"") == 3);

  test::screenshot(s.dir.path(), page, out_dir / "report.png");
}
