// One process per directory: an exclusive flock on DIR/attn.lock, held for
// the lifetime of the DirLock and removed with it, so a clean exit leaves no
// lock file. The kernel releases the flock when the process dies, so a killed
// run (even by SIGKILL) never leaves a stale lock, only a file the next run
// takes over. The file holds the owner's pid, so the second process can say
// who has it.
#pragma once
#include <filesystem>
#include <optional>
#include <sys/types.h>

namespace attn {

class DirLock {
 public:
  // Throws Error "DIR is in use by process N; …" when another process holds it.
  explicit DirLock(const std::filesystem::path& directory);
  ~DirLock();
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

  // The pid of the process holding DIR's lock, or nothing when no live process
  // holds it (no lock file, or its owner is gone). Does not take the lock.
  static std::optional<pid_t> holder(const std::filesystem::path& directory);
  // Throws the constructor's Error when a live process holds DIR's lock; takes nothing.
  static void require_unheld(const std::filesystem::path& directory);

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace attn
