#include "attn/core/output_preflight.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "attn/core/atomic_file.h"
#include "attn/core/error.h"
#include "attn/core/safetensors.h"

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

// The model rule: a text output replaces no model file and takes no .attn name;
// a model output (average, quantize) may replace a model such a command made,
// never one attn train wrote: a checkpoint's optimizer state and the run's best
// model are not made again by rerunning a command.
void check_not_a_model(const NamedFile& out, const fs::path& target) {
  if (const auto metadata = attn_file_metadata(target)) {
    const bool derived = metadata->count("averaged_from") > 0 || metadata->count("quantized_from") > 0;
    const bool trained = metadata->count("train_state") > 0 && !derived;
    if (!out.model)
      throw Error(named(out) + ": is a model file, which this output would replace; write to another file");
    if (trained)
      throw Error(named(out) + ": is a model attn train wrote (a checkpoint or a best model), which this output " +
                  "would replace; write to another file");
    return;
  }
  const std::string name = target.filename().string();
  if (!out.model && name.size() >= 5 && name.compare(name.size() - 5, 5, ".attn") == 0)
    throw Error(named(out) + ": .attn is the model files' suffix; give this output another name");
}

void check_target(const NamedFile& out) {
  std::error_code ec;
  if (fs::is_directory(out.path, ec))
    throw Error(named(out) + ": is a directory; give a file name, e.g. " + (fs::path(out.path) / "out.txt").string());
  if (written_in_place(out.path)) return;
  const fs::path target = resolve_symlinks(out.path);
  check_not_a_model(out, target);
  const fs::path parent = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  if (out.in_new_dir && !fs::exists(parent, ec)) return;  // made by the command, with the output
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

void preflight_outputs(std::span<const NamedFile> outputs, std::span<const NamedFile> inputs,
                       std::span<const NamedFile> also_written) {
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
    for (const NamedFile& own : also_written)
      if (!device && same_file(out.path, own.path))
        throw Error(named(out) + ": is " + own.flag + " (" + own.path + "), which this command writes too; " +
                    "give another name");
    check_target(out);
  }
}

}  // namespace attn
