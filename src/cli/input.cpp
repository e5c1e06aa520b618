#include "input.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include "attn/core/error.h"
#include "attn/text/gzip.h"
#include "attn/text/text_file.h"
#include "attn/text/utf8.h"

namespace attn::cli {

std::vector<std::string> read_input(const std::string& path) {
  std::string content, origin = path;
  if (path.empty() || path == "-") {
    struct stat status {};
    require(::fstat(0, &status) != 0 || !S_ISDIR(status.st_mode),
            "standard input is a directory; give a text file (e.g. < file.txt or -i file.txt)");
    content.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    origin = "standard input";
  } else {
    std::error_code ec;
    require(std::filesystem::exists(path, ec), path + ": no such file; check the path");
    require(!std::filesystem::is_directory(path, ec),
            path + ": is a directory; give a text file, one sentence per line");
    std::ifstream file(path, std::ios::binary);
    require(static_cast<bool>(file), path + ": cannot be read (permissions?)");
    content.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
    require(!file.bad(), path + ": read error");
  }
  std::vector<std::string> lines = text::split_lines(text::decompress_if_gzip(std::move(content), origin));
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
    // One id past the limit says whether the line was cut, without encoding the rest of it.
    ids[i] = bpe.encode_prefix(lines[i], static_cast<std::size_t>(max_len) + 1);
    if (static_cast<std::int64_t>(ids[i].size()) > max_len) {
      ids[i].resize(static_cast<std::size_t>(max_len));
      ++truncated;
    }
  }
  if (invalid)
    std::fprintf(stderr, "attn: warning: %ld %s are not valid UTF-8 or hold NUL bytes; read as bytes\n", invalid,
                 what.c_str());
  if (truncated)
    std::fprintf(stderr, "attn: warning: %ld %s longer than %ld subwords were truncated (%s)\n", truncated,
                 what.c_str(), long(max_len), flag.c_str());
  return ids;
}

}  // namespace attn::cli
