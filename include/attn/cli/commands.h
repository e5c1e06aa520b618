// The subcommands of the attn binary. Each lives in its own src/cli/<name>.cpp
// and adds itself to the app; its callback runs the command and returns the
// process exit status.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace CLI {
class App;
}
namespace attn::decode {
struct SearchOptions;
}
namespace attn::kernels {
enum class ComputeType;
}
namespace attn::model {
using ComputeType = kernels::ComputeType;
}

namespace attn::cli {

// Options every subcommand shares.
struct CommonOptions {
  int threads = 0;  // 0: all cores
};

// A registered subcommand's action; set by the add_* functions, run by main.
using Action = std::function<int()>;

// The attn app with every subcommand; parsing it sets `action` (main.cpp runs it).
std::unique_ptr<CLI::App> make_app(CommonOptions& common, Action& action);

void add_train_command(CLI::App& app, CommonOptions& common, Action& action);
void add_translate_command(CLI::App& app, CommonOptions& common, Action& action);
void add_attend_command(CLI::App& app, CommonOptions& common, Action& action);
void add_attn_stats_command(CLI::App& app, CommonOptions& common, Action& action);
void add_score_command(CLI::App& app, CommonOptions& common, Action& action);
void add_info_command(CLI::App& app, CommonOptions& common, Action& action);
void add_average_command(CLI::App& app, CommonOptions& common, Action& action);
void add_quantize_command(CLI::App& app, CommonOptions& common, Action& action);
void add_export_command(CLI::App& app, CommonOptions& common, Action& action);
void add_report_command(CLI::App& app, CommonOptions& common, Action& action);
void add_serve_command(CLI::App& app, CommonOptions& common, Action& action);

// Adds --threads to a subcommand.
void add_common_options(CLI::App& sub, CommonOptions& common);
// --beam, --lenpen, --max-len-a and --max-len-b (translate and attend), and
// their joint check (throws attn::Error).
void add_search_options(CLI::App& sub, decode::SearchOptions& search);
void check_search_options(const decode::SearchOptions& search);
// --compute-type fp32|bf16|int8 (translate and attend, CTranslate2's name): the
// type a model is loaded into (model::load_model_file).
void add_compute_type_option(CLI::App& sub, std::string& compute_type);
model::ComputeType compute_type_for(const std::string& compute_type);
// Every mechanism option's flag (nn/mechanism.h); a flag given sets given[option key].
void add_mechanism_flags(CLI::App& sub, nlohmann::json& given);
std::string decoder_mixer_help();

}  // namespace attn::cli
