// Error: the one exception type that carries a message meant for the user.
// It is caught in main(), printed as one line, and turned into exit status 2.
#pragma once
#include <stdexcept>
#include <string>

namespace attn {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Throws Error(message) when condition is false. For user-facing checks
// (flags, files, shapes given on the command line), not for internal bugs.
inline void require(bool condition, const std::string& message) {
  if (!condition) throw Error(message);
}

}  // namespace attn
