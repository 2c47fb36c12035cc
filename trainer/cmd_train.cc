// tokenmill train: count the corpus, train BPE, write tokenizer.json, print a summary.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>

#include <tbb/task_arena.h>

#include "absl/strings/str_format.h"
#include "common/strings.h"
#include "commands.h"
#include "common/file_util.h"
#include "corpus_flags.h"
#include "count/count_corpus.h"
#include "flags.h"
#include "model/hf_json.h"
#include "model/model_stats.h"
#include "model/tiktoken_file.h"
#include "pretokenize/pretokenizer.h"
#include "train/trainer.h"
#include "train/train_progress.h"
#include "train_checkpointing.h"
#include "corpus/input_files.h"
#include "checkpoint/checkpoint.h"

namespace tokenmill::cli {
namespace {

struct TrainCommandOptions {
  CountCorpusOptions corpus;
  TrainerOptions trainer;
  std::string output;
  std::string format = "hf";  // hf | tiktoken
  std::string special_tokens_at = "end";
  bool verbose = false;
  uint64_t log_every = 1000;
  bool quiet = false;
  CheckpointCommandOptions checkpoint;
};

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

double PeakRssMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

void PrintSummary(const TrainResult& result, const CorpusCounts& counts, size_t unique_words,
                  double count_seconds,
                  double write_seconds, double total_seconds, const std::string& output) {
  const Model& model = *result.model;
  std::fprintf(stderr, "corpus: %llu documents, %llu bytes, %zu unique words\n",
               static_cast<unsigned long long>(counts.documents),
               static_cast<unsigned long long>(counts.bytes), unique_words);
  std::fprintf(stderr, "trained: vocab size %zu, %zu merges, %zu special tokens; %s\n",
               model.VocabSize(), result.merge_counts.size(), model.special_tokens().size(),
               result.stop_reason.c_str());
  // Milliseconds: a resume takes tens of them.
  std::string phases = absl::StrFormat("count %.3f s", count_seconds);
  for (const auto& [phase, seconds] : result.phase_seconds) {
    phases += absl::StrFormat(", %s %.3f s", phase, seconds);
  }
  phases += absl::StrFormat(", write %.3f s", write_seconds);
  std::fprintf(stderr, "time: %.3f s (%s); peak memory %.0f MB\n", total_seconds, phases.c_str(),
               PeakRssMb());
  std::fprintf(stderr, "longest tokens:");
  for (TokenId id : LongestTokens(model, 5)) {
    std::fprintf(stderr, " [%s]", ShowBytes(model.token_bytes()[id]).c_str());
  }
  std::fprintf(stderr, "\nwrote %s\n", output.c_str());
}

ProgressFormat TrainProgressFormat(const TrainCommandOptions& options) {
  return options.quiet ? ProgressFormat::kNone : options.corpus.progress;
}

// Size and modification time of every corpus file, for the checkpoint's fingerprint.
absl::StatusOr<std::vector<CorpusFileStamp>> StampCorpus(const CountCorpusOptions& corpus) {
  InputSelection selection{corpus.include, corpus.exclude, corpus.input_format};
  std::vector<std::string> paths;
  if (!corpus.inputs.empty()) {
    absl::StatusOr<std::vector<InputFile>> files = ResolveInputs(corpus.inputs, selection);
    if (!files.ok()) return files.status();
    for (const InputFile& f : *files) paths.push_back(f.path);
  }
  paths.insert(paths.end(), corpus.counts_files.begin(), corpus.counts_files.end());
  return StampFiles(paths);
}

// After SIGINT/SIGTERM: say where the checkpoint is and how to resume; exit 128 + signal.
int ReportInterrupted(const TrainingCheckpointer& checkpointer, int sig) {
  if (checkpointer.path().empty()) {
    std::fprintf(stderr, "tokenmill train: interrupted; checkpoints were off (--checkpoint=none), "
                         "nothing was saved\n");
  } else {
    std::fprintf(stderr,
                 "tokenmill train: interrupted after %zu merges; checkpoint written to %s\n"
                 "resume with: tokenmill train --resume %s\n",
                 checkpointer.merges_done(), checkpointer.path().c_str(),
                 checkpointer.path().c_str());
  }
  return 128 + sig;
}


constexpr char kTrainUsage[] = "--vocab-size N --output tokenizer.json [flags] FILE...";
constexpr char kTrainDescription[] =
    "Trains a byte-level BPE tokenizer on the given text files (each line, with its\n"
    "newline, is one document) and writes it as a Hugging Face tokenizer.json.\n"
    "--progress also reports the merges (bar: merges/s, ETA, the last token).\n"
    "Checkpoints (OUTPUT.ckpt by default) are written after counting, at the end, on\n"
    "Ctrl-C/SIGTERM and as often as asked; `tokenmill train --resume CKPT` continues an\n"
    "interrupted run to the identical tokenizer, or extends a finished one with a larger\n"
    "--vocab-size.";

void RegisterTrainFlags(FlagSet& flags, TrainCommandOptions* options) {
  flags.AddSize("vocab-size", &options->trainer.vocab_size,
                "total vocabulary: 256 byte tokens (with --hf-compat: the bytes that occur) + "
                "merges + special tokens");
  flags.AddString("output", &options->output,
                  "where to write the tokenizer: tokenizer.json, or with --format tiktoken the "
                  ".tiktoken ranks (its JSON sidecar goes next to it) (required)");
  flags.AddChoice("format", &options->format, {"hf", "tiktoken"},
                  "output format: Hugging Face tokenizer.json, or tiktoken's .tiktoken + sidecar");
  AddCorpusFlags(flags, &options->corpus);
  flags.AddChoice("special-tokens-at", &options->special_tokens_at, {"start", "end"},
                  "ids of special tokens: before the byte tokens (Hugging Face) or after the "
                  "merges (tiktoken); --hf-compat makes 'start' the default");
  flags.AddUint64("min-frequency", &options->trainer.min_frequency,
                  "stop when the most frequent pair occurs fewer times than this");
  flags.AddSize("max-token-length", &options->trainer.max_token_length,
                "never form tokens longer than this many bytes (0: no limit)");
  flags.AddBool("hf-compat", &options->trainer.hf_compat,
                "Hugging Face's alphabet, ids and tie-break: the merges HF's BpeTrainer gives");
  flags.AddBool("verbose", &options->verbose, "log every --log-every-th merge on stderr");
  flags.AddUint64("log-every", &options->log_every, "with --verbose: log every this many merges");
  flags.AddBool("quiet", &options->quiet, "print nothing but errors");
  AddCheckpointFlags(flags, &options->checkpoint);
}

}  // namespace

int RunTrain(int argc, char** argv) {
  TrainCommandOptions options;
  FlagSet flags("train", kTrainUsage, kTrainDescription);
  RegisterTrainFlags(flags, &options);

  // From here on the first SIGINT/SIGTERM asks for an orderly stop (see train_checkpointing.h).
  InterruptGuard interrupt_guard;
  std::vector<std::pair<std::string, std::string>> flags_values;
  absl::StatusOr<std::vector<std::string>> inputs = flags.Parse(argc, argv, 2);
  if (!inputs.ok()) {
    PrintError("train", inputs.status());
    return kExitUsage;
  }
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return kExitOk;
  }
  // A resumed run takes its settings from the checkpoint (the command line may change only
  // harmless flags and --vocab-size) and its word counts too: the corpus is not read again.
  std::optional<Checkpoint> resumed;
  if (!options.checkpoint.resume.empty()) {
    absl::StatusOr<Checkpoint> checkpoint =
        ReadCheckpoint(options.checkpoint.resume, WordTableAs::kList);
    if (!checkpoint.ok()) {
      PrintError("train", checkpoint.status());
      return kExitFailure;
    }
    TrainCommandOptions scratch;
    options = TrainCommandOptions();
    FlagSet restored("train", kTrainUsage, kTrainDescription);
    RegisterTrainFlags(restored, &options);
    absl::Status s = ResumeSettings(
        *checkpoint, argc, argv, 2,
        [&scratch](FlagSet& f) { RegisterTrainFlags(f, &scratch); }, restored);
    if (!s.ok()) {
      PrintError("train", s);
      return kExitUsage;
    }
    if (s = CheckCorpusUnchanged(*checkpoint, options.checkpoint.ignore_corpus_change); !s.ok()) {
      PrintError("train", s);
      return kExitFailure;
    }
    resumed = *std::move(checkpoint);
    flags_values = restored.CurrentValues();
  } else {
    options.corpus.inputs = *inputs;
    flags_values = flags.CurrentValues();
  }
  options.trainer.special_tokens = options.corpus.special_tokens;
  options.trainer.pretokenizer = options.corpus.pretokenizer;
  options.trainer.threads = options.corpus.threads;
  if (options.trainer.hf_compat && !flags.WasSet("special-tokens-at") && !resumed) {
    options.special_tokens_at = "start";
  }
  options.trainer.special_tokens_at =
      options.special_tokens_at == "start" ? SpecialTokensAt::kStart : SpecialTokensAt::kEnd;
  if (options.output.empty()) {
    PrintError("train", "--output is required (where to write tokenizer.json)");
    return kExitUsage;
  }
  if (!resumed && options.corpus.inputs.empty() && options.corpus.counts_files.empty()) {
    PrintError("train", "no input files given");
    return kExitUsage;
  }
  if (options.trainer.hf_compat && options.special_tokens_at == "end" &&
      !options.trainer.special_tokens.empty()) {
    PrintError("train",
               "--hf-compat gives special tokens the first ids, as Hugging Face does; it "
               "conflicts with --special-tokens-at=end");
    return kExitUsage;
  }
  if (options.verbose && options.log_every == 0) {
    PrintError("train", "--log-every must be at least 1 with --verbose");
    return kExitUsage;
  }
  if (absl::Status s = options.trainer.Validate(); !s.ok()) {
    PrintError("train", s);
    return kExitUsage;
  }
  // Inputs may be folders, globs, stdin and word-count files: the corpus reader checks them.
  if (!resumed) {
    if (absl::Status s = ValidateCountCorpusOptions(options.corpus); !s.ok()) {
      PrintError("train", s);
      return kExitFailure;
    }
  }
  if (absl::Status s = CheckWritableOutput(options.output); !s.ok()) {
    PrintError("train", s);
    return kExitFailure;
  }
  if (options.format == "tiktoken") {
    if (absl::Status s = CheckWritableOutput(TiktokenSidecarPath(options.output)); !s.ok()) {
      PrintError("train", s);
      return kExitFailure;
    }
  }
  std::string checkpoint_path = CheckpointPath(options.checkpoint, options.output);
  if (!checkpoint_path.empty()) {
    if (absl::Status s = CheckWritableOutput(checkpoint_path); !s.ok()) {
      PrintError("train", s);
      return kExitFailure;
    }
  }

  auto start = std::chrono::steady_clock::now();
  Checkpoint base;
  CorpusCounts counts;
  WordList resumed_words;  // a resumed run's words (counts.words stays empty)
  if (resumed) {
    base = *std::move(resumed);
    resumed_words = std::move(base.word_list);  // base.word_list is left empty
    counts.documents = base.documents;
    counts.bytes = base.corpus_bytes;
    if (!options.quiet) {
      std::fprintf(stderr, "resuming from %s: %zu merges done, %zu unique words\n",
                   options.checkpoint.resume.c_str(), base.merges.size(),
                   resumed_words.entries.size());
    }
  } else {
    absl::StatusOr<std::vector<CorpusFileStamp>> stamps = StampCorpus(options.corpus);
    if (!stamps.ok()) {
      PrintError("train", stamps.status());
      return kExitFailure;
    }
    absl::StatusOr<CorpusCounts> counted = CountCorpus(options.corpus);
    if (!counted.ok()) {
      PrintError("train", counted.status());
      return kExitFailure;
    }
    counts = *std::move(counted);
    base.corpus_files = *std::move(stamps);
    base.documents = counts.documents;
    base.corpus_bytes = counts.bytes;
  }
  const size_t unique_words =
      resumed ? resumed_words.entries.size() : counts.words.unique_words();
  if (unique_words == 0) {
    PrintError("train", "the corpus is empty: no text to train on");
    return kExitFailure;
  }
  base.settings.clear();
  for (auto& [name, value] : flags_values) {
    if (name != "resume") base.settings.emplace_back(name, value);
  }
  TrainControl control;
  // The trainer takes the merges over; the checkpointer writes them again from their stored
  // form (base.merges_raw).
  control.resume.merges = std::move(base.merges);
  control.resume.merge_counts = std::move(base.merge_counts);
  // The checkpoint's word table is the one being trained on (base.words stays empty; the
  // writer reads the table through `words`, or adopts the resumed checkpoint's).
  TrainingCheckpointer checkpointer(checkpoint_path, options.checkpoint, std::move(base),
                                    options.corpus.threads, resumed ? nullptr : &counts.words);
  auto counted_at = std::chrono::steady_clock::now();
  if (int sig = InterruptGuard::signal_number(); sig != 0) {
    if (absl::Status s = checkpointer.WriteNow(false); !s.ok()) {
      PrintError("train", s);
      return kExitFailure;
    }
    return ReportInterrupted(checkpointer, sig);
  }
  // The counts are checkpointed right away, in the background while training starts.
  if (!resumed) checkpointer.StartWrite();

  TrainProgress progress(TrainProgressFormat(options), options.verbose ? options.log_every : 0,
                         stderr);
  control.after_step = [&](const TrainEvent& event) {
    bool go_on = progress.OnStep(event);
    return checkpointer.AfterStep(event) && go_on;
  };
  // The trainer takes the counts over and frees them once it holds the words its own way; the
  // checkpointer has compressed them by then.
  WordSource words = resumed ? WordSource::TakeOver(std::move(resumed_words))
                             : WordSource::TakeOver(counts.words);
  words.BeforeRelease([&checkpointer] { checkpointer.ReleaseWordTable(); });
  absl::StatusOr<TrainResult> result = Train(std::move(words), options.trainer, control);
  progress.Finish();
  if (!result.ok()) {
    PrintError("train", result.status());
    return kExitFailure;
  }
  if (!checkpointer.status().ok()) {
    PrintError("train", checkpointer.status());
    return kExitFailure;
  }
  if (int sig = InterruptGuard::signal_number(); sig != 0 && result->interrupted) {
    return ReportInterrupted(checkpointer, sig);
  }
  auto trained = std::chrono::steady_clock::now();
  // The last checkpoint is written while the tokenizer is (both wait for the disk).
  checkpointer.StartWrite(/*finished=*/true);
  RemoveStaleTemporaries(options.output);
  // Writing builds the file's pieces in parallel, on at most --threads threads.
  absl::Status saved;
  tbb::task_arena(options.corpus.threads > 0 ? options.corpus.threads
                                             : tbb::task_arena::automatic)
      .execute([&] {
        saved = options.format == "tiktoken" ? SaveTiktoken(*result->model, options.output)
                                             : SaveHfJson(*result->model, options.output);
      });
  if (absl::Status s = checkpointer.Finish(); !s.ok()) {
    PrintError("train", saved.ok() ? StrCat("the tokenizer was written to ", options.output,
                                            ", but the last checkpoint was not: ", Message(s))
                                   : Message(s));
    return kExitFailure;
  }
  if (!saved.ok()) {
    PrintError("train", saved);
    return kExitFailure;
  }
  auto written = std::chrono::steady_clock::now();
  if (!options.quiet) {
    if (result->model->VocabSize() < options.trainer.vocab_size) {
      std::fprintf(stderr, "tokenmill train: note: %s\n", result->stop_reason.c_str());
    }
    PrintSummary(*result, counts, unique_words, Seconds(counted_at - start), Seconds(written - trained),
                 Seconds(written - start),
                 options.format == "tiktoken"
                     ? StrCat(options.output, " and ", TiktokenSidecarPath(options.output))
                     : options.output);
    if (!checkpoint_path.empty()) {
      std::fprintf(stderr,
                   "checkpoint: %s (%zu written, %.2f s; extend later with --resume and a "
                   "larger --vocab-size)\n",
                   checkpoint_path.c_str(), checkpointer.writes(), checkpointer.write_seconds());
    }
  }
  return kExitOk;
}

}  // namespace tokenmill::cli
