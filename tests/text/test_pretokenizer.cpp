#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "attn/text/pretokenizer.h"

using namespace attn::text;

namespace {

// (text, word_start) per pre-token.
std::vector<std::pair<std::string, bool>> split(std::string_view line) {
  std::vector<std::pair<std::string, bool>> out;
  for (const PreToken& t : pretokenize(line)) out.emplace_back(std::string(t.text), t.word_start);
  return out;
}

using Expected = std::vector<std::pair<std::string, bool>>;

}  // namespace

TEST_CASE("pretokenizer: words, punctuation and the word-start flag", "[text]") {
  REQUIRE(split("Ein Mann, der läuft.") ==
          Expected{{"Ein", true}, {"Mann", true}, {",", false}, {"der", true}, {"läuft", true}, {".", false}});
  REQUIRE(split("  a\t\tb  \r") == Expected{{"a", true}, {"b", true}});
  REQUIRE(split("").empty());
  REQUIRE(split(" \t ").empty());
}

TEST_CASE("pretokenizer: character classes split runs; punctuation one per pre-token", "[text]") {
  REQUIRE(split("abc123def") == Expected{{"abc", true}, {"123", false}, {"def", false}});
  REQUIRE(split("Wait...!?") ==
          Expected{{"Wait", true}, {".", false}, {".", false}, {".", false}, {"!", false}, {"?", false}});
  REQUIRE(split("\"Hi\" (x)") ==
          Expected{{"\"", true}, {"Hi", false}, {"\"", false}, {"(", true}, {"x", false}, {")", false}});
  // CJK runs stay together (no spaces to split on); Arabic words split on spaces.
  REQUIRE(split("日本語です。") == Expected{{"日本語です", true}, {"。", false}});
  REQUIRE(split("مرحبا بالعالم") == Expected{{"مرحبا", true}, {"بالعالم", true}});
  // Non-ASCII spaces are symbols, kept verbatim.
  REQUIRE(split("a\u00A0b") == Expected{{"a", true}, {"\u00A0", false}, {"b", false}});
  // The literal marker character is an ordinary symbol.
  REQUIRE(split("x\u2581y") == Expected{{"x", true}, {"\u2581", false}, {"y", false}});
}

TEST_CASE("pretokenizer: combining marks and ZWJ stay with the character before", "[text]") {
  REQUIRE(split("cafe\u0301 ok") == Expected{{"cafe\u0301", true}, {"ok", true}});
  REQUIRE(split("\u0301a") == Expected{{"\u0301", true}, {"a", false}});
  // Family emoji: person ZWJ person ZWJ person.
  REQUIRE(split("👨\u200D👩\u200D👧") == Expected{{"👨\u200D", true}, {"👩\u200D", false}, {"👧", false}});
  REQUIRE(split("नमस्ते") == Expected{{"नमस्ते", true}});  // Devanagari vowel signs are marks
}

TEST_CASE("pretokenizer: invalid bytes are single pre-tokens and never lost", "[text]") {
  REQUIRE(split("a\xFF"
                "b") == Expected{{"a", true}, {"\xFF", false}, {"b", false}});
  REQUIRE(split("\xE2\x82 x") == Expected{{"\xE2", true}, {"\x82", false}, {"x", true}});
}

TEST_CASE("pretokenizer: pre-tokens rebuild the whitespace-normalised line", "[text]") {
  const char* lines[] = {"Zwei junge weiße Katzen schlafen draußen neben großen Büschen.",
                         "  A man's 2nd \"best\" friend -- at 10:30pm!  ",
                         "x\t\ty\u3000z 😀😀 \xF0\x9F\x87\xA9\xF0\x9F\x87\xAA"};
  const char* expected[] = {"Zwei junge weiße Katzen schlafen draußen neben großen Büschen.",
                            "A man's 2nd \"best\" friend -- at 10:30pm!",
                            "x y\u3000z 😀😀 \xF0\x9F\x87\xA9\xF0\x9F\x87\xAA"};
  for (int i = 0; i < 3; ++i) {
    std::string rebuilt;
    for (const PreToken& t : pretokenize(lines[i])) {
      REQUIRE_FALSE(t.text.empty());
      if (t.word_start && !rebuilt.empty()) rebuilt += ' ';
      rebuilt += t.text;
    }
    REQUIRE(rebuilt == expected[i]);
  }
}
