// attn report: the table's numbers and the plotted points equal those in the
// logs it read (synthetic runs with known numbers, and two tiny runs trained
// by the CLI, one of them resumed from an earlier checkpoint); broken runs
// (no validation, in progress, corrupt, empty or missing log) become notes,
// never a crash; a missing RUN_DIR is one line and exit status 2; headless
// Chromium renders one curve per run in each plot and one table row per run.
// Also the progress line of translate and attend: drawn on a terminal only.
// GCC 12 at -O3 reports a false -Warray-bounds in the inlined std::string and
// nlohmann::json code this file instantiates (as in tests/cli/test_attend.cpp).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "../cli/run_attn.h"
#include "../support.h"
#include "browser.h"
#include "attn/core/progress.h"
#include "attn/model/model_file.h"
#include "attn/core/dir_lock.h"
#include "attn/report/comparison.h"
#include "attn/report/report_page.h"
#include "attn/report/run_summary.h"

using namespace attn;
using attn::test::require_user_error;
using attn::test::run_attn;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

bool has_note(const report::RunSummary& r, const std::string& needle) {
  for (const std::string& n : r.notes)
    if (n.find(needle) != std::string::npos) return true;
  return false;
}

std::string notes_of(const report::RunSummary& r) {
  std::string all;
  for (const std::string& n : r.notes) all += n + " | ";
  return all;
}

// ---- synthetic runs: logs with known numbers, tiny model files, score files ----

json train_line(int u, bool with_rss) {
  json j = {{"split", "train"},
            {"update", u},
            {"epoch", 1 + u / 20},
            {"loss", 9.0 - 0.125 * u},
            {"nll_loss", 8.5 - 0.125 * u},
            {"ppl", std::exp(8.5 - 0.125 * u)},
            {"lr", 1e-4 * u},
            {"grad_norm", 1.5},
            {"tokens_per_s", 1000.0 + 10.0 * u},
            {"elapsed_s", 1.5 * u},
            {"target_tokens", 100 * u}};
  if (with_rss) j["peak_rss_mb"] = 100.0 + u;
  return j;
}

json valid_line(int u, double bleu, std::optional<double> chrf = std::nullopt) {
  json j = {{"split", "valid"},
            {"update", u},
            {"epoch", 1 + u / 20},
            {"loss", 5.0 - 0.05 * u},
            {"nll_loss", 4.0 - 0.05 * u},
            {"ppl", std::exp(4.0 - 0.05 * u)},
            {"lr", 1e-4 * u},
            {"tokens_per_s", 0.0},
            {"elapsed_s", 1.5 * u + 0.25},
            {"target_tokens", 100 * u},
            {"bleu", bleu}};
  if (chrf) j["chrf"] = *chrf;
  return j;
}

std::string lines_of(const std::vector<json>& records) {
  std::string text;
  for (const json& j : records) text += j.dump() + "\n";
  return text;
}

void write_file(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// A tiny model file; returns its parameter count.
std::int64_t write_model(const fs::path& path, const std::string& arch) {
  const std::vector<std::string> corpus{"a small dog sleeps .", "ein kleiner hund schläft .", "the cat ."};
  text::BpeOptions options;
  options.vocab_size = 300;
  const text::Bpe bpe = text::Bpe::learn(corpus, options);
  model::ModelConfig c = model::preset(arch);
  c.vocab_size = bpe.vocab().size();
  c.dim = 16;
  c.heads = 2;
  c.ffn_dim = 32;
  c.enc_layers = 1;
  c.dec_layers = 1;
  c.options["muse_kernels"] = nlohmann::json::array({3});
  model::Seq2Seq m(c);
  Rng init(5);
  m.initialize(init);
  model::save_model_file(path, m, bpe);
  return m.parameter_count();
}

// Run "alpha": 40 train lines without peak memory (train.log has /usr/bin/time's), validations at 10..40
// with the best BLEU twice (the first counts), and test scores for 20 and 60 minutes.
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
    write_file(alpha / "train.log",
               "epoch 1 ...\n\tMaximum resident set size (kbytes): 1048576\n...\n"
               "\tMaximum resident set size (kbytes): 2097152\n\tAverage resident set size (kbytes): 0\n");
    // Scores: 60 minutes beats 20; the JSON beats the text of the same score; avg5 only as text.
    write_file(alpha / "score.20min.txt", R"([{"name": "BLEU", "score": 30.0}, {"name": "chrF2", "score": 50.0}])");
    write_file(
        alpha / "score.60min.txt",
        "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.4.0 = 35.5 70.0/45.0/30.0/20.0 (BP = 1.000)\n"
        "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.4.0 = 55.1\n");
    write_file(alpha / "score.60min.json",
               "[\n{\n \"name\": \"BLEU\",\n \"score\": 35.55,\n \"signature\": \"nrefs:1\"\n},\n"
               "{\n \"name\": \"chrF2\",\n \"score\": 55.125\n}\n]\n");
    write_file(
        alpha / "score.avg5.60min.txt",
        "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:attn-0.1.0 = 36.0 71.0/46.0/31.0/21.0 (BP = 1.000)\n"
        "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:attn-0.1.0 = 56.0\n");
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

void require_series(const std::vector<report::SeriesPoint>& got, const std::vector<json>& log, const char* split,
                    const char* key) {
  std::vector<report::SeriesPoint> want;
  for (const json& j : log)
    if (j["split"] == split && j.contains(key))
      want.push_back({j["update"].get<std::int64_t>(), j["elapsed_s"].get<double>(), j[key].get<double>()});
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO(split << " " << key << " point " << i);
    REQUIRE(got[i].update == want[i].update);
    REQUIRE(got[i].elapsed_s == want[i].elapsed_s);
    REQUIRE(got[i].value == want[i].value);
  }
}

fs::path output_dir(const std::string& name) {
  const char* bin = std::getenv("ATTN_BIN");
  REQUIRE(bin != nullptr);
  const fs::path out = fs::absolute(fs::path(bin).parent_path() / "test-output" / name);
  fs::create_directories(out);
  return out;
}

}  // namespace

TEST_CASE("report: the log parser keeps the last line per update, and notes corrupt and unfinished lines", "[report]") {
  SECTION("a resume that repeats updates: the resumed process's lines win") {
    std::vector<json> lines;
    for (int u = 1; u <= 6; ++u) lines.push_back(train_line(u, false));
    lines.push_back(valid_line(6, 12.0));
    json again = train_line(5, false);  // resumed from update 4: 5 and 6 again, then on
    again["loss"] = 1.0;
    lines.push_back(again);
    for (int u = 6; u <= 8; ++u) lines.push_back(train_line(u, false));
    lines.push_back(valid_line(8, 13.0));
    const report::ParsedLog log = report::parse_log(lines_of(lines));
    REQUIRE(log.train.size() == 8);
    for (std::size_t i = 0; i < log.train.size(); ++i) REQUIRE(log.train[i].update == static_cast<std::int64_t>(i + 1));
    REQUIRE(*log.train[4].loss == 1.0);
    REQUIRE(log.superseded == 3);  // train 5 and 6, and the validation at 6 the earlier process logged after them
    REQUIRE(log.valid.size() == 1);
    REQUIRE(log.valid[0].update == 8);
    REQUIRE(log.notes.size() == 1);
    REQUIRE(log.notes[0].find("resumed") != std::string::npos);
  }
  SECTION("a run started again from scratch in the same directory: only the new run's lines count") {
    std::vector<json> lines;
    for (int u = 1; u <= 6; ++u) lines.push_back(train_line(u, false));
    lines.push_back(valid_line(3, 12.0));
    lines.push_back(valid_line(6, 13.0));
    for (int u = 1; u <= 2; ++u) lines.push_back(train_line(u, false));
    const report::ParsedLog log = report::parse_log(lines_of(lines));
    REQUIRE(log.train.size() == 2);
    REQUIRE(log.valid.empty());
    REQUIRE(log.superseded == 8);
  }
  SECTION("corrupt lines are skipped with one note; an unfinished last line gets its own") {
    const std::string text = train_line(1, false).dump() + "\nnot json at all\n" + train_line(2, false).dump() +
                             "\n{\"split\": \"train\", \"upd\n\n" + "{\"split\": \"valid\"}\n" +
                             train_line(3, false).dump() + "\n" + train_line(4, false).dump().substr(0, 40);
    const report::ParsedLog log = report::parse_log(text);
    REQUIRE(log.train.size() == 3);
    REQUIRE(log.notes.size() == 2);
    REQUIRE(log.notes[0] == "log.jsonl: 3 lines are not a JSON log record (the first is line 2); skipped");
    REQUIRE(log.notes[1].find("unfinished") != std::string::npos);
  }
  SECTION("an empty log") {
    const report::ParsedLog log = report::parse_log("");
    REQUIRE(log.lines == 0);
    REQUIRE(log.train.empty());
    REQUIRE(log.notes.empty());
  }
}

TEST_CASE("report: median tokens/s, score files, /usr/bin/time's peak, axis ticks", "[report]") {
  std::vector<report::LogEntry> train;
  for (int u = 1; u <= 40; ++u) train.push_back({"train", u, 1.5 * u, {}, {}, {}, {}, 1000.0 + 10.0 * u});
  REQUIRE(*report::median_tokens_per_s(train) == 1225.0);  // updates 5..40: 1050..1400, even count
  train.resize(3);                                         // nothing past 10% of update 3 but updates 1..3 themselves
  REQUIRE(*report::median_tokens_per_s(train) == 1020.0);
  REQUIRE_FALSE(report::median_tokens_per_s({}).has_value());

  const auto json_score =
      report::parse_score_file(R"([{"name": "BLEU", "score": 37.6}, {"name": "chrF2", "score": 57.8}])");
  REQUIRE(json_score);
  REQUIRE(*json_score->bleu == 37.6);
  REQUIRE(*json_score->chrf == 57.8);
  const auto single = report::parse_score_file(R"({"name": "BLEU", "score": 12.5})");
  REQUIRE((single && *single->bleu == 12.5 && !single->chrf));
  const auto text_score =
      report::parse_score_file("BLEU|nrefs:1|tok:13a = 37.6 72.1/47.8 (BP = 0.948)\nchrF2|nrefs:1 = 57.8\n");
  REQUIRE(text_score);
  REQUIRE(*text_score->bleu == 37.6);
  REQUIRE(*text_score->chrf == 57.8);
  REQUIRE_FALSE(report::parse_score_file("37.6\n57.8\n"));  // --score-only: which is which is unknown
  REQUIRE_FALSE(report::parse_score_file("[garbage"));

  REQUIRE(*report::parse_time_peak_rss_mb(
              "Maximum resident set size (kbytes): 2048\nMaximum resident set size (kbytes): 1024\n") == 2.0);
  REQUIRE_FALSE(report::parse_time_peak_rss_mb("nothing here"));

  REQUIRE(report::linear_ticks(0, 3365, 5) == std::vector<double>{0, 500, 1000, 1500, 2000, 2500, 3000, 3500});
  for (const auto& [lo, hi] : std::vector<std::pair<double, double>>{{2.4, 9.5}, {0.0, 0.37}, {5.26, 148.0}, {3, 3}}) {
    const std::vector<double> ticks = report::linear_ticks(lo, hi, 5);
    INFO(lo << ".." << hi);
    REQUIRE(ticks.size() >= 3);
    REQUIRE(ticks.size() <= 11);
    REQUIRE(ticks.front() <= lo);
    REQUIRE(ticks.back() >= hi);
    for (std::size_t i = 2; i < ticks.size(); ++i)
      REQUIRE(std::abs((ticks[i] - ticks[i - 1]) - (ticks[1] - ticks[0])) < 1e-9 * std::max(1.0, hi));
  }
}

// tools/compare.sh scores into score/<set>.<model>.json, the long-input probes beside the test set.
TEST_CASE("report: a compare.sh run's test scores come from score/, the plain test set's, not a probe's", "[report]") {
  test::ScratchDir dir;
  const fs::path run = dir.path() / "seed1";
  fs::create_directories(run / "score");
  std::vector<json> log;
  for (int u = 1; u <= 10; ++u) log.push_back(train_line(u, true));
  write_file(run / "log.jsonl", lines_of(log));
  const auto score = [](double bleu, double chrf) {
    return "[{\"name\": \"BLEU\", \"score\": " + std::to_string(bleu) +
           "}, {\"name\": \"chrF2\", \"score\": " + std::to_string(chrf) + "}]";
  };
  write_file(run / "score" / "test2016.join2.best.json", score(18.0, 40.0));  // sorts first, but is a probe
  write_file(run / "score" / "test2016.best.json", score(37.5, 57.5));
  write_file(run / "score" / "test2016.avg5.json", score(38.25, 58.0));
  const report::RunSummary r = report::read_run(run);
  REQUIRE(r.test);
  REQUIRE(r.test->set == "test2016");
  REQUIRE(r.test->best->file == "score/test2016.best.json");
  REQUIRE(*r.test->best->bleu == 37.5);
  REQUIRE(*r.test->avg5->chrf == 58.0);
  // A budget's score files, when there are, win: the runs of experiments/quality_m30k.sh read as before.
  write_file(run / "score.60min.json", score(30.0, 50.0));
  const report::RunSummary timed = report::read_run(run);
  REQUIRE(timed.test->set.empty());
  REQUIRE(timed.test->minutes == 60);
  REQUIRE(*timed.test->best->bleu == 30.0);
}

TEST_CASE("report: the table and the plotted points equal the logs of two synthetic runs", "[report]") {
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
  REQUIRE(*a.peak_rss_mb == 2048.0);  // the larger of train.log's two
  REQUIRE(a.peak_rss_source == "train.log");
  REQUIRE(*a.best_valid_bleu == 25.0);
  REQUIRE(*a.best_update == 20);  // the first of the two 25s
  REQUIRE(*a.best_elapsed_s == 1.5 * 20 + 0.25);
  REQUIRE_FALSE(a.valid_chrf_at_best);
  REQUIRE(*a.updates == 40);
  REQUIRE(*a.elapsed_s == 1.5 * 40 + 0.25);
  REQUIRE(a.test);
  REQUIRE(a.test->minutes == 60);
  REQUIRE(a.test->best->file == "score.60min.json");
  REQUIRE(*a.test->best->bleu == 35.55);
  REQUIRE(*a.test->best->chrf == 55.125);
  REQUIRE(a.test->avg5->file == "score.avg5.60min.txt");
  REQUIRE(*a.test->avg5->bleu == 36.0);
  REQUIRE(*a.test->avg5->chrf == 56.0);
  REQUIRE_FALSE(a.in_progress);

  REQUIRE(b.arch == "muse");
  REQUIRE(*b.parameters == s.beta_params);
  REQUIRE(*b.median_tokens_per_s == 1000.0 + 10.0 * 17);  // updates 4..30: 27 values, the middle is update 17
  REQUIRE(*b.peak_rss_mb == 130.0);
  REQUIRE(b.peak_rss_source == "log");
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

TEST_CASE("report: the save dir's lock tells a live run from a killed one, whatever the log's age", "[report]") {
  test::ScratchDir dir;
  std::vector<json> train;
  for (int u = 1; u <= 6; ++u) train.push_back(train_line(u, true));
  const fs::path dead = dir.path() / "dead", live = dir.path() / "live";
  for (const fs::path& run : {dead, live}) {
    fs::create_directories(run);
    write_file(run / "log.jsonl", lines_of(train));
  }
  { DirLock released(dead); }  // a killed trainer's lock file: there, held by nobody
  fs::last_write_time(live / "log.jsonl", fs::file_time_type::clock::now() - std::chrono::hours(2));
  const DirLock holding(live);  // a trainer that has not logged for two hours but runs
  const std::vector<report::RunSummary> runs = report::read_runs({dead, live});
  INFO(notes_of(runs[0]) << " | " << notes_of(runs[1]));
  REQUIRE_FALSE(runs[0].in_progress);  // its log is seconds old, but no process holds its lock
  REQUIRE(has_note(runs[0], "no process holds its attn.lock"));
  REQUIRE(runs[1].in_progress);
  REQUIRE(has_note(runs[1], "in progress"));
}

TEST_CASE("report: runs without validation, in progress, with corrupt, empty or no log get notes, not a crash",
          "[report]") {
  test::ScratchDir dir;
  auto make = [&](const std::string& name) {
    fs::create_directories(dir.path() / name);
    return dir.path() / name;
  };
  const fs::path novalid = make("novalid"), running = make("running"), corrupt = make("corrupt"), empty = make("empty"),
                 nolog = make("nolog"), killed = make("killed");
  std::vector<json> train;
  for (int u = 1; u <= 12; ++u) train.push_back(train_line(u, true));
  write_file(novalid / "log.jsonl", lines_of(train));
  write_model(novalid / "last.attn", "convsan");
  // In progress: the log goes on after the last checkpoint and its last line is being written.
  write_file(running / "log.jsonl",
             lines_of(train) + valid_line(12, 3.0).dump() + "\n" + train_line(13, true).dump().substr(0, 30));
  write_file(corrupt / "log.jsonl", lines_of({train[0], train[1]}) + "\x01\x02 binary junk\n" + lines_of({train[2]}) +
                                        "{\"split\": \"valid\", \"update\": 3, \"elapsed_s\": 5, \"bleu\": 7.5}\n");
  write_model(corrupt / "best.attn", "fastdisa");
  write_file(empty / "log.jsonl", "");
  write_file(killed / "log.jsonl", lines_of(train));
  fs::last_write_time(killed / "log.jsonl", fs::file_time_type::clock::now() - std::chrono::hours(2));
  write_file(nolog / "best.attn", "not a model file at all");

  const DirLock trainer(running);  // a live trainer holds its save dir's lock
  const std::vector<report::RunSummary> runs = report::read_runs({novalid, running, corrupt, empty, nolog, killed});
  REQUIRE(runs.size() == 6);
  for (const auto& r : runs) {
    INFO(r.name << ": " << notes_of(r));
    REQUIRE_FALSE(r.notes.empty());
  }
  REQUIRE(has_note(runs[0], "no validation yet"));
  REQUIRE_FALSE(runs[0].best_valid_bleu);
  REQUIRE(*runs[0].updates == 12);
  REQUIRE(*runs[0].peak_rss_mb == 112.0);
  REQUIRE(runs[0].arch == "convsan");
  REQUIRE_FALSE(runs[0].in_progress);
  REQUIRE(runs[1].in_progress);
  REQUIRE(has_note(runs[1], "in progress"));
  REQUIRE(has_note(runs[1], "unfinished"));
  REQUIRE(has_note(runs[1], "arch and parameters are not known"));
  REQUIRE(*runs[1].best_valid_bleu == 3.0);
  REQUIRE(has_note(runs[2], "not a JSON log record (the first is line 3)"));
  REQUIRE(runs[2].train_loss.size() == 3);
  REQUIRE(*runs[2].best_valid_bleu == 7.5);
  REQUIRE(runs[2].valid_ppl.empty());
  REQUIRE(has_note(runs[3], "empty"));
  REQUIRE(has_note(runs[4], "no log.jsonl"));
  REQUIRE(has_note(runs[4], "best.attn"));  // the broken model file is named
  REQUIRE(runs[4].arch.empty());
  REQUIRE(has_note(runs[5], "stopped without an end record"));
  REQUIRE_FALSE(runs[5].in_progress);

  const std::string page = report::report_page(runs);
  REQUIRE(test::count_occurrences(page, "<tr class=\"run\"") == 6);
  REQUIRE(page.find("no validation yet") != std::string::npos);
  REQUIRE(page.find("in progress") != std::string::npos);
  REQUIRE(page.find("no data yet") == std::string::npos);  // some run has points in every plot

  std::string args;
  for (const auto& r : runs) args += " " + r.dir;
  const auto out = run_attn("report" + args + " --json");
  REQUIRE(out.status == 0);
  const json table = json::parse(out.out);
  REQUIRE(table["runs"].size() == 6);
  for (const json& r : table["runs"]) REQUIRE_FALSE(r["notes"].empty());
  REQUIRE(table["runs"][1]["in_progress"] == true);

  // A page of runs without any point says so in each plot.
  const std::string bare = report::report_page({runs[3], runs[4]});
  REQUIRE(test::count_occurrences(bare, "no data yet") == 6);
}

TEST_CASE("report: a log's model and end records stand in for model files, and tell a finished run", "[report]") {
  test::ScratchDir dir;
  std::vector<json> records{{{"split", "model"},
                             {"update", 0},
                             {"elapsed_s", 0.0},
                             {"arch", "muse"},
                             {"parameters", 1234},
                             {"config", {{"arch", "muse"}, {"decoder_mixer", "mha"}}}}};
  for (int u = 1; u <= 12; ++u) records.push_back(train_line(u, true));
  records.push_back(valid_line(12, 4.0));
  const json interrupted = {{"split", "end"}, {"update", 12}, {"elapsed_s", 18.5}, {"reason", "interrupted"}};
  const json finished = {{"split", "end"}, {"update", 12}, {"elapsed_s", 18.5}, {"reason", "finished"}};

  // Archived (no model files), finished: arch and parameters from the log, and no "killed?" note however old.
  const fs::path archived = dir.path() / "archived", stopped = dir.path() / "stopped", resumed = dir.path() / "resumed";
  for (const fs::path& p : {archived, stopped, resumed}) fs::create_directories(p);
  write_file(archived / "log.jsonl", lines_of(records) + finished.dump() + "\n");
  fs::last_write_time(archived / "log.jsonl", fs::file_time_type::clock::now() - std::chrono::hours(2));
  // Stopped by a signal: says so. Resumed after the stop: the end record no longer counts.
  write_file(stopped / "log.jsonl", lines_of(records) + interrupted.dump() + "\n");
  write_file(resumed / "log.jsonl", lines_of(records) + interrupted.dump() + "\n" + train_line(13, true).dump() + "\n");

  const DirLock resumed_trainer(resumed);
  const std::vector<report::RunSummary> runs = report::read_runs({archived, stopped, resumed});
  INFO("archived: " << notes_of(runs[0]) << "stopped: " << notes_of(runs[1]) << "resumed: " << notes_of(runs[2]));
  REQUIRE(runs[0].arch == "muse + mha decoder");
  REQUIRE(*runs[0].parameters == 1234);
  REQUIRE(runs[0].notes.empty());
  REQUIRE(*runs[0].best_valid_bleu == 4.0);
  REQUIRE(*runs[0].updates == 12);
  REQUIRE(has_note(runs[1], "stopped by SIGINT/SIGTERM/SIGHUP at update 12"));
  REQUIRE_FALSE(runs[1].in_progress);
  REQUIRE(runs[2].in_progress);
  REQUIRE(*runs[2].updates == 13);

  const report::ParsedLog plain = report::parse_log(lines_of({train_line(1, false)}));
  REQUIRE(plain.arch.empty());
  REQUIRE(plain.end_reason.empty());
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

TEST_CASE("report (cli): a missing run directory is one line and exit status 2, nothing written", "[report][cli]") {
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

TEST_CASE("report (cli): two tiny runs trained by attn train, one resumed from an earlier checkpoint",
          "[report][cli]") {
  test::ScratchDir dir;
  std::string train_src, train_tgt, valid_src, valid_tgt;
  {  // 200 training and 40 validation pairs of the toy corpus
    const fs::path toy = fs::path(__FILE__).parent_path() / ".." / ".." / "data" / "toy";
    std::ifstream src(toy / "train.src"), tgt(toy / "train.tgt");
    REQUIRE(src);
    std::string a, b;
    for (int i = 0; i < 240 && std::getline(src, a) && std::getline(tgt, b); ++i) {
      (i < 200 ? train_src : valid_src) += a + "\n";
      (i < 200 ? train_tgt : valid_tgt) += b + "\n";
    }
  }
  dir.write("train.src", train_src);
  dir.write("train.tgt", train_tgt);
  dir.write("valid.src", valid_src);
  dir.write("valid.tgt", valid_tgt);
  const fs::path one = dir.path() / "transformer-run", two = dir.path() / "convsan-run";
  auto train = [&](const fs::path& run, const std::string& arch, int updates) {
    const auto r = run_attn("train --train " + (dir.path() / "train").string() + " --valid " +
                            (dir.path() / "valid").string() + " --arch " + arch +
                            " --dim 16 --ffn-dim 32 --heads 2 --layers 1 --vocab-size 300" +
                            " --max-tokens 300 --max-updates " + std::to_string(updates) +
                            " --valid-every 4 --log-every 1 --threads 1 -q --save-dir " + run.string() +
                            " --log-json " + (run / "log.jsonl").string());
    INFO("stderr: " << r.err);
    REQUIRE(r.status == 0);
  };
  train(one, "transformer", 12);
  // Run two: to update 8, then again from its update-4 checkpoint (as after a crash that lost last.attn) to 12.
  train(two, "convsan", 4);
  fs::copy_file(two / "last.attn", dir.path() / "last.4.attn");
  train(two, "convsan", 8);
  fs::copy_file(dir.path() / "last.4.attn", two / "last.attn", fs::copy_options::overwrite_existing);
  train(two, "convsan", 12);

  const auto r = run_attn("report " + one.string() + " " + two.string() + " --json");
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  const json table = json::parse(r.out);
  const std::vector<report::RunSummary> runs = report::read_runs({one, two});
  for (std::size_t k = 0; k < 2; ++k) {
    const report::RunSummary& run = runs[k];
    const json& row = table["runs"][k];
    INFO(run.name << ": " << notes_of(run));
    INFO("row " << row.dump());
    // The log, read here on its own: the last line per (split, update) wins.
    std::map<std::int64_t, json> train_lines, valid_lines;
    std::ifstream log(fs::path(run.dir) / "log.jsonl");
    std::string line;
    std::int64_t lines = 0;
    double peak = 0;                 // over every line: the superseded process was part of the run
    std::vector<std::string> frame;  // the model and end records, in order
    while (std::getline(log, line)) {
      const json j = json::parse(line);
      if (j["split"] == "model" || j["split"] == "end") {
        frame.push_back(j["split"].get<std::string>());
        continue;
      }
      (j["split"] == "train" ? train_lines : valid_lines)[j["update"].get<std::int64_t>()] = j;
      REQUIRE(j.contains("peak_rss_mb"));  // the trainer logs its peak memory
      peak = std::max(peak, j["peak_rss_mb"].get<double>());
      ++lines;
    }
    REQUIRE(train_lines.size() == 12);
    REQUIRE(valid_lines.size() == 3);
    // Each process framed its part with a model and an end record (run two had three processes).
    std::vector<std::string> framed;
    for (int process = 0; process < (k == 1 ? 3 : 1); ++process) framed.insert(framed.end(), {"model", "end"});
    REQUIRE(frame == framed);
    if (k == 1) {
      REQUIRE(lines == 12 + 4 + 3 + 1);  // updates 5..8 and the validation at 8 twice
      REQUIRE(has_note(run, "resumed"));
    } else {
      REQUIRE(run.notes.empty());
    }
    std::vector<json> last;
    for (const auto& [u, j] : train_lines) last.push_back(j);
    for (const auto& [u, j] : valid_lines) last.push_back(j);
    require_series(run.train_loss, last, "train", "loss");
    require_series(run.valid_bleu, last, "valid", "bleu");
    require_series(run.valid_ppl, last, "valid", "ppl");
    double best = -1, best_elapsed = 0;
    std::int64_t best_update = 0;
    for (const auto& [u, j] : valid_lines)
      if (j["bleu"].get<double>() > best) {
        best = j["bleu"].get<double>();
        best_update = u;
        best_elapsed = j["elapsed_s"].get<double>();
      }
    std::vector<double> speeds;
    for (const auto& [u, j] : train_lines) {
      if (u > 1) speeds.push_back(j["tokens_per_s"].get<double>());  // after 10% of 12 updates
    }
    std::sort(speeds.begin(), speeds.end());
    REQUIRE(speeds.size() == 11);
    REQUIRE(row["median_target_tokens_per_s"] == speeds[5]);
    REQUIRE(row["best_valid_bleu"] == best);
    REQUIRE(row["best_update"] == best_update);
    REQUIRE(row["best_elapsed_s"] == best_elapsed);
    REQUIRE(row["peak_rss_mb"] == peak);
    REQUIRE(peak > 1.0);
    REQUIRE(row["updates"] == 12);
    REQUIRE(row["arch"] == (k == 0 ? "transformer" : "convsan"));
    REQUIRE(row["parameters"] == model::load_model_file(fs::path(run.dir) / "best.attn").model->parameter_count());
  }
}

TEST_CASE("report (cli): headless chromium renders one curve per run in each plot and one row per run",
          "[report][cli][browser]") {
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

TEST_CASE("progress: the sentence counter's text, and translate and attend draw it on a terminal only",
          "[report][cli]") {
  REQUIRE(count_progress_text("sentences", 1200, 3000, 40.0) ==
          "1,200/3,000 sentences (40%) | 30.0 sentences/s | ETA 0:01:00");
  REQUIRE(count_progress_text("sentences", 3000, 3000, 100.0) ==
          "3,000/3,000 sentences (100%) | 30.0 sentences/s | 0:01:40");
  REQUIRE(count_progress_text("sentences", 0, 10, 0.0) == "0/10 sentences (0%) | 0.0 sentences/s | ETA ?");
  REQUIRE(format_count(1234567) == "1,234,567");
  REQUIRE(format_count(-999) == "-999");

  test::ScratchDir dir;
  write_model(dir.path() / "m.attn", "transformer");
  std::string input;
  for (int i = 0; i < 30; ++i) input += "a small dog sleeps .\n";
  const std::string src = dir.write("in.txt", input);
  const std::string model = (dir.path() / "m.attn").string();
  const std::string translate = "translate -m " + model + " -i " + src + " -o " + (dir.path() / "out.txt").string() +
                                " --max-len-b 5 --threads 1";
  const std::string attend = "attend -m " + model + " -i " + src + " -o " + (dir.path() / "maps.json").string() +
                             " --max-len-b 5 --threads 1";
  for (const std::string& args : {translate, attend}) {
    INFO(args);
    const auto quiet = run_attn(args);  // stderr is a file: no progress line
    REQUIRE(quiet.status == 0);
    REQUIRE(quiet.err.find("sentences/s") == std::string::npos);
    // On a terminal (script(1) gives the command a pseudo-terminal): the line, ending at 30/30.
    if (!fs::exists("/usr/bin/script")) {
      WARN("script(1) is not installed: the terminal half of the progress test is skipped");
      continue;
    }
    const fs::path typed = dir.path() / "tty.txt";
    const std::string cmd = "script -qec \"" + std::string(std::getenv("ATTN_BIN")) + " " + args + "\" /dev/null >" +
                            typed.string() + " 2>&1 </dev/null";
    REQUIRE(std::system(cmd.c_str()) == 0);
    const std::string screen = test::slurp(typed);
    INFO("terminal: " << screen);
    REQUIRE(test::count_occurrences(screen, "30/30 sentences (100%)") == 1);  // the final count is drawn once
    REQUIRE(screen.find("\r\033[K") != std::string::npos);
  }
}

TEST_CASE("report: in progress is decided by the lock alone; a run killed mid-training is noted", "[report]") {
  test::ScratchDir dir;
  const json model_record = {
      {"split", "model"}, {"update", 0}, {"elapsed_s", 0.0}, {"arch", "transformer"}, {"parameters", 1000}};
  std::vector<json> records{model_record};
  for (int u = 1; u <= 6; ++u) records.push_back(train_line(u, true));
  records.push_back(valid_line(6, 3.0));
  const fs::path live = dir.path() / "live", killed = dir.path() / "killed";
  for (const fs::path& run : {live, killed}) {
    fs::create_directories(run);
    write_file(run / "log.jsonl", lines_of(records));
    // The checkpoint after the log, as the trainer writes them at a validation: the log is not newer.
    fs::last_write_time(run / "log.jsonl", fs::file_time_type::clock::now() - std::chrono::minutes(1));
    write_model(run / "last.attn", "transformer");
  }
  { DirLock released(killed); }  // SIGKILLed mid-training: the kernel let its lock go
  const DirLock holding(live);
  const std::vector<report::RunSummary> runs = report::read_runs({live, killed});
  INFO(notes_of(runs[0]) << " || " << notes_of(runs[1]));
  REQUIRE(runs[0].in_progress);
  REQUIRE(has_note(runs[0], "in progress"));
  REQUIRE_FALSE(runs[1].in_progress);
  REQUIRE(has_note(runs[1], "stopped without an end record at update 6"));
  REQUIRE(has_note(runs[1], "no process holds its attn.lock"));
}

TEST_CASE("report: a FIFO or a device as log.jsonl is not read; an endless line is skipped", "[report][io]") {
  test::ScratchDir dir;
  const fs::path fifo = dir.path() / "fifo", zero = dir.path() / "zero", long_line = dir.path() / "long";
  for (const fs::path& run : {fifo, zero, long_line}) {
    fs::create_directories(run);
    write_model(run / "last.attn", "transformer");
  }
  REQUIRE(::mkfifo((fifo / "log.jsonl").c_str(), 0644) == 0);  // no writer: opening it would block for ever
  fs::create_symlink("/dev/zero", zero / "log.jsonl");         // reading it to the end never ends
  write_file(long_line / "log.jsonl", std::string(3 << 20, 'x') + "\n" + lines_of({train_line(1, true)}));
  // The real binary, bounded in time and memory: the old reader hung on the FIFO and filled memory from /dev/zero.
  // AddressSanitizer reserves terabytes of address space for its shadow, so under it only time is bounded here
  // (the main pass bounds memory too).
#if defined(__SANITIZE_ADDRESS__)
  const char* const bounds = "timeout 60 ";
#else
  const char* const bounds = "ulimit -v 4000000; timeout 60 ";
#endif
  const test::RunResult r =
      run_attn("report " + fifo.string() + " " + zero.string() + " " + long_line.string() + " --json", "", bounds);
  INFO(r.err);
  REQUIRE(r.status == 0);
  const json table = json::parse(r.out);
  REQUIRE(table["runs"][0]["notes"].dump().find("not a regular file") != std::string::npos);
  REQUIRE(table["runs"][1]["notes"].dump().find("not a regular file") != std::string::npos);
  REQUIRE(table["runs"][2]["notes"].dump().find("longer than 1 MiB") != std::string::npos);
  REQUIRE(table["runs"][2]["updates"] == 1);
}

TEST_CASE("report: a folder that holds no run is said, exit status 2", "[report]") {
  test::ScratchDir dir;
  fs::create_directories(dir.path() / "empty");
  write_file(dir.path() / "notes.txt", "not a run\n");
  require_user_error(run_attn("report " + (dir.path() / "empty").string() + " --json"), "holds no training run");
  require_user_error(run_attn("report " + dir.path().string() + " --json"), "holds no training run");
}
