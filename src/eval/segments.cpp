#include "attn/eval/segments.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "attn/core/error.h"
#include "attn/text/gzip.h"
#include "attn/eval/python_text.h"

namespace attn::eval {

std::vector<std::string> split_segments(const std::string& content, const std::string& origin) {
  std::vector<std::string> segments;
  std::size_t start = 0;
  std::size_t line_number = 0;
  while (start < content.size()) {
    std::size_t end = content.find('\n', start);
    if (end == std::string::npos) end = content.size();
    ++line_number;
    const std::string_view line(content.data() + start, end - start);
    const std::size_t bad = find_invalid_utf8(line);
    if (bad != std::string_view::npos)
      throw Error(origin + " line " + std::to_string(line_number) + " is not valid UTF-8 (byte " +
                  std::to_string(bad + 1) + " of the line); convert the file to UTF-8");
    segments.emplace_back(python_rstrip(line));
    start = end + 1;
  }
  return segments;
}

std::vector<std::string> read_segments(const std::string& path) {
  if (path == "-") {
    std::ostringstream content;
    content << std::cin.rdbuf();
    return split_segments(text::decompress_if_gzip(content.str(), "standard input"), "standard input");
  }
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) throw Error("cannot read '" + path + "': it is a directory");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error("cannot open '" + path + "': " + std::strerror(errno));
  std::string content((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) throw Error("cannot read '" + path + "': " + std::strerror(errno));
  return split_segments(text::decompress_if_gzip(std::move(content), path), "'" + path + "'");
}

std::vector<std::string_view> segment_references(std::span<const std::string> references) {
  std::vector<std::string_view> given;
  for (const std::string& reference : references)
    if (!reference.empty()) given.emplace_back(reference);
  if (given.empty()) given.emplace_back();
  return given;
}

void for_each_segment(std::span<const std::string> hypotheses, std::span<const std::vector<std::string>> references,
                      FunctionRef<void(std::string_view, std::span<const std::string>)> visit) {
  for (const auto& stream : references)
    require(stream.size() == hypotheses.size(), "the reference streams and the hypotheses differ in length");
  std::vector<std::string> segment_refs(references.size());
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    for (std::size_t k = 0; k < references.size(); ++k) segment_refs[k] = references[k][i];
    visit(hypotheses[i], segment_refs);
  }
}

}  // namespace attn::eval
