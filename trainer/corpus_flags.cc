#include "corpus_flags.h"

namespace tokenmill::cli {

void AddCorpusFlags(FlagSet& flags, CountCorpusOptions* options) {
  flags.AddChoice("preset", &options->pretokenizer.preset, {"gpt2", "cl100k", "o200k", "qwen2"},
                  "pre-tokenizer: how text is split into words before merging");
  flags.AddStrings("special-token", &options->special_tokens,
                   "a literal token that is never split or merged, e.g. <|endoftext|>");
  flags.AddInt("threads", &options->threads, "worker threads (0: all cores)");
}

}  // namespace tokenmill::cli
