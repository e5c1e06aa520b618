#include "attn/text/html.h"

#include "attn/text/utf8.h"

namespace attn::text {

std::string html_escape(const std::string& s, std::size_t max_chars) {
  std::string out;
  std::size_t chars = 0;
  for (std::size_t pos = 0; pos < s.size();) {
    const text::Utf8Char c = decode_char(s, pos);
    if (chars++ == max_chars) {
      out += "\xE2\x80\xA6";  // …
      break;
    }
    if (!c.valid) {
      out += kReplacementChar;
    } else if (c.code_point == '&') {
      out += "&amp;";
    } else if (c.code_point == '"') {
      out += "&quot;";
    } else if (c.code_point == '<') {
      out += "&lt;";
    } else if (c.code_point == '>') {
      out += "&gt;";
    } else {
      out.append(s, pos, static_cast<std::size_t>(c.length));
    }
    pos += static_cast<std::size_t>(c.length);
  }
  return out;
}

std::string script_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size() + json.size() / 64);
  for (char c : json) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

}  // namespace attn::text
