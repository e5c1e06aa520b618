// --join-pairs: long training examples of 1…K consecutive pairs, drawn per
// epoch from the seed; the training run that uses them resumes bit-identical
// and records K in its model file.
#include <catch2/catch.hpp>

#include <filesystem>
#include <functional>
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

// Joined as --join-pairs K with no length limit, no stop dropped.
std::vector<train::Example> joined(const train::EncodedCorpus& corpus, std::int64_t k, std::int64_t max_len,
                                   std::uint64_t seed, std::int64_t epoch) {
  return train::join_pairs(corpus, train::EpochShape{k, max_len, 0.0, {}}, seed, epoch);
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
    const auto epoch = joined(corpus, k, 0, 1, 1);
    const auto sizes = group_sizes(epoch, corpus);
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
    REQUIRE(joined(corpus, k, 0, 1, 1).size() == epoch.size());
    REQUIRE(group_sizes(joined(corpus, k, 0, 1, 1), corpus) == sizes);
    REQUIRE(group_sizes(joined(corpus, k, 0, 1, 2), corpus) != sizes);  // another epoch
    REQUIRE(group_sizes(joined(corpus, k, 0, 2, 1), corpus) != sizes);  // another seed
  }
  // K = 1: the corpus as it is.
  const auto single = joined(corpus, 1, 0, 1, 1);
  REQUIRE(group_sizes(single, corpus) == std::vector<std::int64_t>(corpus.examples.size(), 1));
}

TEST_CASE("join_pairs: a group stops at a skipped line and within --max-len", "[train]") {
  train::EncodedCorpus corpus = numbered_corpus(400);
  for (std::size_t i = 50; i < corpus.line.size(); ++i) corpus.line[i] += 1;  // line 50 was skipped
  for (const train::Example& e : joined(corpus, 8, 7, 3, 1)) {
    REQUIRE(e.src.size() <= 7);  // max_len 7: at most 3 pairs of source length 2
    REQUIRE(e.tgt.size() <= 3);
    const auto first = static_cast<std::size_t>(e.tgt.front()), last = static_cast<std::size_t>(e.tgt.back());
    REQUIRE_FALSE((first < 50 && last >= 50));
  }
}

// The coins are a stream of their own: with or without the option, an epoch joins the same groups.
TEST_CASE("join_pairs --drop-final-stop: the share drawn, sources only, the joined groups unchanged", "[train]") {
  // Pair i: source {i, i, stop}, target {i, stop}; 7 stands for "." as final_stop_ids would give it.
  const std::int32_t stop = 7;
  train::EncodedCorpus corpus;
  for (std::int32_t i = 100; i < 4100; ++i) {
    corpus.examples.push_back({{i, i, stop}, {i, stop}});
    corpus.line.push_back(i);
  }
  for (std::int64_t k : {1, 4}) {
    const auto kept = train::join_pairs(corpus, train::EpochShape{k, 0, 0.0, {stop}}, 5, 1);
    const auto dropped = train::join_pairs(corpus, train::EpochShape{k, 0, 0.25, {stop}}, 5, 1);
    REQUIRE(dropped.size() == kept.size());
    std::size_t without = 0;
    for (std::size_t g = 0; g < kept.size(); ++g) {
      REQUIRE(dropped[g].tgt == kept[g].tgt);  // the target keeps its stop
      REQUIRE(kept[g].src.back() == stop);
      if (dropped[g].src.back() != stop) {
        ++without;
        REQUIRE(std::vector<std::int32_t>(kept[g].src.begin(), kept[g].src.end() - 1) == dropped[g].src);
      } else {
        REQUIRE(dropped[g].src == kept[g].src);
      }
    }
    INFO("K " << k << ": " << without << " of " << kept.size() << " without their stop");
    REQUIRE(without > kept.size() / 6);  // a quarter, drawn
    REQUIRE(without < kept.size() / 3);
    // A pure function of (seed, epoch).
    const auto again = train::join_pairs(corpus, train::EpochShape{k, 0, 0.25, {stop}}, 5, 1);
    for (std::size_t g = 0; g < kept.size(); ++g) REQUIRE(again[g].src == dropped[g].src);
  }
}

TEST_CASE("drop_final_stop: trailing stops of a real BPE, a bare word marker, never the last subword",
          "[train][text]") {
  test::ScratchDir tmp;
  test::write_tiny_corpus(tmp.path(), "train", 200, 1);
  std::vector<std::string> lines = text::read_lines(tmp.path() / "train.src");
  lines.push_back("Ein Hund rennt!");
  lines.push_back("Wer rennt?");
  text::Bpe::Options options;
  options.vocab_size = 300;
  const text::Bpe bpe = text::Bpe::learn(lines, options);
  const auto stops = train::final_stop_ids(bpe);
  const auto dropped = [&](const std::string& line) {
    auto ids = bpe.encode(line);
    train::drop_final_stop(ids, stops);
    return bpe.decode_line(ids);
  };
  REQUIRE(dropped("Ein Hund rennt.") == "Ein Hund rennt");
  REQUIRE(dropped("Ein Hund rennt!") == "Ein Hund rennt");
  REQUIRE(dropped("Wer rennt ?") == "Wer rennt");
  REQUIRE(dropped("Er wartet...") == "Er wartet");
  REQUIRE(dropped("Ein Hund. Er rennt .") == "Ein Hund. Er rennt");
  REQUIRE(dropped("Ein Hund, rennt") == "Ein Hund, rennt");  // no stop: unchanged
  auto ids = bpe.encode("Ein Hund rennt");
  REQUIRE_FALSE(train::drop_final_stop(ids, stops));
  REQUIRE(bpe.decode_line(ids) == "Ein Hund rennt");
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
  for (const char* side : {"train.src", "train.tgt"}) {  // sentences that end in a stop
    std::vector<std::string> lines = text::read_lines(tmp.path() / side);
    std::ofstream out(tmp.path() / side);
    for (const std::string& line : lines) out << line << ".\n";
  }
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

  // A variant of that run, trained to the end in a save dir of its own.
  const auto variant = [&](const char* name, const std::function<void(train::TrainOptions&)>& change) {
    auto o = straight;
    change(o);
    o.save_dir = tmp.path() / name;
    o.log_json.clear();
    test::train_session(o);
    return o;
  };
  // The same run on single pairs is another run.
  const auto single = variant("single", [](train::TrainOptions& o) { o.join_pairs = 1; });
  REQUIRE(test::model_weights(straight.save_dir / "last.attn") != test::model_weights(single.save_dir / "last.attn"));
  // Dropping final stops is another run again, resumable the same way, and stored with the model.
  const auto stops = variant("stops", [](train::TrainOptions& o) { o.drop_final_stop = 0.5; });
  REQUIRE(test::model_weights(straight.save_dir / "last.attn") != test::model_weights(stops.save_dir / "last.attn"));
  auto stops_resumed = stops;
  stops_resumed.save_dir = tmp.path() / "stops-resumed";
  for (int i = 0; i < 2; ++i) REQUIRE(test::train_session(stops_resumed, &stop).interrupted);
  REQUIRE(test::train_session(stops_resumed).updates == 14);
  REQUIRE(test::model_weights(stops.save_dir / "last.attn") ==
          test::model_weights(stops_resumed.save_dir / "last.attn"));
  REQUIRE(
      train::read_train_state(model::load_model_values(stops.save_dir / "last.attn")).flags.at("--drop-final-stop") ==
      0.5);

  for (const char* file : {"last.attn", "best.attn"}) {
    const auto loaded = model::load_model_values(straight.save_dir / file);
    REQUIRE(train::read_train_state(loaded).flags.at("--join-pairs") == 3);
    REQUIRE(train::read_train_state(loaded).flags.at("--drop-final-stop") == 0.0);
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

TEST_CASE("attn train --join-pairs / --drop-final-stop: a bad value is one line and exit 2", "[train][cli][e2e]") {
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
  for (const char* bad : {"-0.1", "1.5", "half"}) {
    auto args = test::tiny_train_args(tmp.path(), "run", {"--drop-final-stop", bad, "--max-updates", "1"});
    const auto r = test::run_attn(test::shell_words(args));
    INFO("--drop-final-stop " << bad);
    test::require_user_error(r, "--drop-final-stop");
    REQUIRE_FALSE(fs::exists(tmp.path() / "run"));
  }
}
