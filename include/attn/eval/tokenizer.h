// The word tokenizers BLEU applies before counting n-grams, as sacreBLEU 2.x
// defines them. `13a` (the default, mteval-v13a.pl's rules) is the one that
// published WMT scores use; `none` trusts the input's own spaces; `char`
// makes every character a token; `intl` (mteval-v14's international
// tokenizer) splits off Unicode punctuation and symbols.
#pragma once
#include <string>
#include <string_view>

namespace attn::eval {

enum class Tokenizer { v13a, intl, none, character };

// "13a", "intl", "none" or "char" (sacreBLEU's names, as in its signature). Throws
// Error naming the accepted values for anything else.
Tokenizer parse_tokenizer(std::string_view name);
std::string_view tokenizer_name(Tokenizer tokenizer);

// sacreBLEU's Tokenizer13a on one segment (valid UTF-8): drops "<skipped>",
// joins "-\n" line breaks, unescapes &quot; &amp; &lt; &gt; (in that order),
// pads ASCII punctuation and symbols with spaces, splits '.' and ',' unless
// they sit between digits, splits '-' after a digit, and returns the tokens
// joined by single spaces.
std::string tokenize_13a(std::string_view line);

// sacreBLEU's TokenizerV14International on one segment: punctuation (\p{P})
// is split off unless it sits between digits (\p{N}) on the side it touches,
// symbols (\p{S}) always; then the tokens are joined by single spaces.
std::string tokenize_intl(std::string_view line);

// sacreBLEU's TokenizerChar: every code point of the line, joined by spaces.
std::string tokenize_chars(std::string_view line);

// Applies `tokenizer` (`none` returns the line unchanged).
std::string tokenize(Tokenizer tokenizer, std::string_view line);

}  // namespace attn::eval
