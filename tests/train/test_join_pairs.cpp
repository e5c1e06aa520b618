// --join-pairs: long training examples of 1…K consecutive pairs, drawn per
// epoch from the seed; the training run that uses them resumes bit-identical
// and records K in its model file.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "attn/model/model_file.h"
#include "attn/text/bpe.h"
#include "attn/text/text_file.h"
#include "attn/train/checkpoint.h"
#include "attn/train/joined_pairs.h"
#include "attn/train/trainer.h"
#include "../cli/run_attn.h"
#include "../support.h"
#include "tiny_corpus.h"
#include "tiny_training.h"

using namespace attn;
namespace fs = std::filesystem;

namespace {

// Pair i: source {i, i}, target {i}: a joined example names the pairs it holds.
train::EncodedCorpus numbered_corpus(std::int32_t n) {
  train::EncodedCorpus corpus;
  for (std::int32_t i = 0; i < n; ++i) {
    corpus.examples.push_back({{i, i}, {i}});
    corpus.line.push_back(i);
  }
  return corpus;
}

// The sizes of an epoch's groups, checking that they cover the corpus once, in order.
std::vector<std::int64_t> group_sizes(const std::vector<train::Example>& joined, const train::EncodedCorpus& corpus) {
  std::vector<std::int64_t> sizes;
  std::size_t next = 0;
  for (const train::Example& e : joined) {
    REQUIRE(e.src.size() == 2 * e.tgt.size());
    for (std::size_t k = 0; k < e.tgt.size(); ++k) {
      REQUIRE(next < corpus.examples.size());
      REQUIRE(e.tgt[k] == corpus.examples[next].tgt[0]);
      REQUIRE(e.src[2 * k] == corpus.examples[next].src[0]);
      ++next;
    }
    sizes.push_back(static_cast<std::int64_t>(e.tgt.size()));
  }
  REQUIRE(next == corpus.examples.size());
  return sizes;
}

train::TrainOptions tiny_options(const fs::path& dir) {
  train::TrainOptions o = test::tiny_train_options(dir);
  o.max_tokens = 96;
  return o;
}

}  // namespace

TEST_CASE("join_pairs: groups of 1…K consecutive pairs, every size drawn, a pure function of seed and epoch",
          "[train]") {
  const train::EncodedCorpus corpus = numbered_corpus(2000);
  for (std::int64_t k : {2, 4, 7}) {
    const auto joined = train::join_pairs(corpus, k, 0, 1, 1);
    const auto sizes = group_sizes(joined, corpus);
    std::vector<int> count(static_cast<std::size_t>(k) + 1, 0);
    for (std::int64_t s : sizes) {
      REQUIRE(s >= 1);
      REQUIRE(s <= k);
      ++count[static_cast<std::size_t>(s)];
    }
    // Uniform sizes: each of 1…K is about 1/K of the groups (all but the last are drawn whole).
    for (std::int64_t s = 1; s <= k; ++s) {
      INFO("K " << k << ", size " << s);
      REQUIRE(count[static_cast<std::size_t>(s)] > static_cast<int>(sizes.size()) / (2 * k));
    }
    REQUIRE(train::join_pairs(corpus, k, 0, 1, 1).size() == joined.size());
    REQUIRE(group_sizes(train::join_pairs(corpus, k, 0, 1, 1), corpus) == sizes);
    REQUIRE(group_sizes(train::join_pairs(corpus, k, 0, 1, 2), corpus) != sizes);  // another epoch
    REQUIRE(group_sizes(train::join_pairs(corpus, k, 0, 2, 1), corpus) != sizes);  // another seed
  }
  // K = 1: the corpus as it is.
  const auto single = train::join_pairs(corpus, 1, 0, 1, 1);
  REQUIRE(group_sizes(single, corpus) == std::vector<std::int64_t>(corpus.examples.size(), 1));
}

TEST_CASE("join_pairs: a group stops at a skipped line and within --max-len", "[train]") {
  train::EncodedCorpus corpus = numbered_corpus(400);
  for (std::size_t i = 50; i < corpus.line.size(); ++i) corpus.line[i] += 1;  // line 50 was skipped
  for (const train::Example& e : train::join_pairs(corpus, 8, 7, 3, 1)) {
    REQUIRE(e.src.size() <= 7);  // max_len 7: at most 3 pairs of source length 2
    REQUIRE(e.tgt.size() <= 3);
    const auto first = static_cast<std::size_t>(e.tgt.front()), last = static_cast<std::size_t>(e.tgt.back());
    REQUIRE_FALSE((first < 50 && last >= 50));
  }
}

TEST_CASE("join_pairs: joining subword ids equals encoding the sentences joined by a space", "[train][text]") {
  test::ScratchDir tmp;
  test::write_tiny_corpus(tmp.path(), "train", 200, 1);
  const auto src = text::read_lines(tmp.path() / "train.src"), tgt = text::read_lines(tmp.path() / "train.tgt");
  std::vector<std::string> lines = src;
  lines.insert(lines.end(), tgt.begin(), tgt.end());
  text::Bpe::Options options;
  options.vocab_size = 300;
  const text::Bpe bpe = text::Bpe::learn(lines, options);
  const train::ParallelText joined = train::join_lines({src, tgt}, 3);
  REQUIRE(joined.src.size() == src.size() / 3);
  for (std::size_t i = 0; i < joined.src.size(); ++i) {
    std::vector<std::int32_t> want;
    for (std::size_t j = 3 * i; j < 3 * i + 3; ++j) {
      const auto ids = bpe.encode(src[j]);
      want.insert(want.end(), ids.begin(), ids.end());
    }
    REQUIRE(bpe.encode(joined.src[i]) == want);
  }
}

TEST_CASE("training --join-pairs: resumes bit-identical, validates joined too, K in the model file", "[train][slow]") {
  test::ScratchDir tmp;
  test::write_tiny_corpus(tmp.path(), "train", 300, 1);
  test::write_tiny_corpus(tmp.path(), "valid", 20, 2);

  auto straight = tiny_options(tmp.path());
  straight.join_pairs = 3;
  straight.max_updates = 14;
  straight.valid_every = 5;
  straight.save_dir = tmp.path() / "straight";
  straight.log_json = straight.save_dir / "log.jsonl";
  REQUIRE(test::train_session(straight).updates == 14);

  auto interrupted = straight;
  interrupted.save_dir = tmp.path() / "interrupted";
  interrupted.log_json = interrupted.save_dir / "log.jsonl";
  test::TestHooks stop;
  stop.stop_after = 5;
  for (int i = 0; i < 2; ++i) REQUIRE(test::train_session(interrupted, &stop).interrupted);
  REQUIRE(test::train_session(interrupted).updates == 14);
  REQUIRE(test::model_weights(straight.save_dir / "last.attn") ==
          test::model_weights(interrupted.save_dir / "last.attn"));

  // The same run on single pairs is another run.
  auto single = straight;
  single.join_pairs = 1;
  single.save_dir = tmp.path() / "single";
  single.log_json.clear();
  test::train_session(single);
  REQUIRE(test::model_weights(straight.save_dir / "last.attn") != test::model_weights(single.save_dir / "last.attn"));

  for (const char* file : {"last.attn", "best.attn"}) {
    const auto loaded = model::load_model_file(straight.save_dir / file, model::ComputeType::fp32);
    REQUIRE(train::read_train_state(loaded).flags.at("--join-pairs") == 3);
  }
  // Every validation scores the validation set joined 3 at a time beside it.
  std::ifstream log(straight.log_json);
  int validations = 0;
  for (std::string line; std::getline(log, line);) {
    const auto record = nlohmann::json::parse(line);
    if (record.value("split", "") != "valid") continue;
    ++validations;
    REQUIRE(record.at("joined").at("pairs") == 3);
    REQUIRE(record.at("joined").contains("bleu"));
    REQUIRE(std::isfinite(record.at("joined").at("loss").get<double>()));
  }
  REQUIRE(validations == 2);  // at updates 5 and 10
}

TEST_CASE("attn train --join-pairs: a bad K is one line and exit 2", "[train][cli][e2e]") {
  test::ScratchDir tmp;
  test::write_tiny_corpus(tmp.path(), "train", 30, 1);
  test::write_tiny_corpus(tmp.path(), "valid", 5, 2);
  for (const char* bad : {"0", "65", "two", "-1"}) {
    auto args = test::tiny_train_args(tmp.path(), "run", {"--join-pairs", bad, "--max-updates", "1"});
    const auto r = test::run_attn(test::shell_words(args));
    INFO("--join-pairs " << bad);
    test::require_user_error(r, "--join-pairs");
    REQUIRE_FALSE(fs::exists(tmp.path() / "run"));
  }
}
