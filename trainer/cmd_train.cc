// tokenmill train: count the corpus, train BPE, write tokenizer.json, print a summary.
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

namespace tokenmill::cli {
namespace {

struct TrainCommandOptions {
  CountCorpusOptions corpus;
  TrainerOptions trainer;
  std::string output;
  std::string special_tokens_at = "end";
  bool quiet = false;
};

void PrintSummary(const TrainResult& result, const CorpusCounts& counts, double count_seconds,
                  double train_seconds, const std::string& output) {
  const BpeModel& model = result.model;
  std::fprintf(stderr, "corpus: %llu documents, %llu bytes, %zu unique words (%.2f s)\n",
               static_cast<unsigned long long>(counts.documents),
               static_cast<unsigned long long>(counts.bytes), counts.words.unique_words(),
               count_seconds);
  std::fprintf(stderr, "trained: vocab size %zu, %zu merges, %zu special tokens (%.2f s); %s\n",
               model.VocabSize(), model.merges.size(), model.specials.size(), train_seconds,
               result.stop_reason.c_str());
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
    std::string shown;
    for (unsigned char c : model.tokens[ids[i]]) {
      if (c == '\n') shown += "\\n";
      else if (c == '\t') shown += "\\t";
      else if (c < 0x20 || c == 0x7f) shown += absl::StrFormat("\\x%02x", c);
      else shown.push_back(static_cast<char>(c));
    }
    std::fprintf(stderr, " [%s]", shown.c_str());
  }
  std::fprintf(stderr, "\nwrote %s\n", output.c_str());
}

}  // namespace

int RunTrain(int argc, char** argv) {
  TrainCommandOptions options;
  FlagSet flags("train", "--vocab-size N --output tokenizer.json [flags] FILE...",
                "Trains a byte-level BPE tokenizer on the given text files (each line, with its\n"
                "newline, is one document) and writes it as a Hugging Face tokenizer.json.");
  flags.AddSize("vocab-size", &options.trainer.vocab_size,
                "total vocabulary: 256 byte tokens + merges + special tokens");
  flags.AddString("output", &options.output, "where to write tokenizer.json (required)");
  AddCorpusFlags(flags, &options.corpus);
  flags.AddChoice("special-tokens-at", &options.special_tokens_at, {"start", "end"},
                  "ids of special tokens: before the byte tokens (Hugging Face) or after the merges (tiktoken)");
  flags.AddUint64("min-frequency", &options.trainer.min_frequency,
                  "stop when the most frequent pair occurs fewer times than this");
  flags.AddSize("max-token-length", &options.trainer.max_token_length,
                "never form tokens longer than this many bytes (0: no limit)");
  flags.AddBool("hf-compat", &options.trainer.hf_compat,
                "Hugging Face's alphabet, ids and tie-break: the merges HF's BpeTrainer gives");
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
  absl::StatusOr<TrainResult> result = TrainBpe(counts->words, options.trainer);
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
  if (!options.quiet) {
    PrintSummary(*result, *counts, std::chrono::duration<double>(counted - start).count(),
                 std::chrono::duration<double>(trained - counted).count(), options.output);
  }
  return kExitOk;
}

}  // namespace tokenmill::cli
