// BLEU against the values sacreBLEU 2.x publishes in its own test suite
// (test/test_bleu.py and test/test_sentence_bleu.py), each case one line.
// Cases that need tokenizers attn does not have (zh, ja-mecab) are left
// out. EPSILON is sacreBLEU's own tolerance for each table.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "attn/core/error.h"
#include "attn/eval/bleu.h"

using attn::eval::Bleu;
using attn::eval::BleuOptions;
using attn::eval::Smoothing;
using attn::eval::Tokenizer;
using Streams = std::vector<std::vector<std::string>>;

namespace {

// sacreBLEU's README example: three hypotheses, two reference streams.
const std::vector<std::string> kHyps = {"The dog bit the man.", "It wasn't surprising.",
                                        "The man had just bitten him."};
const Streams kRefs = {
    {"The dog bit the man.", "It was not unexpected.", "The man bit him first."},
    {"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."},
};

// sacrebleu.raw_corpus_bleu: no tokenization, floor smoothing, effective order.
BleuOptions raw_options(double floor_value) {
  BleuOptions options;
  options.tokenizer = Tokenizer::none;
  options.smoothing = Smoothing::floor;
  options.smooth_value = floor_value;
  options.effective_order = true;
  return options;
}

}  // namespace

TEST_CASE("corpus BLEU matches sacreBLEU's test_corpus_bleu", "[eval][bleu]") {
  struct Case {
    std::vector<std::string> hyps;
    Tokenizer tokenizer;
    Smoothing smoothing;
    double expected;
  };
  const auto [hyps, tokenizer, smoothing, expected] = GENERATE_REF(values<Case>({
      {kHyps, Tokenizer::v13a, Smoothing::exp, 48.530827},   // default settings
      {{"", "", ""}, Tokenizer::v13a, Smoothing::exp, 0.0},  // empty hypotheses are kept
      {kHyps, Tokenizer::none, Smoothing::exp, 49.1919566},
      {kHyps, Tokenizer::intl, Smoothing::exp, 43.91623493},
      {kHyps, Tokenizer::v13a, Smoothing::none, 48.530827},
  }));
  BleuOptions options;
  options.tokenizer = tokenizer;
  options.smoothing = smoothing;
  CHECK(std::abs(Bleu(options).corpus_score(hyps, kRefs).score - expected) < 1e-8);
}

TEST_CASE("BLEU by maximum n-gram order matches sacreBLEU's test_max_ngram_order", "[eval][bleu]") {
  const auto [order, expected] = GENERATE(table<int, const char*>({
      {1, "77.65"},
      {2, "60.50"},
      {3, "53.93"},
      {4, "48.53"},
      {5, "46.14"},
      {6, "43.28"},
  }));
  BleuOptions options;
  options.max_ngram_order = order;
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", Bleu(options).corpus_score(kHyps, kRefs).score);
  CHECK(std::string(text) == expected);
}

TEST_CASE("raw BLEU matches sacreBLEU's test_raw_bleu and test_effective_order", "[eval][bleu]") {
  const auto [hyps, refs, expected] = GENERATE_REF(table<std::vector<std::string>, Streams, double>({
      {{"this is a test", "another test"}, {{"ref1", "ref2"}}, 0.0},  // no match at all: 0 (#141)
      {{"this is a test"}, {{"this is a test"}}, 1.0},
      {{"this is a fest"}, {{"this is a test"}}, 0.223606797749979},
      {{"test"}, {{"a test"}}, 0.3678794411714425},
      {{"a test"}, {{"a test"}}, 1.0},
      {{"a little test"}, {{"a test"}}, 0.03218297948685433},
  }));
  CHECK(std::abs(Bleu(raw_options(0.01)).corpus_score(hyps, refs).score / 100 - expected) < 1e-8);
}

TEST_CASE("n-gram statistics and floor offset match sacreBLEU's test_statistics and test_offset", "[eval][bleu]") {
  const std::vector<std::string> hyp = {"am I am a character sequence"};
  const Streams ref = {{"I am a symbol string sequence a a"}};
  const auto stats = Bleu(raw_options(0.01)).segment_stats(hyp[0], ref[0]);
  CHECK(stats.correct == std::vector<std::int64_t>{4, 2, 1, 0});
  CHECK(stats.total == std::vector<std::int64_t>{6, 5, 4, 3});

  CHECK(std::abs(Bleu(raw_options(0.0)).corpus_score(hyp, ref).score / 100 - 0.0) < 1e-8);
  BleuOptions default_floor = raw_options(0.0);
  default_floor.smooth_value.reset();  // sacreBLEU's default floor, 0.1
  CHECK(std::abs(Bleu(default_floor).corpus_score(hyp, ref).score / 100 - 0.1555722182) < 1e-8);
}

TEST_CASE("compute_bleu matches sacreBLEU's test_scoring and test_degenerate_statistics", "[eval][bleu]") {
  BleuOptions none;
  none.smoothing = Smoothing::none;
  CHECK(std::abs(attn::eval::compute_bleu({9, 7, 5, 3}, {10, 8, 6, 4}, 11, 11, none).score / 100 - 0.8375922397) <
        1e-8);

  struct Case {
    std::vector<double> correct, total;
    std::int64_t hyp_len, ref_len;
    double floor_value;
  };
  const Case c = GENERATE(values<Case>({
      {{0, 0, 0, 0}, {4, 4, 2, 1}, 0, 1, 0.0},
      {{0, 0, 0, 0}, {10, 11, 12, 0}, 14, 10, 0.0},
      {{0, 0, 0, 0}, {0, 0, 0, 0}, 0, 0, 0.0},
      {{6, 5, 4, 0}, {6, 5, 4, 3}, 6, 6, 0.0},
      {{0, 0, 0, 0}, {0, 0, 0, 0}, 0, 0, 0.1},
      {{0, 0, 0, 0}, {0, 0, 0, 0}, 1, 5, 0.01},
  }));
  BleuOptions floor;
  floor.smoothing = Smoothing::floor;
  floor.smooth_value = c.floor_value;
  CHECK(attn::eval::compute_bleu(c.correct, c.total, c.hyp_len, c.ref_len, floor).score == 0.0);
}

TEST_CASE("sentence BLEU matches sacreBLEU's test_sentence_bleu", "[eval][bleu]") {
  // Example from sacreBLEU issue #98 (note ţ in the reference, ț in the hypothesis).
  const std::string ref = "producţia de zahăr brut se exprimă în zahăr alb;";
  const std::string sys = "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;";
  struct Case {
    Smoothing smoothing;
    std::optional<double> value;
    bool lowercase;
    Tokenizer tokenizer;
    double expected;
  };
  const Case c = GENERATE(values<Case>({
      {Smoothing::exp, {}, false, Tokenizer::v13a, 8.493},
      {Smoothing::none, {}, false, Tokenizer::v13a, 0.0},
      {Smoothing::floor, {}, false, Tokenizer::v13a, 4.51688},
      {Smoothing::floor, 0.1, false, Tokenizer::v13a, 4.51688},
      {Smoothing::floor, 0.5, false, Tokenizer::v13a, 10.10},
      {Smoothing::add_k, {}, false, Tokenizer::v13a, 14.882},
      {Smoothing::add_k, 1.0, false, Tokenizer::v13a, 14.882},
      {Smoothing::add_k, 2.0, false, Tokenizer::v13a, 21.389},
      {Smoothing::exp, {}, false, Tokenizer::none, 7.347},
      {Smoothing::exp, {}, false, Tokenizer::intl, 8.493},
      {Smoothing::exp, {}, false, Tokenizer::character, 40.8759},
      {Smoothing::exp, {}, true, Tokenizer::character, 42.0267},
  }));
  BleuOptions options;
  options.smoothing = c.smoothing;
  options.smooth_value = c.value;
  options.lowercase = c.lowercase;
  options.tokenizer = c.tokenizer;
  options.effective_order = true;
  const std::vector<std::string> refs = {ref};
  CHECK(std::abs(Bleu(options).sentence_score(sys, refs).score - c.expected) < 1e-3);
}

TEST_CASE("sentence BLEU without any match is 0 for every smoothing (sacreBLEU #141)", "[eval][bleu]") {
  const auto [smoothing, value] = GENERATE(table<Smoothing, std::optional<double>>({
      {Smoothing::exp, {}},
      {Smoothing::none, {}},
      {Smoothing::floor, {}},
      {Smoothing::floor, 0.1},
      {Smoothing::add_k, {}},
      {Smoothing::add_k, 1.0},
  }));
  BleuOptions options;
  options.smoothing = smoothing;
  options.smooth_value = value;
  options.effective_order = true;
  const std::vector<std::string> refs = {"okay thanks"};
  CHECK(Bleu(options).sentence_score("this is a cat", refs).score == 0.0);
}

// Below: properties that follow from sacreBLEU's definition (not published values).

TEST_CASE("a perfect match scores 100", "[eval][bleu]") {
  const std::vector<std::string> hyps = {"Ein Mann fährt Fahrrad.", "Zwei Hunde spielen im Schnee, 3-mal!"};
  const Streams refs = {hyps};
  const auto score = Bleu().corpus_score(hyps, refs);
  // exp(mean of log 100) is 100.00000000000004, in sacreBLEU as here.
  CHECK(std::abs(score.score - 100.0) < 1e-12);
  CHECK(score.brevity_penalty == 1.0);
  CHECK(score.verbose() == "100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 1.000 hyp_len = 15 ref_len = 15)");
}

TEST_CASE("the closest reference length decides the brevity penalty, ties going to the shorter", "[eval][bleu]") {
  const Bleu bleu;
  // Hypothesis of 4 tokens; references of 3 and 5 tokens: both at distance 1 → 3.
  const std::vector<std::string> tie = {"a b c", "a b c d e"};
  CHECK(bleu.segment_stats("a b c d", tie).ref_len == 3);
  const std::vector<std::string> closer = {"a b", "a b c d e"};
  CHECK(bleu.segment_stats("a b c d", closer).ref_len == 5);
  // Empty references are skipped, as sacreBLEU does for missing ones.
  const std::vector<std::string> with_empty = {"", "a b c d e f"};
  CHECK(bleu.segment_stats("a b c d", with_empty).ref_len == 6);
}

TEST_CASE("matches are clipped by the maximum count over all references", "[eval][bleu]") {
  BleuOptions options;
  options.tokenizer = Tokenizer::none;
  const std::vector<std::string> refs = {"the cat", "the the dog"};
  const auto stats = Bleu(options).segment_stats("the the the", refs);
  CHECK(stats.correct[0] == 2);  // "the" appears at most twice in one reference
  CHECK(stats.total[0] == 3);
  CHECK(stats.correct[1] == 1);  // "the the"
}

TEST_CASE("the BLEU signature has sacreBLEU 2.x's fields", "[eval][bleu]") {
  CHECK(Bleu().signature(1) ==
        "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:" + attn::eval::signature_version());
  BleuOptions options;
  options.lowercase = true;
  options.tokenizer = Tokenizer::none;
  options.smoothing = Smoothing::floor;
  options.effective_order = true;
  CHECK(Bleu(options).signature(-1) ==
        "nrefs:var|case:lc|eff:yes|tok:none|smooth:floor[0.10]|version:" + attn::eval::signature_version());
  options.smoothing = Smoothing::add_k;
  options.smooth_value = 2.0;
  CHECK(Bleu(options).signature(2).find("|smooth:add-k[2.00]|") != std::string::npos);
  CHECK(attn::eval::count_references(Streams{{"a", "b"}, {"c", ""}}) == -1);
  CHECK(attn::eval::count_references(Streams{{"a", "b"}, {"c", "d"}}) == 2);
}

TEST_CASE("BLEU refuses inconsistent input and scores a blank reference as empty", "[eval][bleu]") {
  const std::vector<std::string> hyps = {"a", "b"};
  CHECK_THROWS_AS(Bleu().corpus_score(hyps, Streams{{"a"}}), attn::Error);
  // A blank reference is an empty one (length 0), as sacreBLEU scores it: "b" adds a hypothesis word and nothing else.
  const auto blank = Bleu().corpus_score(hyps, Streams{{"a", ""}});
  CHECK(blank.hyp_len == 2);
  CHECK(blank.ref_len == 1);
  CHECK(blank.precisions[0] == 50.0);
  CHECK_THROWS_AS(Bleu().corpus_score({}, Streams{{}}), attn::Error);
  CHECK_THROWS_AS(attn::eval::parse_smoothing("add-n"), attn::Error);
  CHECK(attn::eval::parse_smoothing("add-k") == Smoothing::add_k);
}

TEST_CASE("BLEU reproduces sacreBLEU's README examples, variable references included", "[eval][bleu]") {
  const Bleu bleu;
  const auto score = bleu.corpus_score(kHyps, kRefs);
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", score.score);
  CHECK(std::string(text) == "48.53");
  CHECK(score.verbose() == "82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)");
  CHECK(bleu.signature(attn::eval::count_references(kRefs)) ==
        "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:" + attn::eval::signature_version());

  Streams fewer = kRefs;
  fewer[0][0] = "";  // the first sentence has one reference only
  const auto variable = bleu.corpus_score(kHyps, fewer);
  std::snprintf(text, sizeof text, "%.2f", variable.score);
  CHECK(std::string(text) == "29.44");
  CHECK(variable.verbose() == "82.4/42.9/27.3/12.5 (BP = 0.889 ratio = 0.895 hyp_len = 17 ref_len = 19)");
  CHECK(bleu.signature(attn::eval::count_references(fewer)).rfind("nrefs:var|", 0) == 0);
}
