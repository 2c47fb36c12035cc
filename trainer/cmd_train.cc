// tokenmill train: count the corpus, train BPE, write tokenizer.json, print a summary.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "absl/strings/str_format.h"
#include "common/strings.h"
#include "commands.h"
#include "common/file_util.h"
#include "corpus_flags.h"
#include "count/count_corpus.h"
#include "flags.h"
#include "model/hf_json.h"
#include "pretokenize/pretokenizer.h"
#include "train/bpe_trainer.h"
#include "train/train_progress.h"

namespace tokenmill::cli {
namespace {

struct TrainCommandOptions {
  CountCorpusOptions corpus;
  TrainerOptions trainer;
  std::string output;
  std::string special_tokens_at = "end";
  bool verbose = false;
  uint64_t log_every = 1000;
  bool quiet = false;
};

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

double PeakRssMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

void PrintSummary(const TrainResult& result, const CorpusCounts& counts, double count_seconds,
                  double write_seconds, double total_seconds, const std::string& output) {
  const BpeModel& model = result.model;
  std::fprintf(stderr, "corpus: %llu documents, %llu bytes, %zu unique words\n",
               static_cast<unsigned long long>(counts.documents),
               static_cast<unsigned long long>(counts.bytes), counts.words.unique_words());
  std::fprintf(stderr, "trained: vocab size %zu, %zu merges, %zu special tokens; %s\n",
               model.VocabSize(), model.merges.size(), model.specials.size(),
               result.stop_reason.c_str());
  std::string phases = absl::StrFormat("count %.2f s", count_seconds);
  for (const auto& [phase, seconds] : result.phase_seconds) {
    phases += absl::StrFormat(", %s %.2f s", phase, seconds);
  }
  phases += absl::StrFormat(", write %.2f s", write_seconds);
  std::fprintf(stderr, "time: %.2f s (%s); peak memory %.0f MB\n", total_seconds, phases.c_str(),
               PeakRssMb());
  std::vector<TokenId> ids;
  for (TokenId id = 0; id < model.tokens.size(); ++id) ids.push_back(id);
  std::vector<bool> is_special(model.tokens.size(), false);
  for (const SpecialToken& s : model.specials) is_special[s.id] = true;
  std::erase_if(ids, [&](TokenId id) { return is_special[id] || model.tokens[id].empty(); });
  std::stable_sort(ids.begin(), ids.end(), [&](TokenId a, TokenId b) {
    return model.tokens[a].size() > model.tokens[b].size();
  });
  std::fprintf(stderr, "longest tokens:");
  for (size_t i = 0; i < std::min<size_t>(5, ids.size()); ++i) {
    std::fprintf(stderr, " [%s]", ShowBytes(model.tokens[ids[i]]).c_str());
  }
  std::fprintf(stderr, "\nwrote %s\n", output.c_str());
}

ProgressFormat TrainProgressFormat(const TrainCommandOptions& options) {
  if (options.quiet) return ProgressFormat::kNone;
  const std::string& p = options.corpus.progress;
  if (p == "bar") return ProgressFormat::kBar;
  if (p == "json") return ProgressFormat::kJson;
  if (p == "auto" && isatty(STDERR_FILENO)) return ProgressFormat::kBar;
  return ProgressFormat::kNone;
}

}  // namespace

int RunTrain(int argc, char** argv) {
  TrainCommandOptions options;
  FlagSet flags("train", "--vocab-size N --output tokenizer.json [flags] FILE...",
                "Trains a byte-level BPE tokenizer on the given text files (each line, with its\n"
                "newline, is one document) and writes it as a Hugging Face tokenizer.json.\n"
                "--progress also reports the merges (bar: merges/s, ETA, the last token).");
  flags.AddSize("vocab-size", &options.trainer.vocab_size,
                "total vocabulary: 256 byte tokens (with --hf-compat: the bytes that occur) + "
                "merges + special tokens");
  flags.AddString("output", &options.output, "where to write tokenizer.json (required)");
  AddCorpusFlags(flags, &options.corpus);
  flags.AddChoice("special-tokens-at", &options.special_tokens_at, {"start", "end"},
                  "ids of special tokens: before the byte tokens (Hugging Face) or after the "
                  "merges (tiktoken); --hf-compat makes 'start' the default");
  flags.AddUint64("min-frequency", &options.trainer.min_frequency,
                  "stop when the most frequent pair occurs fewer times than this");
  flags.AddSize("max-token-length", &options.trainer.max_token_length,
                "never form tokens longer than this many bytes (0: no limit)");
  flags.AddBool("hf-compat", &options.trainer.hf_compat,
                "Hugging Face's alphabet, ids and tie-break: the merges HF's BpeTrainer gives");
  flags.AddBool("verbose", &options.verbose, "log every --log-every-th merge on stderr");
  flags.AddUint64("log-every", &options.log_every, "with --verbose: log every this many merges");
  flags.AddBool("quiet", &options.quiet, "print nothing but errors");

  absl::StatusOr<std::vector<std::string>> inputs = flags.Parse(argc, argv, 2);
  if (!inputs.ok()) {
    PrintError("train", inputs.status());
    return kExitUsage;
  }
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return kExitOk;
  }
  options.corpus.inputs = *inputs;
  options.trainer.special_tokens = options.corpus.special_tokens;
  options.trainer.threads = options.corpus.threads;
  if (options.trainer.hf_compat && !flags.WasSet("special-tokens-at")) {
    options.special_tokens_at = "start";
  }
  options.trainer.special_tokens_at =
      options.special_tokens_at == "start" ? SpecialTokensAt::kStart : SpecialTokensAt::kEnd;
  if (options.output.empty()) {
    PrintError("train", "--output is required (where to write tokenizer.json)");
    return kExitUsage;
  }
  if (inputs->empty() && options.corpus.counts_files.empty()) {
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
  if (absl::Status s = ValidateCountCorpusOptions(options.corpus); !s.ok()) {
    PrintError("train", s);
    return kExitFailure;
  }
  if (absl::Status s = CheckWritableOutput(options.output); !s.ok()) {
    PrintError("train", s);
    return kExitFailure;
  }

  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<CorpusCounts> counts = CountCorpus(options.corpus);
  if (!counts.ok()) {
    PrintError("train", counts.status());
    return kExitFailure;
  }
  if (counts->words.unique_words() == 0) {
    PrintError("train", "the corpus is empty: no text to train on");
    return kExitFailure;
  }
  auto counted = std::chrono::steady_clock::now();
  TrainProgress progress(TrainProgressFormat(options), options.verbose ? options.log_every : 0,
                         stderr);
  TrainControl control;
  control.after_merge = [&](const MergeEvent& event) { return progress.OnMerge(event); };
  absl::StatusOr<TrainResult> result = TrainBpe(counts->words, options.trainer, control);
  progress.Finish();
  if (!result.ok()) {
    PrintError("train", result.status());
    return kExitFailure;
  }
  result->model.pretokenizer = options.corpus.pretokenizer;
  auto trained = std::chrono::steady_clock::now();
  if (absl::Status s = SaveHfJson(result->model, options.output); !s.ok()) {
    PrintError("train", s);
    return kExitFailure;
  }
  auto written = std::chrono::steady_clock::now();
  if (!options.quiet) {
    if (result->model.VocabSize() < options.trainer.vocab_size) {
      std::fprintf(stderr, "tokenmill train: note: %s\n", result->stop_reason.c_str());
    }
    PrintSummary(*result, *counts, Seconds(counted - start), Seconds(written - trained),
                 Seconds(written - start), options.output);
  }
  return kExitOk;
}

}  // namespace tokenmill::cli
