// Runs the attn binary of this build (ATTN_BIN, set by `make test`) and
// captures its exit status, stdout and stderr.
#pragma once
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include <sys/wait.h>
#include <unistd.h>

namespace attn::test {

struct RunResult {
  int status = -1;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Single-quoted for the shell, joined by spaces.
inline std::string shell_words(const std::vector<std::string>& words) {
  std::string joined;
  for (const std::string& w : words) {
    if (!joined.empty()) joined += ' ';
    joined += '\'';
    for (char c : w) joined += c == '\'' ? std::string("'\\''") : std::string(1, c);
    joined += '\'';
  }
  return joined;
}

// args are passed to the shell as they are: quote what needs quoting.
// shell_prefix runs first in the same shell (e.g. "ulimit -f 60; ").
inline RunResult run_attn(const std::string& args, const std::string& stdin_text = "",
                          const std::string& shell_prefix = "") {
  const char* bin = std::getenv("ATTN_BIN");
  // Set by `make test`; `make test-unit` leaves it unset, so a test that runs attn
  // and is not tagged [e2e] fails there, naming itself.
  INFO("run the suite through make; a test that starts attn is tagged [e2e]");
  REQUIRE(bin != nullptr);
  const auto dir = std::filesystem::temp_directory_path();
  // Unique among this process's concurrent calls (threads) and among the suite's processes.
  const std::string tag = std::to_string(::getpid()) + "-" + std::to_string(reinterpret_cast<std::uintptr_t>(&args));
  const auto in = dir / ("attn-cli-in-" + tag), out = dir / ("attn-cli-out-" + tag),
             err = dir / ("attn-cli-err-" + tag);
  { std::ofstream(in, std::ios::binary) << stdin_text; }
  const std::string cmd = shell_prefix + std::string(bin) + " " + args + " <" + in.string() + " >" + out.string() +
                          " 2>" + err.string();
  const int raw = std::system(cmd.c_str());
  RunResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  std::filesystem::remove(in);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

// Exit status 2 with exactly one line on stderr that contains `needle`.
inline void require_user_error(const RunResult& r, const std::string& needle) {
  INFO("stderr: " << r.err);
  REQUIRE(r.status == 2);
  REQUIRE(r.err.find(needle) != std::string::npos);
  REQUIRE(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

}  // namespace attn::test
