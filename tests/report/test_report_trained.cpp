// attn report on runs trained by the CLI: two tiny runs of attn train, one
// of them resumed from an earlier checkpoint (as after a crash that lost
// last.attn); the table's numbers equal those recomputed here from each
// log's last line per update, and each process framed its part of the log
// with a model and an end record.
// GCC 12 at -O3 reports false -Warray-bounds in inlined std::string code (as in test_report.cpp).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Warray-bounds"
#endif
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "../cli/run_attn.h"
#include "../support.h"
#include "report_fixtures.h"
#include "attn/core/cpu.h"
#include "attn/model/model_file.h"
#include "attn/report/run_summary.h"

using namespace attn;
using attn::test::has_note;
using attn::test::notes_of;
using attn::test::require_series;
using attn::test::run_attn;
using nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("report (cli): two tiny runs trained by attn train, one resumed from an earlier checkpoint",
          "[report][cli][e2e]") {
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
      if (j["split"] == "model") {  // each process says where it ran
        REQUIRE(isa_supported(parse_isa(j.at("host").at("isa").get<std::string>())));
        const CpuName cpu = cpu_name();  // the same machine ran it
        REQUIRE(j["host"].at("cpu") ==
                json{{"model_name", cpu.model}, {"family", cpu.family}, {"model", cpu.model_number}});
        REQUIRE(j["host"].at("threads").get<int>() >= 1);
      }
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
    REQUIRE(row["parameters"] == model::load_model_values(fs::path(run.dir) / "best.attn").model->parameter_count());
  }
}
