// What a training session starts from: the model, its BPE, Adam and the
// training state of a checkpoint (a resume), or new ones (a run's first session).
#pragma once
#include <filesystem>
#include <memory>
#include <string>

#include "attn/model/model_file.h"
#include "attn/model/seq2seq.h"
#include "attn/text/bpe.h"
#include "attn/train/checkpoint.h"
#include "attn/train/communicator.h"
#include "attn/train/corpus.h"
#include "attn/train/optimizer.h"
#include "attn/train/train_log.h"

namespace attn::train {

struct TrainOptions;

struct RunStart {
  std::unique_ptr<model::Seq2Seq> model;
  text::Bpe bpe;
  std::unique_ptr<Adam> optimizer;
  TrainState state;           // its flags are this session's
  std::string changed_flags;  // the training flags changed since the checkpoint, for the log; "" for none
};

// The checkpoint at `from`; throws Error when it holds another model than the flags ask for.
model::LoadedModel open_checkpoint(const TrainOptions& options, const std::filesystem::path& from);

// The run `loaded` (read from `from`) continues. Without `best` (a resume into
// a new save dir, or best.attn removed) the best model is chosen anew from
// this session's validations, so that the run writes one; rank 0 decides for all ranks.
RunStart resume_run(const TrainOptions& options, model::LoadedModel& loaded, const std::filesystem::path& from,
                    const std::filesystem::path& best, Communicator& comm, TrainLog& log);

// A new run: a joint BPE learned from the training text, a model initialised from the seed.
RunStart new_run(const TrainOptions& options, const ParallelText& train_text, TrainLog& log);

}  // namespace attn::train
