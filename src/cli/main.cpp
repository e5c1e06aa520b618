// attn: one binary, one subcommand per task (after Marian's marian_main.cpp).
// Every user mistake ends here as one line on stderr and exit status 2.
#include <CLI/CLI.hpp>
#include <csignal>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

#include "attn/cli/commands.h"
#include "attn/core/cpu.h"
#include "attn/core/error.h"
#include "attn/core/threads.h"
#include "attn/version.h"

int main(int argc, char** argv) {
  // Past a file size limit (ulimit -f) a write fails with EFBIG, which our
  // writers report as one line, instead of the kernel killing the process.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{
      "attn: train, translate with and inspect sequence-to-sequence models built on MUSE, "
      "convolutional self-attention and Fast-DiSA, beside a Transformer baseline. CPU only."};
  app.set_version_flag("--version", std::string("attn ") + ATTN_VERSION);
  app.require_subcommand(1);
  app.fallthrough();

  attn::cli::CommonOptions common;
  attn::cli::Action action;
  attn::cli::add_train_command(app, common, action);
  attn::cli::add_translate_command(app, common, action);
  attn::cli::add_attend_command(app, common, action);
  attn::cli::add_score_command(app, common, action);
  attn::cli::add_info_command(app, common, action);
  attn::cli::add_average_command(app, common, action);
  attn::cli::add_report_command(app, common, action);

  auto is_command = [&app](const std::string& name) {
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
      if (sub->get_name() == name) return true;
    return false;
  };
  if (argc > 1 && argv[1][0] != '-' && !is_command(argv[1])) {
    std::fprintf(stderr, "attn: '%s' is not a command; the commands are train, translate, attend, score, info, average, report\n",
                 argv[1]);
    return 2;
  }
  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
      return app.exit(e);
    } catch (const CLI::ParseError& e) {
      std::fprintf(stderr, "attn: %s (see 'attn --help' or 'attn COMMAND --help')\n", e.what());
      return 2;
    }
    attn::active_isa();  // refuse a bad ATTN_ISA before any work
    attn::set_threads(common.threads);
    const int status = action ? action() : 2;
    // Whatever a command wrote to standard output must have arrived: a full
    // disk or a closed pipe is an error, not a silent exit 0.
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      std::fprintf(stderr, "attn: error: writing to standard output failed (%s); the output is incomplete\n",
                   std::strerror(errno));
      return 2;
    }
    return status;
  } catch (const attn::Error& e) {
    std::fprintf(stderr, "attn: error: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "attn: error: out of memory; try a smaller --max-tokens or model\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attn: internal error: %s (please report it)\n", e.what());
    return 3;
  }
}
