// tokenmill inspect: describe a tokenmill file. Dispatches on what the file is (its magic
// bytes or format); each kind of file has one branch that calls its library's Describe*.
#include <cstdio>
#include <string>

#include "checkpoint/checkpoint.h"
#include "commands.h"
#include "common/file_util.h"
#include "count/counts_file.h"
#include "flags.h"

namespace tokenmill::cli {
namespace {

struct InspectCommandOptions {
  size_t top = 20;  // how many of the most frequent entries to list
};

}  // namespace

int RunInspect(int argc, char** argv) {
  InspectCommandOptions options;
  FlagSet flags("inspect", "[flags] FILE",
                "Describes a tokenmill file: for a word-count file (tokenmill count --output),\n"
                "its header (pre-tokenizer, special tokens, totals) and the most frequent words;\n"
                "for a training checkpoint (tokenmill train), its configuration, merges done of\n"
                "the target, corpus fingerprint and sizes.");
  flags.AddSize("top", &options.top, "how many of the most frequent words to list");
  absl::StatusOr<std::vector<std::string>> args = flags.Parse(argc, argv, 2);
  if (!args.ok()) {
    PrintError("inspect", args.status());
    return kExitUsage;
  }
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return kExitOk;
  }
  if (args->size() != 1) {
    PrintError("inspect", "give exactly one FILE to inspect");
    return kExitUsage;
  }
  const std::string& path = args->front();
  if (absl::Status s = CheckReadableFile(path); !s.ok()) {
    PrintError("inspect", s);
    return kExitFailure;
  }
  std::string description;
  absl::Status status;
  if (IsCountsFile(path)) {
    status = DescribeCountsFile(path, options.top, &description);
  } else if (IsCheckpointFile(path)) {
    absl::StatusOr<Checkpoint> checkpoint = ReadCheckpoint(path);
    if (checkpoint.ok()) {
      description = DescribeCheckpoint(*checkpoint);
    } else {
      status = checkpoint.status();
    }
  } else {
    status = absl::InvalidArgumentError(
        "'" + path + "' is not a file tokenmill can inspect (supported: word-count files, checkpoints)");
  }
  if (!status.ok()) {
    PrintError("inspect", status);
    return kExitFailure;
  }
  std::fputs(description.c_str(), stdout);
  return kExitOk;
}

}  // namespace tokenmill::cli
