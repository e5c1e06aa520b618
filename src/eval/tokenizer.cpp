// The 13a rules are four regular-expression substitutions in sacreBLEU
// (tokenizer_re.py). Each pattern matches one or two single characters, so
// Python's leftmost, non-overlapping re.sub is a left-to-right scan that
// either rewrites a match and skips past it or copies one unit. Scanning
// bytes instead of code points gives the same result: every class that can
// start a match is ASCII, and a UTF-8 continuation byte is a "non-digit"
// exactly where the whole character is.
#include "attn/eval/tokenizer.h"

#include "attn/core/error.h"
#include "attn/eval/python_text.h"
#include "attn/eval/unicode_categories.h"

namespace attn::eval {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_period_or_comma(char c) { return c == '.' || c == ','; }

// [\{-\~\[-\` -\&\(-\+\:-\@\/]: ASCII punctuation and symbols except
// apostrophe, comma, hyphen and period; the space is in the class too.
bool is_padded_symbol(char c) {
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') || (c >= '(' && c <= '+') ||
         (c >= ':' && c <= '@') || c == '/';
}

std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  while (true) {
    const std::size_t hit = text.find(from, pos);
    if (hit == std::string_view::npos) break;
    out.append(text.substr(pos, hit - pos));
    out.append(to);
    pos = hit + from.size();
  }
  out.append(text.substr(pos));
  return out;
}

// s/([\{-\~\[-\` -\&\(-\+\:-\@\/])/ \1 /g
std::string pad_symbols(std::string_view text) {
  std::string out;
  out.reserve(text.size() * 2);
  for (char c : text) {
    if (is_padded_symbol(c)) {
      out.push_back(' ');
      out.push_back(c);
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// s/(first)(second)/replacement/g for two one-character classes; the
// replacement is written by `emit(out, first_char, second_char)`.
template <typename First, typename Second, typename Emit>
std::string substitute_pairs(std::string_view text, First first, Second second, Emit emit) {
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  std::size_t i = 0;
  while (i < text.size()) {
    if (i + 1 < text.size() && first(text[i]) && second(text[i + 1])) {
      emit(out, text[i], text[i + 1]);
      i += 2;
    } else {
      out.push_back(text[i]);
      ++i;
    }
  }
  return out;
}

std::string join_words(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::string_view word : python_split(text)) {
    if (!out.empty()) out.push_back(' ');
    out.append(word);
  }
  return out;
}

}  // namespace

Tokenizer parse_tokenizer(std::string_view name) {
  if (name == "13a") return Tokenizer::v13a;
  if (name == "intl") return Tokenizer::intl;
  if (name == "none") return Tokenizer::none;
  if (name == "char") return Tokenizer::character;
  throw Error("unknown tokenizer '" + std::string(name) + "'; use 13a, intl, none or char");
}

std::string_view tokenizer_name(Tokenizer tokenizer) {
  switch (tokenizer) {
    case Tokenizer::v13a: return "13a";
    case Tokenizer::intl: return "intl";
    case Tokenizer::none: return "none";
    case Tokenizer::character: return "char";
  }
  return "13a";
}

std::string tokenize_13a(std::string_view line) {
  std::string text = replace_all(line, "<skipped>", "");
  text = replace_all(text, "-\n", "");
  text = replace_all(text, "\n", " ");
  if (text.find('&') != std::string::npos) {
    text = replace_all(text, "&quot;", "\"");
    text = replace_all(text, "&amp;", "&");
    text = replace_all(text, "&lt;", "<");
    text = replace_all(text, "&gt;", ">");
  }
  text = pad_symbols(" " + text + " ");
  const auto not_digit = [](char c) { return !is_digit(c); };
  // Period and comma split off unless preceded by a digit...
  text = substitute_pairs(text, not_digit, is_period_or_comma, [](std::string& out, char a, char b) {
    out.push_back(a);
    out.push_back(' ');
    out.push_back(b);
    out.push_back(' ');
  });
  // ...and unless followed by one.
  text = substitute_pairs(text, is_period_or_comma, not_digit, [](std::string& out, char a, char b) {
    out.push_back(' ');
    out.push_back(a);
    out.push_back(' ');
    out.push_back(b);
  });
  // A dash after a digit is split off.
  text = substitute_pairs(
      text, is_digit, [](char c) { return c == '-'; },
      [](std::string& out, char a, char b) {
        out.push_back(a);
        out.push_back(' ');
        out.push_back(b);
        out.push_back(' ');
      });
  return join_words(text);
}

std::string tokenize_intl(std::string_view line) {
  const auto is = [](char32_t cp, MajorCategory category) { return major_category(cp) == category; };
  // One re.sub of a two-character pattern: a left-to-right scan that rewrites
  // a match and skips past it, or copies one character.
  const auto substitute = [](const std::u32string& text, auto matches, bool space_before) {
    std::u32string out;
    out.reserve(text.size() * 2);
    std::size_t i = 0;
    while (i < text.size()) {
      if (i + 1 < text.size() && matches(text[i], text[i + 1])) {
        if (space_before) out.push_back(U' ');
        out.push_back(text[i]);
        out.push_back(U' ');
        out.push_back(text[i + 1]);
        if (!space_before) out.push_back(U' ');
        i += 2;
      } else {
        out.push_back(text[i]);
        ++i;
      }
    }
    return out;
  };
  std::u32string text = decode_utf8(line);
  // (\P{N})(\p{P}) -> "\1 \2 "
  text = substitute(
      text, [&](char32_t a, char32_t b) { return !is(a, MajorCategory::number) && is(b, MajorCategory::punctuation); },
      false);
  // (\p{P})(\P{N}) -> " \1 \2"
  text = substitute(
      text, [&](char32_t a, char32_t b) { return is(a, MajorCategory::punctuation) && !is(b, MajorCategory::number); },
      true);
  // (\p{S}) -> " \1 "
  std::string padded;
  padded.reserve(text.size() * 2);
  for (char32_t cp : text) {
    const bool symbol = is(cp, MajorCategory::symbol);
    if (symbol) padded.push_back(' ');
    append_utf8(cp, padded);
    if (symbol) padded.push_back(' ');
  }
  return join_words(padded);
}

std::string tokenize_chars(std::string_view line) {
  std::string out;
  out.reserve(line.size() * 2);
  for (char32_t cp : decode_utf8(line)) {
    if (!out.empty()) out.push_back(' ');
    append_utf8(cp, out);
  }
  return out;
}

std::string tokenize(Tokenizer tokenizer, std::string_view line) {
  switch (tokenizer) {
    case Tokenizer::v13a: return tokenize_13a(line);
    case Tokenizer::intl: return tokenize_intl(line);
    case Tokenizer::none: return std::string(line);
    case Tokenizer::character: return tokenize_chars(line);
  }
  return std::string(line);
}

}  // namespace attn::eval
