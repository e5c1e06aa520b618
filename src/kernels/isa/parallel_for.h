// The one way the per-ISA kernels use threads: a static split of an index
// range over the OpenMP team, only when the work pays for waking threads.
//
// Layers often call kernels from inside their own parallel loops (attention
// per (batch, head), the loss per row); there a kernel runs serially on the
// calling thread, without even entering an inner parallel region.
#pragma once
#include <omp.h>

#include <cstdint>

#include "isa.h"

namespace attn::kernels::ATTN_ISA_NAMESPACE {

// Elements a kernel should touch before threads help (a fork/join costs a
// few microseconds; this is ~10 µs of streaming work).
inline constexpr std::int64_t kParallelMinWork = 1 << 14;

// body(i) for i in [0, count). work: about how many elements the whole range
// touches. Each i runs on exactly one thread; which one never changes the
// result, as long as body(i) writes only what belongs to i.
template <typename Body>
inline void parallel_for(std::int64_t count, std::int64_t work, Body body) {
  // Loops run on a local copy of body, private to the thread: its captured
  // pointers can then live in registers. Read through a closure that others
  // can see (the shared one, or a by-value parameter, which the ABI passes by
  // address), any store in the loop, above all a byte store, might change
  // them, and GCC would neither hoist nor vectorise.
  if (count < 2 || work < kParallelMinWork || omp_in_parallel() || omp_get_max_threads() < 2) {
    Body local = body;
    for (std::int64_t i = 0; i < count; ++i) local(i);
    return;
  }
#pragma omp parallel
  {
    Body local = body;
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < count; ++i) local(i);
  }
}

// body(begin, end) over contiguous chunks of [0, n) of chunk elements each
// (the last may be shorter); parallel as parallel_for, with work = n.
template <typename Body>
inline void parallel_chunks(std::int64_t n, std::int64_t chunk, Body body) {
  const std::int64_t chunks = (n + chunk - 1) / chunk;
  parallel_for(chunks, n, [=](std::int64_t c) {
    const std::int64_t begin = c * chunk;
    body(begin, begin + chunk < n ? begin + chunk : n);
  });
}

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
