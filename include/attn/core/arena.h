// Arena: a bump allocator for one training or decoding step's activations.
//
// Forward carves out what backward needs; reset() at the start of each step
// frees everything at once. When a step needs more than the blocks hold, a
// new block (at least twice the last) is chained. Blocks are kept until the
// arena dies: reset() and release() only rewind, so after the first step of
// the largest shape nothing is allocated and no page is faulted in again.
#pragma once
#include <cstddef>
#include <vector>

#include "attn/core/tensor.h"

namespace attn {

class Arena {
 public:
  explicit Arena(std::size_t initial_floats = 0);
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  Arena(Arena&&) = default;
  Arena& operator=(Arena&&) = default;

  // n floats, 64-byte aligned, NOT zeroed (use alloc_zeroed when it matters).
  float* alloc(std::size_t n);
  float* alloc_zeroed(std::size_t n);
  Tensor tensor(Shape shape) { return Tensor::view(alloc(shape.numel()), shape); }
  Tensor zeros(Shape shape) { return Tensor::view(alloc_zeroed(shape.numel()), shape); }

  // Stack discipline inside a step: everything allocated after mark() is
  // freed by release(mark), e.g. one layer's backward temporaries.
  struct Mark {
    std::size_t block = 0, used_in_block = 0, used_total = 0;
  };
  Mark mark() const;
  void release(const Mark& mark);

  void reset();
  std::size_t used_floats() const { return used_total_; }
  std::size_t high_water_floats() const { return high_water_; }
  std::size_t capacity_floats() const;

 private:
  struct Block {
    AlignedFloats data;
    std::size_t size = 0;
    std::size_t used = 0;
  };
  std::vector<Block> blocks_;
  std::size_t current_ = 0;  // the block alloc() carves from; those after it are empty
  std::size_t used_total_ = 0;
  std::size_t high_water_ = 0;
};

}  // namespace attn
