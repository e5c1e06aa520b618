// attn translate: one line in, one line out, order kept; batched by length.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>

#include "attn/cli/bounds.h"
#include "attn/cli/commands.h"
#include "attn/core/arena.h"
#include "attn/core/atomic_file.h"
#include "attn/core/checked_stream.h"
#include "attn/core/error.h"
#include "attn/core/output_preflight.h"
#include "attn/core/progress.h"
#include "attn/core/rng.h"
#include "attn/core/threads.h"
#include "attn/text/sentence_split.h"
#include "attn/text/text_file.h"
#include "attn/decode/search.h"
#include "attn/model/model_file.h"
#include "attn/nn/context.h"
#include "input.h"

namespace attn::cli {

namespace {

struct TranslateFlags {
  std::string model, input, output;
  decode::SearchOptions search;
  std::int64_t batch_size = 64;
  std::string compute_type = "fp32";
  bool split_sentences = false;
  std::int64_t max_input_len = 250;  // subwords; longer inputs are truncated with a warning
  std::int64_t decoders = 0;         // batches decoded at once; 0: one per thread
};

struct Batch {
  std::vector<std::vector<std::int32_t>> sources;  // subword ids, none empty
  std::vector<std::size_t> ids;                    // the input line (or sentence) of each source
};

// Decodes the batches on `decoders` threads at once (0: one per OpenMP thread),
// each with its share of the OpenMP threads, and hands each batch's
// translations to `done` (called from the decoders; each batch once).
// Separate batches on single-threaded decoders beat one batch split over the
// threads: beam search's bookkeeping between the products runs on one thread,
// and a product of a few rows divides badly (on 2 cores, sentences/s at batch
// 64: FP32 1.2x, bf16 and int8 1.3-1.4x; at batch 1 FP32 about even, bf16 and
// int8 1.5-1.9x; docs/results/decoding-speed.md). A batch's translations do not depend on the
// thread count, so neither does the output.
void decode_batches(model::Seq2Seq& model, const std::vector<Batch>& batches, const decode::SearchOptions& search,
                    std::int64_t decoders,
                    const std::function<void(const Batch&, std::vector<decode::Hypotheses>)>& done) {
  // As attn serve: the decoders share the --threads cores, at most one decoder each (and no more than batches).
  const int threads = num_threads();
  const auto count =
      static_cast<int>(std::clamp<std::int64_t>(decoders > 0 ? std::min<std::int64_t>(decoders, threads) : threads, 1,
                                                static_cast<std::int64_t>(batches.size())));
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto decoder = [&] {
    try {
      Arena arena;
      Rng rng(0);
      nn::StepContext ctx{model.params(), arena, rng, false};
      for (std::size_t b; !failed && (b = next++) < batches.size();) {
        arena.reset();
        done(batches[b], decode::beam_search(ctx, model, batches[b].sources, search));
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      failed = true;
    }
  };
  if (count == 1) {
    decoder();
  } else {
    std::vector<std::thread> pool;
    for (int i = 0; i < count; ++i)
      pool.emplace_back([&, i] {
        set_threads(threads_of_decoder(threads, count, i));
        decoder();
      });
    for (std::thread& t : pool) t.join();
  }
  if (failure) std::rethrow_exception(failure);
}

int run(const TranslateFlags& f) {
  preflight_outputs(std::array{NamedFile{f.output, "-o"}},
                    std::array{NamedFile{f.model, "-m"}, NamedFile{f.input, "-i"}});
  check_search_options(f.search);
  if (f.decoders > num_threads())
    std::fprintf(stderr, "attn: --decoders %lld is more than --threads %d; decoding with %d decoder%s\n",
                 static_cast<long long>(f.decoders), num_threads(), num_threads(), num_threads() == 1 ? "" : "s");
  require(f.search.nbest >= 1 && f.search.nbest <= f.search.beam, "--nbest must be between 1 and --beam");
  model::LoadedModel loaded = model::load_model_file(f.model, compute_type_for(f.compute_type));
  const model::Seq2Seq& model = *loaded.model;
  require(!f.split_sentences || f.search.nbest == 1,
          "--split-sentences joins each line's best translations; it cannot be used with --nbest above 1");
  const std::vector<std::string> lines = read_input(f.input);
  // The units decoded: the lines, or with --split-sentences their sentences.
  const text::SentenceUnits split = text::sentence_units(lines, f.split_sentences);
  const std::vector<std::string>& units = split.texts;
  // Opened before the work, so an unwritable -o is said at once, not after decoding.
  std::optional<AtomicFile> file;
  if (!f.output.empty() && f.output != "-") file.emplace(f.output);

  // Longer inputs than the model has positions are cut there too (the warning names the flag).
  const std::vector<std::vector<std::int32_t>> sources =
      encode_lines(loaded.bpe, units, std::min(f.max_input_len, model.config().max_positions),
                   f.split_sentences ? "input sentences" : "input lines", "--max-input-len");

  // Longest first, batches of similar length; empty lines translate to empty lines.
  std::vector<std::size_t> order(units.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return sources[a].size() > sources[b].size(); });
  std::vector<decode::Hypotheses> results(units.size());
  std::vector<Batch> batches;
  std::int64_t decoded = 0;  // sentences translated so far, empty ones at once
  for (std::size_t start = 0; start < order.size();) {
    Batch batch;
    for (; start < order.size() && static_cast<std::int64_t>(batch.sources.size()) < f.batch_size; ++start) {
      if (sources[order[start]].empty()) {
        results[order[start]] = {decode::Hypothesis{}};
        ++decoded;
        continue;
      }
      batch.sources.push_back(sources[order[start]]);
      batch.ids.push_back(order[start]);
    }
    if (!batch.sources.empty()) batches.push_back(std::move(batch));
  }
  CountProgress progress("sentences", static_cast<std::int64_t>(units.size()));  // on a terminal only
  std::mutex progress_mutex;
  decode_batches(*loaded.model, batches, f.search, f.decoders,
                 [&](const Batch& batch, std::vector<decode::Hypotheses> hyps) {
                   for (std::size_t k = 0; k < batch.ids.size(); ++k) results[batch.ids[k]] = std::move(hyps[k]);
                   std::lock_guard<std::mutex> lock(progress_mutex);
                   decoded += static_cast<std::int64_t>(batch.ids.size());
                   progress.update(decoded);
                 });
  progress.finish();

  // One output line per input line (decode_line), or every later line would shift.
  std::string out;
  if (f.split_sentences) {
    // The sentences of a line, translated one by one, joined by a space.
    for (std::size_t u = 0; u < units.size(); ++u) {
      if (split.places[u].sentence > 0) out += ' ';
      if (!results[u].empty()) out += loaded.bpe.decode_line(results[u][0].tokens);
      if (u + 1 == units.size() || split.places[u + 1].sentence == 0) out += '\n';
    }
  } else {
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (f.search.nbest == 1) {
        out += results[i].empty() ? "" : loaded.bpe.decode_line(results[i][0].tokens);
        out += '\n';
        continue;
      }
      for (const decode::Hypothesis& h : results[i]) {
        char score[32];
        std::snprintf(score, sizeof score, "%.4f", h.score);
        out += std::to_string(i) + " ||| " + loaded.bpe.decode_line(h.tokens) + " ||| " + score + '\n';
      }
    }
  }
  if (file) {
    file->write(out);
    file->commit();
  } else {
    std::fwrite(out.data(), 1, out.size(), stdout);
    require_standard_output_written("the translations");
  }
  return 0;
}

}  // namespace

void add_translate_command(CLI::App& app, CommonOptions& common, Action& action) {
  auto flags = std::make_shared<TranslateFlags>();
  TranslateFlags& f = *flags;
  CLI::App* sub = app.add_subcommand("translate", "Translate a file or stdin with a trained model");
  sub->footer("Example:\n  attn translate -m runs/toy/best.attn < data/toy/test.src > hyp.txt");
  sub->option_defaults()->group("Input and output");
  sub->add_option("-m,--model", f.model, "model file (.attn)")->required();
  sub->add_option("-i,--input", f.input, "input file, one sentence per line (default: stdin)");
  sub->add_option("-o,--output", f.output, "output file (default: stdout); written atomically");
  sub->option_defaults()->group("Decoding");
  add_search_options(*sub, f.search);
  sub->add_flag("--split-sentences", f.split_sentences,
                "translate each sentence of a line on its own (rule-based split after . ! ? with the usual "
                "abbreviation and number exceptions), then join them on the line again");
  sub->add_option("--nbest", f.search.nbest, "print the N best: 'line ||| translation ||| score'")
      ->capture_default_str()
      ->check(bounded(within(1, 1000)));
  sub->option_defaults()->group("Resources");
  add_compute_type_option(*sub, f.compute_type);
  add_common_options(*sub, common);
  sub->add_option("--batch-size", f.batch_size, "sentences decoded together")
      ->capture_default_str()
      ->check(bounded(within(1, 100000)));
  sub->add_option("--decoders", f.decoders,
                  "batches decoded at once, each on --threads / N cores, at most --threads decoders (default 0: "
                  "one per thread, so each decoder runs on one core)")
      ->capture_default_str()
      ->check(bounded(within(0, 4096)));
  sub->add_option("--max-input-len", f.max_input_len, "truncate longer inputs (subwords), with a warning")
      ->capture_default_str()
      ->check(bounded(within(1, 100000)));
  sub->callback([&action, flags] { action = [flags] { return run(*flags); }; });
}

}  // namespace attn::cli
