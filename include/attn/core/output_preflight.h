// The check every command that writes makes before any work: each output
// target is refused at once, in one line, when it could only fail (or do
// harm) at the end. One rule for every output of every command: an output is
// never
//   - a model file (translate -o, report -o, train --log-json onto best.attn
//     would replace the model by text, or cut a checkpoint), nor a name ending
//     in .attn, the model files' suffix, unless the output is a model itself
//     (average, quantize), which may replace a model such a command made but
//     never one attn train wrote;
//   - one of the command's inputs (translate -m mo.attn -o mo.attn);
//   - another output of the same command (two flags naming one file, a log
//     named as a checkpoint of its own run);
//   - a directory, a name longer than its directory takes, or in a directory
//     that is missing or not writable.
// Relative names are taken as typed (from the working directory) and named as
// typed in the messages. Hours of decoding or training are then never lost to
// a typo in -o.
#pragma once
#include <span>
#include <string>

namespace attn {

// A file a command names, with the flag that named it ("-o", "--html", "-m").
struct NamedFile {
  std::string path;  // "" or "-": standard input/output, not checked
  std::string flag;
  // An output that is a model file (attn average, attn quantize).
  bool model = false;
  // Its directory is made by the command itself (a new save dir of attn train): it need not exist yet.
  bool in_new_dir = false;
};

// Throws Error naming the flag, the file and what to do on the first target
// that cannot be written. Devices and FIFOs (/dev/null, /dev/stdout) are
// written in place and only checked against the inputs. also_written: files
// the command writes under names of its own (a save dir's checkpoints and
// lock), which no output may name.
void preflight_outputs(std::span<const NamedFile> outputs, std::span<const NamedFile> inputs,
                       std::span<const NamedFile> also_written = {});

}  // namespace attn
