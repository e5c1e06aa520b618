// The check every command that writes makes before any work: each output
// target is refused at once, in one line, when it could only fail (or do
// harm) at the end — a directory, a file that is also one of the command's
// inputs (translate -m mo.attn -o mo.attn would replace the model by its
// translations), two outputs naming one file, a name longer than its
// directory takes, a directory that is missing or not writable. Hours of
// decoding or training are then never lost to a typo in -o.
#pragma once
#include <span>
#include <string>

namespace attn {

// A file a command names, with the flag that named it ("-o", "--html", "-m").
struct NamedFile {
  std::string path;  // "" or "-": standard input/output, not checked
  std::string flag;
};

// Throws Error naming the flag, the file and what to do on the first target
// that cannot be written. Devices and FIFOs (/dev/null, /dev/stdout) are
// written in place and only checked against the inputs.
void preflight_outputs(std::span<const NamedFile> outputs, std::span<const NamedFile> inputs);

}  // namespace attn
