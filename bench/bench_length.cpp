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
//              exactly T tokens (see force_length_t below), ms per sentence
//              (median of --decode-runs after a short warm-up);
//   MFLOP/tok  the FLOPs of one training step per target token, counted from
//              the config (flops_per_token below), and the achieved GFLOP/s.
//
// Why: with tokens per batch fixed, every cost that is linear in T is flat per
// token, so what grows with T is attention alone: global attention's T² terms
// make the Transformer's time per token and memory grow linearly with T,
// ConvSAN's band keeps its windowed layers flat, Fast-DiSA has the T² terms
// too (its factorised form avoids a T²·d_h tensor, not T²). The table says at
// which length each mechanism starts to cost, whole model included.
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
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <fstream>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_util.h"
#include "attn/core/arena.h"
#include "attn/core/cpu.h"
#include "attn/core/rng.h"
#include "attn/core/threads.h"
#include "attn/decode/search.h"
#include "attn/model/seq2seq.h"
#include "attn/nn/mechanism.h"
#include "attn/nn/token_mixer.h"
#include "attn/text/vocab.h"
#include "attn/train/optimizer.h"

namespace {

using namespace attn;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

constexpr std::int64_t kVocab = 8000;
constexpr int kBeam = 5;

struct Options {
  std::vector<std::string> archs = {"transformer", "muse", "muse-simple", "convsan", "convsan2d", "fastdisa"};
  std::vector<std::int64_t> lengths = {16, 64, 256, 1024, 2048};
  std::int64_t tokens = 4096;  // target tokens per training batch
  int steps = 3;
  int threads = 2;
  double max_gb = 16.0;
  int decode_max = 8;             // most sentences in the decode batch
  int decode_runs = 3;            // timed decodes of the batch (median)
  double decode_budget_s = 60.0;  // fewer sentences when a decode would take longer
  int retries = 2;                // more attempts of a part measured while other processes ran
  std::string json_path;
};

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
// The machine

struct CpuName {
  std::string model = "unknown CPU";
  int family = -1, model_number = -1;
};

CpuName read_cpu() {
  CpuName cpu;
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) {
      if (cpu.family >= 0) break;  // the first processor's block is enough
      continue;
    }
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name") cpu.model = value;
    if (key == "cpu family") cpu.family = std::atoi(value.c_str());
    if (key == "model") cpu.model_number = std::atoi(value.c_str());
  }
  return cpu;
}

// MemAvailable of /proc/meminfo in bytes (0 when unknown).
double available_bytes() {
  std::ifstream in("/proc/meminfo");
  for (std::string key; in >> key;) {
    double kb = 0;
    in >> kb;
    if (key == "MemAvailable:") return kb * 1024.0;
    in.ignore(256, '\n');
  }
  return 0;
}

double peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0;  // Linux reports kB
}

// CPU time of the whole machine and of this process, to tell how much other
// processes ran while a part was measured: on a shared machine a burst of
// someone else's work can halve a number, and this catches it.
struct CpuSample {
  double busy_ticks = 0;  // all CPUs: user, nice, system, irq, softirq, steal
  double self_ticks = 0;  // this process, all its threads: user + system
  Clock::time_point at = Clock::now();
};

CpuSample sample_cpu() {
  CpuSample s;
  std::ifstream stat("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  s.busy_ticks = user + nice + system + irq + softirq + steal;
  std::ifstream self("/proc/self/stat");
  std::string line;
  std::getline(self, line);
  // Fields after the ")" that ends the command name: state is field 3, utime 14, stime 15.
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) s.self_ticks = std::atof(field.c_str());
    if (i == 15) s.self_ticks += std::atof(field.c_str());
  }
  s.at = Clock::now();
  return s;
}

// Cores' worth of CPU that other processes used between two samples.
double other_cores(const CpuSample& before, const CpuSample& after) {
  const double seconds = std::chrono::duration<double>(after.at - before.at).count();
  const double ticks = (after.busy_ticks - before.busy_ticks) - (after.self_ticks - before.self_ticks);
  return seconds > 0 ? std::max(0.0, ticks / static_cast<double>(sysconf(_SC_CLK_TCK)) / seconds) : 0.0;
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M %Z", &local);
  return buf;
}

// ---------------------------------------------------------------------------
// The yardstick: FLOPs of a training step, counted from the config.
//
// Matrix products count 2·m·n·k, and a training step 3× the forward (the
// backward of a product is two products of the same size). Attention counts
// what the kernels compute: global attention (encoder, causal decoder, cross,
// MUSE's branch) and Fast-DiSA form full T×T score matrices and mask them
// afterwards, so they count T² per head whatever the mask; ConvSAN's band
// counts only the window slots inside the sequence (and, in 2D, the
// neighbouring heads that exist). Element-wise work (softmax, LayerNorm,
// activations, dropout, Adam) is left out: it is small next to the products
// and is not what GFLOP/s measures.

// Keys in the window [i − left, i + right] ∩ [0, T), averaged over queries i.
double band_keys_per_query(std::int64_t t, std::int64_t left, std::int64_t right) {
  double keys = 0;
  for (std::int64_t i = 0; i < t; ++i)
    keys += static_cast<double>(std::min(t - 1, i + right) - std::max<std::int64_t>(0, i - left) + 1);
  return keys / static_cast<double>(t);
}

// Heads in [h − n, h + n] that exist, averaged over h (all N with the authors' wrap).
double band_heads_per_head(std::int64_t heads, std::int64_t head_window, bool wrap) {
  if (wrap) return static_cast<double>(head_window);
  const std::int64_t n = (head_window - 1) / 2;
  double count = 0;
  for (std::int64_t h = 0; h < heads; ++h)
    count += static_cast<double>(std::min(heads - 1, h + n) - std::max<std::int64_t>(0, h - n) + 1);
  return count / static_cast<double>(heads);
}

// Forward FLOPs per position of one self-attention mixer over sequences of T
// positions; NaN for a mechanism this count does not know.
double mixer_forward_flops(const nn::MixerSpec& spec, std::int64_t t) {
  const double d = static_cast<double>(spec.d), heads = static_cast<double>(spec.heads), dh = d / heads;
  const double T = static_cast<double>(t);
  const double qkv = 2 * d * 3 * d, out = 2 * d * d;
  const double global = 2 * T * d + 2 * T * d;  // q·kᵀ and P·v over all heads
  if (spec.mechanism == "mha") return qkv + global + out;
  if (spec.mechanism == "csan") {
    const auto window = nn::option_value<std::int64_t>(spec, "csan_window");
    const std::int64_t half = (window - 1) / 2;
    // The causal form (our decoder extension) is 1D over [i − half, i].
    const auto head_window = spec.causal ? 1 : nn::option_value<std::int64_t>(spec, "csan_head_window");
    const bool wrap = nn::option_value<std::string>(spec, "csan_head_boundary") == "wrap";
    const double slots = band_keys_per_query(t, half, spec.causal ? 0 : half) *
                         band_heads_per_head(spec.heads, head_window, wrap);
    return qkv + 2 * 2 * dh * slots * heads + out;  // q·k and p·v per slot and head
  }
  if (spec.mechanism == "muse") {
    const auto kernels = nn::option_value<std::vector<std::int64_t>>(spec, "muse_kernels");
    if (kernels.empty()) return qkv + global + out;  // MUSE-simple
    double flops = qkv + global + 2 * (2 * d) * d;   // output projection reads [Att ; Cmix]
    if (nn::option_value<bool>(spec, "muse_separate_projection")) flops += 2 * d * d;
    for (std::int64_t k : kernels) flops += 2 * d * heads * static_cast<double>(k) + 2 * static_cast<double>(k) * d;
    return flops;  // per cell: the filter generator [H·k, d], then k taps per channel
  }
  if (spec.mechanism == "fastdisa") {
    // Per head: R = q·kᵀ [T×T×d_h]; A·[E | v⊙E] [T×T×2d_h]; S = ELU(v W1) W2 [2 × d_h×d_h];
    // the fusion gate [2d_h → d_h].
    double flops = qkv + 2 * T * d + 2 * T * 2 * d + 2 * 2 * dh * d + out;
    if (nn::option_value<bool>(spec, "disa_gate")) flops += 2 * 2 * dh * d;
    return flops;
  }
  return std::nan("");
}

// Training FLOPs per target token at source = target = T tokens.
double flops_per_token(const model::ModelConfig& c, std::int64_t t) {
  const double d = static_cast<double>(c.dim), ffn = 2 * 2 * d * static_cast<double>(c.ffn_dim);
  const double T = static_cast<double>(t);
  double forward = 0;
  for (std::int64_t layer = 0; layer < c.enc_layers; ++layer)
    forward += mixer_forward_flops(c.encoder_mixer(layer), t) + ffn;
  // Cross-attention: q and o on the target, k and v on the source (as many tokens), T² scores.
  const double cross = 2 * d * d + 2 * d * 2 * d + 4 * T * d + 2 * d * d;
  forward += static_cast<double>(c.dec_layers) * (mixer_forward_flops(c.decoder_self_mixer(), t) + cross + ffn);
  forward += 2 * d * static_cast<double>(c.vocab_size);  // output projection
  return 3 * forward;
}

// ---------------------------------------------------------------------------
// Memory: a generous estimate of the step arena, to skip a cell before it
// asks for more than the machine has. Checked against the measured
// high-water in the JSON ("step_mb_estimate").

bool is_global(const nn::MixerSpec& spec) {
  return spec.mechanism == "mha" || spec.mechanism == "muse" || spec.mechanism == "fastdisa";
}

double estimate_step_bytes(const model::ModelConfig& c, std::int64_t batch, std::int64_t t, int threads) {
  const double B = static_cast<double>(batch), T = static_cast<double>(t), H = static_cast<double>(c.heads);
  const double rows = B * T, d = static_cast<double>(c.dim);
  // Each global site saves its [B, H, T, T] weights; backward adds a T×T
  // workspace per thread. A band site keeps [B, H, T, N·M] twice.
  double quadratic = 0;
  auto site = [&](const nn::MixerSpec& spec) {
    if (is_global(spec)) {
      quadratic += B * H * T * T + std::max(1, threads) * 2 * T * T;
    } else {
      const double window = static_cast<double>(nn::option_value<std::int64_t>(spec, "csan_window"));
      quadratic += 2 * B * H * T * window * 3;
    }
  };
  for (std::int64_t layer = 0; layer < c.enc_layers; ++layer) site(c.encoder_mixer(layer));
  for (std::int64_t layer = 0; layer < c.dec_layers; ++layer) {
    site(c.decoder_self_mixer());
    quadratic += B * H * T * T;  // cross-attention weights
  }
  const double layers = static_cast<double>(c.enc_layers + c.dec_layers);
  const double linear = layers * rows * (16 * d + 2 * static_cast<double>(c.ffn_dim)) +
                        2 * rows * static_cast<double>(c.vocab_size);
  return 4.0 * 1.25 * (quadratic + linear);
}

// ---------------------------------------------------------------------------
// The measurements

std::vector<std::vector<std::int32_t>> random_sentences(std::int64_t count, std::int64_t len, Rng& rng) {
  std::vector<std::vector<std::int32_t>> sentences(static_cast<std::size_t>(count));
  for (auto& s : sentences) {
    s.resize(static_cast<std::size_t>(len));
    for (auto& id : s) id = 4 + static_cast<std::int32_t>(rng.below(kVocab - 10));  // no specials
  }
  return sentences;
}

struct TrainResult {
  double median_ms = 0, tokens_per_s = 0, step_bytes = 0;
};

// One full training step on `batch` pairs of T source and T target tokens
// (T − 1 words and </s>), median of `steps` after one warm-up.
TrainResult measure_training(const model::ModelConfig& config, std::int64_t batch, std::int64_t t, int steps) {
  model::Seq2Seq model(config);
  Rng init(1);
  model.initialize(init);
  train::Adam adam(model.params(), {});
  Rng data(2);
  const auto src = random_sentences(batch, t, data);
  const auto tgt = random_sentences(batch, t - 1, data);
  const model::Batch b = model::make_batch(src, tgt);
  Arena arena;
  Rng rng(3);
  nn::StepContext ctx{model.params(), arena, rng, true};
  const float grad_scale = 1.0f / static_cast<float>(b.target_tokens());
  std::vector<double> ms;
  for (int s = 0; s <= steps; ++s) {
    const auto t0 = Clock::now();
    arena.reset();
    model.params().zero_grads();
    model.forward_backward(ctx, b, 0.1f, true, grad_scale);
    adam.step(model.params());
    const double elapsed = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (s > 0) ms.push_back(elapsed);  // the first step grows the arena and warms the caches
  }
  TrainResult r;
  r.median_ms = bench::median(ms);
  r.tokens_per_s = 1000.0 * static_cast<double>(b.target_tokens()) / r.median_ms;
  r.step_bytes = 4.0 * static_cast<double>(arena.high_water_floats());
  return r;
}

// The encoder's layer-0 self-attention mixer alone: forward + backward over
// [batch, T] in training mode; the high-water of its own arena in bytes.
double measure_attention_bytes(const model::ModelConfig& config, std::int64_t batch, std::int64_t t) {
  nn::ParamStore params;
  const std::unique_ptr<nn::TokenMixer> mixer = nn::make_mixer(params, "enc.0.self_attn", config.encoder_mixer(0));
  params.allocate();
  Rng init(4);
  params.initialize(init);
  const std::int64_t rows = batch * t, d = config.dim;
  const std::vector<float> x = bench::random_floats(static_cast<std::size_t>(rows * d), 5);   // [B·T, d]
  const std::vector<float> dy = bench::random_floats(static_cast<std::size_t>(rows * d), 6);  // [B·T, d]
  std::vector<float> y(static_cast<std::size_t>(rows * d)), dx(static_cast<std::size_t>(rows * d));
  const std::vector<std::int32_t> lengths(static_cast<std::size_t>(batch), static_cast<std::int32_t>(t));
  Arena arena;
  Rng rng(7);
  nn::StepContext ctx{params, arena, rng, true};
  std::unique_ptr<nn::TokenMixer::Saved> saved;
  mixer->forward(ctx, x.data(), y.data(), batch, t, lengths.data(), saved);
  mixer->backward(ctx, *saved, dy.data(), dx.data());
  return 4.0 * static_cast<double>(arena.high_water_floats());
}

// decode::beam_search has a maximum length (max_len_a · source + max_len_b)
// but no minimum, and a random model may end a hypothesis at any step. So the
// decode model's weights make </s> impossible: feature 0 of the decoder's
// final LayerNorm is pinned to 1 (gain 0, bias 1) and the tied output row of
// </s> is −50 there and 0 elsewhere, so log p(</s>) ≈ −50 against ≈ −9 for
// every other word, and every hypothesis runs to max_len_b = T words, where
// the search forces </s>. Values change, never shapes: the work per step is
// a trained model's. Returns false when the parameters are not there (a
// post-norm config has no final norm): then lengths are whatever they are.
bool force_length_t(model::Seq2Seq& model) {
  nn::ParamStore& params = model.params();
  const model::ModelConfig& c = model.config();
  const std::string table = c.share_all_embeddings   ? "embed.weight"
                            : c.share_decoder_output ? "tgt_embed.weight"
                                                     : "out_proj.weight";
  const nn::ParamId gain = params.find("dec.ln.weight"), bias = params.find("dec.ln.bias"), output = params.find(table);
  if (gain < 0 || bias < 0 || output < 0) return false;
  params.value(gain)[0] = 0.0f;
  params.value(bias)[0] = 1.0f;
  float* eos_row = params.value(output) + static_cast<std::int64_t>(text::kEos) * c.dim;
  std::fill(eos_row, eos_row + c.dim, 0.0f);
  eos_row[0] = -50.0f;
  return true;
}

struct DecodeResult {
  int sentences = 0;
  double ms_per_sentence = 0;
  std::int64_t shortest = 0, longest = 0;  // words of the best hypotheses
  bool forced = false;
};

DecodeResult measure_decoding(const model::ModelConfig& config, std::int64_t t, const Options& o) {
  model::Seq2Seq model(config);
  Rng init(1);
  model.initialize(init);
  DecodeResult r;
  r.forced = force_length_t(model);
  Arena arena;
  Rng rng(8);
  nn::StepContext ctx{model.params(), arena, rng, false};
  Rng data(9);
  auto sources = random_sentences(std::clamp<std::int64_t>(64 * 16 / t, 1, o.decode_max), t, data);
  decode::SearchOptions search;
  search.beam = kBeam;
  search.max_len_a = 0.0f;
  auto decode_seconds = [&](std::int64_t words) {
    search.max_len_b = static_cast<float>(words);
    const auto t0 = Clock::now();
    auto best = decode::beam_search(ctx, model, sources, search);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return std::make_pair(seconds, std::move(best));
  };
  decode_seconds(std::min<std::int64_t>(t, 4));  // warm-up: the search's buffers, the encoder's arena
  // A longer batch than the budget allows decodes fewer sentences: predicted
  // from the first T/8 steps, ×1.5 as the self-attention's steps grow with t.
  if (sources.size() > 1 && t >= 128) {
    const std::int64_t probe = t / 8;
    const double predicted = decode_seconds(probe).first * static_cast<double>(t) / static_cast<double>(probe) * 1.5;
    if (predicted > o.decode_budget_s) {
      const auto keep = static_cast<std::size_t>(
          std::max(1.0, std::floor(static_cast<double>(sources.size()) * o.decode_budget_s / predicted)));
      sources.resize(std::min(keep, sources.size()));
    }
  }
  std::vector<double> seconds;
  std::vector<std::vector<decode::Hypothesis>> best;
  for (int run = 0; run < o.decode_runs; ++run) {
    auto [run_seconds, run_best] = decode_seconds(t);
    seconds.push_back(run_seconds);
    best = std::move(run_best);
  }
  r.sentences = static_cast<int>(sources.size());
  r.ms_per_sentence = 1000.0 * bench::median(seconds) / static_cast<double>(r.sentences);
  r.shortest = std::numeric_limits<std::int64_t>::max();
  for (const auto& hyps : best) {
    const auto words = hyps.empty() ? 0 : static_cast<std::int64_t>(hyps.front().tokens.size());
    r.shortest = std::min(r.shortest, words);
    r.longest = std::max(r.longest, words);
  }
  return r;
}

// ---------------------------------------------------------------------------
// One cell of the table: an arch at a length

struct Cell {
  std::string arch;
  std::int64_t t = 0, batch = 0;
  std::string skipped;  // why the cell did not run ("" when it did)
  double estimate_bytes = 0;
  std::optional<TrainResult> train;
  std::optional<double> attention_bytes;
  std::optional<DecodeResult> decode;
  std::string decode_error;
  double flops = 0;        // per target token
  double other_cores = 0;  // CPU other processes used while the kept attempts ran (the larger of train, decode)
  int attempts = 0;        // training and decoding attempts made
};

// Runs one part of a cell; a failed allocation or any error becomes `error`.
template <class Part>
bool run_part(Part part, std::string& error) {
  try {
    part();
    return true;
  } catch (const std::bad_alloc&) {
    error = "does not fit (allocation failed)";
  } catch (const std::exception& e) {
    error = std::string("failed: ") + e.what();
  }
  return false;
}

// Measures part() again when other processes used more than kQuietCores of
// CPU meanwhile, at most `retries` more times and never after an attempt of
// over a minute (the long decodes); keeps the quietest attempt.
constexpr double kQuietCores = 0.15;

template <class Result, class Part>
Result quietest(Part part, int retries, double& other, int& attempts) {
  std::optional<Result> best;
  other = std::numeric_limits<double>::infinity();
  for (int attempt = 0; attempt <= retries; ++attempt) {
    const CpuSample before = sample_cpu();
    Result result = part();
    const CpuSample after = sample_cpu();
    ++attempts;
    const double used = other_cores(before, after);
    if (used < other) {
      best = std::move(result);
      other = used;
    }
    if (used < kQuietCores || std::chrono::duration<double>(after.at - before.at).count() > 60) break;
  }
  return std::move(*best);
}

Cell measure_cell(const std::string& arch, std::int64_t t, const Options& o, std::int64_t max_positions) {
  Cell cell;
  cell.arch = arch;
  cell.t = t;
  cell.batch = std::max<std::int64_t>(1, o.tokens / t);
  model::ModelConfig config = model::preset(arch);
  config.vocab_size = kVocab;
  config.dropout = 0.1f;
  config.max_positions = max_positions;
  cell.flops = flops_per_token(config, t);
  cell.estimate_bytes = estimate_step_bytes(config, cell.batch, t, num_threads());
  const double available = available_bytes();
  const double limit = std::min(o.max_gb * 1e9, available > 0 ? available : o.max_gb * 1e9);
  if (cell.estimate_bytes > limit) {
    char why[128];
    std::snprintf(why, sizeof why, "does not fit (step needs ~%.1f GB, limit %.1f GB)", cell.estimate_bytes / 1e9,
                  limit / 1e9);
    cell.skipped = why;
    return cell;
  }
  double train_other = 0, decode_other = 0;
  const bool trained = run_part(
      [&] {
        cell.train = quietest<TrainResult>([&] { return measure_training(config, cell.batch, t, o.steps); }, o.retries,
                                           train_other, cell.attempts);
      },
      cell.skipped);
  if (!trained) return cell;
  std::string attention_error;  // a memory figure: no timing, no retry
  run_part([&] { cell.attention_bytes = measure_attention_bytes(config, cell.batch, t); }, attention_error);
  run_part(
      [&] {
        cell.decode = quietest<DecodeResult>([&] { return measure_decoding(config, t, o); }, o.retries, decode_other,
                                             cell.attempts);
      },
      cell.decode_error);
  cell.other_cores = std::max(train_other, cell.decode ? decode_other : 0.0);
  return cell;
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
    if (c.decode && (c.decode->shortest != t || c.decode->longest != t))
      std::printf("%-12s   * outputs of %ld..%ld words, not %ld\n", "", static_cast<long>(c.decode->shortest),
                  static_cast<long>(c.decode->longest), static_cast<long>(t));
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
  const CpuName cpu = read_cpu();
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
