// Low precision: with the GEMM precision at bf16, every arch's loss
// and the gradient of every parameter tensor stay within a stated distance of
// the FP32 ones, and do differ from them (the switch acts); with int8 weight
// products, the decoder's log-probabilities do too.
#include "../support.h"
#include "arch_variants.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "attn/core/arena.h"
#include "attn/kernels/gemm.h"
#include "attn/kernels/gemm_int8.h"
#include "attn/model/model_file.h"
#include "attn/model/seq2seq.h"

using namespace attn;
using namespace attn::model;

namespace {

struct LossAndGrads {
  double loss;
  std::vector<float> grads;
};

Batch small_batch() {
  return make_batch({{5, 6, 7, 8, 3, 9, 10}, {9, 4}, {10, 11, 12}}, {{4, 5, 6}, {7, 8, 9, 10, 5}, {11}});
}

LossAndGrads loss_and_grads(Seq2Seq& model, kernels::ComputeType type) {
  model.params().set_compute_types(kernels::ComputeTypes::decoding(type), nn::ParamStore::Use::decoding);
  Arena arena;
  Rng rng(11);
  nn::StepContext ctx{model.params(), arena, rng, false};
  const Batch batch = small_batch();
  model.params().zero_grads();
  const double loss = model.forward_backward(ctx, batch, 0.1f, true, 1.0f).loss;
  const auto g = model.params().grads();
  model.params().set_compute_types(kernels::ComputeTypes::decoding(kernels::ComputeType::fp32),
                                   nn::ParamStore::Use::decoding);
  return {loss, std::vector<float>(g.begin(), g.end())};
}

// The teacher-forced log-probabilities [rows × V] of small_batch under a precision.
std::vector<float> log_probs(Seq2Seq& model, kernels::ComputeType type) {
  model.params().set_compute_types(kernels::ComputeTypes::decoding(type), nn::ParamStore::Use::decoding);
  const Batch batch = small_batch();
  Arena arena;
  Rng rng(1);
  nn::StepContext ctx{model.params(), arena, rng, false};
  std::vector<float> out(static_cast<std::size_t>(batch.size * batch.tgt_len * model.config().vocab_size));
  model.teacher_forced_log_probs(ctx, batch, out.data());
  model.params().set_compute_types(kernels::ComputeTypes::decoding(kernels::ComputeType::fp32),
                                   nn::ParamStore::Use::decoding);
  return out;
}

// How far two models' log-probabilities on small_batch are apart: the largest
// difference, and at how many target positions their most likely tokens agree.
struct LogProbDistance {
  double worst = 0.0;
  std::int64_t agree = 0, positions = 0;
};
LogProbDistance log_prob_distance(const std::vector<float>& a, const std::vector<float>& b, std::int64_t V) {
  const Batch batch = small_batch();
  LogProbDistance d;
  for (std::int64_t s = 0; s < batch.size; ++s)
    for (std::int64_t t = 0; t < batch.tgt_lengths[static_cast<std::size_t>(s)]; ++t) {
      const std::size_t row = static_cast<std::size_t>((s * batch.tgt_len + t) * V);
      std::int64_t best_a = 0, best_b = 0;
      for (std::int64_t j = 0; j < V; ++j) {
        d.worst = std::max(d.worst, static_cast<double>(std::abs(a[row + j] - b[row + j])));
        if (a[row + j] > a[row + best_a]) best_a = j;
        if (b[row + j] > b[row + best_b]) best_b = j;
      }
      d.agree += best_a == best_b;
      ++d.positions;
    }
  return d;
}

}  // namespace

// bf16 keeps 8 significant bits (relative rounding ≤ 2⁻⁹ ≈ 0.2% per operand),
// but gradients are sums with much cancellation (LayerNorm's backward above
// all), which magnifies the rounding in the small ones. Measured when this was
// written, per variant: the whole gradient 0.6–6.6% off (relative norm of the
// difference), the median tensor 0.7–6.5%, the worst tensor 2.4–25%
// (convsan's enc.0.ln_ffn.weight); the post-norm convsan2d is the farthest.
// Bounds: the loss 1%, the whole gradient 10%, the median tensor 10%, every
// tensor 40%.
TEST_CASE("seq2seq, every arch: with bf16 products the loss, the gradient and every parameter tensor's gradient "
          "stay near FP32's",
          "[model][bf16][arch]") {
  for (const ArchVariant& v : kArchVariants) {
    INFO("arch " << v.arch << " decoder mixer '" << v.decoder_mixer << "' norm " << v.norm);
    Seq2Seq model(small_arch_config(v));
    Rng init(3);
    model.initialize(init);
    const LossAndGrads fp32 = loss_and_grads(model, kernels::ComputeType::fp32);
    const LossAndGrads bf16 = loss_and_grads(model, kernels::ComputeType::bf16);
    REQUIRE(std::isfinite(bf16.loss));
    REQUIRE(std::abs(bf16.loss - fp32.loss) <= 0.01 * std::abs(fp32.loss));
    // Gradients that are zero in exact arithmetic (a key projection's bias:
    // softmax ignores it) hold rounding noise in both: measured against a
    // floor of 0.1% of the whole gradient's norm.
    double total = 0.0, total_diff = 0.0;
    for (std::size_t i = 0; i < fp32.grads.size(); ++i) {
      total += static_cast<double>(fp32.grads[i]) * fp32.grads[i];
      const double d = static_cast<double>(bf16.grads[i]) - fp32.grads[i];
      total_diff += d * d;
    }
    INFO("whole gradient: relative error " << std::sqrt(total_diff / total));
    REQUIRE(total_diff > 0.0);  // the precision switch acts
    REQUIRE(std::sqrt(total_diff / total) <= 0.1);
    const double floor = 1e-3 * std::sqrt(total);
    std::vector<double> errors;
    for (const nn::ParamInfo& p : model.params().entries()) {
      double diff = 0.0, norm = 0.0;
      for (std::int64_t i = p.offset; i < p.offset + p.shape.numel(); ++i) {
        const auto at = static_cast<std::size_t>(i);
        const double d = static_cast<double>(bf16.grads[at]) - fp32.grads[at];
        diff += d * d;
        norm += static_cast<double>(fp32.grads[at]) * fp32.grads[at];
      }
      errors.push_back(std::sqrt(diff) / std::max(std::sqrt(norm), floor));
      INFO("tensor " << p.name << " relative error " << errors.back());
      REQUIRE(errors.back() <= 0.4);
    }
    std::sort(errors.begin(), errors.end());
    INFO("median tensor error " << errors[errors.size() / 2]);
    REQUIRE(errors[errors.size() / 2] <= 0.1);
  }
}

// Per-row int8 keeps 7 bits of each row's largest value: on these tiny
// models the log-probabilities moved by 0.031–0.049 nats at most (per
// variant) when this was written, and the most likely token agreed at 11 or
// 12 of 12 positions. Bounds: 0.2 nats, and agreement at 90%.
TEST_CASE("seq2seq, every arch: int8 weight products keep the log-probabilities near FP32's", "[model][int8][arch]") {
  for (const ArchVariant& v : kArchVariants) {
    INFO("arch " << v.arch << " decoder mixer '" << v.decoder_mixer << "' norm " << v.norm);
    Seq2Seq model(small_arch_config(v));
    Rng init(3);
    model.initialize(init);
    const LogProbDistance d = log_prob_distance(log_probs(model, kernels::ComputeType::fp32),
                                                log_probs(model, kernels::ComputeType::int8),
                                                model.config().vocab_size);
    INFO("largest log-probability difference " << d.worst << ", argmax agrees at " << d.agree << " of " << d.positions);
    REQUIRE(d.worst > 0.0);  // the products did run in int8
    REQUIRE(d.worst <= 0.2);
    REQUIRE(d.agree * 10 >= d.positions * 9);
  }
}

// attn quantize's files: each int8 weight within half a quantization step of
// the FP32 one, and quantizing the loaded (dequantized) row again gives the
// stored bytes and scale, so --compute-type int8 multiplies by exactly them.
// The log-probabilities moved about as much as with int8 products (the
// embedding lookups now read int8 values too); same bounds.
TEST_CASE("model file, every arch: int8 weights (attn quantize) load within half a step, quantize back to the "
          "stored bytes, and keep the log-probabilities near FP32's",
          "[model][int8][io][arch]") {
  test::ScratchDir dir;
  const text::Bpe bpe;
  for (const ArchVariant& v : kArchVariants) {
    INFO("arch " << v.arch << " decoder mixer '" << v.decoder_mixer << "' norm " << v.norm);
    ModelConfig config = small_arch_config(v);
    config.vocab_size = bpe.vocab().size();
    Seq2Seq model(config);
    Rng init(3);
    model.initialize(init);
    const auto path = dir.path() / "int8.attn";
    save_model_file(path, model, bpe, {}, {}, WeightStorage::int8);
    const LoadedModel loaded = load_model_values(path);
    const SafetensorsFile file = SafetensorsFile::read(path);  // its bytes as stored
    const auto original = model.params().values(), got = loaded.model->params().values();
    std::int64_t in_int8 = 0;
    for (const nn::ParamInfo& p : model.params().entries()) {
      INFO("parameter " << p.name);
      const auto at = [&](std::int64_t i) { return static_cast<std::size_t>(p.offset + i); };
      if (!stored_in_int8(p)) {
        REQUIRE(file.dtype(p.name) == DType::F32);
        REQUIRE(std::memcmp(&got[at(0)], &original[at(0)], static_cast<std::size_t>(p.shape.numel()) * 4) == 0);
        continue;
      }
      ++in_int8;
      REQUIRE(p.name.find(".bias") == std::string::npos);
      const std::int64_t k = p.shape[p.shape.ndim() - 1], rows = p.shape.numel() / k;
      const std::span<const std::int8_t> stored = file.int8(p.name);
      const std::span<const float> scales = file.data(p.name + ".scale");
      REQUIRE(static_cast<std::int64_t>(scales.size()) == rows);
      std::vector<std::int8_t> again(static_cast<std::size_t>(k));
      for (std::int64_t r = 0; r < rows; ++r) {
        const float scale = scales[static_cast<std::size_t>(r)];
        for (std::int64_t c = 0; c < k; ++c)
          REQUIRE(std::abs(got[at(r * k + c)] - original[at(r * k + c)]) <=
                  (0.5f + 1e-4f) * scale);  // + float rounding of w·(127/max) and q·scale
        REQUIRE(kernels::quantize_row(&got[at(r * k)], k, again.data()) == scale);
        REQUIRE(std::equal(again.begin(), again.end(), stored.begin() + r * k));
      }
    }
    REQUIRE(loaded.int8_params == in_int8);
    REQUIRE(loaded.file.dtype("embed.weight") == DType::I8);
    const LogProbDistance d = log_prob_distance(log_probs(model, kernels::ComputeType::fp32),
                                                log_probs(*loaded.model, kernels::ComputeType::fp32),
                                                config.vocab_size);
    INFO("largest log-probability difference " << d.worst << ", argmax agrees at " << d.agree << " of " << d.positions);
    REQUIRE(d.worst > 0.0);
    REQUIRE(d.worst <= 0.2);
    REQUIRE(d.agree * 10 >= d.positions * 9);
  }
}
