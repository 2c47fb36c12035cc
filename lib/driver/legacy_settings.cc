// Checkpoints of formats 1-4 stored the train command's settings as (flag name, value) text
// pairs, as tokenmill 0.1.0 (up to ace9bed) spelled its flags. This is the one place that
// still knows those spellings: a frozen record of a past file format, not of today's CLI.
#include <algorithm>
#include <string_view>

#include "common/status_macros.h"
#include "common/strings.h"
#include "driver/stored_options.h"

namespace tokenmill {
namespace {

struct LegacyFlag {
  std::string_view flag;    // as stored
  std::string_view option;  // the option it set ("": it set none that is stored now)
};

constexpr LegacyFlag kLegacyFlags[] = {
    {"vocab-size", "vocab_size"},
    {"output", "output"},
    {"format", "format"},
    {"preset", "pretokenizer"},
    {"special-token", "special_tokens"},
    {"threads", "threads"},
    {"counts", "counts_files"},
    {"doc-mode", "doc_mode"},
    {"text-field", "text_field"},
    {"input-format", "input_format"},
    {"include", "include"},
    {"exclude", "exclude"},
    {"skip-bad-records", "skip_bad_records"},
    {"progress", "progress"},
    {"shard-bytes", "shard_bytes"},
    {"batch-bytes", "batch_bytes"},
    {"special-tokens-at", "special_tokens_at"},
    {"min-frequency", "min_frequency"},
    {"max-token-length", "max_token_length"},
    {"hf-compat", "hf_compat"},
    {"checkpoint", "checkpoint"},
    {"checkpoint-every", "checkpoint_every"},
    {"checkpoint-interval", "checkpoint_interval"},
    // How the command printed, not what it trained or wrote: not kept.
    {"verbose", ""},
    {"log-every", ""},
    {"quiet", ""},
    {"ignore-corpus-change", ""},
    {"resume", ""},
};

// Sets option `name` from `text` if `fields` has it (the corpus and the trainer share some
// names; the caller tries every part), and then sets `found`.
template <typename Fields, typename Options>
absl::Status SetIn(Fields fields, std::string_view name, std::string_view text, Options& options,
                   bool& found) {
  const auto* field = FindField(fields, name);
  if (field == nullptr) return absl::OkStatus();
  found = true;
  return field->parse(text, &options);
}

}  // namespace

absl::StatusOr<TrainingRunOptions> FromLegacySettings(
    std::span<const std::pair<std::string, std::string>> settings, std::string_view source) {
  TrainingRunOptions options;
  for (const auto& setting : settings) {
    const std::string& flag = setting.first;
    const std::string& value = setting.second;
    const LegacyFlag* legacy = std::find_if(std::begin(kLegacyFlags), std::end(kLegacyFlags),
                                            [&](const LegacyFlag& l) { return l.flag == flag; });
    if (legacy == std::end(kLegacyFlags)) {
      return absl::DataLossError(StrCat(source, ": its setting --", flag,
                                        " is not one that tokenmill 0.1.0 wrote"));
    }
    if (legacy->option.empty()) continue;
    bool found = false;
    absl::Status status =
        SetIn(CountCorpusOptions::Fields(), legacy->option, value, options.corpus, found);
    if (status.ok()) {
      status = SetIn(TrainerOptions::Fields(), legacy->option, value, options.trainer, found);
    }
    if (status.ok()) status = SetIn(TrainingRunOptions::Fields(), legacy->option, value, options, found);
    if (!status.ok() || !found) {
      return absl::DataLossError(StrCat(source, ": its setting --", flag, "=", value,
                                        " is not understood",
                                        status.ok() ? "" : StrCat(": ", Message(status))));
    }
  }
  options.Harmonize();
  // tokenmill 0.1.0 stored --special-tokens-at as given (default "end"), then gave --hf-compat
  // runs the start as the default, and refused an explicit end with special tokens: a stored
  // end with --hf-compat and special tokens was a run with them at the start.
  if (options.trainer.hf_compat && !options.trainer.special_tokens.empty()) {
    options.trainer.special_tokens_at = SpecialTokensAt::kStart;
  }
  return options;
}

}  // namespace tokenmill
