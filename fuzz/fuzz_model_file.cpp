// The model-file loader on any bytes: a model that loads, or attn::Error; no
// crash, no huge allocation from a lying header. A model that loads must run.
#include <cstdlib>

#include "attn/core/error.h"
#include "attn/model/model_file.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace attn;
  const auto path = fuzz::write_scratch("model.attn", fuzz::as_text(data, size));
  // fp32 reads every tensor into the store; int8 takes an int8 file's rows as they are.
  for (const model::ComputeType type : {model::ComputeType::fp32, model::ComputeType::int8}) {
    try {
      const model::LoadedModel loaded = model::load_model_file(path, type);
      if (loaded.model->parameter_count() <= 0) std::abort();
      (void)loaded.bpe.decode(loaded.bpe.encode("Ein Mann fährt."));
    } catch (const Error&) {
      // refused with a message: fine
    }
  }
  return 0;
}
