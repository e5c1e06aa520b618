// chrF against the values sacreBLEU 2.x publishes in test/test_chrf.py (its
// corpus_chrf and sentence_chrf with the options each table names), one case
// a line, with sacreBLEU's tolerance of 1e-4.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "attn/core/error.h"
#include "attn/eval/chrf.h"

using attn::eval::Chrf;
using attn::eval::ChrfOptions;
using Lines = std::vector<std::string>;

namespace {

double corpus_chrf(const Lines& hyps, const Lines& refs, ChrfOptions options) {
  const std::vector<Lines> streams = {refs};
  return Chrf(options).corpus_score(hyps, streams).score;
}

ChrfOptions beta3(bool eps_smoothing, bool whitespace = false) {
  ChrfOptions options;
  options.beta = 3;
  options.eps_smoothing = eps_smoothing;
  options.whitespace = whitespace;
  return options;
}

}  // namespace

TEST_CASE("chrF with epsilon smoothing matches sacreBLEU's test_chrf", "[eval][chrf]") {
  const auto [hyps, refs, expected] = GENERATE(table<Lines, Lines, double>({
      {{"abcdefg"}, {"hijklmnop"}, 0.0},
      {{"a"}, {"b"}, 0.0},
      {{""}, {"b"}, 0.0},
      {{""}, {"ref"}, 0.0},
      {{""}, {"reference"}, 0.0},
      {{"aa"}, {"ab"}, 8.3333},
      {{"a", "b"}, {"a", "c"}, 8.3333},
      {{"a"}, {"a"}, 16.6667},
      {{"a b c"}, {"a b c"}, 50.0},
      {{"a b c"}, {"abc"}, 50.0},
      {{" risk assessment must be made of those who are qualified and expertise in the sector - these are the "
        "scientists ."},
       {"risk assessment has to be undertaken by those who are qualified and expert in that area - that is the "
        "scientists ."},
       63.361730},
      {{" Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  freundlich. "},
       {"Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."},
       64.1302698},
      {{"Niemand hat die Absicht, eine Mauer zu errichten"},
       {"Niemand hat die Absicht, eine Mauer zu errichten"},
       100.0},
  }));
  CHECK(std::abs(corpus_chrf(hyps, refs, beta3(true)) - expected) < 1e-4);
}

TEST_CASE("chrF with effective order matches sacreBLEU's test_chrf_eff_order", "[eval][chrf]") {
  const auto [hyps, refs, expected] = GENERATE(table<Lines, Lines, double>({
      {{"a"}, {"a"}, 100.0},
      {{""}, {"reference"}, 0.0},
      {{"a b c"}, {"a b c"}, 100.0},
      {{"a b c"}, {"abc"}, 100.0},
      {{""}, {"c"}, 0.0},
      {{"a", "b"}, {"a", "c"}, 50.0},
      {{"aa"}, {"ab"}, 25.0},
  }));
  CHECK(std::abs(corpus_chrf(hyps, refs, beta3(false)) - expected) < 1e-4);
}

TEST_CASE("chrF keeping whitespace matches sacreBLEU's test_chrf_keep_whitespace", "[eval][chrf]") {
  const auto [hyps, refs, expected] = GENERATE(table<Lines, Lines, double>({
      {{"Die Beziehung zwischen Obama und Netanjahu ist nicht gerade freundlich."},
       {"Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."},
       67.3481606},
      {{"risk assessment must be made of those who are qualified and expertise in the sector - these are the "
        "scientists ."},
       {"risk assessment has to be undertaken by those who are qualified and expert in that area - that is the "
        "scientists ."},
       65.2414427},
  }));
  CHECK(std::abs(corpus_chrf(hyps, refs, beta3(false, true)) - expected) < 1e-4);
}

TEST_CASE("sentence chrF matches sacreBLEU's test_chrf_sentence_level", "[eval][chrf]") {
  const auto [hyp, ref, expected] = GENERATE(table<std::string, std::string, double>({
      {"Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře.",
       "Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře.", 39.14078509},
      {"Nebo prostě nemají vybavení, které by jim pomohlo, uvedli lékaři.",
       "A někdy nemáme ani potřebný materiál, abychom jim pomohli, popsali lékaři.", 31.22557079},
      {"Lapali po dechu, jejich životy skončily dřív, než skutečně začaly.",
       "Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl začít, připomněli.", 57.15704367},
  }));
  ChrfOptions options;
  options.eps_smoothing = true;
  const Lines refs = {ref};
  CHECK(std::abs(Chrf(options).sentence_score(hyp, refs).score - expected) < 1e-4);
}

TEST_CASE("chrF reproduces sacreBLEU's README example", "[eval][chrf]") {
  const Lines hyps = {"The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."};
  const std::vector<Lines> refs = {
      {"The dog bit the man.", "It was not unexpected.", "The man bit him first."},
      {"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."},
  };
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", Chrf().corpus_score(hyps, refs).score);
  CHECK(std::string(text) == "59.73");
}

// Below: properties that follow from sacreBLEU's definition (not published values).

TEST_CASE("chrF counts code points, not bytes", "[eval][chrf]") {
  // Two 2-byte characters: 2 unigrams and 1 bigram, all matching once.
  const Lines refs = {"äö"};
  const auto stats = Chrf().segment_stats("äö", refs);
  REQUIRE(stats.counts.size() == 18);
  CHECK(stats.counts[0] == 2);
  CHECK(stats.counts[3] == 1);
  CHECK(stats.counts[6] == 0);  // no trigram in the reference: hypothesis trigrams not counted
  CHECK(Chrf().sentence_score("äö", refs).score == 100.0);
}

TEST_CASE("chrF removes all of Python's whitespace, no-break spaces included", "[eval][chrf]") {
  const Lines refs = {"ab cd"};
  CHECK(Chrf().sentence_score("ab\u00a0c\u3000d", refs).score == 100.0);
}

TEST_CASE("multi-reference chrF keeps the reference with the best sentence score", "[eval][chrf]") {
  const Lines refs = {"completely different", "the cat sat"};
  const Lines single = {"the cat sat"};
  const Chrf chrf;
  CHECK(chrf.segment_stats("the cat sat", refs).counts == chrf.segment_stats("the cat sat", single).counts);
  CHECK(chrf.sentence_score("the cat sat", refs).score == 100.0);
  const Lines with_empty = {"", "the cat sat"};
  CHECK(chrf.sentence_score("the cat sat", with_empty).score == 100.0);
}

TEST_CASE("the chrF signature and name follow sacreBLEU 2.x", "[eval][chrf]") {
  CHECK(Chrf().name() == "chrF2");
  CHECK(Chrf().signature(1) ==
        "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:" + attn::eval::signature_version());
  ChrfOptions options = beta3(true, true);
  options.lowercase = true;
  CHECK(Chrf(options).name() == "chrF3");
  CHECK(Chrf(options).signature(-1) ==
        "nrefs:var|case:lc|eff:no|nc:6|nw:0|space:yes|version:" + attn::eval::signature_version());
}

TEST_CASE("chrF refuses inconsistent input and scores a blank reference as empty", "[eval][chrf]") {
  const Lines hyps = {"a", "b"};
  CHECK_THROWS_AS(Chrf().corpus_score(hyps, std::vector<Lines>{{"a"}}), attn::Error);
  // A blank reference is an empty one, as sacreBLEU scores it: an order without reference n-grams adds
  // nothing to the statistics, so the score is that of the other segment.
  CHECK(Chrf().corpus_score(hyps, std::vector<Lines>{{"", "b"}}).score == 100.0);
}

TEST_CASE("chrF++ adds word unigrams and bigrams after sacreBLEU's punctuation split", "[eval][chrf]") {
  ChrfOptions options;
  options.word_order = 2;
  const Chrf chrf_pp(options);
  CHECK(chrf_pp.name() == "chrF2++");
  CHECK(chrf_pp.signature(1) ==
        "nrefs:1|case:mixed|eff:yes|nc:6|nw:2|space:no|version:" + attn::eval::signature_version());
  // Words "a b" against "a b c": unigrams 2 of 3, bigrams 1 of 2 (by hand: F2 = 35/55).
  const Lines refs = {"a b c"};
  const auto stats = chrf_pp.segment_stats("a b", refs);
  REQUIRE(stats.counts.size() == 3 * 8);
  CHECK(std::vector<std::int64_t>(stats.counts.begin() + 18, stats.counts.end()) ==
        std::vector<std::int64_t>{2, 3, 2, 1, 2, 1});
  CHECK(std::abs(chrf_pp.sentence_score("a b", refs).score - 100.0 * 35 / 55) < 1e-12);
  // "(hi)," keeps its '(' (only one mark is split, the trailing one first).
  const Lines paren = {"(hi) ,"};
  const auto split = chrf_pp.segment_stats("(hi),", paren);
  CHECK(split.counts[18] == 2);  // hypothesis words "(hi)" and ","
  CHECK(split.counts[20] == 1);  // "," matches; "(hi)" does not match "(hi" + ")"
}
