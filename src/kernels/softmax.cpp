#include "attn/kernels/softmax.h"

#include "dispatch.h"

namespace attn::kernels {
namespace isa_scalar {
#include "isa/softmax.inc"
}
namespace isa_avx2 {
#include "isa/softmax.inc"
}
namespace isa_avx512 {
#include "isa/softmax.inc"
}

void softmax_forward(const float* x, float* y, std::int64_t rows, std::int64_t cols, const std::int32_t* valid,
                     float scale) {
  ATTN_DISPATCH(softmax_forward, x, y, rows, cols, valid, scale)
}
void softmax_backward(const float* y, const float* dy, float* dx, std::int64_t rows, std::int64_t cols,
                      const std::int32_t* valid, float scale) {
  ATTN_DISPATCH(softmax_backward, y, dy, dx, rows, cols, valid, scale)
}
void log_softmax_forward(const float* x, float* y, std::int64_t rows, std::int64_t cols) {
  ATTN_DISPATCH(log_softmax_forward, x, y, rows, cols)
}
void log_softmax_backward(const float* y, const float* dy, float* dx, std::int64_t rows, std::int64_t cols) {
  ATTN_DISPATCH(log_softmax_backward, y, dy, dx, rows, cols)
}

}  // namespace attn::kernels
