// This ISA's table of kernels (../kernel_table.h). Compiled for every level,
// 0–4: the FP32 kernels come from their own build (avx512's at levels 3 and
// 4), the low-precision ones from this level's.
#include "isa.h"

#include "kernels.h"
#include "lowp/bf16_tile.h"

namespace attn::kernels::ATTN_ISA_NAMESPACE {

namespace fp32 = ATTN_FP32_NAMESPACE;

const KernelTable kernel_table = {
    .activation_forward = fp32::activation_forward,
    .activation_backward = fp32::activation_backward,
    .bias_activation_forward = fp32::bias_activation_forward,

    .adam_update = fp32::adam_update,

    .dropout_forward = fp32::dropout_forward,
    .dropout_backward = fp32::dropout_backward,
    .dropout_backward_write = fp32::dropout_backward_write,

    .add = fp32::add,
    .scale = fp32::scale,
    .axpy = fp32::axpy,
    .add_row_vector = fp32::add_row_vector,
    .sum_rows = fp32::sum_rows,
    .sum = fp32::sum,
    .sum_squares = fp32::sum_squares,
    .max_value = fp32::max_value,
    .all_finite = fp32::all_finite,

    .embedding_gather = fp32::embedding_gather,
    .embedding_scatter_add = fp32::embedding_scatter_add,

    .layernorm_forward = fp32::layernorm_forward,
    .layernorm_backward = fp32::layernorm_backward,

    .strided_dots = fp32::strided_dots,
    .accumulate_rows = fp32::accumulate_rows,

    .softmax_forward = fp32::softmax_forward,
    .softmax_backward = fp32::softmax_backward,
    .log_softmax_forward = fp32::log_softmax_forward,
    .log_softmax_backward = fp32::log_softmax_backward,

    .fp32_product = fp32::fp32_product,
    .fp32_panel_cols = fp32::kFp32PanelCols,
    .pack_fp32_b_into = fp32::pack_fp32_b_into,
    .bf16_product = bf16_product,
    .bf16_panel_cols = kBf16TileCols,
    .pack_bf16_b_into = pack_bf16_b_into,
    .gemm_int8 = gemm_int8,
};

}  // namespace attn::kernels::ATTN_ISA_NAMESPACE
