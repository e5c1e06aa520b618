#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "attn/text/char_class.h"
#include "attn/text/utf8.h"

using namespace attn::text;

namespace {

// Naive reference: decode by bit pattern, then reject overlong forms,
// surrogates and code points above U+10FFFF. Returns the offset of the
// first invalid sequence, or npos.
std::size_t reference_first_error(const std::string& s) {
  std::size_t pos = 0;
  while (pos < s.size()) {
    const auto lead = static_cast<std::uint8_t>(s[pos]);
    int length;
    std::uint32_t cp;
    if (lead < 0x80) {
      length = 1;
      cp = lead;
    } else if ((lead & 0xE0) == 0xC0) {
      length = 2;
      cp = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3;
      cp = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4;
      cp = lead & 0x07;
    } else
      return pos;
    if (pos + length > s.size()) return pos;
    for (int i = 1; i < length; ++i) {
      const auto b = static_cast<std::uint8_t>(s[pos + i]);
      if ((b & 0xC0) != 0x80) return pos;
      cp = (cp << 6) | (b & 0x3F);
    }
    const std::uint32_t min_for_length[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_for_length[length] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return pos;
    pos += length;
  }
  return std::string::npos;
}

// True when valid_utf8 agrees with the reference on validity and offset.
bool agrees_with_reference(const std::string& s) {
  const std::size_t expected = reference_first_error(s);
  std::size_t offset = 12345;
  const bool valid = valid_utf8(s, &offset);
  return valid == (expected == std::string::npos) && (valid || offset == expected);
}

// Escaped bytes, for failure messages.
std::string hex(const std::string& s) {
  std::string out;
  char buf[8];
  for (unsigned char c : s) {
    std::snprintf(buf, sizeof buf, "\\x%02X", c);
    out += buf;
  }
  return out;
}

}  // namespace

TEST_CASE("utf8: valid sequences, including every boundary code point", "[text]") {
  for (const char* s :
       {"", "plain ASCII", "Grüße aus Köln", "日本語", "😀👍🏽", "مرحبا", "\x7F", "\xC2\x80", "\xDF\xBF",
        "\xE0\xA0\x80", "\xED\x9F\xBF", "\xEE\x80\x80", "\xEF\xBF\xBF", "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF"}) {
    INFO(s);
    std::size_t offset = 99;
    REQUIRE(valid_utf8(s, &offset));
    REQUIRE(offset == 99);  // untouched on success
  }
}

TEST_CASE("utf8: invalid sequences are rejected at the right offset", "[text]") {
  struct Case {
    std::string bytes;
    std::size_t offset;
  };
  const Case cases[] = {
      {"\x80", 0},              // stray continuation
      {"ab\xC0\x80", 2},        // overlong NUL
      {"\xC1\xBF", 0},          // overlong 2-byte
      {"x\xE0\x80\xAF", 1},     // overlong 3-byte
      {"\xF0\x80\x80\xAF", 0},  // overlong 4-byte
      {"\xF0\x8F\xBF\xBF", 0},  // overlong U+FFFF
      {"\xED\xA0\x80", 0},      // high surrogate U+D800
      {"ok\xED\xBF\xBF", 2},    // low surrogate U+DFFF
      {"\xF4\x90\x80\x80", 0},  // U+110000
      {"\xF5\x80\x80\x80", 0},  // lead byte beyond Unicode
      {"\xFF", 0},
      {"abc\xE2\x82", 3},  // truncated at end
      {"\xE2\x82"
       "A",
       0},                                    // truncated before ASCII
      {"Hallo \xF0\x9F\x98", 6},              // truncated emoji
      {"0123456789abcdef\x80", 16},           // after the 8-byte ASCII fast path
      {"0123456789abcd\xC3\xA4xyz\xC3", 19},  // valid 2-byte then truncated
  };
  for (const Case& c : cases) {
    INFO("offset " << c.offset);
    std::size_t offset = 0;
    REQUIRE_FALSE(valid_utf8(c.bytes, &offset));
    REQUIRE(offset == c.offset);
    REQUIRE_FALSE(valid_utf8(c.bytes));
    REQUIRE(agrees_with_reference(c.bytes));
  }
}

TEST_CASE("utf8: validator agrees with a naive reference on all 2-byte and random strings", "[text]") {
  std::vector<std::string> disagreements;
  for (int a = 0; a < 256; ++a)
    for (int b = 0; b < 256; ++b) {
      const std::string s{static_cast<char>(a), static_cast<char>(b)};
      if (!agrees_with_reference(s)) disagreements.push_back(hex(s));
    }

  std::mt19937 gen(20240601);
  std::uniform_int_distribution<int> length_dist(1, 24), high_byte(0x80, 0xFF), any_byte(0, 255);
  std::uniform_int_distribution<int> pick(0, 3);
  int invalid = 0;
  for (int trial = 0; trial < 100000; ++trial) {
    std::string s;
    const int length = length_dist(gen);
    for (int i = 0; i < length; ++i) {
      const int kind = pick(gen);
      s.push_back(static_cast<char>(kind == 0 ? any_byte(gen) : kind == 1 ? 'a' : high_byte(gen)));
    }
    if (!agrees_with_reference(s)) disagreements.push_back(hex(s));
    invalid += !valid_utf8(s);
  }
  REQUIRE(disagreements.empty());
  REQUIRE(invalid > 10000);  // both outcomes are exercised
  REQUIRE(invalid < 100000);
}

TEST_CASE("utf8: append_utf8 and decode_char round-trip every scalar value", "[text]") {
  std::string all;
  std::vector<char32_t> failures;
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    std::string s;
    append_utf8(s, cp);
    const int expected_length = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    const Utf8Char c = decode_char(s, 0);
    if (s.size() != static_cast<std::size_t>(expected_length) || !c.valid || c.code_point != cp ||
        c.length != expected_length || !valid_utf8(s))
      failures.push_back(cp);
    if (cp % 97 == 0) all += s;
  }
  REQUIRE(failures.empty());
  REQUIRE(valid_utf8(all));
  // Invalid bytes decode as one byte each, so scans resynchronise.
  const std::string bad = "\xE2\x82Z";
  const Utf8Char c = decode_char(bad, 0);
  REQUIRE_FALSE(c.valid);
  REQUIRE(c.length == 1);
  REQUIRE(c.code_point == 0xE2);
}

TEST_CASE("char_class: letters of many scripts, digits, marks, symbols, ASCII whitespace", "[text]") {
  for (char32_t cp : {U'a', U'Z', U'ä', U'ß', U'Ω', U'ж', U'ا', U'א', U'日', U'ひ', U'한', U'ก'})
    REQUIRE(char_class(cp) == CharClass::letter);
  for (char32_t cp : {U'0', U'9', U'٣', U'९'}) REQUIRE(char_class(cp) == CharClass::digit);
  for (char32_t cp : {U'\u0301', U'\u064E', U'\u093F', U'\u200D', U'\u200C', U'\uFE0F'})
    REQUIRE(char_class(cp) == CharClass::extend);
  for (char32_t cp : {U'.', U',', U'-', U'"', U'€', U'😀', U'\u2581', U'\u00A0', U'\u3000', U'\u00B2', U'\x01'})
    REQUIRE(char_class(cp) == CharClass::symbol);
  for (char32_t cp : {U' ', U'\t', U'\n', U'\r', U'\v', U'\f'}) REQUIRE(char_class(cp) == CharClass::space);
  REQUIRE(char_class(0x10FFFF) == CharClass::symbol);
  REQUIRE(char_class(0x7F) == CharClass::symbol);
}
