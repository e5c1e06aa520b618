// Reading hypothesis and reference files the way sacreBLEU's command line
// does: UTF-8, one segment per '\n'-terminated line (a last line without
// '\n' counts), trailing whitespace stripped (Python's rstrip(), so a CR
// goes too). A byte-order mark stays, as Python's "utf-8" codec keeps it.
#pragma once
#include <string>
#include <vector>

namespace attn::eval {

// Splits `content` into segments. `origin` names the source in errors.
// Throws Error naming origin and line when a line is not valid UTF-8.
std::vector<std::string> split_segments(const std::string& content, const std::string& origin);

// The segments of a file ("-": standard input). Throws Error when it cannot
// be read or is not valid UTF-8.
std::vector<std::string> read_segments(const std::string& path);

}  // namespace attn::eval
