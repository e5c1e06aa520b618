// Tensor: fp32, up to 4 dims, row-major, 64-byte aligned; owning or a view.
//
// Copies are shallow (they share the storage, as in PyTorch); clone() copies
// the data. A view never owns: it points into a ParamStore, an Arena or
// another Tensor, and must not outlive it.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>

namespace attn {

inline constexpr std::size_t kAlignment = 64;  // one cache line, one zmm register

// Owning, 64-byte aligned float storage.
struct AlignedDeleter {
  std::size_t mapped_bytes = 0;  // a mapping of this size (large blocks), else malloc'd
  void operator()(float* p) const noexcept;
};
using AlignedFloats = std::unique_ptr<float[], AlignedDeleter>;
// n floats, zero-filled, 64-byte aligned; the size is rounded up to whole cache
// lines. Blocks of 4 MiB and more are fresh mappings: zero without being
// written, so the pages never touched never take memory. `populated` maps all
// their pages at once, for a block about to be written whole (a model's
// values): one call instead of a fault per 4 KiB page, which on these VMs
// costs more than clearing the page.
enum class Pages { on_touch, populated };
AlignedFloats allocate_floats(std::size_t n, Pages pages = Pages::on_touch);
// How many blocks allocate_floats has handed out in this process: the arena's
// blocks and the kernels' packing buffers come from it, not from operator new,
// so a test of "nothing allocated in a hot loop" counts these too.
std::uint64_t float_allocations();

class Shape {
 public:
  static constexpr int kMaxDims = 4;
  Shape() = default;
  Shape(std::initializer_list<std::int64_t> dims);
  int ndim() const { return ndim_; }
  std::int64_t operator[](int i) const { return dims_[i]; }
  std::int64_t numel() const;
  bool operator==(const Shape& other) const;
  std::string str() const;  // "[2, 3]"

 private:
  std::array<std::int64_t, kMaxDims> dims_{};
  int ndim_ = 0;
};

class Tensor {
 public:
  Tensor() = default;
  static Tensor zeros(Shape shape, Pages pages = Pages::on_touch);  // owning, zero-filled
  static Tensor view(float* data, Shape shape);                     // non-owning
  Tensor clone() const;                                             // owning deep copy

  float* data() { return data_; }
  const float* data() const { return data_; }
  const Shape& shape() const { return shape_; }
  int ndim() const { return shape_.ndim(); }
  std::int64_t dim(int i) const { return shape_[i]; }
  std::int64_t numel() const { return shape_.numel(); }
  bool owning() const { return storage_ != nullptr; }
  bool empty() const { return data_ == nullptr; }

  std::span<float> span() { return {data_, static_cast<std::size_t>(numel())}; }
  std::span<const float> span() const { return {data_, static_cast<std::size_t>(numel())}; }

  // Same data, another shape of the same numel.
  Tensor reshaped(Shape shape) const;
  // Row i of the outermost dimension, as a tensor of one dim fewer.
  Tensor operator[](std::int64_t i) const;

  float& at(std::int64_t i) { return data_[i]; }
  float& at(std::int64_t i, std::int64_t j) { return data_[i * shape_[1] + j]; }
  float& at(std::int64_t i, std::int64_t j, std::int64_t k) { return data_[(i * shape_[1] + j) * shape_[2] + k]; }
  float& at(std::int64_t i, std::int64_t j, std::int64_t k, std::int64_t l) {
    return data_[((i * shape_[1] + j) * shape_[2] + k) * shape_[3] + l];
  }

  void fill(float value);

 private:
  std::shared_ptr<float[]> storage_;  // null for views
  float* data_ = nullptr;
  Shape shape_;
};

}  // namespace attn
