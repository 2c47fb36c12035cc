#include "driver/describe.h"

#include "absl/strings/str_format.h"
#include "common/strings.h"
#include "driver/stored_options.h"
#include "train/unigram/unigram_trainer.h"

namespace tokenmill {

std::string DescribeCheckpoint(const Checkpoint& c,
                               const std::function<std::string(std::string_view name)>& label) {
  std::string out = absl::StrFormat("tokenmill checkpoint, format version %d, %d bytes\n",
                                    c.format_version, c.file_size);
  if (!c.words_file.empty()) {
    absl::StrAppendFormat(&out, "word table: %s, %d bytes\n", c.words_file, c.words_file_size);
  }
  absl::StatusOr<TrainingRunOptions> options = StoredOptions(c, "the checkpoint");
  const std::string target = options.ok() ? StrCat(options->trainer.vocab_size) : "?";
  if (c.model_type == ModelType::kUnigram) {
    absl::StatusOr<UnigramStateSummary> state = SummarizeUnigramState(c.trainer_state);
    if (c.trainer_state.empty()) {
      absl::StrAppendFormat(&out, "EM rounds done: 0 (the words are counted) of a target vocabulary of %s\n",
                            target);
    } else if (!state.ok()) {
      absl::StrAppendFormat(&out, "EM rounds: %s\n", Message(state.status()));
    } else {
      absl::StrAppendFormat(&out,
                            "EM rounds done: %d, %d pieces, log-likelihood %.6g, of a target "
                            "vocabulary of %s%s\n",
                            state->rounds, state->pieces, state->log_likelihood, target,
                            c.finished ? " (training had finished)"
                            : state->final ? " (only the final cut is left)" : "");
    }
  } else {
    absl::StrAppendFormat(&out, "merges done: %d of a target vocabulary of %s%s\n",
                          c.merges.size(), target, c.finished ? " (training had finished)" : "");
  }
  out += "configuration:\n";
  if (!options.ok()) {
    absl::StrAppendFormat(&out, "  (not readable: %s)\n", Message(options.status()));
  } else {
    ForEachOption(*options, [&](std::string_view name, const std::vector<std::string>& values) {
      const std::string shown = label ? label(name) : std::string(name);
      if (shown.empty()) return;
      for (const std::string& value : values) absl::StrAppendFormat(&out, "  %s=%s\n", shown, value);
    });
  }
  absl::StrAppendFormat(&out, "corpus: %d documents, %d bytes, %d words, %d unique words, table hash %016x\n",
                        c.documents, c.corpus_bytes, c.words.total_words(), c.words.unique_words(),
                        c.word_table_hash);
  for (const CorpusFileStamp& f : c.corpus_files) {
    absl::StrAppendFormat(&out, "  %s (%d bytes, modified %d.%09d)\n", f.path, f.size,
                          f.mtime_ns / 1000000000, f.mtime_ns % 1000000000);
  }
  return out;
}

}  // namespace tokenmill
