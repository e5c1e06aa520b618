// Per-thread scratch buffers that outlive a call: grown when a call needs
// more, never shrunk, so a kernel called every step allocates only while
// sizes still grow ("nothing allocated in a hot loop"). OpenMP's threads are
// pooled, so each keeps its buffers between parallel regions. The contents
// are whatever the last user left: write before reading.
#pragma once
#include <cstddef>
#include <span>
#include <vector>

namespace attn {

// Slot k (0..3) of this thread's buffers of T, at least n elements.
template <class T>
std::span<T> thread_scratch(std::size_t n, int slot = 0) {
  static thread_local std::vector<T> buffers[4];
  std::vector<T>& buffer = buffers[slot];
  if (buffer.size() < n) buffer.resize(n);
  return {buffer.data(), n};
}

}  // namespace attn
