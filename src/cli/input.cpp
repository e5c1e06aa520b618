#include "input.h"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "attn/core/error.h"
#include "attn/text/text_file.h"
#include "attn/text/utf8.h"

namespace attn::cli {

std::vector<std::string> read_input(const std::string& path) {
  std::vector<std::string> lines;
  if (path.empty() || path == "-") {
    struct stat status {};
    require(::fstat(0, &status) != 0 || !S_ISDIR(status.st_mode),
            "standard input is a directory; give a text file (e.g. < file.txt or -i file.txt)");
    std::string line;
    while (std::getline(std::cin, line)) {
      text::strip_cr(line);
      lines.push_back(std::move(line));
    }
  } else {
    std::error_code ec;
    require(std::filesystem::exists(path, ec), path + ": no such file; check the path");
    require(!std::filesystem::is_directory(path, ec), path + ": is a directory; give a text file, one sentence per line");
    std::FILE* f = std::fopen(path.c_str(), "rb");
    require(f != nullptr, path + ": cannot be read (permissions?)");
    std::string line;
    int c;
    bool any = false;
    while ((c = std::fgetc(f)) != EOF) {
      any = true;
      if (c == '\n') {
        text::strip_cr(line);
        lines.push_back(std::move(line));
        line.clear();
        any = false;
      } else {
        line.push_back(static_cast<char>(c));
      }
    }
    if (any) lines.push_back(line);
    std::fclose(f);
  }
  if (!lines.empty() && lines[0].rfind("\xEF\xBB\xBF", 0) == 0) lines[0].erase(0, 3);
  return lines;
}

std::vector<std::vector<std::int32_t>> encode_lines(const text::Bpe& bpe, const std::vector<std::string>& lines,
                                                    std::int64_t max_len, const std::string& what,
                                                    const std::string& flag) {
  std::vector<std::vector<std::int32_t>> ids(lines.size());
  long truncated = 0, invalid = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    // Read tolerantly, as invalid UTF-8 is: every line gets its translation (train refuses both: docs/reliability.md).
    if (!text::valid_utf8(lines[i]) || lines[i].find('\0') != std::string::npos) ++invalid;
    ids[i] = bpe.encode(lines[i]);
    if (static_cast<std::int64_t>(ids[i].size()) > max_len) {
      ids[i].resize(static_cast<std::size_t>(max_len));
      ++truncated;
    }
  }
  if (invalid)
    std::fprintf(stderr, "attn: warning: %ld %s lines are not valid UTF-8 or hold NUL bytes; read as bytes\n", invalid, what.c_str());
  if (truncated)
    std::fprintf(stderr, "attn: warning: %ld %s lines longer than %ld subwords were truncated (%s)\n", truncated,
                 what.c_str(), long(max_len), flag.c_str());
  return ids;
}

}  // namespace attn::cli
