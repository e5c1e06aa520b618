// A tiny trained model for the CLI tests that decode: a corpus of the
// reversal task in `dir`, trained for two updates into dir/run (enough to
// decode, a second or so).
#pragma once
#include <catch2/catch.hpp>

#include <string>

#include "../support.h"
#include "../train/tiny_corpus.h"
#include "run_attn.h"

namespace attn::test {

// dir/run/last.attn, trained.
inline std::string tiny_model(const ScratchDir& dir) {
  write_tiny_corpus(dir.path(), "train", 60, 5);
  write_tiny_corpus(dir.path(), "valid", 5, 6);
  const RunResult r = run_attn(shell_words(tiny_train_args(dir.path(), "run", {"--max-updates", "2"})));
  INFO(r.err);
  REQUIRE(r.status == 0);
  return (dir.path() / "run" / "last.attn").string();
}

}  // namespace attn::test
