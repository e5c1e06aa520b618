// The 13a tokenizer and the Python string semantics under it.
//
// sacreBLEU's own test suite has no tokenizer golden strings, so only the
// first case below is a published sacreBLEU output (asserted by the flexeval
// project's test of sacreBLEU's 13a tokenizer). The others are worked out by
// hand from the rules in sacreBLEU's tokenizer_13a.py / tokenizer_re.py, one
// rule per case; the Python-semantics expectations are what CPython 3.11
// prints for the same expressions.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "attn/core/error.h"
#include "attn/eval/python_text.h"
#include "attn/eval/tokenizer.h"

using namespace attn::eval;

TEST_CASE("13a tokenizer follows mteval-v13a's rules", "[eval][tokenizer]") {
  const auto [input, expected] = GENERATE(table<std::string, std::string>({
      {"I'm a student.", "I'm a student ."},  // published (flexeval)
      {"Hello, world.", "Hello , world ."},   // comma and period split off
      {"3.14 and 1,000", "3.14 and 1,000"},   // kept between digits
      {"end of 1999.", "end of 1999 ."},      // a final period after a digit
      {".5 and 1.5.", ". 5 and 1.5 ."},       // split unless digits on both sides
      {"U.S.A.", "U . S . A ."},              //
      {"a..b", "a . . b"},                    // overlapping candidates
      {"pages 10-20", "pages 10 - 20"},       // dash after a digit
      {"well-known a-5", "well-known a-5"},   // other dashes stay
      {"don't", "don't"},                     // apostrophe stays
      {"(hi) [x] {y} $5 @me #t 50% a/b", "( hi ) [ x ] { y } $ 5 @ me # t 50 % a / b"},
      {"a+b a=b a_b a|b a~b a^b a`b a;b a:b a?b a!b",
       "a + b a = b a _ b a | b a ~ b a ^ b a ` b a ; b a : b a ? b a ! b"},
      {"&quot;Hi&quot; &amp; &lt;b&gt;", "\" Hi \" & < b >"},  // entities unescaped
      {"&amp;quot;", "& quot ;"},                              // one pass each, in sacreBLEU's order
      {"a<skipped>b", "ab"},                                   // skipped tags dropped
      {"hyphen-\nated two\nlines", "hyphenated two lines"},    // line-break joins
      {"Straße. Ça, va", "Straße . Ça , va"},                  // non-ASCII letters before '.' and ','
      {".é", ". é"},                                           // and after
      {"a\u00a0b\u3000c", "a b c"},                            // Python splits on no-break spaces
      {"a\u200bb", "a\u200bb"},                                // but not on zero-width space
      {"  many   spaces\t", "many spaces"},
      {"", ""},
      {"   ", ""},
  }));
  CHECK(tokenize_13a(input) == expected);
}

TEST_CASE("char and none tokenizers follow sacreBLEU", "[eval][tokenizer]") {
  CHECK(tokenize_chars("ab c") == "a b   c");  // the space is a token, dropped later by split()
  CHECK(tokenize_chars("äö") == "ä ö");
  CHECK(tokenize_chars("") == "");
  CHECK(tokenize(Tokenizer::none, " a  b ") == " a  b ");
  CHECK(parse_tokenizer("13a") == Tokenizer::v13a);
  CHECK(parse_tokenizer("char") == Tokenizer::character);
  CHECK(tokenizer_name(parse_tokenizer("none")) == "none");
  CHECK(tokenizer_name(parse_tokenizer("intl")) == "intl");
  CHECK_THROWS_AS(parse_tokenizer("zh"), attn::Error);
}

// Below: mteval-v14's rules as sacreBLEU's docstring states them (its BLEU
// golden values for intl are in test_bleu.cpp).
TEST_CASE("intl tokenizer splits Unicode punctuation and symbols, not number separators", "[eval][tokenizer]") {
  CHECK(tokenize_intl("Hello, world! 1,000.5 $5 a.b (x)") == "Hello , world ! 1,000.5 $ 5 a . b ( x )");
  CHECK(tokenize_intl("«Grüß Gott»—sagte er…") == "« Grüß Gott » — sagte er …");  // Pi, Pf, Pd, Po
  CHECK(tokenize_intl("5€ × 2") == "5 € × 2");                                    // Sc, Sm
  CHECK(tokenize_intl("Jahr 2019.") == "Jahr 2019.");  // a number keeps a final period (as mteval-v14)
}

TEST_CASE("UTF-8 validation rejects what Python's strict decoder rejects", "[eval][utf8]") {
  const auto [bytes, bad_at] = GENERATE(table<std::string, std::size_t>({
      {"plain ascii", std::string::npos},
      {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", std::string::npos},  // é € 😀
      {"\xef\xbb\xbftext", std::string::npos},                           // a BOM is a character
      {"a\xc0\x80", 1},                                                  // overlong 2-byte
      {"\xe0\x80\x80", 0},                                               // overlong 3-byte
      {"ab\xed\xa0\x80", 2},                                             // surrogate
      {"\xf4\x90\x80\x80", 0},                                           // above U+10FFFF
      {"\xf5\x80\x80\x80", 0},                                           // invalid lead
      {"x\x80", 1},                                                      // lone continuation
      {"\xe2\x82", 0},                                                   // truncated
      {"\xe2\x82x", 0},                                                  // bad continuation
  }));
  CHECK(find_invalid_utf8(bytes) == bad_at);
}

TEST_CASE("decode and encode round-trip every kind of code point", "[eval][utf8]") {
  const std::u32string code_points = {U'a', 0x7F, 0x80, 0x7FF, 0x800, 0xFFFF, 0x10000, 0x10FFFF};
  std::string bytes;
  for (char32_t cp : code_points) append_utf8(cp, bytes);
  CHECK(find_invalid_utf8(bytes) == std::string::npos);
  CHECK(decode_utf8(bytes) == code_points);
}

TEST_CASE("Python str.split, rstrip and lower semantics", "[eval][python]") {
  CHECK(python_split("a\u00a0b\u200bc\u3000d\x1c"
                     "e") == std::vector<std::string_view>{"a", "b\u200bc", "d", "e"});
  CHECK(python_split(" \t\n").empty());
  CHECK(python_rstrip(" x \t\u2003") == " x");
  CHECK(python_rstrip("x\r") == "x");
  CHECK(python_lower("ABC xyz") == "abc xyz");
  CHECK(python_lower("\u00c0\u00c9\u00ce \u01c5 \u03a9") == "\u00e0\u00e9\u00ee \u01c6 \u03c9");
  CHECK(python_lower("\u0130stanbul") == "i\u0307stanbul");
  const auto [upper, lower] = GENERATE(table<std::string, std::string>({
      {"\u03a3\u0391\u03a3", "\u03c3\u03b1\u03c2"},    // ΣΑΣ → σας
      {"\u03a3", "\u03c3"},                            // a lone capital sigma is not final
      {"\u0391\u03a3.", "\u03b1\u03c2."},              // final before a period
      {"\u0391\u03a3'\u0391", "\u03b1\u03c3'\u03b1"},  // not final inside a word
      {"\u038c\u03a3\u039f\u03a3 \u03a3\u039f\u03a6\u039f\u03a3",
       "\u03cc\u03c3\u03bf\u03c2 \u03c3\u03bf\u03c6\u03bf\u03c2"},
  }));
  CHECK(python_lower(upper) == lower);
  CHECK(is_python_space(0x85));
  CHECK_FALSE(is_python_space(0x180E));
  CHECK(without_python_space(U"a b\u00a0c") == U"abc");
}
