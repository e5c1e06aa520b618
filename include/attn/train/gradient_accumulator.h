// The gradient of one update, summed over its batches and over ranks
// (train/communicator.h). Rank r computes the update's batches k ≡ r (mod
// ranks). A rank's second and later batches are computed from zero gradients
// and added to the sum of the earlier ones, so one process with
// --update-freq 2 adds g0 + g1 exactly as 2 ranks' sum does; the sum over
// ranks of a chunk of the gradient starts as soon as backward has finished it
// in the rank's last batch.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "attn/core/function_ref.h"
#include "attn/nn/loss.h"
#include "attn/nn/param_store.h"
#include "attn/train/communicator.h"

namespace attn::train {

class GradientAccumulator {
 public:
  // Called as backward finishes chunk i of the gradient.
  using ChunkDone = std::function<void(std::size_t)>;
  // Batch k of the update, forward and backward, adding to the store's
  // gradients; chunk_done (null but for the rank's last batch) goes to backward.
  using Batch = FunctionRef<nn::LossSums(std::int64_t k, const ChunkDone* chunk_done)>;

  // chunks: the gradient's chunks in the order backward finishes them (Seq2Seq::gradient_chunks()).
  GradientAccumulator(Communicator& comm, nn::ParamStore& params,
                      std::vector<std::pair<std::int64_t, std::int64_t>> chunks);
  ~GradientAccumulator();
  GradientAccumulator(const GradientAccumulator&) = delete;
  GradientAccumulator& operator=(const GradientAccumulator&) = delete;

  // This rank's batches of an update of `count`, onto the store's gradients
  // (zeroed by the caller), then the gradients' sum over ranks. Returns this rank's loss, nll and target
  // token sums (not yet summed over ranks).
  std::array<double, 3> accumulate(std::int64_t count, Batch batch);

  // Seconds spent waiting for the sums over ranks, over all updates.
  double wait_seconds() const;

 private:
  void chunk_done(std::size_t chunk);

  Communicator& comm_;
  nn::ParamStore& params_;
  std::vector<std::pair<std::int64_t, std::int64_t>> chunks_;
  std::unique_ptr<Communicator::GradientSum> sum_;
  std::vector<float> earlier_;  // the rank's earlier batches' gradient
  bool add_earlier_ = false;    // earlier_ holds a part of this update
};

}  // namespace attn::train
