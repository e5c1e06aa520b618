// The save directory of a training run for the length of a session: its lock
// (one process per directory, core/dir_lock.h), the checkpoints written into
// it (last.attn, best.attn, ckpt.<update>.attn with --keep-last), and, when a
// start fails, the directory put back as it was found. Rank 0 alone writes
// in it; the other ranks only create it.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>

#include "attn/core/dir_lock.h"
#include "attn/model/seq2seq.h"
#include "attn/text/bpe.h"
#include "attn/train/checkpoint.h"
#include "attn/train/optimizer.h"

namespace attn::train {

class RunDir {
 public:
  // log_json: the run's JSON log, "" for none (its state is kept for undo_start).
  RunDir(std::filesystem::path dir, std::filesystem::path log_json, std::int64_t keep_last, bool root);
  ~RunDir();
  RunDir(const RunDir&) = delete;
  RunDir& operator=(const RunDir&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  const std::filesystem::path& last() const { return last_; }
  const std::filesystem::path& best() const { return best_; }

  // Throws Error when another process holds the directory; takes nothing
  // (said before any work, so a run that cannot start leaves no file).
  void require_unheld() const;
  // Creates the directory and (rank 0) takes its lock, for the rest of the
  // session; notes what was there for undo_start.
  void lock();
  // Removes what this process made since lock() (the directory, the lock
  // file, the log or the records appended to it): the directory as it was
  // found. The log must be closed first.
  void undo_start();
  // Removes the temporaries of a process killed while saving here.
  void remove_abandoned_temporaries() const;

  // last.attn with the optimizer (resumable); after a validation (`improved`
  // given) also best.attn when it improved, and ckpt.<update>.attn with
  // --keep-last, the oldest beyond keep_last removed. Nothing on ranks but 0.
  void save(const model::Seq2Seq& model, const text::Bpe& bpe, const TrainState& state, const Adam& optimizer,
            std::optional<bool> improved) const;

 private:
  // What a failed start must restore: whether the directory, its lock file and the log were there.
  struct Before {
    bool made_dir = false, lock_existed = true, log_existed = true, log_regular = false;
    std::uintmax_t log_size = 0;
  };

  const std::filesystem::path dir_, log_json_, last_, best_;
  const std::int64_t keep_last_;
  const bool root_;
  Before before_;
  std::unique_ptr<DirLock> lock_;  // held for the whole session
};

}  // namespace attn::train
