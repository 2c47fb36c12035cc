#include "driver/training_run.h"

#include <chrono>
#include <filesystem>
#include <ctime>

#include <tbb/task_arena.h>

#include "common/file_util.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "driver/checkpointer.h"
#include "driver/stored_options.h"
#include "common/option_error.h"
#include "model/tiktoken_file.h"

namespace tokenmill {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A change of a corpus file (size or modification time) since the checkpoint, in words, or "".
std::string CorpusChange(const Checkpoint& checkpoint) {
  std::vector<std::string> paths;
  for (const CorpusFileStamp& f : checkpoint.corpus_files) paths.push_back(f.path);
  absl::StatusOr<std::vector<CorpusFileStamp>> now = StampFiles(paths);
  if (!now.ok()) return std::string(Message(now.status()));
  for (size_t i = 0; i < paths.size(); ++i) {
    if (!((*now)[i] == checkpoint.corpus_files[i])) {
      return StrCat("corpus file '", paths[i], "' changed since the checkpoint (size ",
                    checkpoint.corpus_files[i].size, " -> ", (*now)[i].size,
                    ", or its modification time)");
    }
  }
  return "";
}

}  // namespace

TrainingRun::TrainingRun(TrainingRunOptions options) : options_(std::move(options)) {}
TrainingRun::TrainingRun(TrainingRun&&) noexcept = default;
TrainingRun& TrainingRun::operator=(TrainingRun&&) noexcept = default;
TrainingRun::~TrainingRun() = default;

absl::Status TrainingRun::CheckOutputs() const {
  const bool wordpiece = options_.trainer.algorithm == Algorithm::kWordPiece;
  if (options_.format == ModelFormat::kTiktoken && wordpiece) {
    return OptionError("`format` tiktoken holds BPE models; `algorithm` wordpiece writes `format` "
                       "hf (tokenizer.json) or vocab-txt",
                       {"format", "algorithm"});
  }
  if (options_.format == ModelFormat::kVocabTxt && !wordpiece) {
    return OptionError("`format` vocab-txt (BERT's vocab.txt) holds WordPiece models only; "
                       "`algorithm` bpe writes `format` hf or tiktoken",
                       {"format", "algorithm"});
  }
  const std::string& split = options_.trainer.pretokenizer.preset;
  if (options_.format == ModelFormat::kVocabTxt && split != "bert" && split != "whitespace") {
    return OptionError(StrCat("`format` vocab-txt holds one token per line, which needs a "
                              "pre-tokenizer that drops whitespace (bert, whitespace); `pretokenizer` ",
                              split, " keeps line breaks and spaces in tokens: write `format` hf"),
                       {"format", "pretokenizer"});
  }
  if (options_.format == ModelFormat::kTiktoken && options_.trainer.units != UnitKind::kByte) {
    return OptionError(StrCat("`format` tiktoken holds byte-level tokens only; `units` ",
                              UnitKindName(options_.trainer.units),
                              " needs `format` hf (tokenizer.json)"),
                       {"format", "units"});
  }
  if (!options_.output.empty()) {
    TM_RETURN_IF_ERROR(CheckWritableOutput(options_.output));
    if (options_.format == ModelFormat::kTiktoken) {
      TM_RETURN_IF_ERROR(CheckWritableOutput(TiktokenSidecarPath(options_.output)));
    }
  }
  const std::string checkpoint = options_.CheckpointPath();
  if (!checkpoint.empty()) TM_RETURN_IF_ERROR(CheckWritableOutput(checkpoint));
  return absl::OkStatus();
}

absl::StatusOr<TrainingRun> TrainingRun::Start(TrainingRunOptions options) {
  return StartNew(std::move(options), nullptr);
}

absl::StatusOr<TrainingRun> TrainingRun::Start(TrainingRunOptions options, DocumentSource documents) {
  if (!documents) return absl::InvalidArgumentError("TrainingRun::Start: the document source is empty");
  return StartNew(std::move(options), std::move(documents));
}

absl::StatusOr<TrainingRun> TrainingRun::StartNew(TrainingRunOptions options,
                                                  DocumentSource documents) {
  options.Harmonize();
  TrainingRun run(std::move(options));
  TM_ASSIGN_OR_RETURN(run.trainer_, MakeTrainer(run.options_.trainer));
  TM_ASSIGN_OR_RETURN(run.plan_, documents ? PlanDocuments(run.options_.corpus)
                                           : PlanCorpus(run.options_.corpus));
  TM_RETURN_IF_ERROR(run.CheckOutputs());
  run.documents_ = std::move(documents);
  return run;
}

absl::StatusOr<TrainingRun> TrainingRun::Resume(const std::string& path,
                                                const TrainingRunOptions& given,
                                                const std::vector<std::string>& set,
                                                bool ignore_corpus_change) {
  TM_ASSIGN_OR_RETURN(Checkpoint checkpoint, ReadCheckpoint(path, WordTableAs::kList));
  TM_ASSIGN_OR_RETURN(TrainingRunOptions stored, StoredOptions(checkpoint, path));
  TM_ASSIGN_OR_RETURN(TrainingRunOptions options, ResumedOptions(stored, given, set));
  TrainingRun run(std::move(options));
  TM_ASSIGN_OR_RETURN(run.trainer_, MakeTrainer(run.options_.trainer));
  if (std::string change = CorpusChange(checkpoint); !change.empty()) {
    if (!ignore_corpus_change) {
      return absl::FailedPreconditionError(StrCat(
          change, "; the checkpoint's counts no longer describe it. Resume anyway with "
                  "`ignore_corpus_change`, or start a new run"));
    }
    run.warnings_.push_back(StrCat(change, "; resuming anyway (`ignore_corpus_change`)"));
  }
  TM_RETURN_IF_ERROR(run.CheckOutputs());
  run.resumed_ = std::move(checkpoint);
  return run;
}

absl::Status TrainingRun::Gather(RunOutcome& outcome, Checkpoint& base, CorpusCounts& counts,
                                 WordList& resumed_words) {
  if (resumed_) {
    base = *std::move(resumed_);
    resumed_.reset();
    resumed_words = std::move(base.word_list);  // base.word_list is left empty
    base.legacy_settings.clear();
    outcome.documents = base.documents;
    outcome.corpus_bytes = base.corpus_bytes;
    outcome.unique_words = resumed_words.entries.size();
  } else {
    // Documents handed over leave only the word-count files to stamp.
    TM_ASSIGN_OR_RETURN(base.corpus_files, StampFiles(plan_->Paths()));
    if (documents_) {
      TM_ASSIGN_OR_RETURN(counts, CountDocuments(documents_, *std::move(plan_)));
      documents_ = nullptr;
    } else {
      TM_ASSIGN_OR_RETURN(counts, CountCorpus(*std::move(plan_)));
    }
    plan_.reset();
    base.documents = counts.documents;
    base.corpus_bytes = counts.bytes;
    outcome.documents = counts.documents;
    outcome.corpus_bytes = counts.bytes;
    outcome.unique_words = counts.words.unique_words();
    outcome.invalid_utf8 = counts.invalid_utf8;
    outcome.nul_bytes = counts.nul_bytes;
    outcome.skipped_records = counts.skipped_records;
    outcome.first_skipped = counts.first_skipped;
  }
  // The checkpoint's model type names its steps' kind: merges, for BPE and WordPiece alike
  // (the algorithm is a trainer option), or Unigram's rounds (a state of pieces and scores).
  base.model_type =
      options_.trainer.algorithm == Algorithm::kUnigram ? ModelType::kUnigram : ModelType::kBpe;
  base.format_version = kCheckpointFormatVersion;
  StoreOptions(options_, base);
  return absl::OkStatus();
}

absl::Status TrainingRun::TrainWith(TrainingCheckpointer& checkpointer, const RunHooks& hooks,
                                    CorpusCounts& counts, std::optional<WordList> resumed_words,
                                    PriorSteps prior, RunOutcome& outcome) {
  TrainControl control;
  control.resume = std::move(prior);
  control.after_step = [&](const TrainEvent& event) {
    if (hooks.on_step) hooks.on_step(event);
    return checkpointer.AfterStep(event, hooks.stop_requested && hooks.stop_requested());
  };
  // The trainer takes the counts over and frees them once it holds the words its own way; the
  // checkpointer has copied them by then.
  WordSource words = resumed_words ? WordSource::TakeOver(*std::move(resumed_words))
                                   : WordSource::TakeOver(counts.words);
  words.BeforeRelease([&checkpointer] { checkpointer.ReleaseWordTable(); });
  absl::StatusOr<TrainResult> result = trainer_->Train(std::move(words), control);
  TM_RETURN_IF_ERROR(result.status());
  TM_RETURN_IF_ERROR(checkpointer.status());
  outcome.result = *std::move(result);
  return absl::OkStatus();
}

absl::Status TrainingRun::WriteModel(TrainingCheckpointer& checkpointer, RunOutcome& outcome) {
  auto start = std::chrono::steady_clock::now();
  // The last checkpoint is written while the model is (both wait for the disk).
  checkpointer.StartWrite(/*finished=*/true);
  absl::Status saved;
  if (!options_.output.empty()) {
    RemoveStaleTemporaries(options_.output);
    // Writing builds the file's pieces in parallel, on at most `threads` threads.
    const int threads = options_.corpus.threads;
    tbb::task_arena(threads > 0 ? threads : tbb::task_arena::automatic).execute([&] {
      saved = SaveModelAs(*outcome.result.model, options_.output, options_.format);
    });
  }
  if (absl::Status s = checkpointer.Finish(); !s.ok()) {
    if (!saved.ok()) return s;
    return absl::Status(s.code(), StrCat("the tokenizer was written to ", options_.output,
                                         ", but the last checkpoint was not: ", Message(s)));
  }
  TM_RETURN_IF_ERROR(saved);
  outcome.write_seconds = SecondsSince(start);
  return absl::OkStatus();
}

absl::StatusOr<RunOutcome> TrainingRun::Run(const RunHooks& hooks) {
  auto start = std::chrono::steady_clock::now();
  RunOutcome outcome;
  Checkpoint base;
  CorpusCounts counts;
  WordList resumed_words;  // a resumed run's words (counts.words stays empty)
  const bool resumed = resumed_.has_value();
  PriorSteps prior;
  if (resumed) {
    // The trainer takes the merges over; the checkpointer writes them again from their stored
    // form (base.merges_raw).
    prior.merges = std::move(resumed_->merges);
    prior.merge_counts = std::move(resumed_->merge_counts);
    prior.state = resumed_->trainer_state;
  }
  TM_RETURN_IF_ERROR(Gather(outcome, base, counts, resumed_words));
  outcome.checkpoint_path = options_.CheckpointPath();
  // The checkpoint's word table is the one being trained on (base.words stays empty; the
  // writer reads the table through `words`, or adopts the resumed checkpoint's).
  TrainingCheckpointer checkpointer(outcome.checkpoint_path, options_.checkpoint_every,
                                    options_.checkpoint_interval, std::move(base),
                                    options_.corpus.threads, resumed ? nullptr : &counts.words);
  outcome.count_seconds = SecondsSince(start);
  auto finish = [&](bool interrupted) {
    outcome.interrupted = interrupted;
    outcome.checkpoints_written = checkpointer.writes();
    outcome.checkpoint_seconds = checkpointer.write_seconds();
    outcome.checkpoint_merges = checkpointer.merges_done();
    outcome.checkpoint_rounds = checkpointer.rounds_done();
    outcome.total_seconds = SecondsSince(start);
  };
  if (hooks.stop_requested && hooks.stop_requested()) {
    TM_RETURN_IF_ERROR(checkpointer.WriteNow(false));
    finish(true);
    return outcome;
  }
  // The counts are checkpointed right away, in the background while training starts.
  if (!resumed) checkpointer.StartWrite();
  absl::Status trained = TrainWith(checkpointer, hooks, counts,
                                   resumed ? std::optional<WordList>(std::move(resumed_words))
                                           : std::nullopt,
                                   std::move(prior), outcome);
  if (!trained.ok()) {
    // A new run whose words hold nothing to learn (no pair to merge): its checkpoint holds only
    // the counts, and a resume from it would fail the same way whatever the options, so it is
    // removed and the failed run leaves nothing behind. Any other failure keeps it (a resume
    // with other options, e.g. a larger vocab_size, or on a bigger machine, may succeed), and
    // so does a failed checkpoint write (the previous checkpoint stays); only regular files
    // are removed (a checkpoint path may be a device).
    if (!resumed && IsNothingToLearn(trained) && checkpointer.Finish().ok() &&
        checkpointer.writes() > 0 && checkpointer.merges_done() == 0) {
      for (const std::string& path :
           {outcome.checkpoint_path, WordTablePath(outcome.checkpoint_path)}) {
        std::error_code ec;
        if (std::filesystem::is_regular_file(std::filesystem::symlink_status(path, ec))) {
          std::filesystem::remove(path, ec);
        }
      }
    }
    return trained;
  }
  if (outcome.result.interrupted) {
    finish(true);
    return outcome;
  }
  TM_RETURN_IF_ERROR(WriteModel(checkpointer, outcome));
  finish(false);
  return outcome;
}

}  // namespace tokenmill
