// experiments/compare.sh, the multi-seed comparison: killed mid-training (the
// whole process group, as when a session ends) and rerun with the same
// command, it finishes with the same translations, scores and weights as a run
// that was never interrupted. Its archive (--archive) is the run layout attn
// report reads (docs/report.md), written as a run finishes or, for a run
// finished before, by the next call.
#include <catch2/catch.hpp>

#include <signal.h>

#include <filesystem>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "../support.h"
#include "../train/tiny_corpus.h"
#include "../cli/child_process.h"
#include "../cli/run_attn.h"

namespace fs = std::filesystem;
using namespace attn;

namespace {

const fs::path kRepo = fs::path(__FILE__).parent_path().parent_path().parent_path();

// Every tensor of a model file (weights and optimizer moments), not its header, which holds the wall time.
std::string tensor_bytes(const fs::path& model) {
  const std::string blob = test::slurp(model);
  REQUIRE(blob.size() >= 8);
  std::uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = header << 8 | static_cast<unsigned char>(blob[i]);
  return blob.substr(8 + header);
}

std::vector<std::string> compare_words(const fs::path& data, const fs::path& out, const fs::path& archive = {}) {
  std::vector<std::string> words{"experiments/compare.sh"};
  if (!archive.empty()) words.insert(words.end(), {"--archive", archive.string()});
  words.insert(words.end(), {"--data",        data.string(),
                             "--out",         out.string(),
                             "--seeds",       "1",
                             "--updates",     "16",
                             "--probes",      "2",
                             "transformer",   "--",
                             "--dim",         "16",
                             "--heads",       "2",
                             "--layers",      "1",
                             "--ffn-dim",     "32",
                             "--vocab-size",  "300",
                             "--max-tokens",  "400",
                             "--valid-every", "6"});
  return words;
}

// The environment of every compare.sh call: this build's attn, the toy language suffixes.
std::string compare_env() {
  return std::string("COMPARE_ATTN=") + std::getenv("ATTN_BIN") + " COMPARE_SRC=src COMPARE_TGT=tgt COMPARE_TEST=test ";
}

int run_compare(const fs::path& data, const fs::path& out, const fs::path& log, const fs::path& archive = {}) {
  const std::string cmd = "cd " + test::shell_words({kRepo.string()}) + " && " + compare_env() + "bash " +
                          test::shell_words(compare_words(data, out, archive)) + " >>" + log.string() + " 2>&1";
  const int raw = std::system(cmd.c_str());
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

// The names in a folder.
std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
  return names;
}

}  // namespace

TEST_CASE("compare.sh: killed mid-training and rerun, it ends as an uninterrupted comparison",
          "[experiments][compare][e2e]") {
  REQUIRE(std::getenv("ATTN_BIN") != nullptr);
  if (std::system("python3 -c 'import json' >/dev/null 2>&1") != 0) {  // compare.sh makes its probes with Python
    ATTN_SKIP("python3 is not installed (apt-get install python3)");
  }
  test::ScratchDir dir;
  const fs::path data = dir.path() / "data";
  fs::create_directories(data);
  test::write_tiny_corpus(data, "train", 300, 1);
  test::write_tiny_corpus(data, "valid", 20, 2);
  test::write_tiny_corpus(data, "test", 12, 3);
  const fs::path log = dir.path() / "compare.log";

  const fs::path kept = dir.path() / "kept" / "transformer" / "seed1";
  REQUIRE(run_compare(data, dir.path() / "straight", log, dir.path() / "kept") == 0);

  // Paused inside training at update 9 (after the checkpoint of update 6), then
  // the script and its attn are killed at once.
  const fs::path cut = dir.path() / "cut", run = cut / "transformer" / "seed1";
  {
    std::vector<std::string> words{"-c", "cd " + test::shell_words({kRepo.string()}) + " && " + compare_env() +
                                             "exec bash " + test::shell_words(compare_words(data, cut)) +
                                             " --test-pause-at update:9"};
    words.insert(words.begin(), "bash");
    test::ChildProcess script(words, log, "/usr/bin/setsid");
    REQUIRE(script.wait_until([&] { return fs::exists(run / "paused"); }));
    REQUIRE(fs::exists(run / "last.attn"));
    REQUIRE_FALSE(fs::exists(run / "train.done"));
    script.signal_group(SIGKILL);
    script.wait();
  }
  REQUIRE(run_compare(data, cut, log) == 0);
  // Two starts in the run's log: the first from scratch, the second resumed at update 6.
  const std::string records = test::slurp(run / "log.jsonl");
  const std::size_t second = records.rfind("\"split\":\"model\"");
  REQUIRE(records.find("\"split\":\"model\"") != second);
  const std::size_t line_start = records.rfind('\n', second) + 1;
  REQUIRE(records.substr(line_start, records.find('\n', second) - line_start).find("\"update\":6") !=
          std::string::npos);

  const fs::path straight = dir.path() / "straight" / "transformer" / "seed1";
  REQUIRE(fs::exists(run / "done"));
  REQUIRE(tensor_bytes(run / "last.attn") == tensor_bytes(straight / "last.attn"));
  for (const char* set : {"test", "test.join2"})
    for (const char* model : {"best", "avg5"}) {
      const std::string name = std::string(set) + "." + model;
      INFO(name);
      REQUIRE(test::slurp(run / "hyp" / (name + ".txt")) == test::slurp(straight / "hyp" / (name + ".txt")));
      REQUIRE(test::slurp(run / "score" / (name + ".json")) == test::slurp(straight / "score" / (name + ".json")));
    }
  // A third call has nothing left to train; given --archive, it archives the run finished before.
  const fs::path kept_cut = dir.path() / "kept-cut" / "transformer" / "seed1";
  REQUIRE(run_compare(data, cut, log, dir.path() / "kept-cut") == 0);
  REQUIRE(test::slurp(log).find("transformer seed 1: done") != std::string::npos);

  // The archives: the run layout without model files, and the comparison's own files (commit, done);
  // train.log only when attn train wrote anything there.
  for (const auto& [archived, source] : {std::pair{kept, straight}, std::pair{kept_cut, run}}) {
    INFO(archived.string());
    std::set<std::string> want{"commit", "done", "log.jsonl", "score", "segments"};
    if (fs::file_size(source / "train.log") > 0) want.insert("train.log");
    REQUIRE(names_in(archived) == want);  // no hyp/: the translations hold the corpus's text
    REQUIRE(names_in(archived / "segments") ==
            std::set<std::string>{"test.avg5.tsv", "test.best.tsv", "test.join2.avg5.tsv", "test.join2.best.tsv"});
    REQUIRE(test::slurp(archived / "commit").find("experiments/compare.sh of ") != std::string::npos);
  }
  for (const char* set : {"test", "test.join2"})
    for (const char* model : {"best", "avg5"}) {
      const std::string name = std::string(set) + "." + model;
      REQUIRE(test::slurp(kept_cut / "segments" / (name + ".tsv")) == test::slurp(kept / "segments" / (name + ".tsv")));
      REQUIRE(test::slurp(kept_cut / "score" / (name + ".json")) == test::slurp(straight / "score" / (name + ".json")));
    }
  // The statistics are those of the translations against the references: the archive scores as the run does.
  const auto scored_run = test::run_attn("report " + straight.string() + " --refs " +
                                         (dir.path() / "straight" / "refs").string() + " --tgt-lang tgt --json");
  const auto scored_archive = test::run_attn("report " + kept.string() + " --json");
  REQUIRE(scored_run.status == 0);
  REQUIRE(scored_archive.status == 0);
  const nlohmann::json run_outputs = nlohmann::json::parse(scored_run.out)["comparison"]["archs"][0]["outputs"],
                       archive_outputs = nlohmann::json::parse(scored_archive.out)["comparison"]["archs"][0]["outputs"];
  REQUIRE(run_outputs.size() == 4);
  REQUIRE(archive_outputs.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    REQUIRE(run_outputs[i]["per_seed"][0]["source"] == "hyp");
    REQUIRE(archive_outputs[i]["per_seed"][0]["source"] == "segments");
    REQUIRE(archive_outputs[i]["per_seed"][0]["bleu"] == run_outputs[i]["per_seed"][0]["bleu"]);
    REQUIRE(archive_outputs[i]["per_seed"][0]["chrf"] == run_outputs[i]["per_seed"][0]["chrf"]);
  }
  // An archive of the older layout (translations in hyp/) is converted in place: its segments are the
  // new archive's, its log stays, its hyp/ goes; a translation without its reference changes nothing.
  const fs::path old = dir.path() / "old" / "transformer" / "seed1";
  fs::create_directories(old);
  fs::copy(kept, old, fs::copy_options::recursive);
  fs::remove_all(old / "segments");
  fs::copy(straight / "hyp", old / "hyp");
  const std::string log_before = test::slurp(old / "log.jsonl");
  const auto archive_in_place = [&](const fs::path& refs) {
    const std::string cmd = "cd " + test::shell_words({kRepo.string()}) + " && python3 experiments/archive_run.py " +
                            test::shell_words({old.string(), old.string(), "--refs", refs.string(), "--tgt", "tgt",
                                               "--attn", std::getenv("ATTN_BIN")}) +
                            " >>" + log.string() + " 2>&1";
    const int raw = std::system(cmd.c_str());
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  };
  REQUIRE(archive_in_place(dir.path() / "nowhere") != 0);
  REQUIRE(test::slurp(log).find("has no reference") != std::string::npos);
  REQUIRE(names_in(old / "hyp").size() == 4);
  REQUIRE_FALSE(fs::exists(old / "segments"));
  REQUIRE(archive_in_place(dir.path() / "straight" / "refs") == 0);
  REQUIRE(names_in(old) == names_in(kept));
  REQUIRE(test::slurp(old / "log.jsonl") == log_before);
  for (const auto& entry : fs::directory_iterator(kept / "segments"))
    REQUIRE(test::slurp(old / "segments" / entry.path().filename()) == test::slurp(entry.path()));
  // attn report reads an archived run as it reads the run itself.
  const auto from_run = test::run_attn("report " + straight.string() + " --json");
  const auto from_archive = test::run_attn("report " + kept.string() + " --json");
  REQUIRE(from_run.status == 0);
  REQUIRE(from_archive.status == 0);
  const nlohmann::json a = nlohmann::json::parse(from_run.out)["runs"][0],
                       b = nlohmann::json::parse(from_archive.out)["runs"][0];
  REQUIRE(b["test"]["set"] == "test");
  REQUIRE(b["test"] == a["test"]);
  for (const char* key : {"arch", "parameters", "peak_rss_mb", "best_valid_bleu", "best_update", "updates"})
    REQUIRE(b[key] == a[key]);
}
