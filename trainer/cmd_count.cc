// tokenmill count: count the words of a corpus and write them to a word-count file, which
// `tokenmill train --counts` sums (so counting can run on many machines).
#include <chrono>
#include <cstdio>

#include "commands.h"
#include "common/file_util.h"
#include "corpus_flags.h"
#include "count/count_corpus.h"
#include "count/counts_file.h"
#include "flags.h"
#include "option_flags.h"

namespace tokenmill::cli {
namespace {

struct CountCommandOptions {
  CountCorpusOptions corpus;
  std::string output;
  bool quiet = false;
};

void PrintSummary(const CorpusCounts& counts, double seconds, const std::string& output) {
  const CountTotals t = counts.Totals();
  std::fprintf(stderr,
               "counted %llu files: %llu documents, %llu bytes, %llu words, %llu unique words "
               "(%.2f s, %.1f MB/s; table %.1f MB in memory)\n",
               static_cast<unsigned long long>(t.files), static_cast<unsigned long long>(t.documents),
               static_cast<unsigned long long>(t.bytes), static_cast<unsigned long long>(t.words),
               static_cast<unsigned long long>(t.unique_words), seconds,
               seconds > 0 ? static_cast<double>(t.bytes) / 1e6 / seconds : 0.0,
               static_cast<double>(counts.words.MemoryBytes()) / 1e6);
  PrintCorpusNotes(t.invalid_utf8, t.nul_bytes, t.skipped_records, counts.first_skipped);
  std::fprintf(stderr, "wrote %s\n", output.c_str());
}

}  // namespace

int RunCount(int argc, char** argv) {
  CountCommandOptions options;
  FlagSet flags("count", "--output counts.tmc [flags] INPUT...",
                "Counts the words (pre-tokenized pieces) of a corpus and writes them to a\n"
                "word-count file for 'tokenmill train --counts'. INPUTs are files, folders\n"
                "(recursive, without hidden files), globs or - (stdin): plain text, .zst, .gz,\n"
                "and JSON lines (.jsonl/.json, also compressed). Each line of text, with its\n"
                "newline, is one document (see --doc-mode).");
  flags.AddString("output", &options.output, "where to write the word-count file (required)");
  AddCorpusFlags(flags, &options.corpus);
  flags.AddBool("quiet", &options.quiet, "print nothing but errors");
  absl::StatusOr<std::vector<std::string>> inputs = flags.Parse(argc, argv, 2);
  if (!inputs.ok()) {
    PrintError("count", inputs.status());
    return kExitUsage;
  }
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return kExitOk;
  }
  if (absl::Status s = FinishPreTokenizerFlags(flags, &options.corpus.pretokenizer); !s.ok()) {
    PrintError("count", s);
    return kExitUsage;
  }
  options.corpus.inputs = *inputs;
  if (options.output.empty()) {
    PrintError("count", "--output is required (where to write the word-count file)");
    return kExitUsage;
  }
  if (options.corpus.inputs.empty() && options.corpus.counts_files.empty()) {
    PrintError("count", "no inputs given (files, folders, globs or -)");
    return kExitUsage;
  }
  // Everything a user can get wrong is checked before the corpus is read: the options (a
  // usage error) and the inputs, then the output.
  absl::StatusOr<CorpusPlan> plan = PlanCorpus(options.corpus);
  if (!plan.ok()) return ReportError("count", plan.status());
  if (absl::Status s = CheckWritableOutput(options.output); !s.ok()) {
    PrintError("count", s);
    return kExitFailure;
  }
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<CorpusCounts> counts = CountCorpus(*std::move(plan));
  if (!counts.ok()) {
    PrintError("count", counts.status());
    return kExitFailure;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (absl::Status s = WriteCountsFile(options.output, MakeCountsFileHeader(options.corpus, *counts),
                                       counts->words, ThreadCount(options.corpus.threads));
      !s.ok()) {
    PrintError("count", s);
    return kExitFailure;
  }
  if (!options.quiet) PrintSummary(*counts, seconds, options.output);
  return kExitOk;
}

}  // namespace tokenmill::cli
