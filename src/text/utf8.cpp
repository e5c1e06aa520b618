#include "attn/text/utf8.h"

#include <cstdint>
#include <cstring>

namespace attn::text {

Utf8Char decode_multibyte_char(std::string_view s, std::size_t pos) {
  const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(s[i]); };
  const std::uint8_t lead = byte(pos);
  const Utf8Char invalid{lead, 1, false};
  int length;
  char32_t code_point;
  // The range allowed for the second byte excludes overlongs (E0, F0),
  // surrogates (ED) and code points above U+10FFFF (F4).
  std::uint8_t second_min = 0x80, second_max = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code_point = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code_point = lead & 0x0F;
    if (lead == 0xE0) second_min = 0xA0;
    if (lead == 0xED) second_max = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code_point = lead & 0x07;
    if (lead == 0xF0) second_min = 0x90;
    if (lead == 0xF4) second_max = 0x8F;
  } else {
    return invalid;  // continuation byte, C0/C1 (always overlong), F5..FF
  }
  if (pos + length > s.size()) return invalid;
  for (int i = 1; i < length; ++i) {
    const std::uint8_t b = byte(pos + i);
    const std::uint8_t lo = i == 1 ? second_min : 0x80;
    const std::uint8_t hi = i == 1 ? second_max : 0xBF;
    if (b < lo || b > hi) return invalid;
    code_point = (code_point << 6) | (b & 0x3F);
  }
  return {code_point, length, true};
}

bool valid_utf8(std::string_view s, std::size_t* error_offset) {
  std::size_t pos = 0;
  const std::size_t n = s.size();
  while (pos < n) {
    // Corpora are mostly ASCII: skip 8 ASCII bytes at a time.
    if (pos + 8 <= n) {
      std::uint64_t word;
      std::memcpy(&word, s.data() + pos, 8);
      if ((word & 0x8080808080808080ull) == 0) {
        pos += 8;
        continue;
      }
    }
    const Utf8Char c = decode_char(s, pos);
    if (!c.valid) {
      if (error_offset) *error_offset = pos;
      return false;
    }
    pos += c.length;
  }
  return true;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace attn::text
