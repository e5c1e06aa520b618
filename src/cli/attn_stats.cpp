// attn attn-stats: statistics of the attention itself over a test set — per
// component, layer and head, how concentrated each query's weights are and how
// far they reach (decode/attention_stats.h) — as a table and as JSON. The maps
// are attend's (decode/maps.h), measured one chunk of sentences at a time.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

#include "attn/cli/bounds.h"
#include "attn/cli/commands.h"
#include "attn/core/atomic_file.h"
#include "attn/core/checked_stream.h"
#include "attn/core/error.h"
#include "attn/core/output_preflight.h"
#include "attn/core/progress.h"
#include "attn/decode/attention_stats.h"
#include "attn/decode/maps.h"
#include "attn/model/model_file.h"
#include "input.h"

namespace attn::cli {

namespace {

struct StatsFlags {
  std::string model, input, target, output;
  bool decode = false;
  bool per_sentence = false;
  bool search_given = false;
  decode::SearchOptions search;  // translate's defaults (beam 5)
  std::int64_t within = 2;
  std::int64_t batch_size = 16;
  std::int64_t max_input_len = 0;  // 0: the model's positions
  std::string compute_type = "fp32";
};

bool is_stdio(const std::string& path) { return path.empty() || path == "-"; }

int run(const StatsFlags& f) {
  require(f.decode || !f.target.empty(),
          "give -t REFERENCES (the maps of the model reading them, teacher-forced) or --decode (the maps of its own "
          "translations)");
  require(!(f.decode && !f.target.empty()), "--decode translates, -t reads given references; drop one of them");
  require(f.decode || !f.search_given, "--beam, --lenpen and --max-len-a/b choose the search of --decode; add it");
  check_search_options(f.search);
  require(!f.per_sentence || !f.output.empty(),
          "--per-sentence adds each line's sums to the JSON; give -o FILE (or -o - for the JSON on stdout)");
  require(f.target.empty() || !(is_stdio(f.input) && is_stdio(f.target)), "-i and -t cannot both read stdin");
  preflight_outputs(std::array{NamedFile{f.output, "-o"}},
                    std::array{NamedFile{f.model, "-m"}, NamedFile{f.input, "-i"}, NamedFile{f.target, "-t"}});

  model::LoadedModel loaded = model::load_model_file(f.model, compute_type_for(f.compute_type));
  const model::Seq2Seq& model = *loaded.model;
  const std::int64_t positions = model.config().max_positions;
  const std::vector<std::string> lines = read_input(f.input);
  const std::vector<std::vector<std::int32_t>> sources =
      encode_lines(loaded.bpe, lines, f.max_input_len > 0 ? std::min(f.max_input_len, positions) : positions,
                   "input lines", f.max_input_len > 0 ? "--max-input-len" : "the model's positions");
  std::vector<std::vector<std::int32_t>> targets;
  if (!f.target.empty()) {
    const std::vector<std::string> target_lines = read_input(f.target);
    require(target_lines.size() == lines.size(),
            f.target + " has " + std::to_string(target_lines.size()) + " lines but " +
                (is_stdio(f.input) ? std::string("the input") : f.input) + " has " + std::to_string(lines.size()) +
                "; give one reference line per source line");
    targets = encode_lines(loaded.bpe, target_lines, positions - 1, "reference lines", "the model's positions");
  }

  // The JSON goes to a temporary name, renamed once complete; with -o - it
  // replaces the table on standard output.
  std::optional<AtomicFile> json_file;
  if (!is_stdio(f.output)) json_file.emplace(f.output);

  // The sums do not depend on the order: sentences of like length are batched
  // together, so little of a batch is padding.
  std::vector<std::size_t> order(lines.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::pair(sources[a].size(), targets.empty() ? 0 : targets[a].size()) <
           std::pair(sources[b].size(), targets.empty() ? 0 : targets[b].size());
  });

  Arena arena;
  Rng rng(0);
  nn::StepContext ctx{loaded.model->params(), arena, rng, false};
  decode::AttentionStats stats(model, f.within);
  if (f.per_sentence) stats.keep_per_sentence(lines.size());
  CountProgress progress("sentences", static_cast<std::int64_t>(lines.size()));  // on a terminal only
  std::int64_t done = 0;
  for (std::size_t start = 0; start < order.size(); start += static_cast<std::size_t>(f.batch_size)) {
    const std::size_t end = std::min(order.size(), start + static_cast<std::size_t>(f.batch_size));
    std::vector<std::vector<std::int32_t>> chunk_sources, chunk_targets;
    for (std::size_t k = start; k < end; ++k) {
      chunk_sources.push_back(sources[order[k]]);
      if (!targets.empty()) chunk_targets.push_back(targets[order[k]]);
    }
    const std::vector<decode::AttendedSentence> attended = decode::attend_chunk(
        ctx, model, chunk_sources, targets.empty() ? nullptr : &chunk_targets, f.search, /*score_targets=*/false);
    for (std::size_t k = 0; k < attended.size(); ++k) {
      const std::size_t line = order[start + k];
      if (attended[k].source.empty())
        stats.add_empty(line);
      else
        stats.add(attended[k].maps, line);
    }
    done += static_cast<std::int64_t>(end - start);
    progress.update(done);
  }
  progress.finish();

  const nlohmann::ordered_json doc = stats.to_json(decode::stats_header(model, f.model, !f.decode, f.search));
  const std::string json_text = decode::stats_document_text(doc);
  if (f.output == "-") {
    std::fputs(json_text.c_str(), stdout);
  } else {
    std::printf("# %s, %s of %s\n", f.model.c_str(),
                f.decode ? (f.search.beam <= 1 ? "greedy translations" : "beam translations")
                         : "teacher-forced references",
                is_stdio(f.input) ? "stdin" : f.input.c_str());
    std::fputs(stats.table().c_str(), stdout);
  }
  // Both or neither: a table that did not reach standard output leaves no new JSON file.
  require_standard_output_written("the attention statistics");
  if (json_file) {
    json_file->write(json_text);
    json_file->commit();
    std::fprintf(stderr, "attn: attention statistics of %zu sentences written to %s\n", lines.size(), f.output.c_str());
  }
  return 0;
}

}  // namespace

void add_attn_stats_command(CLI::App& app, CommonOptions& common, Action& action) {
  auto flags = std::make_shared<StatsFlags>();
  StatsFlags& f = *flags;
  CLI::App* sub = app.add_subcommand(
      "attn-stats", "Statistics of the attention over a test set: entropy, max weight, distance, per head");
  sub->footer(
      "Per component (encoder, decoder, cross), layer and head: mean entropy (nats), entropy / log(keys), "
      "largest weight, distance from the diagonal and the mass within +-W of it, over every query row. "
      "With -t the model reads the references (teacher forcing); with --decode its own translations. "
      "The table goes to stdout; -o FILE writes JSON as well. Format: docs/attention-stats.md.\n"
      "Example:\n  attn attn-stats -m runs/toy/best.attn -i data/toy/test.src -t data/toy/test.tgt -o stats.json");
  sub->option_defaults()->group("Input and output");
  sub->add_option("-m,--model", f.model, "model file (.attn)")->required();
  sub->add_option("-i,--input", f.input, "source sentences, one per line (default: stdin)");
  sub->add_option("-t,--target", f.target, "references, one per source line: the model reads them (teacher forcing)");
  sub->add_flag("--decode", f.decode, "measure the maps of the model's own translations instead (beam 5; --beam 1)");
  sub->add_option("-o,--output", f.output, "also write the statistics as JSON ('-': JSON instead of the table)");
  sub->add_flag("--per-sentence", f.per_sentence,
                "also write each input line's row count and sums per component and layer (heads pooled) in the "
                "JSON: what attn report's verdicts resample");
  sub->option_defaults()->group("Statistics");
  sub->add_option("--within", f.within, "W: the mass within +-W positions of the diagonal")
      ->capture_default_str()
      ->check(bounded(within(0, 100000)));
  sub->option_defaults()->group("Decoding (with --decode, as attn translate)");
  add_search_options(*sub, f.search);
  sub->option_defaults()->group("Resources");
  add_compute_type_option(*sub, f.compute_type);
  add_common_options(*sub, common);
  sub->add_option("--batch-size", f.batch_size, "sentences processed (and their maps held) together")
      ->capture_default_str()
      ->check(bounded(within(1, 100000)));
  sub->add_option("--max-input-len", f.max_input_len,
                  "truncate longer inputs (subwords), with a warning (default: the model's positions)")
      ->check(bounded(within(1, 100000)));
  sub->callback([&action, flags, sub] {
    flags->search_given =
        sub->count("--beam") + sub->count("--lenpen") + sub->count("--max-len-a") + sub->count("--max-len-b") > 0;
    action = [flags] { return run(*flags); };
  });
}

}  // namespace attn::cli
