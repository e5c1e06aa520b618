// Shared by the libFuzzer targets (make fuzz): a scratch directory for the
// inputs that the code under test reads from files, and a tiny BPE and model
// built once per process.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attn/core/rng.h"
#include "attn/core/threads.h"
#include "attn/model/seq2seq.h"
#include "attn/text/bpe.h"

namespace attn::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// data split at the first occurrence of `separator` (the second part empty when there is none).
inline std::pair<std::string_view, std::string_view> split_once(std::string_view data, std::string_view separator) {
  const std::size_t at = data.find(separator);
  if (at == std::string_view::npos) return {data, {}};
  return {data.substr(0, at), data.substr(at + separator.size())};
}

// dir/name with exactly these bytes; dir is this process's own scratch directory.
inline std::filesystem::path write_scratch(const std::string& name, std::string_view bytes) {
  static const std::filesystem::path dir = [] {
    const auto d = std::filesystem::temp_directory_path() / ("attn-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    set_threads(1);  // one process per core; OpenMP inside would only add noise
    return d;
  }();
  const std::filesystem::path path = dir / name;
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

// A joint BPE of 320 pieces over a few German and English sentences with
// accents, digits and punctuation, so that the encoder has merges to apply.
inline const text::Bpe& tiny_bpe() {
  static const text::Bpe bpe = [] {
    const std::vector<std::string> sentences = {
        "Ein Mann fährt mit dem Fahrrad über die Brücke.",    "A man rides his bicycle over the bridge.",
        "Zwei Hunde spielen im Schnee, 2 Kinder schauen zu.", "Two dogs play in the snow, 2 children watch.",
        "Eine Frau kauft Äpfel und Brötchen am Markt!",       "A woman buys apples and rolls at the market!",
        "Der Junge springt in den See — es ist heiß.",        "The boy jumps into the lake — it is hot.",
    };
    std::vector<std::string> lines;
    for (int r = 0; r < 4; ++r) lines.insert(lines.end(), sentences.begin(), sentences.end());
    text::BpeOptions options;
    options.vocab_size = 320;
    options.min_frequency = 2;
    return text::Bpe::learn(lines, options);
  }();
  return bpe;
}

// A random transformer over tiny_bpe(): dim 16, 1+1 layers, 64 positions.
inline const model::Seq2Seq& tiny_model() {
  static const std::unique_ptr<model::Seq2Seq> m = [] {
    model::ModelConfig c;
    c.vocab_size = tiny_bpe().vocab().size();
    c.dim = 16;
    c.heads = 2;
    c.ffn_dim = 32;
    c.enc_layers = 1;
    c.dec_layers = 1;
    c.dropout = 0.0f;
    c.max_positions = 64;
    auto model = std::make_unique<model::Seq2Seq>(c);
    Rng init(1);
    model->initialize(init);
    return model;
  }();
  return *m;
}

}  // namespace attn::fuzz
