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
// A symlink is written through: its target gets the new file (atomically,
// in the target's directory) and the link stays. A temporary left by a
// process killed while writing this target is removed on the next write.
//
// A replaced file's permissions and owner are kept. The temporary name is
// ".<final name>.tmp-<pid>-<n>", the final name shortened in it when needed,
// so any name the directory takes (255 bytes) can be written.
//
// A final path that exists and is not a regular file (/dev/null, /dev/stdout,
// a FIFO) is written in place: renaming over it would replace the device with
// a file. Its errors (ENOSPC from /dev/full) still surface from commit().
#pragma once
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace attn {

// Where a write to `path` lands: a symlink's target (followed to the end,
// relative links against their own directory).
std::filesystem::path resolve_symlinks(std::filesystem::path path);

// True when `path` is written in place, not replaced: an existing device or
// FIFO, or a /dev/ or /proc/ name (/dev/stdout, /proc/self/fd/N).
bool written_in_place(const std::filesystem::path& path);

// Removes the temporary files that AtomicFiles of processes now gone left in
// `directory` (killed while writing), of every target or only of `of_file`
// (a file name); those of live processes stay.
void remove_abandoned_temporaries(const std::filesystem::path& directory, const std::string& of_file = "");

// Makes SIGINT, SIGTERM and SIGHUP remove the temporaries of every live
// AtomicFile before the signal ends the process as it would have (commands
// without their own handler: main calls it).
void remove_temporaries_on_signals();

class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path final_path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  std::FILE* stream();
  void write(std::span<const std::byte> bytes);
  void write(std::string_view text);
  void commit();  // prepare() then publish()
  // commit() in two steps: everything written and on disk (throws Error on a
  // write error; the temporary is gone then), and the rename.
  void prepare();
  void publish();

  const std::filesystem::path& final_path() const { return final_path_; }
  const std::filesystem::path& target_path() const { return target_path_; }  // final_path with symlinks followed
  const std::filesystem::path& temp_path() const { return temp_path_; }      // empty when written in place

 private:
  [[noreturn]] void fail(const std::string& what, int error_number);
  void open_stream();  // the checked stream on fd_; throws Error

  std::filesystem::path final_path_;
  std::filesystem::path target_path_;
  std::filesystem::path temp_path_;
  int fd_ = -1;  // owned by stream_ once that is open
  std::FILE* stream_ = nullptr;
  int first_write_errno_ = 0;  // errno of the first failed write, 0 if none (set by the stream)
  bool committed_ = false;
  bool in_place_ = false;  // a device or FIFO: no temporary, no rename
  int signal_slot_ = -1;   // in the signal handler's list of temporaries
};

// Several outputs of one command, all or none: every file is prepared before
// any is renamed, so a write error on one leaves none of them new; and when a
// rename fails, those renamed before it get their previous content back.
void commit_together(std::span<AtomicFile* const> files);

}  // namespace attn
