// UTF-8: strict validation, decoding one character at a time, encoding.
//
// "Valid" is RFC 3629: no overlong forms, no UTF-16 surrogates
// (U+D800..U+DFFF), nothing above U+10FFFF, no truncated or stray
// continuation bytes. The CLI rejects invalid files with valid_utf8's offset;
// the tokenizer never crashes on them either (see decode_char).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace attn::text {

// True when s is valid UTF-8. On false, *error_offset (when given) is the
// byte offset of the first byte of the first invalid sequence.
bool valid_utf8(std::string_view s, std::size_t* error_offset = nullptr);

// One decoded character. An invalid or truncated sequence decodes as one
// byte (length 1, valid false, code_point = that byte), so a scan always
// advances and resynchronises at the next lead byte.
struct Utf8Char {
  char32_t code_point;
  int length;  // bytes consumed, 1..4
  bool valid;
};

// Decodes the character starting at s[pos]; requires pos < s.size().
// The non-ASCII path of decode_char.
Utf8Char decode_multibyte_char(std::string_view s, std::size_t pos);
inline Utf8Char decode_char(std::string_view s, std::size_t pos) {
  const auto lead = static_cast<unsigned char>(s[pos]);
  return lead < 0x80 ? Utf8Char{lead, 1, true} : decode_multibyte_char(s, pos);
}

// Appends the UTF-8 form of a code point (must be a Unicode scalar value).
void append_utf8(std::string& out, char32_t code_point);

// U+FFFD, what decoding writes in place of each invalid byte.
inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

}  // namespace attn::text
