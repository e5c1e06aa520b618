#include "attn/core/crc32.h"

#include <array>
#include <bit>
#include <cstring>

namespace attn {
namespace {

constexpr std::uint32_t kPolynomial = 0xEDB88320u;  // bit-reversed 0x04C11DB7

// Slicing-by-8: table[k][b] is the CRC contribution of byte b followed by k
// zero bytes, so eight bytes are folded per step with eight independent
// lookups instead of eight dependent ones.
using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables t{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t c = b;
    for (int bit = 0; bit < 8; ++bit) c = (c >> 1) ^ ((c & 1u) ? kPolynomial : 0u);
    t[0][b] = c;
  }
  for (int k = 1; k < 8; ++k)
    for (std::uint32_t b = 0; b < 256; ++b)
      t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFFu];
  return t;
}

constexpr Tables kTables = make_tables();

static_assert(std::endian::native == std::endian::little,
              "the slicing-by-8 step reads 8 bytes as a little-endian word");

}  // namespace

std::uint32_t crc32(std::span<const std::byte> bytes, std::uint32_t crc) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  std::size_t n = bytes.size();
  std::uint32_t c = ~crc;
  for (; n >= 8; n -= 8, p += 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    word ^= c;
    c = kTables[7][word & 0xFF] ^ kTables[6][(word >> 8) & 0xFF] ^
        kTables[5][(word >> 16) & 0xFF] ^ kTables[4][(word >> 24) & 0xFF] ^
        kTables[3][(word >> 32) & 0xFF] ^ kTables[2][(word >> 40) & 0xFF] ^
        kTables[1][(word >> 48) & 0xFF] ^ kTables[0][word >> 56];
  }
  for (; n > 0; --n, ++p) c = (c >> 8) ^ kTables[0][(c ^ *p) & 0xFFu];
  return ~c;
}

}  // namespace attn
