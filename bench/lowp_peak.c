// Peak of the low-precision dot-product instructions against FP32 FMA, one thread, same chains.
// Build and run: make lowp-peak (needs AVX512_BF16 and AVX512_VNNI; elsewhere it says so and stops).
// Counts: FMA zmm = 32 FLOP; VDPBF16PS zmm = 64 FLOP (32 bf16 pairs); VPDPBUSD zmm = 128 int8 ops (64 u8*s8 products +
// adds).
#include <immintrin.h>
#include <stdio.h>
#include <time.h>
static double now() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
#define NACC 12
__attribute__((noinline)) float fma_run(long n) {
  __m512 a[NACC];
  __m512 x = _mm512_set1_ps(1.0000001f), y = _mm512_set1_ps(-1e-7f);
  for (int i = 0; i < NACC; i++) a[i] = _mm512_set1_ps((float)i);
  for (long it = 0; it < n; it++) {
#pragma GCC unroll 12
    for (int i = 0; i < NACC; i++) a[i] = _mm512_fmadd_ps(a[i], x, y);
  }
  __m512 s = a[0];
  for (int i = 1; i < NACC; i++) s = _mm512_add_ps(s, a[i]);
  return _mm512_reduce_add_ps(s);
}
__attribute__((noinline)) float bf16_run(long n) {
  __m512 a[NACC];
  __m512bh x = (__m512bh)_mm512_set1_epi16(0x3f80), y = (__m512bh)_mm512_set1_epi16(0x3380);
  for (int i = 0; i < NACC; i++) a[i] = _mm512_set1_ps((float)i);
  for (long it = 0; it < n; it++) {
#pragma GCC unroll 12
    for (int i = 0; i < NACC; i++) a[i] = _mm512_dpbf16_ps(a[i], x, y);
  }
  __m512 s = a[0];
  for (int i = 1; i < NACC; i++) s = _mm512_add_ps(s, a[i]);
  return _mm512_reduce_add_ps(s);
}
__attribute__((noinline)) int vnni_run(long n) {
  __m512i a[NACC];
  __m512i x = _mm512_set1_epi8(1), y = _mm512_set1_epi8(1);
  for (int i = 0; i < NACC; i++) a[i] = _mm512_set1_epi32(i);
  for (long it = 0; it < n; it++) {
#pragma GCC unroll 12
    for (int i = 0; i < NACC; i++) a[i] = _mm512_dpbusd_epi32(a[i], x, y);
  }
  __m512i s = a[0];
  for (int i = 1; i < NACC; i++) s = _mm512_add_epi32(s, a[i]);
  return _mm512_reduce_add_epi32(s);
}
int main() {
  long n = 100000000L;
  for (int rep = 0; rep < 3; rep++) {
    double t0 = now();
    volatile float f = fma_run(n);
    double t1 = now();
    volatile float b = bf16_run(n);
    double t2 = now();
    volatile int v = vnni_run(n);
    double t3 = now();
    double gf = 32.0 * NACC * n / (t1 - t0) / 1e9, gb = 64.0 * NACC * n / (t2 - t1) / 1e9,
           gv = 128.0 * NACC * n / (t3 - t2) / 1e9;
    printf("rep %d: fp32 FMA %.0f GFLOP/s | bf16 dot %.0f GFLOP/s (%.2fx) | int8 VNNI %.0f GOP/s (%.2fx)\n", rep, gf,
           gb, gb / gf, gv, gv / gf);
    (void)f;
    (void)b;
    (void)v;
  }
  return 0;
}
