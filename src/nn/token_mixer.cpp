// What every mixer shares of token_mixer.h: its head split's check and its empty maps.
#include "attn/nn/token_mixer.h"

#include <string>

#include "attn/core/error.h"

namespace attn::nn {

MixerMaps MixerMaps::zeros(std::int64_t heads, std::int64_t length) {
  MixerMaps maps;
  maps.heads = heads;
  maps.length = length;
  maps.weights.assign(static_cast<std::size_t>(heads * length * length), 0.0f);
  return maps;
}

void require_heads_divide(std::int64_t d, std::int64_t heads) {
  require(d > 0 && heads > 0 && d % heads == 0, "--dim " + std::to_string(d) + " is not divisible by --heads " +
                                                    std::to_string(heads) + "; choose heads that divide the dimension");
}

}  // namespace attn::nn
