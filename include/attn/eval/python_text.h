// The few Python `str` operations whose exact behaviour sacreBLEU's scores
// depend on, on UTF-8 text: what counts as whitespace for split() and
// rstrip(), what lower() maps a character to, and code points as the unit of
// chrF's character n-grams. Matching them is what makes a score identical
// rather than close (a no-break space, for instance, splits words in Python).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace attn::eval {

// Byte offset of the first byte that Python's strict UTF-8 decoder rejects
// (a bad lead or continuation byte, a truncated sequence, an overlong form, a
// surrogate, a code point above U+10FFFF), or std::string_view::npos.
std::size_t find_invalid_utf8(std::string_view text);

// The code points of `text`, which must be valid UTF-8.
std::u32string decode_utf8(std::string_view text);

// Appends the UTF-8 encoding of a code point (≤ U+10FFFF, not a surrogate).
void append_utf8(char32_t code_point, std::string& out);

// Python's str.isspace() for one character (Unicode White_Space plus the
// information separators U+001C..U+001F, as CPython defines it).
bool is_python_space(char32_t code_point);

// Python's text.split(): runs of whitespace separate words; no empty words.
// The views point into `text` (valid UTF-8).
std::vector<std::string_view> python_split(std::string_view text);

// Python's text.rstrip(): `text` without trailing whitespace (valid UTF-8).
std::string_view python_rstrip(std::string_view text);

// Python's text.lower() (valid UTF-8): Unicode full lowercase mapping,
// including U+0130 → "i̇" and the final-sigma rule for U+03A3. Case mappings
// come from the C library's C.UTF-8 locale (glibc 2.36: Unicode 14, the
// version of Python 3.11); the final-sigma context approximates Unicode's
// Cased and Case_Ignorable properties (exact for letters, marks and the
// usual apostrophes and periods).
std::string python_lower(std::string_view text);

// `text` with every whitespace character removed: Python's "".join(text.split()).
std::u32string without_python_space(std::u32string_view text);

}  // namespace attn::eval
