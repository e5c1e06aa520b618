// "Nothing allocated in a hot loop": once a training step has run, the next
// step of the same shape allocates nothing on the heap (the arena, the
// layers' saved activations and the threads' scratch are reused). Counted by
// replacing the global operator new for this test binary, and by
// allocate_floats' own count (the arena's blocks and the packing buffers).
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <new>

#include "arch_variants.h"
#include "attn/core/arena.h"
#include "attn/core/tensor.h"
#include "attn/core/threads.h"
#include "attn/model/seq2seq.h"

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};

void* counted_malloc(std::size_t size) noexcept {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}
}  // namespace

// Every plain form (throwing, nothrow, array) is replaced, so each new meets its
// delete (malloc/free underneath; GCC cannot see that, hence the pragma), also
// under AddressSanitizer, which checks the pairs. The aligned forms stay the library's.
void* operator new(std::size_t size) {
  if (void* p = counted_malloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (void* p = counted_malloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return counted_malloc(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return counted_malloc(size); }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
#pragma GCC diagnostic pop

using namespace attn;
using namespace attn::model;

TEST_CASE("training: a step after the first allocates nothing on the heap, every arch", "[model][alloc]") {
  for (const ArchVariant& v : kArchVariants) {
    ModelConfig config = arch_config(v);
    config.dropout = 0.1f;
    config.attention_dropout = 0.1f;
    Seq2Seq model(config);
    Rng init(3);
    model.initialize(init);
    Arena arena;
    Rng rng(11);
    nn::StepContext ctx{model.params(), arena, rng, true};
    const Batch batch = make_batch({{5, 6, 7, 8}, {9, 4}, {10, 11, 12}}, {{4, 5, 6}, {7, 8, 9, 10}, {11}});
    for (int threads : {1, 2}) {
      set_threads(threads);
      std::uint64_t blocks_before = 0, blocks_after = 0;
      std::size_t capacity_before = 0;
      for (int step = 0; step < 3; ++step) {
        arena.reset();
        model.params().zero_grads();
        counting = step == 2;
        allocations = 0;
        blocks_before = float_allocations();
        capacity_before = arena.capacity_floats();
        model.forward_backward(ctx, batch, 0.1f, true, 1.0f);
        blocks_after = float_allocations();
        counting = false;
      }
      INFO(v.arch << " decoder " << v.decoder_mixer << ", " << threads << " threads");
      CHECK(allocations.load() == 0);
      CHECK(blocks_after == blocks_before);
      CHECK(arena.capacity_floats() == capacity_before);
    }
  }
  set_threads(0);
}
