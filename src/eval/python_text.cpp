#include "attn/eval/python_text.h"

#include "attn/text/utf8.h"

#include <locale.h>
#include <wctype.h>

#include "attn/core/error.h"

namespace attn::eval {
namespace {

bool is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// Length of the valid sequence starting at text[pos], or 0 if it is invalid.
std::size_t valid_sequence_length(std::string_view text, std::size_t pos) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[pos + i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char second_lo = 0x80, second_hi = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_lo = 0xA0;  // overlong
    if (lead == 0xED) second_hi = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_lo = 0x90;  // overlong
    if (lead == 0xF4) second_hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (pos + length > text.size()) return 0;
  if (byte(1) < second_lo || byte(1) > second_hi) return 0;
  for (std::size_t i = 2; i < length; ++i)
    if (!is_continuation(byte(i))) return 0;
  return length;
}

// Decodes the code point at text[pos] (valid UTF-8) and advances pos past it.
char32_t next_code_point(std::string_view text, std::size_t& pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  std::size_t length = 1;
  char32_t cp = lead;
  if (lead >= 0xF0) {
    length = 4;
    cp = lead & 0x07;
  } else if (lead >= 0xE0) {
    length = 3;
    cp = lead & 0x0F;
  } else if (lead >= 0xC0) {
    length = 2;
    cp = lead & 0x1F;
  }
  for (std::size_t i = 1; i < length && pos + i < text.size(); ++i)
    cp = (cp << 6) | (static_cast<unsigned char>(text[pos + i]) & 0x3F);
  pos += length;
  return cp;
}

locale_t utf8_ctype_locale() {
  static const locale_t locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
  require(locale != static_cast<locale_t>(nullptr),
          "lowercasing needs the C library's C.UTF-8 locale, which this system lacks");
  return locale;
}

bool is_cased(char32_t cp, locale_t locale) {
  const auto wc = static_cast<wint_t>(cp);
  return towlower_l(wc, locale) != wc || towupper_l(wc, locale) != wc || iswlower_l(wc, locale) ||
         iswupper_l(wc, locale);
}

// Unicode's Case_Ignorable: apostrophes, periods, colons, modifier letters
// and symbols, combining marks, format characters (the common ones).
bool is_case_ignorable(char32_t cp) {
  switch (cp) {
    case 0x0027:
    case 0x002E:
    case 0x003A:
    case 0x005E:
    case 0x0060:
    case 0x00A8:
    case 0x00AD:
    case 0x00AF:
    case 0x00B4:
    case 0x00B7:
    case 0x00B8:
    case 0x0374:
    case 0x0375:
    case 0x037A:
    case 0x0384:
    case 0x0385:
    case 0x0387:
    case 0x2018:
    case 0x2019:
    case 0x2024:
    case 0x2027:
    case 0xFEFF: return true;
    default: break;
  }
  return (cp >= 0x02B0 && cp <= 0x036F) || (cp >= 0x1AB0 && cp <= 0x1AFF) || (cp >= 0x1DC0 && cp <= 0x1DFF) ||
         (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2064) ||
         (cp >= 0x20D0 && cp <= 0x20FF) || (cp >= 0xFE00 && cp <= 0xFE0F) || (cp >= 0xFE20 && cp <= 0xFE2F);
}

constexpr char32_t kCapitalSigma = 0x03A3;

// CPython's handle_capital_sigma: final form when a cased letter precedes
// and none follows (case-ignorable characters skipped on both sides).
char32_t lower_capital_sigma(const std::u32string& text, std::size_t i, locale_t locale) {
  std::size_t j = i;
  while (j > 0 && is_case_ignorable(text[j - 1])) --j;
  bool final_sigma = j > 0 && is_cased(text[j - 1], locale);
  if (final_sigma) {
    std::size_t k = i + 1;
    while (k < text.size() && is_case_ignorable(text[k])) ++k;
    final_sigma = k == text.size() || !is_cased(text[k], locale);
  }
  return final_sigma ? 0x03C2 : 0x03C3;
}

}  // namespace

std::size_t find_invalid_utf8(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t length = valid_sequence_length(text, pos);
    if (length == 0) return pos;
    pos += length;
  }
  return std::string_view::npos;
}

std::u32string decode_utf8(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  while (pos < text.size()) out.push_back(next_code_point(text, pos));
  return out;
}

void append_utf8(char32_t cp, std::string& out) { text::append_utf8(out, cp); }

bool is_python_space(char32_t cp) {
  if (cp < 0x80) return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20);
  switch (cp) {
    case 0x0085:
    case 0x00A0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000: return true;
    default: return cp >= 0x2000 && cp <= 0x200A;
  }
}

std::vector<std::string_view> python_split(std::string_view text) {
  std::vector<std::string_view> words;
  std::size_t pos = 0;
  std::size_t word_start = std::string_view::npos;
  while (pos < text.size()) {
    const std::size_t here = pos;
    const bool space = is_python_space(next_code_point(text, pos));
    if (space && word_start != std::string_view::npos) {
      words.push_back(text.substr(word_start, here - word_start));
      word_start = std::string_view::npos;
    } else if (!space && word_start == std::string_view::npos) {
      word_start = here;
    }
  }
  if (word_start != std::string_view::npos) words.push_back(text.substr(word_start));
  return words;
}

std::string_view python_rstrip(std::string_view text) {
  std::size_t end = 0;  // end of the last non-space character
  std::size_t pos = 0;
  while (pos < text.size())
    if (!is_python_space(next_code_point(text, pos))) end = pos;
  return text.substr(0, end);
}

std::string python_lower(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool ascii = true;
  for (char c : text) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) {
    for (char c : text) out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
    return out;
  }
  const locale_t locale = utf8_ctype_locale();
  const std::u32string code_points = decode_utf8(text);
  for (std::size_t i = 0; i < code_points.size(); ++i) {
    const char32_t cp = code_points[i];
    if (cp == 0x0130) {  // the one unconditional one-to-many lowercase mapping
      out.push_back('i');
      append_utf8(0x0307, out);
    } else if (cp == kCapitalSigma) {
      append_utf8(lower_capital_sigma(code_points, i, locale), out);
    } else {
      append_utf8(static_cast<char32_t>(towlower_l(static_cast<wint_t>(cp), locale)), out);
    }
  }
  return out;
}

std::u32string without_python_space(std::u32string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (char32_t cp : text)
    if (!is_python_space(cp)) out.push_back(cp);
  return out;
}

}  // namespace attn::eval
