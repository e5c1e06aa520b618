// attn average: the mean of several checkpoints' parameters (fairseq's
// scripts/average_checkpoints.py), usually the last N of a run: a cheap,
// reliable gain of a fraction of a BLEU point.
#include <CLI/CLI.hpp>
#include <array>
#include <cstdio>
#include <vector>

#include "attn/cli/bounds.h"
#include "attn/cli/commands.h"
#include "attn/core/error.h"
#include "attn/core/output_preflight.h"
#include "attn/model/model_file.h"
#include "attn/train/checkpoint.h"

namespace attn::cli {

namespace {

struct AverageFlags {
  std::vector<std::string> inputs;
  std::string output;
  std::int64_t last = 0;
};

std::vector<std::filesystem::path> pick_inputs(const AverageFlags& f) {
  if (f.last <= 0) {
    require(f.inputs.size() >= 1, "give the model files to average, or --last N RUN_DIR");
    return {f.inputs.begin(), f.inputs.end()};
  }
  require(f.inputs.size() == 1 && std::filesystem::is_directory(f.inputs[0]),
          "--last N takes one run directory (the --save-dir of a run trained with --keep-last)");
  std::vector<std::filesystem::path> all = train::periodic_checkpoints(f.inputs[0]);
  require(!all.empty(), f.inputs[0] + ": no ckpt.<update>.attn files; train with --keep-last N to keep them");
  if (static_cast<std::int64_t>(all.size()) > f.last) all.erase(all.begin(), all.end() - f.last);
  return all;
}

int run(const AverageFlags& f) {
  const std::vector<std::filesystem::path> inputs = pick_inputs(f);
  std::vector<NamedFile> read;
  for (const std::filesystem::path& input : inputs) read.push_back({input.string(), "the input"});
  preflight_outputs(std::array{NamedFile{f.output, "-o", true}}, read);
  model::LoadedModel first = model::load_model_values(inputs[0]);
  const std::string config = first.model->config().to_json().dump(), bpe = first.bpe.to_json().dump();
  const auto values = first.model->params().values();
  std::vector<double> sum(values.begin(), values.end());
  std::string names = inputs[0].filename().string();
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    const model::LoadedModel other = model::load_model_values(inputs[i]);
    require(other.model->config().to_json().dump() == config, inputs[i].string() + ": a different model config than " +
                                                                  inputs[0].string() +
                                                                  "; average checkpoints of one run");
    require(other.bpe.to_json().dump() == bpe,
            inputs[i].string() + ": a different BPE than " + inputs[0].string() + "; average checkpoints of one run");
    const auto v = other.model->params().values();
    for (std::size_t j = 0; j < sum.size(); ++j) sum[j] += v[j];
    names += "," + inputs[i].filename().string();
  }
  for (std::size_t j = 0; j < sum.size(); ++j)
    values[j] = static_cast<float>(sum[j] / static_cast<double>(inputs.size()));
  model::save_model_file(f.output, *first.model, first.bpe, {}, {{"averaged_from", names}});
  std::fprintf(stderr, "averaged %zu checkpoints (%s) into %s\n", inputs.size(), names.c_str(), f.output.c_str());
  return 0;
}

}  // namespace

void add_average_command(CLI::App& app, CommonOptions& common, Action& action) {
  auto flags = std::make_shared<AverageFlags>();
  CLI::App* sub = app.add_subcommand("average", "Average the parameters of several checkpoints into one model");
  sub->footer("Examples:\n  attn average --last 5 runs/m30k -o runs/m30k/avg5.attn\n"
              "  attn average runs/a/ckpt.900.attn runs/a/ckpt.1000.attn -o avg.attn");
  add_common_options(*sub, common);
  sub->add_option("inputs", flags->inputs, "model files, or one run directory with --last")->required();
  sub->add_option("-o,--output", flags->output, "the averaged model file")->required();
  sub->add_option("--last", flags->last, "average the newest N ckpt.<update>.attn of the run directory")
      ->check(bounded(within(1, 1e6)));
  sub->callback([&action, flags] { action = [flags] { return run(*flags); }; });
}

}  // namespace attn::cli
