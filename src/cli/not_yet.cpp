// Subcommands that are planned but not built yet: registered so that
// `attn --help` shows the whole tool, answering with a clear error.
#include <CLI/CLI.hpp>

#include "attn/cli/commands.h"
#include "attn/core/error.h"

namespace attn::cli {
namespace {

void add_planned(CLI::App& app, CommonOptions& common, Action& action, const std::string& name,
                 const std::string& description) {
  CLI::App* sub = app.add_subcommand(name, description + " (not yet available)");
  add_common_options(*sub, common);
  sub->allow_extras();
  sub->callback([&action, name] {
    action = [name]() -> int {
      throw Error("'attn " + name + "' is not yet available in this version; see README.md for what is");
    };
  });
}

}  // namespace

void add_attend_command(CLI::App& app, CommonOptions& common, Action& action) {
  add_planned(app, common, action, "attend", "Dump attention maps as JSON (and an HTML page)");
}

}  // namespace attn::cli
