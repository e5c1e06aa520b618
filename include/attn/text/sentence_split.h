// Splitting a line that holds several sentences (a paragraph) into sentences,
// by rule, as Moses' split-sentences.perl does: after . ! ? or … (and any
// closing quotes or brackets) followed by white space and a sentence start
// (an upper-case letter, a digit, an opening quote or bracket) — unless the
// word before the full stop is an abbreviation of German, English or French
// ("z.B.", "Dr.", "etc.", "Mme."), an initial ("J."), a word with full stops
// inside ("U.S."), or a number (German ordinals: "am 3. Oktober").
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::text {

// The sentences of `line`, in order, each without the white space around it;
// a line with one sentence (or none) comes back as itself.
std::vector<std::string> split_sentences(std::string_view line);

// Where a sentence split from a line came from: its input line and its place
// among that line's sentences, both from 0.
struct LinePlace {
  std::int64_t line = 0, sentence = 0;
};

// What translate, attend and serve decode: with `split`, every line's
// sentences in order, each with its place; without, the lines themselves.
struct SentenceUnits {
  std::vector<std::string> texts;
  std::vector<LinePlace> places;  // [texts.size()]
};
SentenceUnits sentence_units(const std::vector<std::string>& lines, bool split);

}  // namespace attn::text
