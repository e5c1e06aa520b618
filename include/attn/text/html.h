// Text inside HTML pages (attn attend's maps, attn report): escaped, and
// JSON made safe inside <script> elements.
#pragma once
#include <cstddef>
#include <string>

namespace attn::text {

// Text made safe inside HTML text and attribute values (& " < > escaped,
// invalid UTF-8 replaced by U+FFFD), cut to max_chars characters plus "…".
std::string html_escape(const std::string& s, std::size_t max_chars = std::string::npos);

// JSON text made safe inside an HTML <script> element: every '<' becomes \u003c
// (JSON has '<' only inside strings, where the escape means the same).
std::string script_safe(const std::string& json);

}  // namespace attn::text
