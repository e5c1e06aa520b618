// The kernels one ISA build defines, declared in its namespace with the
// signatures of their places in the table (../kernel_table.h): the per-ISA
// sources here define them, table.cpp puts them in the ISA's table. The FP32
// kernels are built for levels 0–2 only; at 3 and 4 (avx512vnni,
// avx512bf16) their namespace is avx512's.
#pragma once
#include "../kernel_table.h"
#include "isa.h"

namespace attn::kernels::ATTN_FP32_NAMESPACE {

decltype(kernels::activation_forward) activation_forward;
decltype(kernels::activation_backward) activation_backward;
decltype(kernels::bias_activation_forward) bias_activation_forward;

decltype(kernels::adam_update) adam_update;

decltype(kernels::dropout_forward) dropout_forward;
decltype(kernels::dropout_backward) dropout_backward;
decltype(kernels::dropout_backward_write) dropout_backward_write;

decltype(kernels::add) add;
decltype(kernels::scale) scale;
decltype(kernels::axpy) axpy;
decltype(kernels::add_row_vector) add_row_vector;
decltype(kernels::sum_rows) sum_rows;
decltype(kernels::sum) sum;
decltype(kernels::sum_squares) sum_squares;
decltype(kernels::max_value) max_value;
decltype(kernels::all_finite) all_finite;

decltype(kernels::embedding_gather) embedding_gather;
decltype(kernels::embedding_scatter_add) embedding_scatter_add;

decltype(kernels::layernorm_forward) layernorm_forward;
decltype(kernels::layernorm_backward) layernorm_backward;

decltype(kernels::strided_dots) strided_dots;
decltype(kernels::accumulate_rows) accumulate_rows;

decltype(kernels::softmax_forward) softmax_forward;
decltype(kernels::softmax_backward) softmax_backward;
decltype(kernels::log_softmax_forward) log_softmax_forward;
decltype(kernels::log_softmax_backward) log_softmax_backward;

void fp32_product(const Product& product, const Fp32PackedB* packed_b, bool allow_threads);
// The width of the B panels the FP32 tiles read (gemm_tile.h's kTileCols,
// which gemm.cpp checks against it): here for the table of every level.
inline constexpr std::int64_t kFp32PanelCols = ATTN_AVX512 ? 32 : ATTN_ISA_LEVEL == 1 ? 16 : 8;
void pack_fp32_b_into(const float* b, std::int64_t col_stride, std::int64_t step_stride, std::int64_t n, std::int64_t k,
                      Fp32PackedB& packed);

}  // namespace attn::kernels::ATTN_FP32_NAMESPACE

namespace attn::kernels::ATTN_ISA_NAMESPACE {

void bf16_product(const Product& product, const Bf16PackedB* packed_b, bool allow_threads);
decltype(kernels::pack_bf16_b_into) pack_bf16_b_into;
decltype(kernels::gemm_int8) gemm_int8;

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
