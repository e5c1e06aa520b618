// Reading text files line by line, the way every subcommand needs it: UTF-8
// checked (file and line named on error), a leading BOM dropped, CRLF and LF
// both accepted, a NUL byte refused, gzip-compressed files read as their
// content (text/gzip.h).
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace attn::text {

// All lines of a file (without their line ends). Throws Error: the file is
// missing or unreadable, a line is not valid UTF-8 or holds a NUL byte.
std::vector<std::string> read_lines(const std::filesystem::path& path);

// The lines of `content`: split at '\n' (a last line without one counts, no
// empty line after a final '\n'), a CR before each '\n' dropped.
std::vector<std::string> split_lines(const std::string& content);

// The same checks on lines already in memory (from stdin); `origin` names the
// source in messages. Drops a BOM at the start of the first line.
void check_lines(std::vector<std::string>& lines, const std::string& origin);

// Strips a trailing '\r' (CRLF files).
void strip_cr(std::string& line);

}  // namespace attn::text
