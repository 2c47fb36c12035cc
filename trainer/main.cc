// tokenmill: the command-line front end. Dispatches to one command per file (cmd_*.cc).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <string_view>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "commands.h"
#include "common/file_util.h"

namespace {

struct CommandEntry {
  std::string_view name;
  std::string_view summary;
  int (*run)(int argc, char** argv);
};

constexpr CommandEntry kCommands[] = {
    {"train", "train a byte-level BPE tokenizer on text files", tokenmill::cli::RunTrain},
    {"encode", "turn text into token ids, one output line per input line", tokenmill::cli::RunEncode},
    {"decode", "turn token ids back into the exact text", tokenmill::cli::RunDecode},
    {"convert", "convert a tokenizer between tokenizer.json and .tiktoken", tokenmill::cli::RunConvert},
    {"add-special-tokens", "add special tokens (new ids after the vocabulary) to a tokenizer", tokenmill::cli::RunAddSpecialTokens},
    {"explain", "show the pieces and merges that turn a text into tokens", tokenmill::cli::RunExplain},
    {"count", "count the words of a corpus into a word-count file for train --counts", tokenmill::cli::RunCount},
    {"inspect", "describe a tokenmill file (tokenizer, word counts, checkpoint)", tokenmill::cli::RunInspect},
    {"pretokenize", "print the pieces the pre-tokenizer splits text into, one per line", tokenmill::cli::RunPretokenize},
};

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "tokenmill: fast, exact byte-level BPE tokenizer training and encoding.\n\n"
               "Usage: tokenmill <command> [flags] [arguments]\n\nCommands:\n");
  for (const CommandEntry& c : kCommands) {
    std::fprintf(out, "  %-18.*s %.*s\n", static_cast<int>(c.name.size()), c.name.data(),
                 static_cast<int>(c.summary.size()), c.summary.data());
  }
  std::fprintf(out, "\nRun 'tokenmill <command> --help' for the flags of a command.\n");
}

// glibc raises its mmap threshold each time a large block is freed (up to 32 MB), after which
// large blocks come from the heap and their memory is kept when freed. tokenmill's stages free
// big tables one after another (counting, then the trainer's words, checkpoint buffers), so the
// dynamic threshold left 15-25% of peak RSS as freed-but-kept memory (measured: linux_docs
// training 94 -> 76 MB, brown 36.5 -> 29.3 MB; speed unchanged; bench/RESULTS.md). Fixed
// thresholds give large blocks back at once.
void TuneMalloc() {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  TuneMalloc();
  // Reading many compressed inputs ahead on many threads needs files open beyond a soft
  // limit of 1024 (encode_corpus.h).
  tokenmill::RaiseOpenFileLimit();
  if (argc < 2) {
    PrintUsage(stderr);
    return tokenmill::cli::kExitUsage;
  }
  std::string_view command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    PrintUsage(stdout);
    return tokenmill::cli::kExitOk;
  }
  for (const CommandEntry& c : kCommands) {
    if (c.name != command) continue;
    int rc;
    try {
      rc = c.run(argc, argv);
    } catch (const std::bad_alloc&) {
      // Caught, so that the stack unwinds: the destructors remove what was half-written.
      std::fprintf(stderr, "tokenmill %s: error: out of memory\n", argv[1]);
      return tokenmill::cli::kExitFailure;
    }
    // Output lost on the way to stdout (a full disk, a closed descriptor) fails the command,
    // whichever command wrote it (each used to check, or not, on its own).
    errno = 0;
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      std::fprintf(stderr, "tokenmill %s: error: cannot write to stdout%s%s\n", argv[1],
                   errno != 0 ? ": " : "", errno != 0 ? std::strerror(errno) : "");
      if (rc == tokenmill::cli::kExitOk) rc = tokenmill::cli::kExitFailure;
    }
    return rc;
  }
  std::fprintf(stderr, "tokenmill: error: unknown command '%s' (see tokenmill --help)\n", argv[1]);
  return tokenmill::cli::kExitUsage;
}
