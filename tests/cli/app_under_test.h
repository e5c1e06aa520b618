// The real attn app built in process (cli/commands.h make_app), for the tests
// that read its flags and help without running a command.
#pragma once
#include <CLI/CLI.hpp>

#include <memory>
#include <vector>

#include "attn/cli/commands.h"

namespace attn::test {

struct AppUnderTest {
  cli::CommonOptions common;
  cli::Action action;
  std::unique_ptr<CLI::App> app = cli::make_app(common, action);

  // Every subcommand, in the order of `attn --help`.
  std::vector<CLI::App*> subcommands() const {
    return app->get_subcommands([](CLI::App*) { return true; });
  }
};

}  // namespace attn::test
