// `attn COMMAND --help` as a terminal shows it: every line at most
// help_columns() wide (descriptions, footers and the command list wrapped at
// spaces, continuation lines indented under the description column), and
// on/off flags without CLI11's "{false}" marker (their help says the default).
// A footer or description is written one paragraph a line: each is wrapped
// to the width as a whole (an indented line, an example, continues further
// indented).
#pragma once
#include <memory>
#include <string>
#include <string_view>

namespace CLI {
class Formatter;
}

namespace attn::cli {

// The width help is laid out for when the terminal's is unknown, and the
// narrowest it is laid out for.
inline constexpr std::size_t kDefaultHelpColumns = 100;
inline constexpr std::size_t kMinHelpColumns = 40;

// The COLUMNS environment variable when it holds a width, else the
// terminal's when stdout is one, else kDefaultHelpColumns; never below
// kMinHelpColumns.
std::size_t help_columns();

// The formatter make_app gives the app before its subcommands are added (they inherit it).
std::shared_ptr<CLI::Formatter> help_formatter();

// `text` broken at spaces into lines of at most `width` columns (UTF-8 code
// points), each line after the first prefixed by `indent` spaces, which count
// toward `width`. Existing newlines are kept; a word longer than a line stays whole.
std::string wrap_help(std::string_view text, std::size_t width, std::size_t indent);
// The same with the first line starting at first_column (the caller has
// placed it there) rather than at indent.
std::string wrap_help(std::string_view text, std::size_t width, std::size_t indent, std::size_t first_column);

}  // namespace attn::cli
