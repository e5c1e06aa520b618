// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320): the checksum of zlib,
// gzip and PNG, so `python3 -c "import zlib; zlib.crc32(data)"` agrees.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

namespace attn {

// Incremental: crc32(b, crc32(a)) == crc32(a ++ b); start from 0.
// "123456789" gives 0xCBF43926. Uses PCLMULQDQ folding when the CPU has it
// (several GB/s) unless ATTN_ISA=scalar; else slicing-by-8 tables.
std::uint32_t crc32(std::span<const std::byte> bytes, std::uint32_t crc = 0);

}  // namespace attn
