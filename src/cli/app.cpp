#include <CLI/CLI.hpp>

#include "attn/cli/commands.h"
#include "attn/cli/help_format.h"
#include "attn/version.h"

namespace attn::cli {

std::unique_ptr<CLI::App> make_app(CommonOptions& common, Action& action) {
  auto app = std::make_unique<CLI::App>(
      "attn: train, translate with and inspect sequence-to-sequence models built on MUSE, "
      "convolutional self-attention and Fast-DiSA, beside a Transformer baseline. CPU only.");
  app->formatter(help_formatter());  // before the subcommands, which inherit it
  app->set_version_flag("--version", std::string("attn ") + ATTN_VERSION);
  app->require_subcommand(1);
  app->fallthrough();
  add_train_command(*app, common, action);
  add_translate_command(*app, common, action);
  add_attend_command(*app, common, action);
  add_attn_stats_command(*app, common, action);
  add_score_command(*app, common, action);
  add_info_command(*app, common, action);
  add_average_command(*app, common, action);
  add_quantize_command(*app, common, action);
  add_export_command(*app, common, action);
  add_report_command(*app, common, action);
  add_serve_command(*app, common, action);
  return app;
}

}  // namespace attn::cli
