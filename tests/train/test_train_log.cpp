// What training writes to its JSON log and says on stderr: a train record
// every --log-every updates and no other, each the mean over its own window
// of updates; validations labelled with the epoch of the update they follow,
// their clock read once every set is scored; the best metric over single and
// joined sets named as a mean.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/train/trainer.h"
#include "attn/train/validation_translator.h"
#include "../cli/run_attn.h"
#include "../support.h"
#include "tiny_corpus.h"
#include "tiny_training.h"

using namespace attn;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::vector<json> records(const fs::path& log, const std::string& split) {
  std::vector<json> found;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line);
    if (j.value("split", "") == split) found.push_back(std::move(j));
  }
  return found;
}

// Sleeps `pause` before the update that follows update `after`: a window
// that lasts longer than the progress line's half second.
struct SlowUpdate final : train::TrainHooks {
  std::int64_t after = -1;
  std::chrono::milliseconds pause{0};
  void before_update(std::int64_t update) override {
    if (update == after) std::this_thread::sleep_for(pause);
  }
};

// Says nothing after `pause`, and counts its calls.
struct SlowTranslator final : train::ValidationTranslator {
  std::chrono::milliseconds pause{0};
  mutable int calls = 0;
  std::vector<std::vector<std::int32_t>> translate(
      nn::StepContext&, const model::Seq2Seq&, const std::vector<std::vector<std::int32_t>>& sources) const override {
    ++calls;
    std::this_thread::sleep_for(pause);
    return std::vector<std::vector<std::int32_t>>(sources.size());
  }
};

}  // namespace

TEST_CASE("train log: one train record per --log-every updates, the token-weighted mean of its own window",
          "[train][log]") {
  test::ScratchDir tmp;
  test::write_tiny_corpus(tmp.path(), "train", 300, 1);
  test::write_tiny_corpus(tmp.path(), "valid", 20, 2);
  train::TrainOptions every = test::tiny_train_options(tmp.path());
  every.max_updates = 17;
  every.log_every = 1;
  every.save_dir = tmp.path() / "every";
  every.log_json = tmp.path() / "every.jsonl";
  test::train_session(every);
  // Each update's own loss, nll and target tokens (the log's are cumulative).
  std::map<std::int64_t, json> single;
  for (const json& j : records(every.log_json, "train")) single[j["update"].get<std::int64_t>()] = j;
  REQUIRE(single.size() == 17);

  // The same run (the log changes no bit of it), a record every 5 updates; a
  // window that lasts over half a second (the sleep) still gives one record.
  train::TrainOptions fives = every;
  fives.log_every = 5;
  fives.save_dir = tmp.path() / "fives";
  fives.log_json = tmp.path() / "fives.jsonl";
  SlowUpdate slow;
  slow.after = 6;
  slow.pause = std::chrono::milliseconds(700);
  test::train_session(fives, &slow);
  REQUIRE(test::model_weights(every.save_dir / "last.attn") == test::model_weights(fives.save_dir / "last.attn"));
  const std::vector<json> windows = records(fives.log_json, "train");
  REQUIRE(windows.size() == 17 / 5);
  for (std::size_t w = 0; w < windows.size(); ++w) {
    const json& r = windows[w];
    const auto last = static_cast<std::int64_t>(5 * (w + 1));
    INFO("record " << r.dump());
    REQUIRE(r["update"] == last);
    REQUIRE(r["window_updates"] == 5);
    double loss = 0, nll = 0, tokens = 0;
    for (std::int64_t u = last - 4; u <= last; ++u) {
      const json& s = single.at(u);
      REQUIRE(s["window_updates"] == 1);
      const double t = s["target_tokens"].get<double>() - (u > 1 ? single.at(u - 1)["target_tokens"].get<double>() : 0);
      loss += s["loss"].get<double>() * t;
      nll += s["nll_loss"].get<double>() * t;
      tokens += t;
    }
    REQUIRE(r["target_tokens"] == single.at(last)["target_tokens"]);
    REQUIRE(r["loss"].get<double>() == Approx(loss / tokens).epsilon(1e-12));
    REQUIRE(r["nll_loss"].get<double>() == Approx(nll / tokens).epsilon(1e-12));
    REQUIRE(r["grad_norm"] == single.at(last)["grad_norm"]);
  }
}

TEST_CASE("train log: a validation is labelled with the epoch of the update it follows", "[train][log][e2e]") {
  test::ScratchDir tmp;
  test::write_tiny_corpus(tmp.path(), "train", 300, 1);
  test::write_tiny_corpus(tmp.path(), "valid", 20, 2);
  const fs::path log = tmp.path() / "log.jsonl";
  // Past the end of epoch 1, so the run validates after epoch 1 and, stopped by
  // --max-updates, once more in epoch 2.
  auto args = test::tiny_train_args(tmp.path(), "run", {"--log-every", "1", "--log-json", log.string()});
  args.erase(std::find(args.begin(), args.end(), "--quiet"));
  const test::RunResult first = test::run_attn(test::shell_words(args) + " --max-epochs 1");
  INFO("stderr: " << first.err);
  REQUIRE(first.status == 0);
  const std::int64_t epoch_updates = records(log, "train").back()["update"].get<std::int64_t>();
  fs::remove_all(tmp.path() / "run");
  fs::remove(log);
  const std::int64_t updates = epoch_updates + epoch_updates / 2;
  const test::RunResult r = test::run_attn(test::shell_words(args) + " --max-updates " + std::to_string(updates));
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 0);
  std::map<std::int64_t, std::int64_t> epoch_of;  // update → its epoch, from the train records
  for (const json& t : records(log, "train"))
    epoch_of[t["update"].get<std::int64_t>()] = t["epoch"].get<std::int64_t>();
  REQUIRE(epoch_of.at(epoch_updates) == 1);
  REQUIRE(epoch_of.at(epoch_updates + 1) == 2);
  const std::vector<json> valid = records(log, "valid");
  REQUIRE(valid.size() == 2);
  REQUIRE(valid[0]["update"] == epoch_updates);
  REQUIRE(valid[1]["update"] == updates);
  for (const json& v : valid) REQUIRE(v["epoch"] == epoch_of.at(v["update"].get<std::int64_t>()));
  REQUIRE(test::count_occurrences(r.err, "valid | after epoch 1 | update " + std::to_string(epoch_updates) + " |") ==
          1);
  REQUIRE(test::count_occurrences(r.err, "valid | in epoch 2 | update " + std::to_string(updates) + " |") == 1);
  REQUIRE(test::count_occurrences(r.err, "valid | ") == 2);
}

TEST_CASE("train log: with --join-pairs a validation's time is read once the joined set is scored too",
          "[train][log]") {
  test::ScratchDir tmp;
  test::write_tiny_corpus(tmp.path(), "train", 100, 1);
  test::write_tiny_corpus(tmp.path(), "valid", 12, 2);
  train::TrainOptions o = test::tiny_train_options(tmp.path());
  o.join_pairs = 2;
  o.max_updates = 1;
  o.save_dir = tmp.path() / "run";
  o.log_json = tmp.path() / "log.jsonl";
  SlowTranslator slow;
  slow.pause = std::chrono::milliseconds(250);
  train::Trainer(o, slow).train();
  const std::vector<json> valid = records(o.log_json, "valid");
  REQUIRE(valid.size() == 1);
  REQUIRE(valid[0].contains("joined"));
  // Every translation of both sets (the single set's, then the joined set's) came before the clock was read.
  REQUIRE(slow.calls >= 2);
  REQUIRE(valid[0]["elapsed_s"].get<double>() >= 0.25 * slow.calls);
}

TEST_CASE("train log: with --join-pairs the closing line and attn info name the best as the mean of single and joined",
          "[train][log][e2e]") {
  test::ScratchDir tmp;
  test::write_tiny_corpus(tmp.path(), "train", 100, 1);
  test::write_tiny_corpus(tmp.path(), "valid", 12, 2);
  auto args = test::tiny_train_args(tmp.path(), "joined", {"--join-pairs", "2", "--max-updates", "2"});
  args.erase(std::find(args.begin(), args.end(), "--quiet"));
  const test::RunResult joined = test::run_attn(test::shell_words(args));
  INFO("stderr: " << joined.err);
  REQUIRE(joined.status == 0);
  REQUIRE(test::count_occurrences(joined.err, "; best mean bleu (single, ×2) ") == 1);
  args = test::tiny_train_args(tmp.path(), "plain", {"--max-updates", "2"});
  args.erase(std::find(args.begin(), args.end(), "--quiet"));
  const test::RunResult plain = test::run_attn(test::shell_words(args));
  INFO("stderr: " << plain.err);
  REQUIRE(plain.status == 0);
  REQUIRE(test::count_occurrences(plain.err, "; best bleu ") == 1);
  // attn info says the same of the model file.
  const test::RunResult joined_info =
      test::run_attn(test::shell_words({"info", (tmp.path() / "joined" / "last.attn").string()}));
  REQUIRE(test::count_occurrences(joined_info.out, "best        mean valid BLEU (single, ×2) ") == 1);
  const test::RunResult plain_info =
      test::run_attn(test::shell_words({"info", (tmp.path() / "plain" / "last.attn").string()}));
  REQUIRE(test::count_occurrences(plain_info.out, "best        valid BLEU ") == 1);
}
