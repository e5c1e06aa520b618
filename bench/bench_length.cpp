// Whole-model cost against sentence length: for every architecture at the
// reference size (model::preset(arch), vocab 8000, dropout 0.1, as
// bench_step) and for source = target = T tokens, at a fixed number of
// target tokens per batch (batch = max(1, tokens / T) sentences):
//
//   train      one full training step (arena reset, zero_grads, forward_backward,
//              Adam), median of --steps after one warm-up, as target tokens/s;
//   step MB    the step arena's high-water mark (every activation of the step);
//   attn MB    the high-water of the encoder's layer-0 self-attention mixer alone,
//              forward + backward at [batch, T] on its own arena and its own
//              ParamStore (nn::make_mixer with config.encoder_mixer(0)): the
//              mixer's saved activations and backward workspace, without its
//              [B·T, d] input and output, which the caller owns;
//   decode     beam 5 with decode::beam_search itself, one batch of
//              max(1, 1024 / T) sentences (capped by --decode-max), every output
//              exactly T tokens (force_length_t in length_measure.h), ms per sentence
//              (median of --decode-runs after a short warm-up);
//   MFLOP/tok  the FLOPs of one training step per target token, counted from
//              the config (flops_per_token in length_cost.h), and the achieved GFLOP/s.
//
// Why: with tokens per batch fixed, every cost that is linear in T is flat per
// token, so what grows with T is attention alone: global attention's T² terms
// make the Transformer's time per token and memory grow linearly with T,
// ConvSAN's band keeps its windowed layers flat (LightConv and DynamicConv,
// convolutions with no T² term, keep every self-attention layer flat; their
// cross-attention is still global), Fast-DiSA has the T² terms
// too (its factorised form avoids a T²·d_h tensor, not T²), and DiSA, its
// yardstick, holds that T²·d_h tensor (twice). The table says at which length
// each mechanism starts to cost, whole model included.
//
//   build/bench_length [--arch A[,B…]] [--lengths 16,64,…] [--tokens 4096] [--steps 3]
//                      [--threads 2] [--max-gb 16] [--decode-max 8] [--decode-runs 3]
//                      [--retries 2] [--json FILE]
//
// On a shared machine the timed parts (training, decoding) are measured again
// when other processes used more than 0.15 of a core meanwhile (/proc/stat
// against this process's own CPU time), up to --retries more times, and the
// quietest attempt is kept; the "other" column says how quiet it was.
//
// The positional table grows to max(1024, longest T + 1) positions (sinusoidal:
// no parameter changes) so that T = 2048 can be encoded and decoded.
// A cell whose estimated step memory passes --max-gb (or the memory the
// system has available), or whose allocation fails, prints "does not fit".
//
// This file is the command line, the loop over cells and the tables; the
// counts from the config are in length_cost.h, the machine's CPU and memory
// in length_machine.h, a cell's measurements in length_measure.h.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "length_machine.h"
#include "length_measure.h"
#include "attn/core/cpu.h"
#include "attn/core/threads.h"
#include "attn/model/presets.h"

namespace {

using namespace attn;
using namespace attn::bench::length;
using Json = nlohmann::ordered_json;

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, sep);)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

// Returns "" or what is wrong with the command line.
std::string parse_options(int argc, char** argv, Options& o) {
  bool archs_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return flag + " needs a value";
    const std::string value = argv[++i];
    if (flag == "--arch") {
      if (!archs_given) o.archs.clear();
      archs_given = true;
      for (const std::string& a : split(value, ',')) {
        if (!model::is_known_arch(a)) return "--arch " + a + " is not one of " + model::known_archs();
        o.archs.push_back(a);
      }
    } else if (flag == "--lengths") {
      o.lengths.clear();
      for (const std::string& t : split(value, ',')) o.lengths.push_back(std::atoll(t.c_str()));
      for (std::int64_t t : o.lengths)
        if (t < 2) return "--lengths must be integers ≥ 2";
      if (o.lengths.empty()) return "--lengths needs at least one length";
    } else if (flag == "--tokens") {
      o.tokens = std::max<std::int64_t>(1, std::atoll(value.c_str()));
    } else if (flag == "--steps") {
      o.steps = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--threads") {
      o.threads = std::atoi(value.c_str());
    } else if (flag == "--max-gb") {
      o.max_gb = std::atof(value.c_str());
    } else if (flag == "--decode-max") {
      o.decode_max = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--decode-runs") {
      o.decode_runs = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--retries") {
      o.retries = std::max(0, std::atoi(value.c_str()));
    } else if (flag == "--json") {
      o.json_path = value;
    } else {
      return "unknown flag " + flag;
    }
  }
  return "";
}

// ---------------------------------------------------------------------------
// Output

const Cell* find_cell(const std::vector<Cell>& cells, const std::string& arch, std::int64_t t) {
  for (const Cell& c : cells)
    if (c.arch == arch && c.t == t) return &c;
  return nullptr;
}

// The transformer's cell at the same T when it ran: the ratios' reference.
const Cell* reference_of(const std::vector<Cell>& cells, std::int64_t t) {
  const Cell* ref = find_cell(cells, "transformer", t);
  return ref && ref->train ? ref : nullptr;
}

std::optional<double> tokens_ratio(const Cell& c, const Cell* ref) {
  if (!ref || !c.train) return std::nullopt;
  return c.train->tokens_per_s / ref->train->tokens_per_s;
}

std::optional<double> attention_ratio(const Cell& c, const Cell* ref) {
  if (!ref || !c.attention_bytes || !ref->attention_bytes) return std::nullopt;
  return *c.attention_bytes / *ref->attention_bytes;
}

std::string fixed(std::optional<double> v, int decimals, const char* suffix = "") {
  if (!v || !std::isfinite(*v)) return "-";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f%s", decimals, *v, suffix);
  return buf;
}

void print_length_table(const std::vector<Cell>& cells, std::int64_t t, const Options& o) {
  const Cell* ref = reference_of(cells, t);
  const std::int64_t batch = std::max<std::int64_t>(1, o.tokens / t);
  std::printf("\nT = %ld: training batch %ld x %ld tokens; decoding beam %d, outputs of %ld words\n",
              static_cast<long>(t), static_cast<long>(batch), static_cast<long>(t), kBeam, static_cast<long>(t));
  std::printf("%-12s %11s %6s %9s %9s %6s %12s %5s %10s %8s %6s\n", "arch", "train tok/s", "vs tf", "step MB",
              "attn MB", "vs tf", "dec ms/sent", "sents", "MFLOP/tok", "GFLOP/s", "other");
  for (const Cell& c : cells) {
    if (c.t != t) continue;
    if (!c.train) {
      std::printf("%-12s %s\n", c.arch.c_str(), c.skipped.c_str());
      continue;
    }
    const std::optional<double> attention_mb = c.attention_bytes ? std::optional<double>(*c.attention_bytes / 1e6)
                                                                 : std::nullopt;
    std::string decode_ms = "-", sentences = "-";
    if (c.decode) {
      decode_ms = fixed(c.decode->ms_per_sentence, 1);
      sentences = std::to_string(c.decode->sentences);
      if (c.decode->shortest != t || c.decode->longest != t) decode_ms += "*";  // length not forced
    }
    std::printf("%-12s %11.0f %6s %9.1f %9s %6s %12s %5s %10.1f %8.1f %6.2f\n", c.arch.c_str(), c.train->tokens_per_s,
                fixed(tokens_ratio(c, ref), 2, "x").c_str(), c.train->step_bytes / 1e6, fixed(attention_mb, 1).c_str(),
                fixed(attention_ratio(c, ref), 2, "x").c_str(), decode_ms.c_str(), sentences.c_str(), c.flops / 1e6,
                c.flops * c.train->tokens_per_s / 1e9, c.other_cores);
    if (!c.decode_error.empty()) std::printf("%-12s   decode %s\n", "", c.decode_error.c_str());
    if (!c.attention_error.empty()) std::printf("%-12s   attn MB %s\n", "", c.attention_error.c_str());
    if (c.decode && (c.decode->shortest != t || c.decode->longest != t))
      std::printf("%-12s   * outputs of %ld..%ld words, not %ld\n", "", static_cast<long>(c.decode->shortest),
                  static_cast<long>(c.decode->longest), static_cast<long>(t));
  }
  std::fflush(stdout);
}

// Fast-DiSA's cost as a multiple of a yardstick's (DiSA, its paper's; a
// convolution, its paper's "as fast and memory-friendly as a CNN"), per T:
// time ratios are Fast-DiSA's time over the yardstick's (below 1: Fast-DiSA
// is faster), memory ratios its bytes over the yardstick's.
struct YardstickRatios {
  std::int64_t t = 0;
  std::string yardstick;
  std::optional<double> train_time, step_memory, attention_memory, decode_time;
  std::string missing;  // why there are none: a cell that did not fit or did not run
};

std::vector<YardstickRatios> yardstick_ratios(const std::vector<Cell>& cells, const Options& o) {
  std::vector<YardstickRatios> out;
  for (const char* yardstick : {"disa", "dynamicconv"})
    for (std::int64_t t : o.lengths) {
      const Cell* fast = find_cell(cells, "fastdisa", t);
      const Cell* other = find_cell(cells, yardstick, t);
      if (!fast || !other) continue;
      YardstickRatios r{t, yardstick, {}, {}, {}, {}, {}};
      if (!fast->train || !other->train) {
        r.missing = !other->train ? other->skipped : fast->skipped;
        out.push_back(r);
        continue;
      }
      r.train_time = other->train->tokens_per_s / fast->train->tokens_per_s;
      r.step_memory = fast->train->step_bytes / other->train->step_bytes;
      if (fast->attention_bytes && other->attention_bytes)
        r.attention_memory = *fast->attention_bytes / *other->attention_bytes;
      if (fast->decode && other->decode) r.decode_time = fast->decode->ms_per_sentence / other->decode->ms_per_sentence;
      out.push_back(r);
    }
  return out;
}

void print_yardstick_ratios(const std::vector<YardstickRatios>& ratios) {
  if (ratios.empty()) return;
  std::printf("\nFast-DiSA against its yardsticks (its cost ÷ the yardstick's; below 1: Fast-DiSA needs less)\n");
  std::printf("%-12s %6s %11s %9s %9s %11s\n", "yardstick", "T", "train time", "step MB", "attn MB", "decode time");
  for (const YardstickRatios& r : ratios) {
    if (!r.missing.empty()) {
      std::printf("%-12s %6ld %s\n", r.yardstick.c_str(), static_cast<long>(r.t), r.missing.c_str());
      continue;
    }
    std::printf("%-12s %6ld %11s %9s %9s %11s\n", r.yardstick.c_str(), static_cast<long>(r.t),
                fixed(r.train_time, 2, "x").c_str(), fixed(r.step_memory, 2, "x").c_str(),
                fixed(r.attention_memory, 3, "x").c_str(), fixed(r.decode_time, 2, "x").c_str());
  }
  std::fflush(stdout);
}

Json optional_number(std::optional<double> v) { return v && std::isfinite(*v) ? Json(*v) : Json(nullptr); }

Json cells_json(const std::vector<Cell>& cells) {
  Json out = Json::array();
  for (const Cell& c : cells) {
    const Cell* ref = reference_of(cells, c.t);
    Json j;
    j["arch"] = c.arch;
    j["T"] = c.t;
    j["batch"] = c.batch;
    j["fits"] = c.train.has_value();
    if (!c.skipped.empty()) j["error"] = c.skipped;
    j["step_mb_estimate"] = c.estimate_bytes / 1e6;
    j["mflop_per_token"] = c.flops / 1e6;
    j["other_cpu_cores"] = c.other_cores;
    j["attempts"] = c.attempts;
    if (c.train) {
      j["train_ms_per_step"] = c.train->median_ms;
      j["train_tokens_per_s"] = c.train->tokens_per_s;
      j["train_us_per_token"] = 1e6 / c.train->tokens_per_s;
      j["train_vs_transformer"] = optional_number(tokens_ratio(c, ref));
      j["step_mb"] = c.train->step_bytes / 1e6;
      j["gflop_per_s"] = c.flops * c.train->tokens_per_s / 1e9;
    }
    j["attention_mb"] =
        optional_number(c.attention_bytes ? std::optional<double>(*c.attention_bytes / 1e6) : std::nullopt);
    j["attention_vs_transformer"] = optional_number(attention_ratio(c, ref));
    if (!c.attention_error.empty()) j["attention_error"] = c.attention_error;
    if (c.decode) {
      j["decode_sentences"] = c.decode->sentences;
      j["decode_ms_per_sentence"] = c.decode->ms_per_sentence;
      j["decode_words_min"] = c.decode->shortest;
      j["decode_words_max"] = c.decode->longest;
      j["decode_length_forced"] = c.decode->forced;
    } else if (!c.decode_error.empty()) {
      j["decode_error"] = c.decode_error;
    }
    out.push_back(std::move(j));
  }
  return out;
}

int run(const Options& o) {
  set_threads(o.threads);
  const CpuName cpu = cpu_name();
  const std::string date = today();
  const std::int64_t longest = *std::max_element(o.lengths.begin(), o.lengths.end());
  const std::int64_t max_positions = std::max<std::int64_t>(1024, longest + 1);
  const model::ModelConfig reference = model::preset("transformer");
  std::printf("whole-model cost against length: d %ld, %ld+%ld layers, %ld heads, FFN %ld, vocab %ld, dropout 0.1;\n"
              "%ld target tokens per training batch (source = target = T tokens), median of %d steps after 1 warm-up\n",
              static_cast<long>(reference.dim), static_cast<long>(reference.enc_layers),
              static_cast<long>(reference.dec_layers), static_cast<long>(reference.heads),
              static_cast<long>(reference.ffn_dim), static_cast<long>(kVocab), static_cast<long>(o.tokens), o.steps);
  std::printf("CPU: %s (family %d, model %d); kernels %s; %d thread%s; %s\n", cpu.model.c_str(), cpu.family,
              cpu.model_number, std::string(isa_name(active_isa())).c_str(), num_threads(),
              num_threads() == 1 ? "" : "s", date.c_str());
  std::printf("step MB: the step arena's high-water; attn MB: encoder layer 0's self-attention mixer alone, fwd+bwd;\n"
              "vs tf: against the transformer at the same T; dec ms/sent: beam %d, median of %d decodes of sents "
              "sentences;\n"
              "MFLOP/tok: training FLOPs per target token (3x forward); other: cores' worth of CPU other processes "
              "used meanwhile\n(above %.2f a part is measured again, up to %d times)\n",
              kBeam, o.decode_runs, kQuietCores, o.retries);
  std::fflush(stdout);

  std::vector<Cell> cells;
  for (std::int64_t t : o.lengths) {
    for (const std::string& arch : o.archs) {
      const auto t0 = Clock::now();
      cells.push_back(measure_cell(arch, t, o, max_positions));
      std::fprintf(stderr, "bench_length: %s T=%ld done in %.0f s\n", arch.c_str(), static_cast<long>(t),
                   std::chrono::duration<double>(Clock::now() - t0).count());
    }
    print_length_table(cells, t, o);
  }
  const std::vector<YardstickRatios> ratios = yardstick_ratios(cells, o);
  print_yardstick_ratios(ratios);
  const double rss = peak_rss_bytes();
  std::printf("\npeak RSS of the process: %.1f MB\n", rss / 1e6);

  if (!o.json_path.empty()) {
    Json doc;
    doc["benchmark"] = "bench_length";
    doc["cpu"] = {{"model_name", cpu.model}, {"family", cpu.family}, {"model", cpu.model_number}};
    doc["isa"] = std::string(isa_name(active_isa()));
    doc["threads"] = num_threads();
    doc["date"] = date;
    doc["tokens_per_batch"] = o.tokens;
    doc["steps"] = o.steps;
    doc["beam"] = kBeam;
    doc["decode_runs"] = o.decode_runs;
    doc["retries"] = o.retries;
    doc["quiet_cores"] = kQuietCores;
    doc["config"] = {{"dim", reference.dim},
                     {"ffn_dim", reference.ffn_dim},
                     {"heads", reference.heads},
                     {"enc_layers", reference.enc_layers},
                     {"dec_layers", reference.dec_layers},
                     {"vocab", kVocab},
                     {"dropout", 0.1},
                     {"max_positions", max_positions}};
    doc["archs"] = o.archs;
    doc["lengths"] = o.lengths;
    doc["peak_rss_mb"] = rss / 1e6;
    doc["cells"] = cells_json(cells);
    doc["fastdisa_vs_yardsticks"] = Json::array();
    for (const YardstickRatios& r : ratios) {
      Json j{{"T", r.t}, {"yardstick", r.yardstick}};
      if (!r.missing.empty()) j["missing"] = r.missing;
      j["train_time"] = optional_number(r.train_time);
      j["step_memory"] = optional_number(r.step_memory);
      j["attention_memory"] = optional_number(r.attention_memory);
      j["decode_time"] = optional_number(r.decode_time);
      doc["fastdisa_vs_yardsticks"].push_back(std::move(j));
    }
    std::ofstream out(o.json_path);
    out << doc.dump(1) << '\n';
    if (!out) {
      std::fprintf(stderr, "bench_length: cannot write %s; check that its folder exists\n", o.json_path.c_str());
      return 2;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options options;
    const std::string error = parse_options(argc, argv, options);
    if (!error.empty()) {
      std::fprintf(
          stderr,
          "bench_length: %s\nusage: bench_length [--arch A[,B...]] [--lengths 16,64,...] [--tokens N] "
          "[--steps N] [--threads N] [--max-gb G] [--decode-max N] [--decode-runs N] [--retries N] [--json FILE]\n",
          error.c_str());
      return 2;
    }
    return run(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_length: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "bench_length: unknown error\n");
  }
  return 1;
}
