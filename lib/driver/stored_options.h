// The options a checkpoint stores, and the rule for what a resumed run may change.
//
// Each part of TrainingRunOptions (the corpus's, the trainer's, the run's own) is stored as its
// fields (common/option_fields.h) under a tag of the checkpoint's header. Checkpoints of formats
// 1-4, which stored the train command's flags as text, are converted through the flag names
// tokenmill 0.1.0 wrote (legacy_settings.cc).
//
// Resuming: the caller names the options it sets (by their library names). A field that
// changes the result (OptionEffect::kChangesResult) must keep the checkpoint's value, or the
// error names it and both values; vocab_size may change (a larger one extends a finished run,
// a smaller one stops where training would have); the others (threads, progress, output, the
// checkpoint cadence) take the caller's value. The inputs cannot be given at all: the
// checkpoint holds the counted corpus.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "checkpoint/checkpoint.h"
#include "driver/run_options.h"

namespace tokenmill {

// Writes the three parts' fields into the checkpoint.
void StoreOptions(const TrainingRunOptions& options, Checkpoint& checkpoint);

// The options a checkpoint read from `source` stores.
absl::StatusOr<TrainingRunOptions> StoredOptions(const Checkpoint& checkpoint,
                                                 std::string_view source);

// The options a resumed run uses: `stored`, with the fields named in `set` taken from `given`
// as the rule above allows. Errors are OptionErrors naming the option.
absl::StatusOr<TrainingRunOptions> ResumedOptions(const TrainingRunOptions& stored,
                                                  const TrainingRunOptions& given,
                                                  const std::vector<std::string>& set);

// Calls f(name, values) for every stored option once (a name the corpus and the trainer share
// once), in the parts' order: the corpus's, the trainer's, the run's own.
void ForEachOption(const TrainingRunOptions& options,
                   const std::function<void(std::string_view name,
                                            const std::vector<std::string>& values)>& f);

// Formats 1-4: the options their (flag name, value) settings stand for.
absl::StatusOr<TrainingRunOptions> FromLegacySettings(
    std::span<const std::pair<std::string, std::string>> settings, std::string_view source);

}  // namespace tokenmill
