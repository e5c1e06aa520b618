#include "attn/cli/help_format.h"

#include <CLI/CLI.hpp>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <sstream>

namespace attn::cli {

namespace {

// Where an option's description starts (its flags and type to the left): 30
// columns, less below 80.
std::size_t description_column(std::size_t width) { return std::min<std::size_t>(30, width * 3 / 8); }

// How much further than its first line an indented line of a block (an
// example command) continues when it wraps.
constexpr std::size_t kContinuationIndent = 4;

std::size_t columns(std::string_view text) {
  std::size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;  // UTF-8 lead bytes
  return n;
}

// One help line: `name` in the left column, `description` wrapped in the right one.
std::string two_columns(const std::string& name, const std::string& description) {
  const std::size_t width = help_columns(), column = description_column(width);
  std::string out = "  " + name;
  if (description.empty()) return out + "\n";
  if (columns(out) + 1 > column)
    out += "\n" + std::string(column, ' ');
  else
    out += std::string(column - columns(out), ' ');
  return out + wrap_help(description, width, column) + "\n";
}

// A hand-written block (a description or footer), one paragraph a line, each
// wrapped to the width at its own indentation; an indented one (an example)
// continues further in, so that its continuation does not read as a new line.
std::string wrap_lines(const std::string& text) {
  const std::size_t width = help_columns();
  std::string out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t lead = std::min(line.find_first_not_of(' '), line.size());
    const std::size_t hanging = lead == 0 ? 0 : lead + kContinuationIndent;
    out += line.substr(0, lead) + wrap_help(std::string_view(line).substr(lead), width, hanging, lead) + "\n";
  }
  return out;
}

class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option(const CLI::Option* opt, bool is_positional) const override {
    return two_columns(make_option_name(opt, is_positional) + make_option_opts(opt), make_option_desc(opt));
  }
  // "--disa-gate,--no-disa-gate", not CLI11's "--disa-gate,--no-disa-gate{false}".
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override {
    std::string name = CLI::Formatter::make_option_name(opt, is_positional);
    for (std::size_t open = name.find('{'); open != std::string::npos; open = name.find('{', open)) {
      const std::size_t close = name.find('}', open);
      if (close == std::string::npos) break;
      name.erase(open, close - open + 1);
    }
    return name;
  }
  // One blank line before each group (CLI11 puts two between groups): the group
  // itself starts with none, the usage line ends with one.
  std::string make_group(std::string group, bool is_positional, std::vector<const CLI::Option*> opts) const override {
    std::string out = wrap_help(group + ":", help_columns(), 2) + "\n";
    for (const CLI::Option* opt : opts) out += make_option(opt, is_positional);
    return out;
  }
  std::string make_usage(const CLI::App* app, std::string name) const override {
    return CLI::Formatter::make_usage(app, std::move(name)) + "\n";
  }
  std::string make_subcommand(const CLI::App* sub) const override {
    return two_columns(sub->get_display_name(), sub->get_description());
  }
  std::string make_description(const CLI::App* app) const override {
    const std::string text = CLI::Formatter::make_description(app);
    return text.empty() ? text : wrap_lines(text);
  }
  std::string make_footer(const CLI::App* app) const override {
    const std::string footer = app->get_footer();
    return footer.empty() ? footer : wrap_lines(footer);
  }
};

}  // namespace

std::string wrap_help(std::string_view text, std::size_t width, std::size_t indent) {
  return wrap_help(text, width, indent, indent);
}

std::string wrap_help(std::string_view text, std::size_t width, std::size_t indent, std::size_t first_column) {
  std::string out;
  std::size_t column = first_column;  // where the caller has placed the first line
  bool line_empty = true;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find_first_of(" \n", at), text.size());
    const std::string_view word = text.substr(at, end - at);
    if (!word.empty()) {
      if (!line_empty && column + 1 + columns(word) > width) {
        out += "\n" + std::string(indent, ' ');
        column = indent;
        line_empty = true;
      }
      if (!line_empty) {
        out += ' ';
        ++column;
      }
      out += word;
      column += columns(word);
      line_empty = false;
    }
    if (end < text.size() && text[end] == '\n') {
      out += "\n" + std::string(indent, ' ');
      column = indent;
      line_empty = true;
    }
    at = end + 1;
  }
  return out;
}

std::size_t help_columns() {
  std::size_t width = 0;
  if (const char* env = std::getenv("COLUMNS")) {
    const std::string_view text(env);
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), width);
    if (error != std::errc() || end != text.data() + text.size()) width = 0;
  }
  winsize terminal{};
  if (width == 0 && isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &terminal) == 0) width = terminal.ws_col;
  if (width == 0) width = kDefaultHelpColumns;
  return std::max(width, kMinHelpColumns);
}

std::shared_ptr<CLI::Formatter> help_formatter() { return std::make_shared<HelpFormatter>(); }

}  // namespace attn::cli
