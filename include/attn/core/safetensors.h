// Model files: the Hugging Face .safetensors layout, F32 and I8 tensors.
//
//   [u64 LE N][N bytes of JSON header, space-padded][data section]
//
// The header maps each tensor name to {"dtype": "F32"|"I8", "shape": [...],
// "data_offsets": [begin, end]} (bytes, relative to the data section, which
// the tensors cover contiguously, in the order write_safetensors stores them)
// and holds "__metadata__": {string: string}. We pad the header so that the
// data section starts 64-byte aligned in the file. The F32 tensors come
// first, so each starts on a multiple of 4 (I8 ones hold `attn quantize`'s
// weights). Python's `safetensors`
// and tools/read_model.py (json + numpy) both read these files.
//
// Metadata we always write besides the caller's keys:
//   format          "attn"
//   format_version  "1", or "2" when the file holds I8 tensors (so that an
//                   attn from before them says "upgrade" rather than "damaged";
//                   we read files up to kSafetensorsFormatVersion)
//   crc32           CRC-32 of the data section, 8 lowercase hex digits
//   header_crc32    CRC-32 of everything else the header says (metadata,
//                   tensor names, shapes, offsets, dtypes other than F32), see header_crc
//                   in safetensors.cpp, so a damaged config or vocabulary in
//                   the metadata is caught as surely as damaged weights
// This layer is generic: it knows nothing of models.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "attn/core/tensor.h"

namespace attn {

inline constexpr int kSafetensorsFormatVersion = 2;

enum class DType { F32, I8 };

struct TensorRef {
  std::string name;
  Shape shape;                  // 1 to 4 dims; a dim may be 0
  std::span<const float> data;  // F32: shape.numel() floats, row-major
  DType dtype = DType::F32;
  std::span<const std::int8_t> int8{};  // I8: shape.numel() values, row-major (data empty)
};

// Writes atomically (see AtomicFile): on any failure it throws Error naming
// the path, removes the temporary file and leaves an existing file untouched.
// Names must be unique and not "__metadata__"; metadata keys must not be one
// of the four above (std::invalid_argument: those are programming errors).
// The F32 tensors are stored first, then the I8 ones, each group in the given order.
void write_safetensors(const std::filesystem::path& path, std::span<const TensorRef> tensors,
                       const std::map<std::string, std::string>& metadata);

// The metadata of an attn file, read from its header alone (the data are not
// checked); nullopt when `path` is not a regular file that starts as an attn
// file does. Never throws: for checks such as "is this output a model file?".
std::optional<std::map<std::string, std::string>> attn_file_metadata(const std::filesystem::path& path);

class SafetensorsFile {
 public:
  // Reads the whole file into 64-byte-aligned memory and validates it: every
  // problem (missing, not an attn file, newer format, malformed header,
  // truncated, checksum mismatch) is a one-line Error naming the file.
  static SafetensorsFile read(const std::filesystem::path& path);
  // Validates the file as read() does (the data's checksum through a small
  // buffer) but holds none of its data: copy_to and copy_int8_to read each
  // tensor from the file when asked, straight into the caller's memory, so a
  // model loaded this way takes its weights' memory once, not twice. The file
  // stays open (a file replaced by a rename is still read as it was opened).
  static SafetensorsFile open(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  bool contains(const std::string& name) const { return index_.count(name) != 0; }
  // In data order (ties between empty tensors broken by name), which is the
  // order write_safetensors stored them in.
  std::vector<std::string> names() const;
  Shape shape(const std::string& name) const;  // Error if absent
  DType dtype(const std::string& name) const;  // Error if absent
  // The data held by read(): Error if absent or of the other dtype;
  // std::logic_error for a file from open().
  std::span<const float> data(const std::string& name) const;
  std::span<const std::int8_t> int8(const std::string& name) const;
  // Copies the F32 tensor into dst after checking its shape is exactly `expected`
  // (Error naming the tensor, both shapes and the file). dst: [expected.numel()].
  void copy_to(const std::string& name, const Shape& expected, std::span<float> dst) const;
  // The same for an I8 tensor.
  void copy_int8_to(const std::string& name, const Shape& expected, std::span<std::int8_t> dst) const;

 private:
  struct Entry {
    std::string name;
    Shape shape;
    DType dtype;
    std::size_t first_byte;  // offset into data_ (a multiple of 4 for F32)
    std::size_t numel;
  };
  // The descriptor of a file from open(), closed with the last copy of it.
  class OpenFile {
   public:
    explicit OpenFile(int fd) : fd_(fd) {}
    OpenFile(const OpenFile&) = delete;
    OpenFile& operator=(const OpenFile&) = delete;
    ~OpenFile();
    int fd() const { return fd_; }

   private:
    int fd_;
  };
  SafetensorsFile() = default;
  static SafetensorsFile load(const std::filesystem::path& path, bool hold_data);
  const Entry& entry(const std::string& name) const;
  const Entry& entry_of(const std::string& name, DType dtype) const;  // Error if another dtype
  // Entry `name` checked to be of dtype and shape `expected` and to fit `bytes`.
  const Entry& checked(const std::string& name, DType dtype, const Shape& expected, std::size_t count) const;
  // Its bytes into dst: from data_, or read from the open file.
  void copy_bytes(const Entry& e, void* dst) const;

  std::filesystem::path path_;
  std::map<std::string, std::string> metadata_;
  std::vector<Entry> entries_;                          // data order
  std::unordered_map<std::string, std::size_t> index_;  // name -> entries_ index
  AlignedFloats data_;                                  // read(): the data section's bytes, 64-byte aligned
  std::shared_ptr<const OpenFile> file_;                // open(): the file, its data from data_start_
  std::uint64_t data_start_ = 0;
};

}  // namespace attn
