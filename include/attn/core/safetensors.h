// Model files: the Hugging Face .safetensors layout, F32 only.
//
//   [u64 LE N][N bytes of JSON header, space-padded][data section]
//
// The header maps each tensor name to {"dtype": "F32", "shape": [...],
// "data_offsets": [begin, end]} (bytes, relative to the data section, which
// the tensors cover contiguously, in the order given to write_safetensors)
// and holds "__metadata__": {string: string}. We pad the header so that the
// data section starts 64-byte aligned in the file. Python's `safetensors`
// and tools/read_model.py (json + numpy) both read these files.
//
// Metadata we always write besides the caller's keys:
//   format          "attn"
//   format_version  "1" (we read files up to kSafetensorsFormatVersion)
//   crc32           CRC-32 of the data section, 8 lowercase hex digits
//   header_crc32    CRC-32 of everything else the header says (metadata,
//                   tensor names, shapes, offsets), see canonical_header_bytes
//                   in safetensors.cpp, so a damaged config or vocabulary in
//                   the metadata is caught as surely as damaged weights
// This layer is generic: it knows nothing of models.
#pragma once
#include <cstddef>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "attn/core/tensor.h"

namespace attn {

inline constexpr int kSafetensorsFormatVersion = 1;

struct TensorRef {
  std::string name;
  Shape shape;                   // 1 to 4 dims; a dim may be 0
  std::span<const float> data;   // shape.numel() floats, row-major
};

// Writes atomically (see AtomicFile): on any failure it throws Error naming
// the path, removes the temporary file and leaves an existing file untouched.
// Names must be unique and not "__metadata__"; metadata keys must not be one
// of the four above (std::invalid_argument: those are programming errors).
void write_safetensors(const std::filesystem::path& path, std::span<const TensorRef> tensors,
                       const std::map<std::string, std::string>& metadata);

class SafetensorsFile {
 public:
  // Reads the whole file into 64-byte-aligned memory and validates it: every
  // problem (missing, not an attn file, newer format, malformed header,
  // truncated, checksum mismatch) is a one-line Error naming the file.
  static SafetensorsFile read(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  bool contains(const std::string& name) const { return index_.count(name) != 0; }
  // In data order (ties between empty tensors broken by name), which is the
  // order they were given to write_safetensors.
  std::vector<std::string> names() const;
  Shape shape(const std::string& name) const;             // Error if absent
  std::span<const float> data(const std::string& name) const;  // Error if absent
  // Copies the tensor into dst after checking its shape is exactly `expected`
  // (Error naming the tensor, both shapes and the file). dst: [expected.numel()].
  void copy_to(const std::string& name, const Shape& expected, std::span<float> dst) const;

 private:
  struct Entry {
    std::string name;
    Shape shape;
    std::size_t first_float;  // offset into data_
    std::size_t numel;
  };
  SafetensorsFile() = default;
  const Entry& entry(const std::string& name) const;

  std::filesystem::path path_;
  std::map<std::string, std::string> metadata_;
  std::vector<Entry> entries_;                          // data order
  std::unordered_map<std::string, std::size_t> index_;  // name -> entries_ index
  AlignedFloats data_;
};

}  // namespace attn
