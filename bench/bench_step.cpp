// One training step of the reference model (d 256, 3+3 layers, 4 heads, FFN
// 1024, vocab 8000) on a synthetic batch of about 4,096 target tokens:
// milliseconds per step and target tokens per second (median of N steps).
//   build/bench_step [--steps N] [--batch B] [--len T] [--arch A]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "attn/core/arena.h"
#include "attn/core/rng.h"
#include "attn/model/seq2seq.h"
#include "attn/train/optimizer.h"

using namespace attn;

int main(int argc, char** argv) {
  int steps = 5, batch = 128, len = 32;
  const char* arch = "transformer";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--steps")) steps = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--batch")) batch = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--len")) len = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--arch")) arch = argv[i + 1];
  }
  model::ModelConfig config = model::preset(arch);
  config.vocab_size = 8000;
  config.dropout = 0.1f;
  model::Seq2Seq model(config);
  Rng init(1);
  model.initialize(init);
  train::Adam adam(model.params(), {});
  Rng data(2);
  std::vector<std::vector<std::int32_t>> src, tgt;
  for (int b = 0; b < batch; ++b) {
    const int ls = len - static_cast<int>(data.below(len / 4)), lt = len - 1 - static_cast<int>(data.below(len / 4));
    std::vector<std::int32_t> s(ls), t(lt);
    for (auto& x : s) x = 4 + static_cast<std::int32_t>(data.below(7990));
    for (auto& x : t) x = 4 + static_cast<std::int32_t>(data.below(7990));
    src.push_back(s);
    tgt.push_back(t);
  }
  const model::Batch b = model::make_batch(src, tgt);
  Arena arena;
  Rng rng(3);
  nn::StepContext ctx{model.params(), arena, rng, true};
  std::vector<double> ms;
  for (int s = 0; s < steps + 1; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    arena.reset();
    model.params().zero_grads();
    model.forward_backward(ctx, b, 0.1f, true, 1.0f / static_cast<float>(b.target_tokens()));
    adam.step(model.params());
    const double elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (s > 0) ms.push_back(elapsed);  // the first step warms up the arena and caches
  }
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  std::printf("%s, batch %d x %d: %ld target tokens, median %.1f ms/step, %.0f target tokens/s, arena %.1f MB\n", arch,
              batch, len, static_cast<long>(b.target_tokens()), median, 1000.0 * b.target_tokens() / median,
              arena.high_water_floats() * 4.0 / 1e6);
}
