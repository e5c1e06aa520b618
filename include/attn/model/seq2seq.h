// Seq2Seq: the encoder–decoder built from a ModelConfig, with all its
// parameters in one ParamStore, the teacher-forced forward+backward used in
// training, and the incremental decoder used by translate and attend.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "attn/core/arena.h"
#include "attn/core/tensor.h"
#include "attn/model/batch.h"
#include "attn/model/config.h"
#include "attn/nn/context.h"
#include "attn/nn/embedding.h"
#include "attn/nn/layer_norm.h"
#include "attn/nn/loss.h"
#include "attn/nn/param_store.h"
#include "attn/nn/transformer_layer.h"

namespace attn::model {

// The type a model multiplies in (kernels/products.h), named for the layers above.
using ComputeType = kernels::ComputeType;
using kernels::compute_type_name;
using kernels::parse_compute_type;

// Caches of an incremental decode of S sentences × `beams` hypotheses each:
// hypothesis s·beams + k is beam k of sentence s.
struct DecoderState {
  std::int64_t sentences = 0, beams = 1, src_len = 0, t_max = 0;
  std::int64_t t = 0;                     // the next position to decode
  std::vector<std::int32_t> src_lengths;  // [S]
  std::vector<nn::DecoderLayerCache> layers;
  std::int64_t hypotheses() const { return sentences * beams; }
};

// The attention weights of one sentence pair, as `attn attend` shows them.
struct SentenceMaps {
  std::vector<nn::MixerMaps> encoder;     // [enc_layers]: heads × src_len × src_len, with the mixer's extras
  std::vector<nn::MixerMaps> decoder;     // [dec_layers]: heads × tgt_len × tgt_len (causal)
  std::vector<std::vector<float>> cross;  // [dec_layers][heads, tgt_len, src_len]
  std::int64_t src_len = 0, tgt_len = 0;
};

class Seq2Seq {
 public:
  // Declares and allocates the parameters: every FP32 value (zero until
  // initialize or a model file), gradients at the first backward.
  explicit Seq2Seq(const ModelConfig& config);
  // Declares the parameters without storage: the model file loader gives the
  // store that of its compute type (nn::ParamStore::allocate_for_decoding).
  struct Declared {};
  Seq2Seq(const ModelConfig& config, Declared);
  Seq2Seq(const Seq2Seq&) = delete;
  Seq2Seq& operator=(const Seq2Seq&) = delete;

  const ModelConfig& config() const { return config_; }
  nn::ParamStore& params() { return params_; }
  const nn::ParamStore& params() const { return params_; }
  void initialize(Rng& rng) { params_.initialize(rng); }

  // Teacher-forced forward over a batch; the loss summed over target tokens.
  // When backward, accumulates grad_scale · ∂loss/∂θ into params().grads().
  // gradients_ready(i), when given, is called as chunk i of gradient_chunks()
  // receives its last contribution (the data-parallel all-reduce starts it).
  nn::LossSums forward_backward(nn::StepContext& ctx, const Batch& batch, float label_smoothing, bool backward,
                                float grad_scale, const std::function<void(std::size_t)>* gradients_ready = nullptr);

  // The flat gradient buffer as [begin, end) float ranges, in the order
  // backward finishes them: dec.ln, dec.L−1 … dec.0, enc.ln, enc.L−1 … enc.0
  // (the norms with pre-norm only), then the rest (embeddings, output
  // projection), whose gradient grows until backward ends. They cover the
  // buffer exactly once.
  std::vector<std::pair<std::int64_t, std::int64_t>> gradient_chunks() const;

  // src: [B, Ts] → memory [B·Ts, d] in ctx.arena.
  const float* encode(nn::StepContext& ctx, const std::int32_t* src, std::int64_t batch, std::int64_t ts,
                      const std::int32_t* src_lengths) const;

  // Starts decoding `beams` hypotheses for each of S sentences over memory
  // [S·Ts, d] (src_lengths: [S]); caches live in state_arena.
  DecoderState start_decoding(nn::StepContext& ctx, Arena& state_arena, const float* memory, std::int64_t sentences,
                              std::int64_t beams, std::int64_t ts, const std::int32_t* src_lengths,
                              std::int64_t t_max) const;
  // Feeds tokens: [N] at position state.t, writes log-probabilities [N, V], advances state.t.
  void decode_step(nn::StepContext& ctx, DecoderState& state, const std::int32_t* tokens, float* logprobs) const;
  // The next state's hypothesis i continues hypothesis order[i] (beam search
  // back-pointers). order lists, sentence after sentence in increasing order,
  // `beams` hypotheses of each sentence kept, all its own; a sentence left out
  // leaves the state, so finished sentences cost nothing in later steps.
  void select(DecoderState& state, std::span<const std::int32_t> order) const;

  // Teacher-forced log-probabilities [B·Tt, V] (tests compare them with decode_step).
  void teacher_forced_log_probs(nn::StepContext& ctx, const Batch& batch, float* logprobs) const;

  // The teacher-forced forward of a batch (eval mode), returning every
  // layer's attention weights per sentence: what the forward really used.
  std::vector<SentenceMaps> attention_maps(nn::StepContext& ctx, const Batch& batch) const;
  // The mechanism of each stack's self-attention ("mha", "csan2d", …), per layer.
  std::vector<std::string> encoder_mixer_kinds() const;
  std::vector<std::string> decoder_mixer_kinds() const;

  std::int64_t parameter_count() const { return params_.total_floats(); }

 private:
  // One forward pass of a stack: what its backward needs.
  struct StackActivations {
    nn::Dropout::Saved embed_drop;
    std::vector<nn::EncoderLayer::Saved> encoder;  // encoder stacks only
    std::vector<nn::DecoderLayer::Saved> decoder;  // decoder stacks only
    nn::LayerNorm::Saved norm;                     // pre-norm only
    const float* out = nullptr;                    // [B·T, d] after the final norm
  };
  // Fill `acts` (its vectors and the mixers' Saved reused when it held a pass before). Without
  // keep_layers only acts.out is valid: each layer's activations are released after it.
  void forward_encoder(nn::StepContext& ctx, const std::int32_t* src, std::int64_t batch, std::int64_t ts,
                       const std::int32_t* src_lengths, StackActivations& acts, bool keep_layers = true) const;
  void forward_decoder(nn::StepContext& ctx, const Batch& batch, const float* memory, StackActivations& acts) const;
  nn::ParamId output_weight() const;

  ModelConfig config_;
  nn::ParamStore params_;
  nn::Embedding src_embed_, tgt_embed_;
  nn::ParamId out_proj_ = -1;         // own output projection when not tied
  nn::WeightMatrixId output_matrix_;  // the output projection as the logits' product reads it
  std::vector<nn::EncoderLayer> encoder_;
  std::vector<nn::DecoderLayer> decoder_;
  nn::LayerNorm enc_norm_, dec_norm_;  // pre-norm only
  nn::Dropout embed_dropout_;
  nn::Positions positions_;  // [max_positions, d]
  struct TrainingActivations {
    StackActivations encoder, decoder;
  } training_activations_;  // forward_backward's activations, kept from step to step
};

}  // namespace attn::model
