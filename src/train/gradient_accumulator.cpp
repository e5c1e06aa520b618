#include "attn/train/gradient_accumulator.h"

#include "attn/kernels/elementwise.h"

namespace attn::train {

GradientAccumulator::GradientAccumulator(Communicator& comm, nn::ParamStore& params,
                                         std::vector<std::pair<std::int64_t, std::int64_t>> chunks)
    : comm_(comm), params_(params), chunks_(std::move(chunks)),
      sum_(std::make_unique<Communicator::GradientSum>(comm_, params_.grads(), chunks_)) {}

GradientAccumulator::~GradientAccumulator() = default;

std::array<double, 3> GradientAccumulator::accumulate(std::int64_t count, Batch batch) {
  std::array<double, 3> sums{0.0, 0.0, 0.0};  // loss, nll, target tokens
  std::int64_t last_mine = -1;
  for (std::int64_t k = comm_.rank(); k < count; k += comm_.size()) last_mine = k;
  add_earlier_ = false;
  const ChunkDone on_chunk = [this](std::size_t chunk) { chunk_done(chunk); };
  for (std::int64_t k = comm_.rank(); k < count; k += comm_.size()) {
    if (k > comm_.rank()) {  // not this rank's first batch of the update
      auto g = params_.grads();
      if (!add_earlier_)
        earlier_.assign(g.begin(), g.end());
      else
        kernels::add(earlier_.data(), g.data(), earlier_.data(), static_cast<std::int64_t>(g.size()));
      params_.zero_grads();
      add_earlier_ = true;
    }
    const nn::LossSums batch_sums = batch(k, k == last_mine ? &on_chunk : nullptr);
    sums[0] += batch_sums.loss;
    sums[1] += batch_sums.nll;
    sums[2] += static_cast<double>(batch_sums.tokens);
  }
  for (std::size_t chunk = sum_->started(); chunk < chunks_.size(); ++chunk) chunk_done(chunk);
  sum_->finish();
  return sums;
}

// A chunk of the gradient is final on this rank: add the earlier batches' part, start its sum over ranks.
void GradientAccumulator::chunk_done(std::size_t chunk) {
  if (add_earlier_) {
    const auto [begin, end] = chunks_[chunk];
    float* g = params_.grads().data();
    kernels::add(earlier_.data() + begin, g + begin, g + begin, end - begin);
  }
  sum_->start(chunk);
}

double GradientAccumulator::wait_seconds() const { return sum_->wait_seconds(); }

}  // namespace attn::train
