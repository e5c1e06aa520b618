// attn export --to ctranslate2: a Transformer as a CTranslate2 model directory
// (model/ctranslate2.h), which CTranslate2's Translator decodes as attn does.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>

#include "attn/cli/commands.h"
#include "attn/core/error.h"
#include "attn/model/ctranslate2.h"
#include "attn/model/model_file.h"

namespace attn::cli {

namespace {

struct ExportFlags {
  std::string to;
  std::string model;
  std::string dir;
};

int run(const ExportFlags& f) {
  require(std::filesystem::exists(f.model), "the model " + f.model + " does not exist");
  const model::LoadedModel loaded = model::load_model_values(f.model);
  model::export_ctranslate2(*loaded.model, loaded.bpe, f.dir);
  const model::ModelConfig& c = loaded.model->config();
  std::fprintf(stderr,
               "exported %s to %s for CTranslate2: %lld+%lld layers, d=%lld, ffn=%lld, %lld heads, %s-norm, "
               "vocabulary %lld, weights in FP32%s\n",
               f.model.c_str(), f.dir.c_str(), static_cast<long long>(c.enc_layers),
               static_cast<long long>(c.dec_layers), static_cast<long long>(c.dim), static_cast<long long>(c.ffn_dim),
               static_cast<long long>(c.heads), std::string(model::norm_name(c.norm)).c_str(),
               static_cast<long long>(c.vocab_size),
               loaded.int8_params > 0 ? " (dequantized from the file's int8)" : "");
  return 0;
}

}  // namespace

void add_export_command(CLI::App& app, CommonOptions& common, Action& action) {
  auto flags = std::make_shared<ExportFlags>();
  CLI::App* sub = app.add_subcommand("export", "Write a Transformer for another engine (CTranslate2)");
  sub->footer("Writes DIR/model.bin, config.json and shared_vocabulary.json (CTranslate2's TransformerSpec), "
              "and attn_bpe.json (attn's BPE, to turn text into the model's tokens). Only --arch transformer "
              "exports. Weights are written in FP32; CTranslate2 quantizes at load (compute_type int8).\n\n"
              "Example:\n  attn export --to ctranslate2 runs/m30k/best.attn runs/m30k/ct2");
  add_common_options(*sub, common);
  sub->add_option("--to", flags->to, "the engine: ctranslate2")->required()->check(CLI::IsMember({"ctranslate2"}));
  sub->add_option("model", flags->model, "the model file (--arch transformer)")->required();
  sub->add_option("dir", flags->dir, "the directory to create (new, or empty)")->required();
  sub->callback([&action, flags] { action = [flags] { return run(*flags); }; });
}

}  // namespace attn::cli
