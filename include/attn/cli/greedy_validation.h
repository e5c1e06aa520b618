// The translator of `attn train`'s validation: greedy search (beam 1), what
// validation BLEU has always scored.
#pragma once
#include "attn/train/validation_translator.h"

namespace attn::cli {

const train::ValidationTranslator& greedy_validation_translator();

}  // namespace attn::cli
