// The reversible pre-tokenizer: splits a line into the runs that BPE merges
// within (never across).
//
// Rules, in order of precedence:
//   - Whitespace (ASCII ' ', \t, \n, \v, \f, \r) separates pre-tokens and is
//     not part of any. The pre-token after a whitespace run, and the first
//     of the line, is flagged word_start: BPE writes it with the word
//     marker "▁" (U+2581) in front, as SentencePiece does, and decoding
//     turns each marker back into one ' ' and drops the line's leading one.
//     So runs of whitespace become one space and line ends are trimmed;
//     everything else round-trips exactly.
//   - Letters (any script) form one run; so do decimal digits.
//   - Each punctuation/symbol character (and each invalid byte) is a
//     pre-token of its own: "..." is three. This keeps the vocabulary for
//     words, and means no learned piece can spell "<s>" or "<0x41>".
//   - Combining marks, ZWNJ and ZWJ stay with the character before them
//     (a mark at a pre-token start begins a symbol-like pre-token).
// No Unicode normalisation is applied (no NFC, no case folding): what comes
// in goes out.
#pragma once
#include <string_view>
#include <vector>

#include "attn/text/char_class.h"
#include "attn/text/utf8.h"

namespace attn::text {

struct PreToken {
  std::string_view text;  // a non-empty view into the line, no whitespace
  bool word_start;        // follows whitespace or starts the line
};

// Calls visit(PreToken) for each pre-token of the line, left to right,
// without allocating.
template <class Visit>
void for_each_pretoken(std::string_view line, Visit&& visit) {
  std::size_t start = 0;  // of the open pre-token
  bool open = false;
  bool open_word_start = false;
  CharClass open_class = CharClass::symbol;
  bool after_space = true;  // the line start counts as whitespace
  std::size_t pos = 0;
  const auto close = [&](std::size_t end) {
    if (open) visit(PreToken{line.substr(start, end - start), open_word_start});
    open = false;
  };
  while (pos < line.size()) {
    const Utf8Char c = decode_char(line, pos);
    const CharClass cls = c.valid ? char_class(c.code_point) : CharClass::symbol;
    if (cls == CharClass::space) {
      close(pos);
      after_space = true;
    } else {
      const bool continues = open && (cls == CharClass::extend ||
                                      ((cls == CharClass::letter || cls == CharClass::digit) && cls == open_class));
      if (!continues) {
        close(pos);
        open = true;
        start = pos;
        open_word_start = after_space;
        open_class = cls == CharClass::extend ? CharClass::symbol : cls;
        after_space = false;
      }
    }
    pos += c.length;
  }
  close(pos);
}

std::vector<PreToken> pretokenize(std::string_view line);

}  // namespace attn::text
