// `attn COMMAND --help` as a terminal shows it: every line at most
// kHelpColumns wide (descriptions, footers and the command list wrapped at
// spaces, continuation lines indented under the description column), and
// on/off flags without CLI11's "{false}" marker (their help says the default).
#pragma once
#include <memory>
#include <string>
#include <string_view>

namespace CLI {
class Formatter;
}

namespace attn::cli {

inline constexpr std::size_t kHelpColumns = 100;

// The formatter make_app gives the app before its subcommands are added (they inherit it).
std::shared_ptr<CLI::Formatter> help_formatter();

// `text` broken at spaces into lines of at most `width` columns (UTF-8 code
// points), each line after the first prefixed by `indent` spaces, which count
// toward `width`. Existing newlines are kept; a word longer than a line stays whole.
std::string wrap_help(std::string_view text, std::size_t width, std::size_t indent);

}  // namespace attn::cli
