#include "attn/cli/help_format.h"

#include <CLI/CLI.hpp>

#include <sstream>

namespace attn::cli {

namespace {

// The description column of an option's help: its flags and type to the left.
constexpr std::size_t kDescriptionColumn = 30;

std::size_t columns(std::string_view text) {
  std::size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;  // UTF-8 lead bytes
  return n;
}

// One help line: `name` in the left column, `description` wrapped in the right one.
std::string two_columns(const std::string& name, const std::string& description) {
  std::string out = "  " + name;
  if (description.empty()) return out + "\n";
  if (columns(out) + 1 > kDescriptionColumn)
    out += "\n" + std::string(kDescriptionColumn, ' ');
  else
    out += std::string(kDescriptionColumn - columns(out), ' ');
  return out + wrap_help(description, kHelpColumns, kDescriptionColumn) + "\n";
}

// Each line of a hand-written block wrapped at its own indentation.
std::string wrap_lines(const std::string& text) {
  std::string out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t lead = std::min(line.find_first_not_of(' '), line.size());
    out += line.substr(0, lead) + wrap_help(std::string_view(line).substr(lead), kHelpColumns, lead) + "\n";
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
    std::string out = group + ":\n";
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
  std::string out;
  std::size_t column = indent;  // the caller has placed the first line at `indent`
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

std::shared_ptr<CLI::Formatter> help_formatter() {
  auto formatter = std::make_shared<HelpFormatter>();
  formatter->column_width(kDescriptionColumn);
  return formatter;
}

}  // namespace attn::cli
