// The public kernels, each a call through the active ISA's table
// (kernel_table.h); the GEMMs, which check their shapes first, are in gemm.cpp.
#include "kernel_table.h"

#include <iterator>

#include "attn/core/cpu.h"

namespace attn::kernels {

namespace {
// Each ISA's table, indexed by Isa.
constexpr const KernelTable* kTables[] = {&isa_scalar::kernel_table, &isa_avx2::kernel_table, &isa_avx512::kernel_table,
                                          &isa_avx512vnni::kernel_table, &isa_avx512bf16::kernel_table};
static_assert(std::size(kTables) == std::size(kAllIsas) && static_cast<int>(Isa::avx512bf16) == 4);
}  // namespace

const KernelTable& active_kernels() { return *kTables[static_cast<int>(active_isa())]; }

void activation_forward(Activation act, const float* x, float* y, std::int64_t n) {
  active_kernels().activation_forward(act, x, y, n);
}
void activation_backward(Activation act, const float* x, const float* dy, float* dx, std::int64_t n) {
  active_kernels().activation_backward(act, x, dy, dx, n);
}
void bias_activation_forward(Activation act, float* y, const float* bias, float* pre, std::int64_t rows,
                             std::int64_t cols) {
  active_kernels().bias_activation_forward(act, y, bias, pre, rows, cols);
}

void adam_update(float* param, const float* grad, float* m, float* v, std::int64_t n, const AdamHyper& hyper,
                 float grad_scale) {
  active_kernels().adam_update(param, grad, m, v, n, hyper, grad_scale);
}

void dropout_forward(const float* x, float* y, std::uint8_t* keep, std::int64_t n, float p, std::uint64_t seed,
                     std::uint64_t counter) {
  active_kernels().dropout_forward(x, y, keep, n, p, seed, counter);
}
void dropout_backward(const float* dy, const std::uint8_t* keep, float* dx, std::int64_t n, float p) {
  active_kernels().dropout_backward(dy, keep, dx, n, p);
}
void dropout_backward_write(const float* dy, const std::uint8_t* keep, float* dx, std::int64_t n, float p) {
  active_kernels().dropout_backward_write(dy, keep, dx, n, p);
}

void add(const float* a, const float* b, float* y, std::int64_t n) { active_kernels().add(a, b, y, n); }
void scale(float* x, float alpha, std::int64_t n) { active_kernels().scale(x, alpha, n); }
void axpy(float alpha, const float* x, float* y, std::int64_t n) { active_kernels().axpy(alpha, x, y, n); }
void add_row_vector(float* y, const float* v, std::int64_t rows, std::int64_t cols) {
  active_kernels().add_row_vector(y, v, rows, cols);
}
void sum_rows(const float* dy, float* dv, std::int64_t rows, std::int64_t cols) {
  active_kernels().sum_rows(dy, dv, rows, cols);
}
double sum(const float* x, std::int64_t n) { return active_kernels().sum(x, n); }
double sum_squares(const float* x, std::int64_t n) { return active_kernels().sum_squares(x, n); }
float max_value(const float* x, std::int64_t n) { return active_kernels().max_value(x, n); }
bool all_finite(const float* x, std::int64_t n) { return active_kernels().all_finite(x, n); }

void embedding_gather(const float* table, const std::int32_t* ids, float* out, std::int64_t tokens, std::int64_t d,
                      float scale) {
  active_kernels().embedding_gather(table, ids, out, tokens, d, scale);
}
void embedding_scatter_add(const float* dout, const std::int32_t* ids, float* dtable, std::int64_t tokens,
                           std::int64_t d, float scale) {
  active_kernels().embedding_scatter_add(dout, ids, dtable, tokens, d, scale);
}

void layernorm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* rstd,
                       std::int64_t rows, std::int64_t d, float eps) {
  active_kernels().layernorm_forward(x, gamma, beta, y, mean, rstd, rows, d, eps);
}
void layernorm_backward(const float* dy, const float* x, const float* gamma, const float* mean, const float* rstd,
                        float* dx, float* dgamma, float* dbeta, std::int64_t rows, std::int64_t d) {
  active_kernels().layernorm_backward(dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, d);
}

void strided_dots(const float* a, const float* rows, std::int64_t stride, std::int64_t count, std::int64_t n,
                  float scale, float* out) {
  active_kernels().strided_dots(a, rows, stride, count, n, scale, out);
}
void accumulate_rows(const float* coef, const float* rows, std::int64_t stride, std::int64_t count, std::int64_t n,
                     float* y) {
  active_kernels().accumulate_rows(coef, rows, stride, count, n, y);
}

void softmax_forward(const float* x, float* y, std::int64_t rows, std::int64_t cols, const std::int32_t* valid,
                     float scale) {
  active_kernels().softmax_forward(x, y, rows, cols, valid, scale);
}
void softmax_backward(const float* y, const float* dy, float* dx, std::int64_t rows, std::int64_t cols,
                      const std::int32_t* valid, float scale) {
  active_kernels().softmax_backward(y, dy, dx, rows, cols, valid, scale);
}
void log_softmax_forward(const float* x, float* y, std::int64_t rows, std::int64_t cols) {
  active_kernels().log_softmax_forward(x, y, rows, cols);
}
void log_softmax_backward(const float* y, const float* dy, float* dx, std::int64_t rows, std::int64_t cols) {
  active_kernels().log_softmax_backward(y, dy, dx, rows, cols);
}

void gemm_int8(std::int64_t m, const float* x, std::int64_t ldx, const QuantizedWeight& w, float beta, float* y,
               std::int64_t ldy) {
  active_kernels().gemm_int8(m, x, ldx, w, beta, y, ldy);
}

}  // namespace attn::kernels
