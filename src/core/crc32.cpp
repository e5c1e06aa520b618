#include "attn/core/crc32.h"

#include <immintrin.h>

#include <array>
#include <bit>
#include <cstring>

#include "attn/core/cpu.h"

namespace attn {
namespace {

static_assert(std::endian::native == std::endian::little, "both paths read bytes as little-endian words");

constexpr std::uint32_t kPolynomial = 0x04C11DB7u;           // x^32 + this, normal bit order
constexpr std::uint32_t kReflectedPolynomial = 0xEDB88320u;  // the same, bit-reversed

// ---- portable path: slicing-by-8. table[k][b] is the CRC contribution of
// byte b followed by k zero bytes, so eight bytes are folded per step with
// eight independent lookups instead of eight dependent ones.
using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables t{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t c = b;
    for (int bit = 0; bit < 8; ++bit) c = (c >> 1) ^ ((c & 1u) ? kReflectedPolynomial : 0u);
    t[0][b] = c;
  }
  for (int k = 1; k < 8; ++k)
    for (std::uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFFu];
  return t;
}

constexpr Tables kTables = make_tables();

// Advances a raw (not complemented) CRC register over n bytes.
std::uint32_t update_portable(std::uint32_t c, const unsigned char* p, std::size_t n) {
  for (; n >= 8; n -= 8, p += 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    word ^= c;
    c = kTables[7][word & 0xFF] ^ kTables[6][(word >> 8) & 0xFF] ^ kTables[5][(word >> 16) & 0xFF] ^
        kTables[4][(word >> 24) & 0xFF] ^ kTables[3][(word >> 32) & 0xFF] ^ kTables[2][(word >> 40) & 0xFF] ^
        kTables[1][(word >> 48) & 0xFF] ^ kTables[0][word >> 56];
  }
  for (; n > 0; --n, ++p) c = (c >> 8) ^ kTables[0][(c ^ *p) & 0xFFu];
  return c;
}

// ---- PCLMULQDQ path: folding (Gopal et al., "Fast CRC computation for
// generic polynomials using PCLMULQDQ", Intel 2009), derived as follows.
//
// A 16-byte block loaded little-endian into a 128-bit register r is, in the
// reflected convention, the polynomial sum r_i x^(127-i): the low qword H
// holds the high-degree half, the high qword L the low-degree half, each a
// 64-bit reflected polynomial (bit j = coefficient of x^(63-j)). A carry-less
// product of two such qwords, read as a 128-bit reflected register, is A·B·x.
// Moving a block D bits further down the message multiplies it by x^D:
//   (H·x^64 + L)·x^D  ≡  H·(x^(63+D) mod P)·x + L·(x^(D-1) mod P)·x   (mod P)
// so two carry-less products by constants fold 128 bits into the block D
// bits later. The folded register is congruent, not reduced; the last 16
// bytes and the tail go through the portable path, which reduces.

// x^n mod P as a 64-bit reflected constant (bit 63-m = coefficient of x^m).
constexpr std::uint64_t x_pow_mod_p(int n) {
  std::uint32_t r = 1;  // normal order: bit m = coefficient of x^m
  for (int i = 0; i < n; ++i) r = (r << 1) ^ ((r >> 31) ? kPolynomial : 0u);
  std::uint64_t reflected = 0;
  for (int m = 0; m < 32; ++m)
    if ((r >> m) & 1u) reflected |= std::uint64_t{1} << (63 - m);
  return reflected;
}

constexpr std::uint64_t kFold512High = x_pow_mod_p(63 + 512);
constexpr std::uint64_t kFold512Low = x_pow_mod_p(512 - 1);
constexpr std::uint64_t kFold128High = x_pow_mod_p(63 + 128);
constexpr std::uint64_t kFold128Low = x_pow_mod_p(128 - 1);

__attribute__((target("pclmul"))) inline __m128i fold(__m128i block, __m128i constants, __m128i next) {
  const __m128i high = _mm_clmulepi64_si128(block, constants, 0x00);  // H × low constant
  const __m128i low = _mm_clmulepi64_si128(block, constants, 0x11);   // L × high constant
  return _mm_xor_si128(_mm_xor_si128(high, low), next);
}

// n >= 64.
__attribute__((target("pclmul"))) std::uint32_t update_pclmul(std::uint32_t c, const unsigned char* p, std::size_t n) {
  const auto load = [](const unsigned char* q) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(q)); };
  const __m128i by512 = _mm_set_epi64x(static_cast<long long>(kFold512Low), static_cast<long long>(kFold512High));
  const __m128i by128 = _mm_set_epi64x(static_cast<long long>(kFold128Low), static_cast<long long>(kFold128High));
  // The register's first 32 message bits absorb the CRC so far.
  __m128i a0 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(c)));
  __m128i a1 = load(p + 16);
  __m128i a2 = load(p + 32);
  __m128i a3 = load(p + 48);
  p += 64;
  n -= 64;
  for (; n >= 64; n -= 64, p += 64) {
    a0 = fold(a0, by512, load(p));
    a1 = fold(a1, by512, load(p + 16));
    a2 = fold(a2, by512, load(p + 32));
    a3 = fold(a3, by512, load(p + 48));
  }
  __m128i a = fold(fold(fold(a0, by128, a1), by128, a2), by128, a3);
  for (; n >= 16; n -= 16, p += 16) a = fold(a, by128, load(p));
  alignas(16) unsigned char last[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(last), a);
  return update_portable(update_portable(0, last, 16), p, n);
}

bool use_pclmul() {
  static const bool supported = __builtin_cpu_supports("pclmul");
  return supported && active_isa() != Isa::scalar;
}

}  // namespace

std::uint32_t crc32(std::span<const std::byte> bytes, std::uint32_t crc) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::size_t n = bytes.size();
  if (n >= 64 && use_pclmul()) return ~update_pclmul(~crc, p, n);
  return ~update_portable(~crc, p, n);
}

}  // namespace attn
