// The attn binary of this build (ATTN_BIN), or another program, as a real
// child process that a test can signal: spawned without a shell, stdout and
// stderr appended to one file.
#pragma once
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace attn::test {

class ChildProcess {
 public:
  // program: ATTN_BIN (set by `make test`) when null.
  ChildProcess(const std::vector<std::string>& args, const std::filesystem::path& output,
               const char* program = nullptr) {
    const char* bin = program ? program : std::getenv("ATTN_BIN");
    REQUIRE(bin != nullptr);  // run the suite through make
    std::vector<std::string> words{bin};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, output.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    const int status = posix_spawn(&pid_, bin, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    REQUIRE(status == 0);
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() {  // a failed test must not leave a trainer running
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }

  void signal(int sig) const { REQUIRE(::kill(pid_, sig) == 0); }
  // The child's whole process group, when it leads one (started through setsid).
  void signal_group(int sig) const { REQUIRE(::kill(-pid_, sig) == 0); }
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  // The exit status, or −N when signal N killed it.
  int wait() {
    if (pid_ > 0) reap(0);
    return status_;
  }

  // Waits until `done()` holds while the child runs; false if the child
  // exited first or `seconds` passed.
  template <class Condition>
  bool wait_until(Condition done, double seconds = 60.0) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      if (done()) return true;
      if (reap(WNOHANG)) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return false;
  }

 private:
  bool reap(int options) {
    int raw = 0;
    const pid_t got = ::waitpid(pid_, &raw, options);
    REQUIRE(got >= 0);
    if (got == 0) return false;
    pid_ = -1;
    status_ = WIFEXITED(raw) ? WEXITSTATUS(raw) : -WTERMSIG(raw);
    return true;
  }

  pid_t pid_ = -1;
  int status_ = -1000;
};

}  // namespace attn::test
