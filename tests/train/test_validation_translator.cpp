// Validation's hypotheses come from the translator the caller hands the
// trainer, and train itself knows nothing of decode (docs/code-layout.md).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "attn/train/trainer.h"
#include "attn/train/validation_translator.h"
#include "../support.h"
#include "tiny_corpus.h"
#include "tiny_training.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

const fs::path kRepo = fs::path(__FILE__).parent_path().parent_path().parent_path();

// Says nothing, and counts the sentences it was asked for.
struct SilentTranslator final : train::ValidationTranslator {
  mutable std::size_t sentences = 0;
  std::vector<std::vector<std::int32_t>> translate(
      nn::StepContext&, const model::Seq2Seq&, const std::vector<std::vector<std::int32_t>>& sources) const override {
    sentences += sources.size();
    return std::vector<std::vector<std::int32_t>>(sources.size());
  }
};

}  // namespace

TEST_CASE("trainer: validation BLEU scores the hypotheses of the translator it was given", "[train]") {
  test::ScratchDir tmp;
  test::write_tiny_corpus(tmp.path(), "train", 100, 1);
  test::write_tiny_corpus(tmp.path(), "valid", 12, 2);
  train::TrainOptions o = test::tiny_train_options(tmp.path());
  o.max_updates = 3;
  o.valid_every = 3;
  o.save_dir = tmp.path() / "run";
  SilentTranslator silent;
  const train::TrainResult r = train::Trainer(o, silent).train();
  CHECK(silent.sentences >= 12);  // every validation sentence, at least once
  CHECK(r.best_metric == 0.0);    // empty hypotheses: BLEU 0
}

TEST_CASE("layers: train includes nothing of decode, report, serve or cli", "[train]") {
  const std::regex above("#include \"attn/(decode|report|serve|cli)/");
  std::size_t files = 0;
  for (const fs::path& dir : {kRepo / "src" / "train", kRepo / "include" / "attn" / "train"}) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      std::ifstream in(entry.path());
      std::string line;
      ++files;
      while (std::getline(in, line))
        if (std::regex_search(line, above))
          FAIL_CHECK(entry.path().string() << " includes a layer above train: " << line);
    }
  }
  REQUIRE(files > 10);
}
