// Every kernel of one ISA build in one table of function pointers (after
// CTranslate2's cpu_isa.h). Each per-ISA source in src/kernels/isa/ is
// compiled once per ISA into that ISA's namespace (isa_scalar, isa_avx2,
// isa_avx512; the low-precision products in isa/lowp/ also into
// isa_avx512vnni and isa_avx512bf16), and isa/table.cpp, compiled for all five,
// fills that ISA's table. The public kernels (kernels.cpp, gemm.cpp) call
// through the table of the active ISA.
//
// FP32 kernels run their avx512 build under avx512vnni and avx512bf16. A
// low-precision build without an instruction emulates its arithmetic exactly
// (bf16 below avx512bf16, int8 below avx512vnni).
#pragma once
#include <cstdint>

#include "attn/kernels/activation.h"
#include "attn/kernels/adam.h"
#include "attn/kernels/dropout.h"
#include "attn/kernels/elementwise.h"
#include "attn/kernels/embedding.h"
#include "attn/kernels/gemm.h"
#include "attn/kernels/gemm_bf16.h"
#include "attn/kernels/gemm_int8.h"
#include "attn/kernels/layernorm.h"
#include "attn/kernels/rows.h"
#include "attn/kernels/softmax.h"
#include "product.h"

namespace attn::kernels {

// The kernels with a public signature are the public function's; the
// products take a Product whose shape gemm.cpp has checked.
struct KernelTable {
  decltype(&kernels::activation_forward) activation_forward;
  decltype(&kernels::activation_backward) activation_backward;
  decltype(&kernels::bias_activation_forward) bias_activation_forward;

  decltype(&kernels::adam_update) adam_update;

  decltype(&kernels::dropout_forward) dropout_forward;
  decltype(&kernels::dropout_backward) dropout_backward;
  decltype(&kernels::dropout_backward_write) dropout_backward_write;

  decltype(&kernels::add) add;
  decltype(&kernels::scale) scale;
  decltype(&kernels::axpy) axpy;
  decltype(&kernels::add_row_vector) add_row_vector;
  decltype(&kernels::sum_rows) sum_rows;
  decltype(&kernels::sum) sum;
  decltype(&kernels::sum_squares) sum_squares;
  decltype(&kernels::max_value) max_value;
  decltype(&kernels::all_finite) all_finite;

  decltype(&kernels::embedding_gather) embedding_gather;
  decltype(&kernels::embedding_scatter_add) embedding_scatter_add;

  decltype(&kernels::layernorm_forward) layernorm_forward;
  decltype(&kernels::layernorm_backward) layernorm_backward;

  decltype(&kernels::strided_dots) strided_dots;
  decltype(&kernels::accumulate_rows) accumulate_rows;

  decltype(&kernels::softmax_forward) softmax_forward;
  decltype(&kernels::softmax_backward) softmax_backward;
  decltype(&kernels::log_softmax_forward) log_softmax_forward;
  decltype(&kernels::log_softmax_backward) log_softmax_backward;

  // sgemm_fp32's product; allow_threads is false for the items of a batch
  // that runs its threads over the items. op(B) is read from packed_b
  // (packed by this ISA) when it is not null, and b, b_col and b_step are
  // then unused.
  void (*fp32_product)(const Product& product, const Fp32PackedB* packed_b, bool allow_threads);
  std::int64_t fp32_panel_cols;  // the width of the B panels this ISA's FP32 tiles read
  void (*pack_fp32_b_into)(const float* b, std::int64_t col_stride, std::int64_t step_stride, std::int64_t n,
                           std::int64_t k, Fp32PackedB& packed);
  // gemm_bf16's product; op(B) is read from packed_b (packed by this ISA)
  // when it is not null, and b, b_col and b_step are then unused.
  void (*bf16_product)(const Product& product, const Bf16PackedB* packed_b, bool allow_threads);
  std::int64_t bf16_panel_cols;  // the width of the B panels this ISA's bf16 tiles read
  decltype(&kernels::pack_bf16_b_into) pack_bf16_b_into;
  decltype(&kernels::gemm_int8) gemm_int8;
};

// The table of the ISA the kernels use now: active_isa(), decided once (the
// ATTN_ISA environment variable and set_active_isa override the CPU's best).
const KernelTable& active_kernels();

// Each ISA's table (isa/table.cpp).
namespace isa_scalar {
extern const KernelTable kernel_table;
}
namespace isa_avx2 {
extern const KernelTable kernel_table;
}
namespace isa_avx512 {
extern const KernelTable kernel_table;
}
namespace isa_avx512vnni {
extern const KernelTable kernel_table;
}
namespace isa_avx512bf16 {
extern const KernelTable kernel_table;
}

}  // namespace attn::kernels
