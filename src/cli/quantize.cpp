// attn quantize: a model file with its weight matrices in int8 (CTranslate2's
// int8 conversion): per row, symmetric, FP32 scales beside them. About 4×
// smaller; every command reads it (loading dequantizes), and with
// --compute-type int8 the products run on the same int8 values.
#include <CLI/CLI.hpp>
#include <array>
#include <cstdio>
#include <filesystem>

#include "attn/cli/commands.h"
#include "attn/core/error.h"
#include "attn/core/format.h"
#include "attn/core/output_preflight.h"
#include "attn/model/model_file.h"

namespace attn::cli {

namespace {

struct QuantizeFlags {
  std::string input;
  std::string output;
};

int run(const QuantizeFlags& f) {
  preflight_outputs(std::array{NamedFile{f.output, "-o", true}}, std::array{NamedFile{f.input, "the model"}});
  const model::LoadedModel loaded = model::load_model_values(f.input);
  // The training state stays (attn info shows where the model came from); the
  // optimizer does not: an int8 model is for decoding.
  std::map<std::string, std::string> metadata{{"kind", "model"},
                                              {"quantized_from", std::filesystem::path(f.input).filename().string()}};
  for (const char* key : {"train_state", "averaged_from"})
    if (loaded.file.metadata().count(key)) metadata[key] = loaded.file.metadata().at(key);
  model::save_model_file(f.output, *loaded.model, loaded.bpe, {}, metadata, model::WeightStorage::int8);
  std::int64_t in_int8 = 0, all = 0;
  for (const nn::ParamInfo& p : loaded.model->params().entries()) {
    all += p.shape.numel();
    if (model::stored_in_int8(p)) in_int8 += p.shape.numel();
  }
  const auto bytes = [](const std::string& path) {
    return format_count(static_cast<std::int64_t>(std::filesystem::file_size(path)));
  };
  std::fprintf(stderr, "quantized %s into %s: %s -> %s bytes, %.1f%% of the parameters in int8\n", f.input.c_str(),
               f.output.c_str(), bytes(f.input).c_str(), bytes(f.output).c_str(),
               all > 0 ? 100.0 * static_cast<double>(in_int8) / static_cast<double>(all) : 0.0);
  return 0;
}

}  // namespace

void add_quantize_command(CLI::App& app, CommonOptions& common, Action& action) {
  auto flags = std::make_shared<QuantizeFlags>();
  CLI::App* sub = app.add_subcommand("quantize", "Store a model's weight matrices in int8 (about 4x smaller)");
  sub->footer("Examples:\n  attn quantize runs/m30k/best.attn -o runs/m30k/best.int8.attn\n"
              "  attn translate -m runs/m30k/best.int8.attn --compute-type int8 -i test.de");
  add_common_options(*sub, common);
  sub->add_option("model", flags->input, "the model file to quantize")->required();
  sub->add_option("-o,--output", flags->output, "the int8 model file")->required();
  sub->callback([&action, flags] { action = [flags] { return run(*flags); }; });
}

}  // namespace attn::cli
