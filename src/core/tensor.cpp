#include "attn/core/tensor.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include <sys/mman.h>

#include "attn/core/error.h"

namespace attn {

void AlignedDeleter::operator()(float* p) const noexcept {
  if (mapped_bytes > 0)
    munmap(p, mapped_bytes);
  else
    std::free(p);
}

namespace {
// Large blocks are mapped, not malloc'd: the kernel hands out zero pages on
// first touch, so no memset writes (and makes resident) the headroom an arena
// never uses. They are not advised onto 2 MiB pages (MADV_HUGEPAGE): arenas
// are reused from step to step, so huge pages only change the first touch,
// and on these VMs a fresh huge page costs milliseconds (the host backs it
// anew): training's first update took 4.2 s instead of 1.1 s, 200 sentences
// of beam search 2.1–3.8 s instead of 2.0 s, steady-state steps the same
// (Intel Xeon host, 2026-12-03, docs/results/kernels.md "Large blocks and fresh pages").
constexpr std::size_t kMapFrom = std::size_t{4} << 20;
}  // namespace

namespace {
std::atomic<std::uint64_t> float_allocation_count{0};
}  // namespace

std::uint64_t float_allocations() { return float_allocation_count.load(std::memory_order_relaxed); }

AlignedFloats allocate_floats(std::size_t n, Pages pages) {
  float_allocation_count.fetch_add(1, std::memory_order_relaxed);
  std::size_t bytes = std::max<std::size_t>(kAlignment, (n * sizeof(float) + kAlignment - 1) / kAlignment * kAlignment);
  if (bytes >= kMapFrom) {
    const int populate = pages == Pages::populated ? MAP_POPULATE : 0;
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | populate, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return AlignedFloats(static_cast<float*>(p), AlignedDeleter{bytes});
  }
  void* p = std::aligned_alloc(kAlignment, bytes);
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, bytes);
  return AlignedFloats(static_cast<float*>(p));
}

Shape::Shape(std::initializer_list<std::int64_t> dims) {
  if (dims.size() > kMaxDims) throw std::invalid_argument("Shape: more than 4 dims");
  for (std::int64_t d : dims) {
    if (d < 0) throw std::invalid_argument("Shape: negative dim");
    dims_[ndim_++] = d;
  }
}

std::int64_t Shape::numel() const {
  std::int64_t n = 1;
  for (int i = 0; i < ndim_; ++i) n *= dims_[i];
  return ndim_ == 0 ? 0 : n;
}

bool Shape::operator==(const Shape& other) const {
  if (ndim_ != other.ndim_) return false;
  for (int i = 0; i < ndim_; ++i)
    if (dims_[i] != other.dims_[i]) return false;
  return true;
}

std::string Shape::str() const {
  std::string s = "[";
  for (int i = 0; i < ndim_; ++i) s += (i ? ", " : "") + std::to_string(dims_[i]);
  return s + "]";
}

Tensor Tensor::zeros(Shape shape, Pages pages) {
  Tensor t;
  AlignedFloats owned = allocate_floats(static_cast<std::size_t>(shape.numel()), pages);
  t.data_ = owned.get();
  t.storage_ = std::move(owned);  // keeps the deleter: a mapping is unmapped, not freed
  t.shape_ = shape;
  return t;
}

Tensor Tensor::view(float* data, Shape shape) {
  Tensor t;
  t.data_ = data;
  t.shape_ = shape;
  return t;
}

Tensor Tensor::clone() const {
  Tensor t = zeros(shape_);
  if (numel() > 0) std::memcpy(t.data_, data_, static_cast<std::size_t>(numel()) * sizeof(float));
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  if (shape.numel() != numel()) throw std::invalid_argument("reshape " + shape_.str() + " -> " + shape.str());
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

Tensor Tensor::operator[](std::int64_t i) const {
  if (ndim() < 2 || i < 0 || i >= shape_[0]) throw std::out_of_range("Tensor row index");
  std::int64_t row = 1;
  for (int d = 1; d < ndim(); ++d) row *= shape_[d];
  Shape inner;
  switch (ndim()) {
    case 2: inner = Shape{shape_[1]}; break;
    case 3: inner = Shape{shape_[1], shape_[2]}; break;
    default: inner = Shape{shape_[1], shape_[2], shape_[3]}; break;
  }
  Tensor t = *this;  // shares the storage, so the row keeps it alive
  t.data_ = data_ + i * row;
  t.shape_ = inner;
  return t;
}

void Tensor::fill(float value) { std::fill(data_, data_ + numel(), value); }

}  // namespace attn
