#include "attn/text/text_file.h"

#include <cstring>
#include <fstream>

#include "attn/core/error.h"
#include "attn/text/utf8.h"

namespace attn::text {

void strip_cr(std::string& line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
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
  if (!std::filesystem::exists(path, ec))
    throw Error(path.string() + ": no such file; check the path");
  if (std::filesystem::is_directory(path, ec)) throw Error(path.string() + ": is a directory, expected a text file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot be read (permissions?)");
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    strip_cr(line);
    lines.push_back(std::move(line));
  }
  if (in.bad()) throw Error(path.string() + ": read error");
  check_lines(lines, path.string());
  return lines;
}

}  // namespace attn::text
