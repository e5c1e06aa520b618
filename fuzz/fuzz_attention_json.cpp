// The input side of `attn attend`: any bytes as the source file and as the
// forced target file go through the same reading and encoding as the command,
// then the maps; the JSON written must always parse and hold one sentence per
// source line. Input: source bytes, "\n\x01\n", target bytes.
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "../src/cli/input.h"
#include "attn/core/arena.h"
#include "attn/core/error.h"
#include "attn/decode/maps.h"
#include "fuzz_support.h"

namespace {
// An in-memory FILE*; text() once the writer is done.
struct MemoryFile {
  char* buffer = nullptr;
  std::size_t length = 0;
  std::FILE* stream = ::open_memstream(&buffer, &length);
  std::string_view text() {
    std::fflush(stream);
    return {buffer, length};
  }
  ~MemoryFile() {
    std::fclose(stream);
    std::free(buffer);
  }
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attn;
  const auto [src_bytes, tgt_bytes] = fuzz::split_once(fuzz::as_text(data, size), "\n\x01\n");
  const model::Seq2Seq& model = fuzz::tiny_model();
  const text::Bpe& bpe = fuzz::tiny_bpe();
  try {
    const std::vector<std::string> lines = cli::read_input(fuzz::write_scratch("attend.src", src_bytes).string());
    std::vector<std::string> target_lines = cli::read_input(fuzz::write_scratch("attend.tgt", tgt_bytes).string());
    target_lines.resize(lines.size());
    const std::int64_t positions = model.config().max_positions;
    const auto sources = cli::encode_lines(bpe, lines, positions, "input", "--max-input-len");
    const auto targets = cli::encode_lines(bpe, target_lines, positions - 1, "target", "the model's positions");

    decode::MapsSelection selection;
    selection.components = decode::parse_components("all");
    selection.layers = decode::parse_indices("all", "--layers");
    selection.heads = decode::parse_indices("all", "--heads");
    decode::SearchOptions search{.beam = 1};
    search.max_len_b = 4;
    for (const bool forced : {true, false}) {
      MemoryFile out;
      {
        decode::MapsJsonWriter writer(out.stream, decode::maps_header(model, "fuzz.attn", forced, search, selection),
                                      false);
        decode::AttendInput input;
        input.source_lines = &lines;
        input.sources = &sources;
        if (forced) {
          input.target_lines = &target_lines;
          input.targets = &targets;
        }
        input.chunk = 4;
        Arena arena;
        Rng rng(0);
        nn::StepContext ctx{const_cast<model::Seq2Seq&>(model).params(), arena, rng, false};
        decode::run_attend(ctx, model, bpe, input, search, selection,
                           [&](std::int64_t, const std::string& sentence) { writer.add(sentence); });
        writer.finish();
      }
      const nlohmann::json document = nlohmann::json::parse(out.text());  // throws: a crash
      if (document.at("sentences").size() != lines.size()) std::abort();
    }
  } catch (const Error&) {
    // refused with a message: fine
  }
  return 0;
}
