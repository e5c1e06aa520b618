// AtomicFile: writes a file under a temporary name in the same directory and
// renames it over the final name only once everything is on disk, so a crash,
// a full disk or an exception never leaves a half-written file under the real
// name, and an existing file stays untouched until the new one is complete.
//
//   AtomicFile out(path);                 // throws Error if the temp cannot be created
//   std::fprintf(out.stream(), ...);      // or out.write(bytes)
//   out.commit();                         // flush, fsync, close, rename; throws Error
//
// Write errors on the stream are sticky (ferror) and reported by commit(), so
// callers need not check every fwrite/fprintf. Destroying an AtomicFile that
// was not committed removes the temporary file.
//
// A final path that exists and is not a regular file (/dev/null, /dev/stdout,
// a FIFO) is written in place: renaming over it would replace the device with
// a file. Its errors (ENOSPC from /dev/full) still surface from commit().
#pragma once
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <span>
#include <string_view>

namespace attn {

// Removes the temporary files that AtomicFiles of processes now gone left in
// `directory` (killed while writing); those of live processes stay.
void remove_abandoned_temporaries(const std::filesystem::path& directory);

class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path final_path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  std::FILE* stream();
  void write(std::span<const std::byte> bytes);
  void write(std::string_view text);
  void commit();

  const std::filesystem::path& final_path() const { return final_path_; }
  const std::filesystem::path& temp_path() const { return temp_path_; }  // empty when written in place

 private:
  [[noreturn]] void fail(const std::string& what, int error_number);

  std::filesystem::path final_path_;
  std::filesystem::path temp_path_;
  std::FILE* stream_ = nullptr;
  int first_write_errno_ = 0;  // errno of the first short write, 0 if none
  bool committed_ = false;
  bool in_place_ = false;  // a device or FIFO: no temporary, no rename
};

}  // namespace attn
