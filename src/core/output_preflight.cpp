#include "attn/core/output_preflight.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "attn/core/atomic_file.h"
#include "attn/core/error.h"

namespace attn {
namespace {

namespace fs = std::filesystem;

bool is_stdio(const std::string& path) { return path.empty() || path == "-"; }

std::string named(const NamedFile& file) { return file.flag + " " + file.path; }

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::equivalent(a, b, ec)) return true;
  // Neither exists yet: the same name written twice is the same file too.
  return fs::absolute(a, ec).lexically_normal() == fs::absolute(b, ec).lexically_normal();
}

void check_target(const NamedFile& out) {
  std::error_code ec;
  if (fs::is_directory(out.path, ec))
    throw Error(named(out) + ": is a directory; give a file name, e.g. " + (fs::path(out.path) / "out.txt").string());
  if (written_in_place(out.path)) return;
  const fs::path target = resolve_symlinks(out.path);
  const fs::path parent = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  if (!fs::exists(parent, ec))
    throw Error("cannot write " + out.path + ": directory " + parent.string() + " does not exist; create it first");
  if (!fs::is_directory(parent, ec))
    throw Error("cannot write " + out.path + ": " + parent.string() + " is not a directory");
  const long limit = ::pathconf(parent.c_str(), _PC_NAME_MAX);
  const std::size_t length = target.filename().string().size();
  if (limit > 0 && length > static_cast<std::size_t>(limit))
    throw Error(named(out) + ": the file name is " + std::to_string(length) + " bytes, longer than the " +
                std::to_string(limit) + " its directory allows; choose a shorter name");
  if (::access(parent.c_str(), W_OK | X_OK) != 0)
    throw Error("cannot write " + out.path + ": directory " + parent.string() + " is not writable (" +
                std::strerror(errno) + ")");
}

}  // namespace

void preflight_outputs(std::span<const NamedFile> outputs, std::span<const NamedFile> inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const NamedFile& out = outputs[i];
    if (is_stdio(out.path)) continue;
    // A device is written, never replaced (and /dev/stdin and /dev/stdout may be one terminal).
    const bool device = written_in_place(out.path);
    for (const NamedFile& in : inputs)
      if (!device && !is_stdio(in.path) && same_file(out.path, in.path))
        throw Error(named(out) + ": is the same file as " + named(in) +
                    ", which this command reads; "
                    "write to another file");
    for (std::size_t j = 0; j < i; ++j)
      if (!is_stdio(outputs[j].path) && same_file(out.path, outputs[j].path))
        throw Error(outputs[j].flag + " and " + out.flag + " name the same file (" + out.path + "); give two names");
    check_target(out);
  }
}

}  // namespace attn
