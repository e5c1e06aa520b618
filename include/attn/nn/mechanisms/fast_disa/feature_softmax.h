// Fast-DiSA's feature-wise softmax over keys for one head, in its factorised
// form O = (A (v ⊙ E)) ⊘ (A E) (docs/mechanisms-spec.md §3.1, §4.4), and its backward:
// the core of FastDisaMixer (fast_disa.h, which also describes the attention
// dropout on the two factors). Single-threaded: the mixer calls them inside
// its (sequence, head) loops.
#pragma once
#include <cstdint>
#include <vector>

#include "attn/kernels/products.h"

namespace attn::nn {

// Attention dropout on one head's factors (fast_disa.h): Ã [lq, lk] (row stride
// lda) and Ẽ [lk, dh] (lde), already dropped, with their masks r_A (ldka) and
// r_E (ldke) and the factor scale 1/√(1 − p) of a kept weight.
struct FactorDropout {
  const float* a = nullptr;
  std::int64_t lda = 0;
  const float* e = nullptr;
  std::int64_t lde = 0;
  const std::uint8_t* keep_a = nullptr;
  std::int64_t ldka = 0;
  const std::uint8_t* keep_e = nullptr;
  std::int64_t ldke = 0;
  float scale = 1.0f;
};

// One head's feature-wise softmax in the factorised form, queries i < lq and
// keys j < lk. a: [lq, lk] (row stride lda), the non-negative token2token
// weights with 0 at disallowed keys; e: [lk, dh] (lde), exp of the shifted
// source2token term, 0 at padded keys; v: [lk, dh] (ldv).
// Writes o: [lq, dh] (ldo), O = (A (v ⊙ E)) ⊘ (A E), and inv_d: [lq, dh]
// (ldi), 1/D — both 0 where D = A E is below 2^-64: where a row or feature has
// no key, or where the shifted E underflowed at the keys it has (the mixer then
// computes the pair directly). scratch: grown as needed, reused across calls.
// drop (attention dropout): O = (Ã (v ⊙ Ẽ)) ⊘ (A E).
void fast_disa_attend(std::int64_t lq, std::int64_t lk, std::int64_t dh, const float* a, std::int64_t lda,
                      const float* e, std::int64_t lde, const float* v, std::int64_t ldv, float* o, std::int64_t ldo,
                      float* inv_d, std::int64_t ldi, std::vector<float>& scratch, const FactorDropout* drop,
                      kernels::ComputeType type);

// Its backward (§4.4) given dout: [lq, dh] (lddo) and the forward's o, inv_d.
// Accumulates da: [lq, lk] (ldda), de: [lk, dh] (ldde), dv: [lk, dh] (lddv).
void fast_disa_attend_backward(std::int64_t lq, std::int64_t lk, std::int64_t dh, const float* a, std::int64_t lda,
                               const float* e, std::int64_t lde, const float* v, std::int64_t ldv, const float* o,
                               std::int64_t ldo, const float* inv_d, std::int64_t ldi, const float* dout,
                               std::int64_t lddo, float* da, std::int64_t ldda, float* de, std::int64_t ldde, float* dv,
                               std::int64_t lddv, std::vector<float>& scratch, const FactorDropout* drop,
                               kernels::ComputeType type);

}  // namespace attn::nn
