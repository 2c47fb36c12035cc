#include "driver/stored_options.h"

#include <algorithm>

#include "common/option_error.h"
#include "common/status_macros.h"
#include "common/strings.h"

namespace tokenmill {
namespace {

// Calls f(part, fields) for each part of TrainingRunOptions: f gets a function from the whole
// to the part (const and not) and the part's field table.
template <typename F>
void ForEachPart(F&& f) {
  f([](auto& o) -> auto& { return o.corpus; }, CountCorpusOptions::Fields());
  f([](auto& o) -> auto& { return o.trainer; }, TrainerOptions::Fields());
  f([](auto& o) -> auto& { return o; }, TrainingRunOptions::Fields());
}

std::string Quoted(const std::vector<std::string>& values) {
  std::string out;
  for (const std::string& v : values) out += (out.empty() ? "'" : ", '") + v + "'";
  return out.empty() ? std::string("none") : out;
}

}  // namespace

void StoreOptions(const TrainingRunOptions& options, Checkpoint& checkpoint) {
  checkpoint.corpus_options = EncodeFields(options.corpus, CountCorpusOptions::Fields());
  checkpoint.trainer_options = EncodeFields(options.trainer, TrainerOptions::Fields());
  checkpoint.run_options = EncodeFields(options, TrainingRunOptions::Fields());
}

absl::StatusOr<TrainingRunOptions> StoredOptions(const Checkpoint& checkpoint,
                                                 std::string_view source) {
  if (checkpoint.format_version < 5) return FromLegacySettings(checkpoint.legacy_settings, source);
  TrainingRunOptions options;
  absl::Status status = DecodeFields(checkpoint.corpus_options, CountCorpusOptions::Fields(),
                                     "corpus options", &options.corpus);
  if (status.ok()) {
    status = DecodeFields(checkpoint.trainer_options, TrainerOptions::Fields(),
                          "trainer options", &options.trainer);
  }
  if (status.ok()) {
    status = DecodeFields(checkpoint.run_options, TrainingRunOptions::Fields(), "run options",
                          &options);
  }
  if (!status.ok()) {
    return absl::DataLossError(
        StrCat(source, ": not a valid tokenmill checkpoint: ", Message(status)));
  }
  return options;
}

absl::StatusOr<TrainingRunOptions> ResumedOptions(const TrainingRunOptions& stored,
                                                  const TrainingRunOptions& caller,
                                                  const std::vector<std::string>& set) {
  // Compared part by part, so the trainer's copies of the corpus's options must be the
  // caller's too (the stored ones are).
  TrainingRunOptions given = caller;
  given.Harmonize();
  auto is_set = [&](std::string_view name) {
    return std::find(set.begin(), set.end(), name) != set.end();
  };
  if (is_set("inputs") && !given.corpus.inputs.empty()) {
    return OptionError(StrCat("with `resume`, give no input files: the checkpoint holds the "
                              "counted corpus (got '", given.corpus.inputs[0], "')"),
                       {"inputs"});
  }
  TrainingRunOptions resumed = stored;
  absl::Status status;
  ForEachPart([&](auto part, auto fields) {
    for (const auto& field : fields) {
      if (!status.ok() || !is_set(field.name)) continue;
      if (field.effect == OptionEffect::kChangesResult && !field.equal(part(stored), part(given))) {
        status = OptionError(
            StrCat("`", field.name, "` is ", Quoted(field.values(part(given))),
                   " but the checkpoint was trained with ", Quoted(field.values(part(stored))),
                   "; it changes the result, so it cannot change on resume (leave it out)"),
            {field.name});
        continue;
      }
      // Taken from the caller: a field is copied through its encoding, whatever its type.
      std::string bytes;
      BinaryWriter w(&bytes);
      field.encode(part(given), w);
      field.decode(bytes, &part(resumed));
    }
  });
  TM_RETURN_IF_ERROR(status);
  resumed.Harmonize();
  return resumed;
}

void ForEachOption(const TrainingRunOptions& options,
                   const std::function<void(std::string_view name,
                                            const std::vector<std::string>& values)>& f) {
  std::vector<std::string_view> shown;
  ForEachPart([&](auto part, auto fields) {
    for (const auto& field : fields) {
      if (std::find(shown.begin(), shown.end(), field.name) != shown.end()) continue;
      shown.push_back(field.name);
      f(field.name, field.values(part(options)));
    }
  });
}

}  // namespace tokenmill
