// Coarse Unicode character classes that drive the pre-tokenizer.
//
// The table behind char_class was generated from Unicode 14.0 general
// categories (Python 3.11's unicodedata): letter = L*, extend = M* plus
// ZWNJ/ZWJ (U+200C/U+200D, which live inside words in Persian, Indic
// scripts and emoji sequences), digit = Nd. Whitespace is ASCII only on
// purpose: other Unicode spaces (U+00A0, U+3000, ...) are symbols, so they
// survive encode→decode unchanged instead of being turned into ' '.
#pragma once

namespace attn::text {

enum class CharClass : unsigned char {
  space,   // ' ', \t, \n, \v, \f, \r
  letter,  // any script's letters, including CJK ideographs
  digit,   // decimal digits of any script
  extend,  // combining marks, ZWNJ, ZWJ: belong to the character before
  symbol,  // everything else: punctuation, symbols, emoji, controls
};

// The table lookup behind char_class; call char_class.
CharClass non_ascii_char_class(char32_t code_point);

inline CharClass char_class(char32_t c) {
  if (c >= 0x80) return non_ascii_char_class(c);
  if (c == ' ' || (c >= '\t' && c <= '\r')) return CharClass::space;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return CharClass::letter;
  if (c >= '0' && c <= '9') return CharClass::digit;
  return CharClass::symbol;
}

}  // namespace attn::text
