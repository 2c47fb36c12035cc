// TrainingRun: a resumable training run, the library's one entry point for it (the CLI's train
// command and the bindings to come call it; they only turn signals into a stop request and
// flags or arguments into options).
//
// A run counts its corpus (files, or documents the caller hands over; or, resumed, takes the
// word counts of its checkpoint, never reading the corpus again), trains with the trainer of
// options.trainer.algorithm, writes checkpoints as options.checkpoint_* say
// (lib/driver/checkpointer.h), and writes the model to options.output. A resumed run
// continues to the model one uninterrupted run gives, byte for byte; the options it may change
// are those stored_options.h says.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "checkpoint/checkpoint.h"
#include "count/count_corpus.h"
#include "driver/run_options.h"
#include "train/trainer.h"

namespace tokenmill {

struct RunHooks {
  // Polled after counting and after each step: true asks for an orderly stop (the current step
  // finishes, a checkpoint is written, Run returns with `interrupted`).
  std::function<bool()> stop_requested;
  // Called after each step (progress reports).
  std::function<void(const TrainEvent&)> on_step;
};

struct RunOutcome {
  // The model (null when the run was interrupted before training), stop reason and phases.
  TrainResult result;
  bool interrupted = false;
  uint64_t documents = 0, corpus_bytes = 0, unique_words = 0;
  // What counting found (as CorpusCounts has it; 0 and "" for a resumed run, whose checkpoint
  // does not keep them): invalid UTF-8 sequences, NUL bytes, skipped JSON records.
  uint64_t invalid_utf8 = 0, nul_bytes = 0, skipped_records = 0;
  std::string first_skipped;  // "file:line: what" of the first skipped record
  double count_seconds = 0;  // counting, or reading the checkpoint
  double write_seconds = 0;  // writing the model
  double total_seconds = 0;
  // Checkpoints: where ("" when off), how many this run wrote, the seconds spent, and the
  // merges the last one holds.
  std::string checkpoint_path;
  size_t checkpoints_written = 0;
  double checkpoint_seconds = 0;
  size_t checkpoint_merges = 0;
  // ... or, for a round-based trainer (Unigram), the EM rounds it holds.
  size_t checkpoint_rounds = 0;
};

class TrainingRun {
 public:
  // A new run. Checks the options (an OptionError names the option), that every input exists
  // and that the output and checkpoint paths can be written; reads nothing yet.
  static absl::StatusOr<TrainingRun> Start(TrainingRunOptions options);
  // A new run whose corpus is `documents` (count/count_corpus.h: CountDocuments), instead of
  // options.corpus.inputs, which must be empty (otherwise an OptionError naming `inputs`;
  // `counts_files` are added as with files). Checked like Start. Run calls `documents` on its
  // own thread; if it fails, Run returns its status unchanged and writes neither a checkpoint
  // nor the model (a partial corpus is never resumed). The checkpoint stores no corpus files
  // but the word-count files (a resume never needs the documents again: the checkpoint holds
  // the word counts).
  static absl::StatusOr<TrainingRun> Start(TrainingRunOptions options, DocumentSource documents);
  // Continues the run whose checkpoint is at `path`, with the options it stores and the
  // caller's for the options named in `set` (stored_options.h). A corpus file that changed
  // since the checkpoint is an error unless `ignore_corpus_change` (then warnings() says so).
  static absl::StatusOr<TrainingRun> Resume(const std::string& path,
                                            const TrainingRunOptions& given,
                                            const std::vector<std::string>& set,
                                            bool ignore_corpus_change);

  TrainingRun(TrainingRun&&) noexcept;
  TrainingRun& operator=(TrainingRun&&) noexcept;
  ~TrainingRun();

  const TrainingRunOptions& options() const { return options_; }
  bool resumed() const { return resumed_.has_value(); }
  // A resumed run's merges so far and distinct words.
  size_t resumed_merges() const { return resumed_ ? resumed_->merges.size() : 0; }
  // A resumed round-based run's state (Unigram's), or "".
  std::string_view resumed_state() const {
    return resumed_ ? std::string_view(resumed_->trainer_state) : std::string_view();
  }
  size_t resumed_words() const { return resumed_ ? resumed_->word_list.entries.size() : 0; }
  // What the caller should tell the user (a corpus file that changed, resumed anyway).
  const std::vector<std::string>& warnings() const { return warnings_; }

  // Counts or restores, trains, checkpoints and writes the model. Call once.
  absl::StatusOr<RunOutcome> Run(const RunHooks& hooks = {});

 private:
  explicit TrainingRun(TrainingRunOptions options);
  // Start's work: the corpus is `documents` or, when null, the options' files.
  static absl::StatusOr<TrainingRun> StartNew(TrainingRunOptions options, DocumentSource documents);
  // The checks Start and Resume share: the output and checkpoint paths can be written.
  absl::Status CheckOutputs() const;
  // The words and the checkpoint's base: counting, or the resumed checkpoint's.
  absl::Status Gather(RunOutcome& outcome, Checkpoint& base, CorpusCounts& counts,
                      WordList& resumed_words);
  // Trains under the checkpointer; result in outcome.result.
  // `resumed_words`: a resumed run's (else the counts are trained on).
  absl::Status TrainWith(class TrainingCheckpointer& checkpointer, const RunHooks& hooks,
                         CorpusCounts& counts, std::optional<WordList> resumed_words,
                         PriorSteps prior, RunOutcome& outcome);
  // Writes the model (beside the last checkpoint).
  absl::Status WriteModel(TrainingCheckpointer& checkpointer, RunOutcome& outcome);

  TrainingRunOptions options_;
  std::unique_ptr<Trainer> trainer_;
  std::optional<CorpusPlan> plan_;  // a new run's corpus, checked by Start
  DocumentSource documents_;        // a new run's documents handed over (empty: plan_'s files)
  std::optional<Checkpoint> resumed_;
  std::vector<std::string> warnings_;
};

}  // namespace tokenmill
