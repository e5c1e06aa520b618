// The -m arguments of `attn serve`: NAME=FILE[:TYPE], each part but FILE optional.
//
// NAME is the text before the first '=' when it is a name (letters, digits,
// '.', '_', '-'); TYPE is the text after the last ':' when it is a compute
// type (fp32, bf16, int8). A '=' or ':' that does not fit is part of the file
// name when a file of that whole name exists (runs/lr=3e-3/best.attn,
// model:v2.attn); otherwise the argument is refused naming the bad part: a
// bad or empty type lists the types, it is not reported as a missing file.
// A file whose own name ends in ":int8" is served by giving its type after
// it (model:int8:fp32), one whose name starts with a name and '=' by giving a
// name before it (x=a=b.attn).
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attn/model/seq2seq.h"

namespace attn::serve {

struct ModelSpec {
  std::string name;  // empty: the model is named after its arch
  std::string file;
  std::optional<model::ComputeType> type;  // empty: --compute-type's
};

// Throws Error (one line: the argument, what is wrong, what to give) for a
// bad name, a bad or empty type, or no file. exists: whether a file of that
// name exists (the file system's answer by default).
ModelSpec parse_model_spec(const std::string& spec, const std::function<bool(const std::string&)>& exists = {});

// The names requests use: the name given, else the model's arch, with "-2",
// "-3"… when several models would share it. Throws Error when a name is given twice.
std::vector<std::string> model_names(const std::vector<ModelSpec>& specs, const std::vector<std::string>& archs);

}  // namespace attn::serve
