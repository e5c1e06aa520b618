#include "attn/train/run_start.h"

#include <chrono>
#include <cstdio>
#include <vector>

#include "attn/core/error.h"
#include "attn/core/rng.h"
#include "attn/train/run_flags.h"
#include "attn/train/trainer.h"

namespace attn::train {

namespace fs = std::filesystem;

model::LoadedModel open_checkpoint(const TrainOptions& o, const fs::path& from) {
  model::LoadedModel loaded = model::load_model_values(from);  // training keeps FP32 values
  if (o.arch_given && loaded.model->config().arch != o.model.arch)
    throw Error(from.string() + " holds a '" + loaded.model->config().arch + "' model but --arch is '" + o.model.arch +
                "'; use another --save-dir or the same --arch");
  check_model_flags(from, loaded.model->config(), read_train_state(loaded).flags, o.model_flags_given);
  return loaded;
}

RunStart resume_run(const TrainOptions& o, model::LoadedModel& loaded, const fs::path& from, const fs::path& best,
                    Communicator& comm, TrainLog& log) {
  RunStart s;
  s.state = read_train_state(loaded);
  s.model = std::move(loaded.model);
  s.bpe = std::move(loaded.bpe);
  s.optimizer = std::make_unique<Adam>(s.model->params(), o.optimizer);
  restore_optimizer(loaded, *s.optimizer);
  log.message("resuming from " + from.string() + " at update " + std::to_string(s.state.update) + ", epoch " +
              std::to_string(s.state.epoch));
  double no_best[1] = {comm.is_root() && s.state.has_best && !fs::exists(best) ? 1.0 : 0.0};
  comm.sum(no_best);
  if (no_best[0] > 0) {
    log.message(o.save_dir.string() + " has no best.attn: the best model is chosen anew from this run's " +
                "validations (the checkpoint's best was at update " + std::to_string(s.state.best_update) + ")");
    s.state.has_best = false;
    s.state.bad_validations = 0;
  }
  const nlohmann::json flags = training_flags(o);
  s.changed_flags = changed_training_flags(s.state.flags, flags);
  if (!s.changed_flags.empty()) log.message("training flags changed since the checkpoint: " + s.changed_flags);
  s.state.flags = flags;
  return s;
}

RunStart new_run(const TrainOptions& o, const ParallelText& train_text, TrainLog& log) {
  RunStart s;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> lines = train_text.src;
  lines.insert(lines.end(), train_text.tgt.begin(), train_text.tgt.end());
  text::Bpe::Options bpe_options;
  bpe_options.vocab_size = static_cast<std::int32_t>(o.vocab_size);
  s.bpe = text::Bpe::learn(lines, bpe_options);
  char msg[128];
  std::snprintf(msg, sizeof msg, "learned a joint BPE of %d pieces in %.1f s", s.bpe.vocab().size(),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  log.message(msg);
  model::ModelConfig config = o.model;
  config.vocab_size = s.bpe.vocab().size();
  s.model = std::make_unique<model::Seq2Seq>(config);
  Rng init(o.seed);
  s.model->initialize(init);
  s.optimizer = std::make_unique<Adam>(s.model->params(), o.optimizer);
  s.state.rng = Rng(o.seed + 1).state();
  s.state.flags = training_flags(o);
  return s;
}

}  // namespace attn::train
