#include "attn/core/error.h"
#include "attn/nn/csan_mixer.h"
#include "attn/nn/fast_disa.h"
#include "attn/nn/mha_mixer.h"
#include "attn/nn/muse_mixer.h"
#include "attn/nn/token_mixer.h"

namespace attn::nn {

std::unique_ptr<TokenMixer> make_mixer(ParamStore& params, const std::string& name, const MixerSpec& spec) {
  require(spec.d > 0 && spec.heads > 0 && spec.d % spec.heads == 0,
          "--dim " + std::to_string(spec.d) + " is not divisible by --heads " + std::to_string(spec.heads) +
              "; choose heads that divide the dimension");
  if (spec.kind == "mha") return std::make_unique<MhaMixer>(params, name, spec);
  if (spec.kind == "csan" || spec.kind == "csan2d") return std::make_unique<CsanMixer>(params, name, spec);
  if (spec.kind == "fastdisa") return std::make_unique<FastDisaMixer>(params, name, spec);
  if (spec.kind == "muse") return std::make_unique<MuseMixer>(params, name, spec);
  throw Error("token mixer '" + spec.kind + "' is not available in this build");
}

}  // namespace attn::nn
