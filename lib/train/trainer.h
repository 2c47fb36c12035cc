// Trainer: the interface every training algorithm implements (BPE in lib/train/bpe/, WordPiece
// in lib/train/wordpiece/ on BPE's phases, Unigram in lib/train/unigram/), and the factory keyed on
// TrainerOptions::algorithm.
//
// A trainer learns a Model from a WordSource (the counted corpus) under a TrainControl that
// sees every step, can stop training, and can hand over the steps an earlier run took (a
// checkpoint's) so that training continues to the result one uninterrupted run gives.
//
// Contract shared by all trainers: the result does not depend on options.threads; falling short
// of vocab_size (nothing left to learn, or min_frequency) is not an error (the result then holds
// a valid model of the size reached and says why in stop_reason); a stop asked for by
// after_step is not an error either (`interrupted`, the model so far).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "model/model.h"
#include "train/trainer_options.h"
#include "train/word_source.h"

namespace tokenmill {

// What a merge-based trainer (BPE) learned in one step.
struct LearnedMerge {
  std::string_view left, right;  // the merged tokens' bytes
  std::string_view token;        // the bytes of the token they form (the units join them)
  uint64_t count = 0;            // the pair's count when chosen
  TokenId id = 0;                // the id of the token it forms
};

// One step of training, as reported to TrainControl::after_step.
struct TrainEvent {
  size_t steps_done = 0;     // including this one
  size_t steps_planned = 0;  // steps that reach vocab_size (training may stop sooner)
  bool replayed = false;     // a step of an earlier run (TrainControl::resume), not searched for
  // What this step cost, in the trainer's own unit of work (BPE: the distinct words the merge
  // rewrote); 0 when unknown or replayed. Progress estimates the time left from it.
  uint64_t work = 0;
  // Merge-based trainers: the merge of this step (null for other kinds of step).
  const LearnedMerge* merge = nullptr;
  // Trainers whose steps are rounds over a whole vocabulary (Unigram): the trainer's state
  // after this step, serialized in its own format, which a checkpoint keeps (the latest one)
  // and hands back through PriorSteps::state; empty for merge steps.
  std::string_view state;
  // Round-based trainers, for progress: the vocabulary's size after this step and the corpus
  // log-likelihood of its last E-step (0 when not known).
  size_t pieces = 0;
  double log_likelihood = 0;
  // ... and of each E-step of the round, in order (empty when replayed).
  std::span<const double> log_likelihoods;
};

// The steps an earlier run of the same training took (on the same words, with the same
// result-changing options), as its checkpoint holds them.
struct PriorSteps {
  // Merge-based trainers: the merges in order, as (left bytes, right bytes), and the pair count
  // of each when it was chosen (0 or absent: not known).
  std::vector<std::pair<std::string, std::string>> merges;
  std::vector<uint64_t> merge_counts;
  // Round-based trainers: the state after the last step (TrainEvent::state), or empty.
  std::string state;
  bool empty() const { return merges.empty() && state.empty(); }
};

// Hooks that let a caller observe, interrupt and resume training. All optional.
struct TrainControl {
  // Restored, not searched again, before training continues; the result equals one
  // uninterrupted run's. Steps that do not fit the words make training fail. The restored
  // steps are reported to after_step (replayed = true).
  PriorSteps resume;
  // Called after each step. Returning false stops training at once.
  std::function<bool(const TrainEvent&)> after_step;
};

struct TrainResult {
  std::unique_ptr<Model> model;
  // Merge-based trainers: the pair count of each merge when it was chosen.
  std::vector<uint64_t> merge_counts;
  std::string stop_reason;  // why training stopped, in words
  bool interrupted = false;  // TrainControl::after_step asked to stop
  // Wall time of each phase, in order: (name, seconds).
  std::vector<std::pair<std::string, double>> phase_seconds;
  // Facts about the run a summary shows, one line each (a character alphabet's coverage).
  std::vector<std::string> notes;
};

class Trainer {
 public:
  virtual ~Trainer() = default;
  virtual absl::StatusOr<TrainResult> Train(WordSource words, const TrainControl& control) = 0;
};

// The trainer of options.algorithm. Fails when the options are invalid.
absl::StatusOr<std::unique_ptr<Trainer>> MakeTrainer(const TrainerOptions& options);

// MakeTrainer(options), then Train(words, control).
absl::StatusOr<TrainResult> Train(WordSource words, const TrainerOptions& options,
                                  const TrainControl& control = {});

// The error of a training that cannot learn anything from its words (say, every word is one
// symbol), whatever the options: marked so that a caller can tell it from other failures (a
// resume from the same words would fail the same way).
absl::Status NothingToLearnError(std::string_view message);
bool IsNothingToLearn(const absl::Status& status);

}  // namespace tokenmill
