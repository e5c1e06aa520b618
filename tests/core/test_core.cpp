#include <cstring>
#include <vector>

#include "../support.h"
#include "attn/core/arena.h"
#include "attn/core/cpu.h"
#include "attn/core/error.h"
#include "attn/core/rng.h"
#include "attn/core/tensor.h"
#include "attn/core/threads.h"

using namespace attn;

TEST_CASE("tensor: owning storage is 64-byte aligned and zeroed; views share", "[core]") {
  for (std::int64_t n : {1, 7, 17, 63, 64, 65, 129}) {
    Tensor t = Tensor::zeros({n, 3});
    REQUIRE(reinterpret_cast<std::uintptr_t>(t.data()) % 64 == 0);
    REQUIRE(t.numel() == n * 3);
    for (float x : t.span()) REQUIRE(x == 0.0f);
  }
  Tensor t = Tensor::zeros({2, 3, 4});
  t.at(1, 2, 3) = 5.0f;
  REQUIRE(t.data()[23] == 5.0f);
  Tensor row = t[1];
  REQUIRE(row.shape() == Shape({3, 4}));
  REQUIRE(row.at(2, 3) == 5.0f);
  Tensor flat = t.reshaped({24});
  REQUIRE(flat.at(23) == 5.0f);
  REQUIRE_THROWS(t.reshaped({5, 5}));
  Tensor copy = t.clone();
  copy.at(0) = 1.0f;
  REQUIRE(t.at(0) == 0.0f);
  REQUIRE(Shape({4, 4, 4, 4}).numel() == 256);
  REQUIRE_THROWS(Shape({1, 1, 1, 1, 1}));
}

TEST_CASE("arena: aligned bump allocation, blocks kept across resets", "[core]") {
  Arena arena(100);
  float* a = arena.alloc(7);
  float* b = arena.alloc(1);
  REQUIRE(reinterpret_cast<std::uintptr_t>(a) % 64 == 0);
  REQUIRE(reinterpret_cast<std::uintptr_t>(b) % 64 == 0);
  REQUIRE(b != a);
  float* big = arena.alloc_zeroed(1000);  // does not fit: chains a block
  REQUIRE(big[999] == 0.0f);
  const std::size_t high = arena.high_water_floats();
  REQUIRE(high >= 1008);
  arena.reset();
  REQUIRE(arena.used_floats() == 0);
  REQUIRE(arena.capacity_floats() >= high);
  const std::size_t capacity = arena.capacity_floats();
  arena.alloc(7);
  arena.alloc(1);
  arena.alloc(1000);  // the same step again allocates nothing new
  REQUIRE(arena.capacity_floats() == capacity);
}

TEST_CASE("rng: Philox known-answer, reproducible, state saved and restored mid-block", "[core]") {
  // Philox4x32-10 known-answer test (Random123 kat_vectors: key 0, counter 0).
  auto zero = philox4x32(0, 0);
  REQUIRE(zero[0] == 0x6627e8d5u);
  REQUIRE(zero[1] == 0xe169c58du);
  REQUIRE(zero[2] == 0xbc57ac4cu);
  REQUIRE(zero[3] == 0x9b00dbd8u);

  Rng a(42), b(42), c(43);
  for (int i = 0; i < 10; ++i) REQUIRE(a.next_u32() == b.next_u32());
  REQUIRE(a.next_u32() != c.next_u32());

  Rng r(7);
  r.next_u32();  // mid-block
  const RngState saved = r.state();
  std::vector<std::uint32_t> expected;
  for (int i = 0; i < 9; ++i) expected.push_back(r.next_u32());
  Rng restored(0);
  restored.set_state(saved);
  for (int i = 0; i < 9; ++i) REQUIRE(restored.next_u32() == expected[i]);

  double mean = 0;
  for (int i = 0; i < 10000; ++i) {
    float u = r.uniform();
    REQUIRE(u >= 0.0f);
    REQUIRE(u < 1.0f);
    mean += u;
  }
  REQUIRE(mean / 10000 == Approx(0.5).margin(0.02));
}

TEST_CASE("cpu: ISA names parse, unsupported ISAs are refused with a message", "[core]") {
  REQUIRE(parse_isa("avx2") == Isa::avx2);
  REQUIRE_THROWS_AS(parse_isa("sse9"), Error);
  REQUIRE(isa_supported(Isa::scalar));
  REQUIRE(isa_supported(best_isa()));
  for (Isa isa : kAllIsas) REQUIRE(parse_isa(isa_name(isa)) == isa);
  // Each level includes the ones below it (avx512bf16 ⊃ avx512vnni ⊃ avx512 ⊃ avx2), and the best is the highest.
  for (std::size_t i = 1; i < std::size(kAllIsas); ++i)
    if (isa_supported(kAllIsas[i])) REQUIRE(isa_supported(kAllIsas[i - 1]));
  for (Isa isa : kAllIsas)
    if (isa_supported(isa)) REQUIRE(static_cast<int>(isa) <= static_cast<int>(best_isa()));
  const Isa saved = active_isa();
  for (Isa isa : kAllIsas) {
    if (isa_supported(isa)) {
      set_active_isa(isa);
      REQUIRE(active_isa() == isa);
    } else {
      REQUIRE_THROWS_AS(set_active_isa(isa), Error);
    }
  }
  set_active_isa(saved);
}

TEST_CASE("arena: release frees what came after the mark, across chained blocks", "[core]") {
  Arena arena(64);
  float* kept = arena.alloc(16);
  kept[0] = 7.0f;
  const Arena::Mark mark = arena.mark();
  const std::size_t used = arena.used_floats();
  arena.alloc(32);
  arena.alloc(4096);  // chains a new block
  arena.release(mark);
  REQUIRE(arena.used_floats() == used);
  REQUIRE(kept[0] == 7.0f);
  float* again = arena.alloc(16);
  REQUIRE(again == kept + 16);  // the space after the mark is reused
  REQUIRE(arena.high_water_floats() >= used + 32 + 4096);
  arena.reset();
  REQUIRE(arena.capacity_floats() >= arena.high_water_floats());
}

TEST_CASE("threads: decoders share the threads, the first ones one more, each at least one", "[core]") {
  const auto split = [](int threads, int decoders) {
    std::vector<int> each;
    for (int i = 0; i < decoders; ++i) each.push_back(threads_of_decoder(threads, decoders, i));
    return each;
  };
  CHECK(split(2, 1) == std::vector<int>{2});
  CHECK(split(2, 2) == std::vector<int>{1, 1});
  CHECK(split(3, 2) == std::vector<int>{2, 1});
  CHECK(split(7, 3) == std::vector<int>{3, 2, 2});
  CHECK(split(2, 4) == std::vector<int>{1, 1, 1, 1});
}
