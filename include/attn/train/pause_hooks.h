// The hidden `attn train --test-pause-at update:N|valid:N`, for the tests that
// send real signals to a training process: it pauses there, writes
// SAVE_DIR/paused (its pid) and waits for SIGINT/SIGTERM, at most 60 s so a
// test that never signals cannot hang.
#pragma once
#include <filesystem>
#include <memory>
#include <string>

#include "attn/train/trainer.h"

namespace attn::train {

// Throws attn::Error for a malformed point.
std::unique_ptr<TrainHooks> pause_hooks(const std::string& point, const std::filesystem::path& save_dir);

}  // namespace attn::train
