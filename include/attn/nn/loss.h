// Label-smoothed cross-entropy fused with log-softmax over the output
// projection, in chunks of rows: the full [tokens, vocab] logits never sit in
// memory at once, and the gradient is computed in the same pass.
#pragma once
#include <cstdint>

#include "attn/core/arena.h"
#include "attn/nn/param_store.h"

namespace attn::nn {

struct LossSums {
  double loss = 0.0;  // label-smoothed, summed over target tokens (nats)
  double nll = 0.0;   // negative log-likelihood, summed (perplexity = exp(nll / tokens))
  std::int64_t tokens = 0;
};

// h: [rows, d]; targets: [rows] (rows whose target is ignore_id are skipped);
// matrix: the output projection [vocab, d] (the tied target embedding or its own).
// Label smoothing as fairseq: the target gets 1 − ε, every other word ε / (V − 1).
// When dh != nullptr: accumulates dh += grad_scale · ∂loss/∂h and
// dW += grad_scale · ∂loss/∂weight (grad_scale is typically 1 / tokens).
// Chunk buffers come from scratch (about 256 × (vocab + 2d) floats).
LossSums output_loss(ParamStore& params, WeightMatrixId matrix, const float* h, const std::int32_t* targets,
                     std::int64_t rows, std::int64_t d, std::int64_t vocab, float label_smoothing,
                     std::int32_t ignore_id, float grad_scale, float* dh, Arena& scratch);

// Log-probabilities of every word: logits = h · Wᵀ, then log-softmax.
// h: [rows, d] → logprobs: [rows, vocab].
void output_log_probs(const ParamStore& params, WeightMatrixId matrix, const float* h, float* logprobs,
                      std::int64_t rows, std::int64_t d, std::int64_t vocab);

}  // namespace attn::nn
