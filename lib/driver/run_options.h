// TrainingRunOptions: everything a resumable training run is given, in one struct: what is
// read and how it is split (the corpus options), how it is trained (the trainer options), where
// the model goes and how often a checkpoint is written (the run's own fields). The CLI's train
// flags and the Python binding fill one in; a checkpoint stores all three parts' fields.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"

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

  // The trainer's copies of the corpus's pretokenizer, special_tokens and threads (the threads
  // capped first, as ThreadCount caps them).
  void Harmonize();
  // The checkpoint path these options give ("" when checkpoints are off).
  std::string CheckpointPath() const;

  // The run's own fields (output ... checkpoint_interval), with their stable tags.
  static std::span<const OptionField<TrainingRunOptions>> Fields();
};

// What a front end's caller set explicitly: option names (`vocab_size`, `units`, ...) and, for
// the pre-tokenizer's parts, "preset", "pattern" and "normalize".
using GivenOptions = absl::flat_hash_set<std::string>;

// A new run's defaults that depend on the algorithm, for the options not in `given` (every
// front end applies them, so `algorithm` means the same from the CLI and from Python):
//  - unigram (SentencePiece's setting): `units` char, `special_tokens_at` start, the metaspace
//    preset, NFKC, a checkpoint after every EM round;
//  - wordpiece (BERT's): `units` char, `continuing_subword_prefix` ##, no `byte_fallback`,
//    `character_coverage` 1, `special_tokens_at` start, [UNK] as the unknown token, the bert
//    preset with its normalizer, and BERT's five special tokens when `special_tokens` is empty
//    and `bert_specials`;
//  - `hf_compat`: `special_tokens_at` start (Hugging Face's ids), which an explicit end
//    contradicts when there are special tokens.
// An option that belongs to another algorithm (`seed_size` without unigram, `min_frequency`
// with it, ...) is an OptionError naming it.
absl::Status ApplyAlgorithmDefaults(TrainingRunOptions& run, const GivenOptions& given,
                                    bool bert_specials = true);

}  // namespace tokenmill
