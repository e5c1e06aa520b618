// A reversal task over a few words, "b d a" → "A D B": small enough to train
// in a fraction of a second, learnable enough that the loss falls.
#pragma once
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "attn/core/rng.h"

namespace attn::test {

// Writes dir/name.src and dir/name.tgt with `lines` pairs.
inline void write_tiny_corpus(const std::filesystem::path& dir, const std::string& name, int lines,
                              std::uint64_t seed) {
  const char* words[] = {"red", "blue", "cat", "dog", "sees", "big", "small", "two"};
  Rng rng(seed);
  std::ofstream src(dir / (name + ".src")), tgt(dir / (name + ".tgt"));
  for (int i = 0; i < lines; ++i) {
    const int n = 1 + static_cast<int>(rng.below(5));
    std::vector<std::string> s;
    for (int k = 0; k < n; ++k) s.push_back(words[rng.below(8)]);
    for (int k = 0; k < n; ++k) src << (k ? " " : "") << s[k];
    for (int k = n - 1; k >= 0; --k) {
      std::string up = s[k];
      up[0] = static_cast<char>(up[0] - 32);
      tgt << (k < n - 1 ? " " : "") << up;
    }
    src << '\n';
    tgt << '\n';
  }
}

// `attn train` flags for a tiny model on dir/train.* and dir/valid.*, saved
// in dir/run, one thread (so runs are bit-reproducible), quiet; then `more`.
inline std::vector<std::string> tiny_train_args(const std::filesystem::path& dir, const std::string& run,
                                                const std::vector<std::string>& more = {}) {
  std::vector<std::string> args{"train",
                                "--train-src",
                                (dir / "train.src").string(),
                                "--train-tgt",
                                (dir / "train.tgt").string(),
                                "--valid-src",
                                (dir / "valid.src").string(),
                                "--valid-tgt",
                                (dir / "valid.tgt").string(),
                                "--save-dir",
                                (dir / run).string(),
                                "--dim",
                                "16",
                                "--ffn-dim",
                                "32",
                                "--heads",
                                "2",
                                "--layers",
                                "1",
                                "--dropout",
                                "0.1",
                                "--vocab-size",
                                "300",
                                "--max-tokens",
                                "64",
                                "--lr",
                                "3e-3",
                                "--warmup",
                                "5",
                                "--seed",
                                "7",
                                "--threads",
                                "1",
                                "--quiet"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

}  // namespace attn::test
