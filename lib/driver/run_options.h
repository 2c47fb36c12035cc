// TrainingRunOptions: everything a resumable training run is given, in one struct: what is
// read and how it is split (the corpus options), how it is trained (the trainer options), where
// the model goes and how often a checkpoint is written (the run's own fields). The CLI's train
// flags and the Python binding fill one in; a checkpoint stores all three parts' fields.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "common/option_fields.h"
#include "count/count_corpus.h"
#include "model/model_file.h"
#include "train/trainer_options.h"

namespace tokenmill {

struct TrainingRunOptions {
  // The corpus. Its pretokenizer, special_tokens and threads are the run's: Harmonize() copies
  // them to the trainer's.
  CountCorpusOptions corpus;
  TrainerOptions trainer;
  // Where the trained model is written ("": nowhere; the caller saves it), and in what format.
  std::string output;
  ModelFormat format = ModelFormat::kHfJson;
  // Where checkpoints go: "" means OUTPUT.ckpt beside the output (none without an output, or
  // when the output is a device or a pipe); "none" turns them off; else the path.
  std::string checkpoint;
  // Also checkpoint every this many steps (0: only after counting, at the end and on a stop).
  uint64_t checkpoint_every = 0;
  // Also checkpoint when this many seconds have passed since the last one (0: never).
  double checkpoint_interval = 0;

  // The trainer's copies of the corpus's pretokenizer, special_tokens and threads.
  void Harmonize();
  // The checkpoint path these options give ("" when checkpoints are off).
  std::string CheckpointPath() const;

  // The run's own fields (output ... checkpoint_interval), with their stable tags.
  static std::span<const OptionField<TrainingRunOptions>> Fields();
};

}  // namespace tokenmill
