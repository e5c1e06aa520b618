// The kernel lists: each kernel family's header (gemm.h, softmax.h…) writes
// every kernel once, as X(return type, name, (parameters), (arguments)) in a
// macro ATTN_<FAMILY>_KERNELS(X), with its contract in a comment. The list
// declares the public functions here, the per-ISA builds and the run-time
// dispatch in src/kernels/dispatch.h; the per-ISA source defines each (the
// second and last time its signature is written).
#pragma once

#define ATTN_DECLARE_KERNEL(ret, name, params, args) ret name params;
