// Decoding speed of attn, measured the way `attn translate` decodes: the
// sentences encoded with the model's BPE (truncated at 250 subwords), sorted
// longest first, cut into batches of --batch-size and given to
// decode::beam_search, or for --beam 1 to decode::greedy_search (arg-max at
// every step; `attn translate --beam 1` runs beam_search with one beam, which
// also ends a sentence when </s> is the second-best word, so its outputs are
// shorter). Only the search is timed; a warm-up batch of the first --warmup
// sentences runs before the clock starts. The PyTorch twin
// (bench/twin/bench_twin.py decode) reads the sources from the JSON this
// writes and decodes them in the same order and batches.
//
//   bench_decode MODEL.attn --input test.de --out OUT.json [--beam 5] [--batch-size 64]
//                [--sentences N] [--threads 2] [--warmup 8] [--max-len-a 2] [--max-len-b 10] [--lenpen 1]
//
// OUT.json: {"side": "attn", "beam", "batch_size", "sentences", "seconds", "output_tokens" (Σ (len + 1): the
// decoder steps that produced each kept hypothesis, </s> included), "sources": [[id]] and "hypotheses":
// [[id]] in input order, "threads", "isa"}.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "../src/cli/input.h"  // read_input, encode_lines: what translate reads, exactly
#include "attn/core/arena.h"
#include "attn/core/cpu.h"
#include "attn/core/error.h"
#include "attn/core/rng.h"
#include "attn/core/threads.h"
#include "attn/decode/search.h"
#include "attn/model/model_file.h"

namespace {

using Sentences = std::vector<std::vector<std::int32_t>>;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string model, input, out;
  attn::decode::SearchOptions search;
  std::int64_t batch_size = 64, sentences = 0, warmup = 8;
  int threads = 2;
};

int run(const Options& o) {
  attn::require(o.search.beam >= 1 && o.batch_size >= 1, "--beam and --batch-size must be at least 1");
  attn::set_threads(o.threads);
  attn::model::LoadedModel loaded = attn::model::load_model_file(o.model, attn::model::ComputeType::fp32);
  const attn::model::Seq2Seq& model = *loaded.model;
  std::vector<std::string> lines = attn::cli::read_input(o.input);
  if (o.sentences > 0 && static_cast<std::int64_t>(lines.size()) > o.sentences) lines.resize(o.sentences);
  const Sentences sources = attn::cli::encode_lines(loaded.bpe, lines, 250, "input", "--max-input-len");

  // translate's order: longest first (stable), empty lines skipped.
  std::vector<std::size_t> order(sources.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return sources[a].size() > sources[b].size(); });
  std::erase_if(order, [&](std::size_t i) { return sources[i].empty(); });

  attn::Arena arena;
  attn::Rng rng(0);
  attn::nn::StepContext ctx{loaded.model->params(), arena, rng, false};
  auto decode = [&](std::size_t first, std::size_t count) {
    Sentences batch;
    for (std::size_t k = first; k < first + count; ++k) batch.push_back(sources[order[k]]);
    arena.reset();
    if (o.search.beam > 1) return attn::decode::beam_search(ctx, model, batch, o.search);
    std::vector<std::vector<attn::decode::Hypothesis>> best;
    for (attn::decode::Hypothesis& h : attn::decode::greedy_search(ctx, model, batch, o.search))
      best.push_back({std::move(h)});
    return best;
  };

  const std::size_t warm =
      std::min<std::size_t>(order.size(), static_cast<std::size_t>(std::min(o.warmup, o.batch_size)));
  if (warm > 0) decode(0, warm);

  Sentences hypotheses(sources.size());
  std::int64_t output_tokens = 0;
  const auto start = Clock::now();
  for (std::size_t first = 0; first < order.size(); first += static_cast<std::size_t>(o.batch_size)) {
    const std::size_t count = std::min(order.size() - first, static_cast<std::size_t>(o.batch_size));
    const auto best = decode(first, count);
    for (std::size_t k = 0; k < count; ++k) {
      hypotheses[order[first + k]] = best[k].at(0).tokens;
      output_tokens += static_cast<std::int64_t>(best[k].at(0).tokens.size()) + 1;
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

  const nlohmann::json out = {
      {"side", "attn"},
      {"beam", o.search.beam},
      {"batch_size", o.batch_size},
      {"sentences", order.size()},
      {"seconds", seconds},
      {"output_tokens", output_tokens},
      {"threads", attn::num_threads()},
      {"isa", std::string(attn::isa_name(attn::active_isa()))},
      {"search", {{"lenpen", o.search.lenpen}, {"max_len_a", o.search.max_len_a}, {"max_len_b", o.search.max_len_b}}},
      {"sources", sources},
      {"hypotheses", hypotheses}};
  std::ofstream file(o.out);
  file << out.dump() << '\n';
  attn::require(file.good(), o.out + ": cannot write");
  std::printf("attn decode beam %d batch %lld: %zu sentences in %.2f s, %.1f sentences/s, %.0f tokens/s\n",
              o.search.beam, static_cast<long long>(o.batch_size), order.size(), seconds,
              static_cast<double>(order.size()) / seconds, static_cast<double>(output_tokens) / seconds);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_decode: attn's decoding speed as `attn translate` decodes (for bench/twin_bench.sh)"};
  Options o;
  app.add_option("model", o.model, "attn model file")->required();
  app.add_option("--input", o.input, "source sentences, one per line")->required();
  app.add_option("--out", o.out, "JSON file to write")->required();
  app.add_option("--beam", o.search.beam, "beam size (1: greedy_search)")->capture_default_str();
  app.add_option("--batch-size", o.batch_size, "sentences decoded together")->capture_default_str();
  app.add_option("--sentences", o.sentences, "only the first N lines (0: all)")->capture_default_str();
  app.add_option("--threads", o.threads, "OpenMP threads")->capture_default_str();
  app.add_option("--warmup", o.warmup, "sentences decoded once, untimed, first")->capture_default_str();
  app.add_option("--lenpen", o.search.lenpen)->capture_default_str();
  app.add_option("--max-len-a", o.search.max_len_a)->capture_default_str();
  app.add_option("--max-len-b", o.search.max_len_b)->capture_default_str();
  try {
    app.parse(argc, argv);
    return run(o);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_decode: %s\n", e.what());
    return 2;
  }
}
