#include "attn/core/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "attn/core/error.h"

namespace attn {

namespace {

std::filesystem::path lock_path(const std::filesystem::path& directory) { return directory / "attn.lock"; }

// The pid written in an open lock file, or 0.
pid_t read_pid(int fd) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  return n > 0 ? static_cast<pid_t>(std::strtol(text, nullptr, 10)) : 0;
}

std::string in_use(const std::filesystem::path& directory, pid_t owner) {
  return directory.string() + " is in use by " +
         (owner > 0 ? "process " + std::to_string(owner) : std::string("another process")) +
         "; wait for it to finish, stop it, or use another directory";
}

}  // namespace

DirLock::DirLock(const std::filesystem::path& directory) {
  const std::string path = lock_path(directory).string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  require(fd_ >= 0, path + ": cannot open the lock file (" + std::strerror(errno) + ")");
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const pid_t owner = read_pid(fd_);
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK) throw Error(in_use(directory, owner));
    throw Error(path + ": cannot lock (" + std::strerror(err) + ")");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    // The lock holds without the pid; only the message of a second process suffers.
  }
}

DirLock::~DirLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

void DirLock::require_unheld(const std::filesystem::path& directory) {
  if (const std::optional<pid_t> owner = holder(directory)) throw Error(in_use(directory, *owner));
}

std::optional<pid_t> DirLock::holder(const std::filesystem::path& directory) {
  const int fd = ::open(lock_path(directory).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<pid_t> owner;
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK)
    owner = read_pid(fd);
  else
    ::flock(fd, LOCK_UN);
  ::close(fd);
  return owner;
}

}  // namespace attn
