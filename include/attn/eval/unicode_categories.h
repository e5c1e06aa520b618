// The Unicode general-category classes sacreBLEU's `intl` tokenizer matches
// with \p{P}, \p{S} and \p{N}. The table is generated from Python's
// unicodedata by dev/make_unicode_categories.py (Unicode 14 with Python
// 3.11; sacreBLEU's `regex` module may carry a newer Unicode, which differs
// only for characters assigned since).
#pragma once

namespace attn::eval {

enum class MajorCategory : unsigned char {
  other,
  punctuation,  // Pc Pd Ps Pe Pi Pf Po
  symbol,       // Sm Sc Sk So
  number,       // Nd Nl No
};

MajorCategory major_category(char32_t code_point);

}  // namespace attn::eval
