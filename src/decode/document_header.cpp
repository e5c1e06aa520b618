#include "attn/decode/document_header.h"

#include "attn/version.h"

namespace attn::decode {

nlohmann::json document_header(const char* format, int version, const model::Seq2Seq& model,
                               const std::string& model_file, bool forced, const SearchOptions& search) {
  return {{"format", format},
          {"version", version},
          {"attn_version", ATTN_VERSION},
          {"model",
           {{"file", model_file},
            {"config", model.config().to_json()},
            {"encoder_mixers", model.encoder_mixer_kinds()},
            {"decoder_mixers", model.decoder_mixer_kinds()}}},
          {"mode", forced             ? "forced"
                   : search.beam <= 1 ? "greedy"
                                      : "beam"}};
}

}  // namespace attn::decode
