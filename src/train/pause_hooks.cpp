#include "attn/train/pause_hooks.h"

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "attn/core/error.h"
#include "attn/core/stop_signals.h"

namespace attn::train {

namespace {

class PauseHooks final : public TrainHooks {
 public:
  PauseHooks(std::string where, std::int64_t update, std::filesystem::path save_dir)
      : where_(std::move(where)), update_(update), save_dir_(std::move(save_dir)) {}
  void before_update(std::int64_t update) override {
    if (where_ == "update" && update == update_) pause();
  }
  void before_validation(std::int64_t update) override {
    if (where_ == "valid" && update == update_) pause();
  }

 private:
  void pause() const {
    { std::ofstream(save_dir_ / "paused") << ::getpid() << '\n'; }
    for (int waited_ms = 0; waited_ms < 60000 && pending_stop_signal() == 0; waited_ms += 5)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }

  std::string where_;
  std::int64_t update_;
  std::filesystem::path save_dir_;
};

}  // namespace

std::unique_ptr<TrainHooks> pause_hooks(const std::string& point, const std::filesystem::path& save_dir) {
  const std::size_t colon = point.find(':');
  const std::string where = point.substr(0, colon);
  std::int64_t update = -1;
  try {
    if (colon != std::string::npos) update = std::stoll(point.substr(colon + 1));
  } catch (const std::exception&) {
  }
  require((where == "update" || where == "valid") && update >= 0,
          "--test-pause-at '" + point + "': expected update:N or valid:N");
  return std::make_unique<PauseHooks>(where, update, save_dir);
}

}  // namespace attn::train
