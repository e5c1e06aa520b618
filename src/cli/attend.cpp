// attn attend: the attention maps behind each translation (or behind a given
// target, with -t) as JSON and as a self-contained HTML page. The work is in
// decode/maps.h and decode/maps_page.h; this file reads flags and files.
#include <CLI/CLI.hpp>
#include <array>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

#include "attn/cli/bounds.h"
#include "attn/cli/commands.h"
#include "attn/core/atomic_file.h"
#include "attn/core/checked_stream.h"
#include "attn/core/error.h"
#include "attn/core/output_preflight.h"
#include "attn/core/progress.h"
#include "attn/decode/maps.h"
#include "attn/decode/maps_page.h"
#include "attn/text/sentence_split.h"
#include "attn/model/model_file.h"
#include "input.h"

namespace attn::cli {

namespace {

struct AttendFlags {
  std::string model, input, target, output, html;
  std::string layers = "all", heads = "all", components = "encoder,decoder,cross";
  bool jsonl = false;
  bool beam_given = false;
  int precision = 4;
  decode::SearchOptions search;  // translate's defaults (beam 5), so the maps are of what translate outputs
  std::int64_t batch_size = 16;
  std::string compute_type = "fp32";
  bool split_sentences = false;
  std::int64_t max_input_len = 250;
};

bool is_stdio(const std::string& path) { return path.empty() || path == "-"; }

int run(const AttendFlags& f) {
  check_search_options(f.search);
  require(f.target.empty() || !f.beam_given,
          "--beam: with -t the given target is scored, nothing is searched; drop --beam or -t");
  require(f.target.empty() || !(is_stdio(f.input) && is_stdio(f.target)), "-i and -t cannot both read stdin");
  preflight_outputs(std::array{NamedFile{f.output, "-o"}, NamedFile{f.html, "--html"}},
                    std::array{NamedFile{f.model, "-m"}, NamedFile{f.input, "-i"}, NamedFile{f.target, "-t"}});
  require(f.target.empty() || !f.split_sentences,
          "--split-sentences splits the input but -t gives one target per line; drop one of them");
  decode::MapsSelection selection;
  selection.components = decode::parse_components(f.components);
  selection.layers = decode::parse_indices(f.layers, "--layers");
  selection.heads = decode::parse_indices(f.heads, "--heads");
  selection.precision = f.precision;

  model::LoadedModel loaded = model::load_model_file(f.model, compute_type_for(f.compute_type));
  const model::Seq2Seq& model = *loaded.model;
  decode::check_selection(selection, model.config());
  const std::int64_t positions = model.config().max_positions;

  const std::vector<std::string> input_lines = read_input(f.input);
  // With --split-sentences the maps are per sentence, each labelled by its line and place there.
  const text::SentenceUnits split = text::sentence_units(input_lines, f.split_sentences);
  const std::vector<std::string>& lines = split.texts;
  const std::vector<std::vector<std::int32_t>> sources =
      encode_lines(loaded.bpe, lines, std::min(f.max_input_len, positions),
                   f.split_sentences ? "input sentences" : "input lines", "--max-input-len");
  std::vector<std::string> target_lines;
  std::vector<std::vector<std::int32_t>> targets;
  if (!f.target.empty()) {
    target_lines = read_input(f.target);
    require(target_lines.size() == lines.size(),
            f.target + " has " + std::to_string(target_lines.size()) + " lines but " +
                (is_stdio(f.input) ? std::string("the input") : f.input) + " has " + std::to_string(lines.size()) +
                "; give one target line per source line");
    targets = encode_lines(loaded.bpe, target_lines, positions - 1, "target lines", "the model's positions");
  }

  // Outputs: written under temporary names, renamed once complete.
  const nlohmann::json header = decode::maps_header(model, f.model, !f.target.empty(), f.search, selection);
  const bool json_to_stdout = f.output == "-" || (f.output.empty() && f.html.empty());
  std::optional<AtomicFile> json_file, html_file;
  std::optional<decode::MapsJsonWriter> json_writer;
  std::optional<decode::MapsPageWriter> page_writer;
  if (!is_stdio(f.output)) json_file.emplace(f.output);
  if (json_file || json_to_stdout) json_writer.emplace(json_file ? json_file->stream() : stdout, header, f.jsonl);
  if (!f.html.empty()) {
    html_file.emplace(f.html);
    page_writer.emplace(html_file->stream(), header);
  }

  Arena arena;
  Rng rng(0);
  nn::StepContext ctx{loaded.model->params(), arena, rng, false};
  decode::AttendInput input;
  input.source_lines = &lines;
  input.sources = &sources;
  if (f.split_sentences) input.places = &split.places;
  if (!f.target.empty()) {
    input.target_lines = &target_lines;
    input.targets = &targets;
  }
  input.chunk = f.batch_size;
  CountProgress progress("sentences", static_cast<std::int64_t>(lines.size()));  // on a terminal only
  std::int64_t done = 0;
  decode::run_attend(ctx, model, loaded.bpe, input, f.search, selection,
                     [&](std::int64_t index, const std::string& sentence) {
                       if (json_writer) json_writer->add(sentence);
                       if (page_writer) page_writer->add(index, lines[static_cast<std::size_t>(index)], sentence);
                       progress.update(++done);
                     });
  progress.finish();
  if (json_writer) json_writer->finish();
  if (page_writer) page_writer->finish();
  // Both or neither: a failed page leaves no new JSON file either, and JSON
  // that did not reach standard output leaves no new page.
  if (json_file == std::nullopt && json_writer) require_standard_output_written("the attention maps");
  std::vector<AtomicFile*> outputs;
  for (std::optional<AtomicFile>* file : {&json_file, &html_file})
    if (*file) outputs.push_back(&**file);
  commit_together(outputs);
  std::string wrote;
  if (json_file) wrote += f.output;
  if (html_file) wrote += (wrote.empty() ? "" : " and ") + f.html;
  if (!wrote.empty())
    std::fprintf(stderr, "attn: attention maps of %zu sentences written to %s\n", lines.size(), wrote.c_str());
  return 0;
}

}  // namespace

void add_attend_command(CLI::App& app, CommonOptions& common, Action& action) {
  auto flags = std::make_shared<AttendFlags>();
  AttendFlags& f = *flags;
  CLI::App* sub = app.add_subcommand("attend", "Dump attention maps as JSON (and an HTML page)");
  sub->footer(
      "Without -t the model translates as attn translate does (beam 5; --beam 1: greedy) and the maps are those "
      "of its best hypothesis, followed through the beam's back-pointers; with -t it scores the given target. The "
      "JSON format: docs/attention-json.md.\n"
      "Example:\n  attn attend -m runs/toy/best.attn -i data/toy/test.src -o maps.json --html maps.html");
  sub->option_defaults()->group("Input and output");
  sub->add_option("-m,--model", f.model, "model file (.attn)")->required();
  sub->add_option("-i,--input", f.input, "source sentences, one per line (default: stdin)");
  sub->add_option("-t,--target", f.target, "target sentences to score instead of decoding (forced mode)");
  sub->add_option("-o,--output", f.output, "JSON output ('-': stdout, the default without --html); written atomically");
  sub->add_option("--html", f.html, "also write a self-contained page that draws the maps");
  sub->add_flag("--jsonl", f.jsonl, "JSON Lines: one complete document per sentence, per line");
  sub->option_defaults()->group("Maps");
  sub->add_option("--layers", f.layers, "layers to show: all, or indices like 0,2 or 1-3")->capture_default_str();
  sub->add_option("--heads", f.heads, "heads to show: all, or indices like 0,3")->capture_default_str();
  sub->add_option("--components", f.components, "any of encoder, decoder, cross (or all)")->capture_default_str();
  sub->add_option("--precision", f.precision, "decimals of each weight (rows still sum to 1)")
      ->capture_default_str()
      ->check(bounded(within(1, 9)));
  sub->option_defaults()->group("Decoding (as attn translate)");
  add_search_options(*sub, f.search);
  sub->add_flag("--split-sentences", f.split_sentences,
                "one map per sentence of each line (split by rule, as translate's), labelled \"line\" and "
                "\"line_sentence\"");
  sub->option_defaults()->group("Resources");
  add_compute_type_option(*sub, f.compute_type);
  add_common_options(*sub, common);
  sub->add_option("--batch-size", f.batch_size, "sentences processed (and held in memory) together")
      ->capture_default_str()
      ->check(bounded(within(1, 100000)));
  sub->add_option("--max-input-len", f.max_input_len, "truncate longer inputs (subwords), with a warning")
      ->capture_default_str()
      ->check(bounded(within(1, 100000)));
  sub->callback([&action, flags, sub] {
    flags->beam_given = sub->count("--beam") > 0;
    action = [flags] { return run(*flags); };
  });
}

}  // namespace attn::cli
