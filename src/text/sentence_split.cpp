#include "attn/text/sentence_split.h"

#include <algorithm>
#include <array>

#include "attn/text/char_class.h"
#include "attn/text/utf8.h"

namespace attn::text {

namespace {

// Words that end with a full stop without ending a sentence (Moses'
// nonbreaking prefixes for de, en and fr, the common ones), without the stop.
constexpr std::array<std::string_view, 58> kAbbreviations = {
    // German
    "Abb", "Abs", "Abt", "bzgl", "bzw", "ca", "Dipl", "evtl", "Fa", "ggf", "Hr", "Hrn", "Frl", "inkl", "Kap", "Mio",
    "Mrd", "Nr", "Prof", "Str", "tel", "Tel", "usw", "vgl", "zzgl", "Jh", "Bd", "geb", "gest",
    // English
    "Mr", "Mrs", "Ms", "Dr", "St", "Jr", "Sr", "vs", "etc", "No", "Nos", "Vol", "Fig", "Inc", "Ltd", "Co", "Corp",
    "Jan", "Feb", "Mar", "Apr", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec",
    // French
    "Mme", "Mlle"};

bool is_abbreviation(std::string_view word) {
  return std::find(kAbbreviations.begin(), kAbbreviations.end(), word) != kAbbreviations.end();
}

bool is_space(char32_t c) { return char_class(c) == CharClass::space; }
bool is_closing(char32_t c) {
  return c == '"' || c == '\'' || c == ')' || c == ']' || c == U'”' || c == U'’' || c == U'»' || c == U'›' ||
         c == U'“';  // German closes with “
}
bool is_opening(char32_t c) {
  return c == '"' || c == '\'' || c == '(' || c == '[' || c == U'„' || c == U'“' || c == U'‘' || c == U'«' ||
         c == U'‹' || c == U'¿' || c == U'¡';
}
// Upper case in Latin-1, Latin Extended-A, Greek and Cyrillic; digits.
bool starts_sentence(char32_t c) {
  if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return true;
  if (c >= 0x100 && c <= 0x17F) return c % 2 == 0;  // mostly upper/lower pairs
  if (c >= 0x391 && c <= 0x3A9) return true;
  if (c >= 0x400 && c <= 0x42F) return true;
  return is_opening(c);
}

// Would a sentence end at the stop that ends `word` (the text since the last
// white space, stop included)?
bool ends_sentence(std::string_view word) {
  if (word.back() != '.') return true;  // ! ? …
  std::string_view stem = word.substr(0, word.size() - 1);
  while (!stem.empty() && (stem.front() == '(' || stem.front() == '"' || stem.front() == '\'')) stem.remove_prefix(1);
  if (stem.empty()) return true;  // "..." handled as a stop run below
  if (is_abbreviation(stem)) return false;
  if (stem.find('.') != std::string_view::npos) return false;  // z.B. U.S. e.g.
  if (std::all_of(stem.begin(), stem.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  // A single letter: an initial.
  const Utf8Char first = decode_char(stem, 0);
  return !(static_cast<std::size_t>(first.length) == stem.size() && char_class(first.code_point) == CharClass::letter);
}

}  // namespace

std::vector<std::string> split_sentences(std::string_view line) {
  std::vector<std::string> sentences;
  std::size_t start = 0, word_start = 0, pos = 0;
  auto trimmed = [&](std::size_t from, std::size_t to) {
    while (from < to && is_space(static_cast<unsigned char>(line[from]))) ++from;
    while (to > from && is_space(static_cast<unsigned char>(line[to - 1]))) --to;
    return std::string(line.substr(from, to - from));
  };
  while (pos < line.size()) {
    const Utf8Char c = decode_char(line, pos);
    const std::size_t next = pos + static_cast<std::size_t>(c.length);
    if (is_space(c.code_point)) {
      word_start = next;
      pos = next;
      continue;
    }
    if (c.code_point == '.' || c.code_point == '!' || c.code_point == '?' || c.code_point == U'…') {
      // The run of stops and closing marks, then white space, then a sentence start.
      std::size_t end = next;
      while (end < line.size()) {
        const Utf8Char d = decode_char(line, end);
        if (d.code_point == '.' || d.code_point == '!' || d.code_point == '?' || d.code_point == U'…' ||
            is_closing(d.code_point))
          end += static_cast<std::size_t>(d.length);
        else
          break;
      }
      std::size_t after = end;
      while (after < line.size() && is_space(static_cast<unsigned char>(line[after]))) ++after;
      if (after > end && after < line.size() && starts_sentence(decode_char(line, after).code_point) &&
          ends_sentence(line.substr(word_start, next - word_start))) {
        std::string sentence = trimmed(start, end);
        if (!sentence.empty()) sentences.push_back(std::move(sentence));
        start = after;
        word_start = after;
        pos = after;
        continue;
      }
      pos = end;
      continue;
    }
    pos = next;
  }
  std::string rest = trimmed(start, line.size());
  if (!rest.empty() || sentences.empty()) sentences.push_back(sentences.empty() ? std::string(line) : std::move(rest));
  return sentences;
}

SentenceUnits sentence_units(const std::vector<std::string>& lines, bool split) {
  SentenceUnits units;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto line = static_cast<std::int64_t>(i);
    if (!split) {
      units.texts.push_back(lines[i]);
      units.places.push_back({line, 0});
      continue;
    }
    std::int64_t k = 0;
    for (std::string& sentence : split_sentences(lines[i])) {
      units.texts.push_back(std::move(sentence));
      units.places.push_back({line, k++});
    }
  }
  return units;
}

}  // namespace attn::text
