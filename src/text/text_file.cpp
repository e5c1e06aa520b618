#include "attn/text/text_file.h"

#include <cstring>
#include <fstream>
#include <iterator>

#include "attn/core/error.h"
#include "attn/text/gzip.h"
#include "attn/text/utf8.h"

namespace attn::text {

void strip_cr(std::string& line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
}

std::vector<std::string> split_lines(const std::string& content) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < content.size()) {
    std::size_t end = content.find('\n', start);
    if (end == std::string::npos) end = content.size();
    std::string line = content.substr(start, end - start);
    strip_cr(line);
    lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

void check_lines(std::vector<std::string>& lines, const std::string& origin) {
  if (!lines.empty() && lines[0].rfind("\xEF\xBB\xBF", 0) == 0) lines[0].erase(0, 3);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (std::memchr(line.data(), '\0', line.size()))
      throw Error(origin + ":" + std::to_string(i + 1) + ": contains a NUL byte; is this a binary file?");
    std::size_t offset = 0;
    if (!valid_utf8(line, &offset))
      throw Error(origin + ":" + std::to_string(i + 1) + ": invalid UTF-8 at byte " + std::to_string(offset + 1) +
                  "; convert the file to UTF-8 (e.g. iconv -f latin1 -t utf-8)");
  }
}

std::vector<std::string> read_lines(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw Error(path.string() + ": no such file; check the path");
  if (std::filesystem::is_directory(path, ec)) throw Error(path.string() + ": is a directory, expected a text file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot be read (permissions?)");
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(path.string() + ": read error");
  std::vector<std::string> lines = split_lines(decompress_if_gzip(std::move(content), path.string()));
  check_lines(lines, path.string());
  return lines;
}

}  // namespace attn::text
