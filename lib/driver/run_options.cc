#include "driver/run_options.h"

#include <filesystem>

namespace tokenmill {

template <>
struct EnumNames<ModelFormat> {
  static constexpr std::pair<std::string_view, ModelFormat> kNames[] = {
      {"hf", ModelFormat::kHfJson}, {"tiktoken", ModelFormat::kTiktoken},
      {"vocab-txt", ModelFormat::kVocabTxt}};
};

std::span<const OptionField<TrainingRunOptions>> TrainingRunOptions::Fields() {
  using O = TrainingRunOptions;
  using E = OptionEffect;
  // Tags are stable: never renumber one, never reuse one of a removed field.
  static const OptionField<O> kFields[] = {
      Field<&O::output>(1, "output", E::kNone),
      Field<&O::format>(2, "format", E::kNone),
      Field<&O::checkpoint>(3, "checkpoint", E::kNone),
      Field<&O::checkpoint_every>(4, "checkpoint_every", E::kNone),
      Field<&O::checkpoint_interval>(5, "checkpoint_interval", E::kNone),
  };
  return kFields;
}

void TrainingRunOptions::Harmonize() {
  trainer.pretokenizer = corpus.pretokenizer;
  trainer.special_tokens = corpus.special_tokens;
  trainer.threads = corpus.threads;
}

std::string TrainingRunOptions::CheckpointPath() const {
  if (checkpoint == "none") return "";
  if (!checkpoint.empty()) return checkpoint;
  if (output.empty()) return "";
  // An output that is a device or a pipe (/dev/stdout, /dev/full) has no folder of its own to
  // hold OUTPUT.ckpt: no checkpoint unless `checkpoint` names one.
  std::error_code ec;
  auto status = std::filesystem::status(output, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    return "";
  }
  return output + ".ckpt";
}

}  // namespace tokenmill
