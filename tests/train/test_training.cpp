// The training loop end to end on a tiny generated corpus: reproducibility,
// exact resume after an interruption, early stopping and checkpoints.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "attn/core/rng.h"
#include "attn/kernels/elementwise.h"
#include "attn/model/model_file.h"
#include "attn/train/batching.h"
#include "attn/train/checkpoint.h"
#include "attn/train/trainer.h"
#include "../support.h"
#include "tiny_corpus.h"
#include "tiny_training.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

train::TrainResult train_run(const train::TrainOptions& o, train::TrainHooks* hooks = nullptr) {
  return test::train_session(o, hooks);
}

train::TrainOptions tiny_options(const fs::path& dir) {
  train::TrainOptions o = test::tiny_train_options(dir);
  return o;
}

}  // namespace

TEST_CASE("batching: token budget respected, same seed and epoch give the same plan", "[train]") {
  std::vector<train::Example> examples;
  Rng rng(3);
  for (int i = 0; i < 500; ++i)
    examples.push_back({std::vector<std::int32_t>(1 + rng.below(30), 5),
                        std::vector<std::int32_t>(1 + rng.below(30), 6)});
  const auto plan = train::plan_batches(examples, 200, 1, 1, true);
  std::vector<int> seen(examples.size(), 0);
  for (const auto& batch : plan) {
    std::int64_t longest = 0;
    for (auto i : batch) {
      ++seen[i];
      longest = std::max<std::int64_t>({longest, static_cast<std::int64_t>(examples[i].src.size()),
                                        static_cast<std::int64_t>(examples[i].tgt.size()) + 1});
    }
    REQUIRE((longest * static_cast<std::int64_t>(batch.size()) <= 200 || batch.size() == 1));
  }
  for (int s : seen) REQUIRE(s == 1);
  REQUIRE(train::plan_batches(examples, 200, 1, 1, true) == plan);
  REQUIRE(train::plan_batches(examples, 200, 1, 2, true) != plan);
}

TEST_CASE("training: same seed reproduces the run bit for bit; an interrupted run resumes bit-identical",
          "[train][slow]") {
  test::ScratchDir tmp;
  test::write_tiny_corpus(tmp.path(), "train", 300, 1);
  test::write_tiny_corpus(tmp.path(), "valid", 20, 2);

  auto straight = tiny_options(tmp.path());
  straight.save_dir = tmp.path() / "straight";
  straight.max_updates = 12;
  const auto a = train_run(straight);
  REQUIRE(a.updates == 12);

  auto again = straight;
  again.save_dir = tmp.path() / "again";
  train_run(again);
  REQUIRE(test::model_weights(straight.save_dir / "last.attn") == test::model_weights(again.save_dir / "last.attn"));

  // Interrupted after 4 updates (mid-epoch), then after 4 more, then finished.
  auto interrupted = straight;
  interrupted.save_dir = tmp.path() / "interrupted";
  test::TestHooks stop_after_4;
  stop_after_4.stop_after = 4;
  REQUIRE(train_run(interrupted, &stop_after_4).interrupted);
  REQUIRE(train_run(interrupted, &stop_after_4).interrupted);
  const auto c = train_run(interrupted);
  REQUIRE_FALSE(c.interrupted);
  REQUIRE(c.updates == 12);
  REQUIRE(test::model_weights(straight.save_dir / "last.attn") ==
          test::model_weights(interrupted.save_dir / "last.attn"));
  REQUIRE(fs::exists(interrupted.save_dir / "best.attn"));
}

TEST_CASE("training: the loss falls, patience stops the run, keep-last prunes", "[train][slow]") {
  test::ScratchDir tmp;
  test::write_tiny_corpus(tmp.path(), "train", 300, 3);
  test::write_tiny_corpus(tmp.path(), "valid", 20, 4);
  auto o = tiny_options(tmp.path());
  o.save_dir = tmp.path() / "run";
  o.max_epochs = 3;
  o.keep_last = 2;
  o.log_json = tmp.path() / "log.jsonl";
  train_run(o);
  std::ifstream log(o.log_json);
  std::string line;
  double first_loss = -1, last_loss = -1;
  int valid_lines = 0;
  while (std::getline(log, line)) {
    const auto j = nlohmann::json::parse(line);
    REQUIRE(j.contains("update"));
    if (j["split"] == "model" || j["split"] == "end") continue;  // a process's start and stop
    REQUIRE(j.contains("tokens_per_s"));
    REQUIRE(j.contains("elapsed_s"));
    if (j["split"] == "valid") {
      ++valid_lines;
      REQUIRE(j.contains("bleu"));
      REQUIRE(j.contains("ppl"));
      if (first_loss < 0) first_loss = j["loss"].get<double>();
      last_loss = j["loss"].get<double>();
    }
  }
  REQUIRE(valid_lines == 3);
  REQUIRE(last_loss < first_loss);
  int periodic = 0;
  for (const auto& e : fs::directory_iterator(o.save_dir))
    if (e.path().filename().string().rfind("ckpt.", 0) == 0) ++periodic;
  REQUIRE(periodic == 2);

  // Patience 1 with the best metric loss and a zero learning rate: the second validation does not improve.
  auto flat = o;
  flat.save_dir = tmp.path() / "flat";
  flat.log_json.clear();
  flat.keep_last = 0;
  flat.max_epochs = 10;
  flat.patience = 1;
  flat.best_metric = train::BestMetric::loss;
  flat.optimizer.lr = 0.0f;
  flat.optimizer.warmup_init_lr = 0.0f;
  const auto r = train_run(flat);
  REQUIRE(r.epochs_done == 2);
}

TEST_CASE("training: a NaN loss stops with the update and batch, or is skipped with --skip-bad-batches", "[train]") {
  test::ScratchDir tmp;
  test::write_tiny_corpus(tmp.path(), "train", 300, 1);
  test::write_tiny_corpus(tmp.path(), "valid", 20, 2);
  auto o = tiny_options(tmp.path());
  o.max_updates = 6;
  o.save_dir = tmp.path() / "clean";
  train_run(o);
  const std::vector<float> clean = test::model_weights(o.save_dir / "last.attn");

  // No tolerance: the error names the update and batch, and the good checkpoint stays as it was.
  o.save_dir = tmp.path() / "stops";
  o.max_updates = 3;
  train_run(o);
  const std::vector<float> good = test::model_weights(o.save_dir / "last.attn");
  o.max_updates = 6;
  test::TestHooks poison;
  poison.poison_from = 2;  // the 5th update overall
  poison.poison_count = 1;
  REQUIRE_THROWS_WITH(train_run(o, &poison), Catch::Contains("NaN/Inf at update 5 (epoch 1, batch 5 of") &&
                                                 Catch::Contains("--skip-bad-batches"));
  REQUIRE(test::model_weights(o.save_dir / "last.attn") == good);

  // Tolerating two: two poisoned attempts are skipped, their batches consumed, and the run ends at
  // update 6 with finite weights that differ from the clean run's (it saw other batches).
  o.save_dir = tmp.path() / "skips";
  o.skip_bad_batches = 2;
  poison.poison_from = 3;
  poison.poison_count = 2;
  const auto r = train_run(o, &poison);
  REQUIRE(r.updates == 6);
  const std::vector<float> skipped = test::model_weights(o.save_dir / "last.attn");
  REQUIRE(kernels::all_finite(skipped.data(), static_cast<std::int64_t>(skipped.size())));
  REQUIRE(skipped != clean);

  // A third bad attempt is one too many.
  o.save_dir = tmp.path() / "too-many";
  poison.poison_count = 3;
  REQUIRE_THROWS_WITH(train_run(o, &poison), Catch::Contains("NaN/Inf at update 3"));
}
