// attn: one binary, one subcommand per task (after Marian's marian_main.cpp).
// Every user mistake ends here as one line on stderr and exit status 2.
#include <CLI/CLI.hpp>
#include <csignal>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "attn/cli/commands.h"
#include "attn/core/atomic_file.h"
#include "attn/core/checked_stream.h"
#include "attn/core/cpu.h"
#include "attn/core/error.h"
#include "attn/core/threads.h"

namespace {

// What to lower, in the flags of the command that ran out of memory.
std::string out_of_memory_advice(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) {
    const std::string& name = sub->get_name();
    if (name == "train") return "try a smaller --max-tokens or a smaller model";
    if (name == "translate") return "try a smaller --batch-size or --beam";
    if (name == "attend") return "try a smaller --batch-size, fewer --layers/--heads, or fewer input lines";
  }
  return "try smaller inputs";
}

// Whatever was written to standard output must have arrived (help and
// version too): a full disk or a closed pipe is an error, not a silent exit 0.
int with_output_checked(int status) {
  const std::string failure = attn::standard_output_failure();
  if (failure.empty()) return status;
  std::fprintf(stderr, "attn: error: writing to standard output failed (%s); the output is incomplete\n",
               failure.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  attn::bound_openmp_spinning(argv);
  // Past a file size limit (ulimit -f) a write fails with EFBIG, which our
  // writers report as one line, instead of the kernel killing the process.
  std::signal(SIGXFSZ, SIG_IGN);
  attn::check_standard_output();
  attn::cli::CommonOptions common;
  attn::cli::Action action;
  const std::unique_ptr<CLI::App> app_owner = attn::cli::make_app(common, action);
  CLI::App& app = *app_owner;

  auto is_command = [&app](const std::string& name) {
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
      if (sub->get_name() == name) return true;
    return false;
  };
  if (argc > 1 && argv[1][0] != '-' && !is_command(argv[1])) {
    std::fprintf(
        stderr,
        "attn: '%s' is not a command; the commands are train, translate, attend, score, info, average, quantize, export, report, serve\n",
        argv[1]);
    return 2;
  }
  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      return with_output_checked(app.exit(e));
    } catch (const CLI::CallForAllHelp& e) {
      return with_output_checked(app.exit(e));
    } catch (const CLI::CallForVersion& e) {
      return with_output_checked(app.exit(e));
    } catch (const CLI::ParseError& e) {
      std::fprintf(stderr, "attn: %s (see 'attn --help' or 'attn COMMAND --help')\n", e.what());
      return 2;
    }
    attn::active_isa();                     // refuse a bad ATTN_ISA before any work
    attn::remove_temporaries_on_signals();  // Ctrl-C leaves no half-written output behind (train adds its own stop)
    attn::set_threads(common.threads);
    return with_output_checked(action ? action() : 2);
  } catch (const attn::Error& e) {
    std::fprintf(stderr, "attn: error: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "attn: error: out of memory; %s\n", out_of_memory_advice(app).c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attn: internal error: %s (please report it)\n", e.what());
    return 3;
  }
}
