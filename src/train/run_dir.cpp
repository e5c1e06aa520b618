#include "attn/train/run_dir.h"

#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "attn/core/atomic_file.h"
#include "attn/core/error.h"

namespace attn::train {

namespace fs = std::filesystem;

RunDir::RunDir(fs::path dir, fs::path log_json, std::int64_t keep_last, bool root)
    : dir_(std::move(dir)), log_json_(std::move(log_json)), last_(dir_ / "last.attn"), best_(dir_ / "best.attn"),
      keep_last_(keep_last), root_(root) {}

RunDir::~RunDir() = default;

void RunDir::require_unheld() const {
  if (root_) DirLock::require_unheld(dir_);
}

void RunDir::lock() {
  std::error_code ec;
  before_.lock_existed = fs::exists(dir_ / "attn.lock", ec);
  // No JSON log (an empty path) is as one that was there: nothing to undo.
  before_.log_existed = log_json_.empty() || fs::exists(log_json_, ec);
  before_.log_regular = fs::is_regular_file(log_json_, ec);
  before_.log_size = before_.log_regular ? fs::file_size(log_json_, ec) : 0;
  before_.made_dir = fs::create_directories(dir_, ec);
  require(!ec && fs::is_directory(dir_), dir_.string() + ": cannot create the save directory (" + ec.message() + ")");
  if (!root_) return;
  try {
    lock_ = std::make_unique<DirLock>(dir_);
  } catch (const Error&) {
    std::error_code ignored;
    if (before_.made_dir) fs::remove(dir_, ignored);  // empty unless another process uses it now
    throw;
  }
}

void RunDir::undo_start() {
  if (!lock_) return;  // rank 0 alone made anything of its own here
  std::error_code ignored;
  if (!before_.log_existed)
    fs::remove(log_json_, ignored);
  else if (before_.log_regular && fs::file_size(log_json_, ignored) > before_.log_size)
    fs::resize_file(log_json_, before_.log_size, ignored);  // a cut last line it removed stays removed
  if (before_.made_dir) {
    lock_.reset();
    fs::remove_all(dir_, ignored);
  } else {
    if (!before_.lock_existed) fs::remove(dir_ / "attn.lock", ignored);  // while held: nobody took it
    lock_.reset();
  }
}

void RunDir::remove_abandoned_temporaries() const {
  if (root_) attn::remove_abandoned_temporaries(dir_);
}

void RunDir::save(const model::Seq2Seq& model, const text::Bpe& bpe, const TrainState& state, const Adam& optimizer,
                  std::optional<bool> improved) const {
  if (!root_) return;
  save_checkpoint(last_, model, bpe, state, &optimizer);
  if (!improved) return;
  if (*improved) save_checkpoint(best_, model, bpe, state, nullptr);
  if (keep_last_ > 0) {
    save_checkpoint(dir_ / ("ckpt." + std::to_string(state.update) + ".attn"), model, bpe, state, &optimizer);
    const std::vector<fs::path> found = periodic_checkpoints(dir_);
    for (std::size_t i = 0; i + static_cast<std::size_t>(keep_last_) < found.size(); ++i) fs::remove(found[i]);
  }
}

}  // namespace attn::train
