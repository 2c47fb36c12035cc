#include "driver/run_options.h"

#include <filesystem>

#include "common/option_error.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "count/count_corpus.h"
#include "model/wordpiece/wordpiece_files.h"
#include "pretokenize/presets.h"

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
  // Far more threads than cores only cost (a thread, a stack and a shard each): capped as the
  // corpus reader caps them for counting and encoding.
  if (corpus.threads > 0) corpus.threads = ThreadCount(corpus.threads);
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

namespace {

// An OptionError when one of `only`, which belong to `owner`, is given with another algorithm.
absl::Status OnlyWithAlgorithm(const GivenOptions& given, Algorithm algorithm, Algorithm owner,
                               std::initializer_list<std::string_view> only) {
  if (algorithm == owner) return absl::OkStatus();
  for (std::string_view name : only) {
    if (given.contains(std::string(name))) {
      return OptionError(StrCat("`", name, "` applies only to `algorithm` ", AlgorithmName(owner)),
                         {std::string(name), "algorithm"});
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyAlgorithmDefaults(TrainingRunOptions& run, const GivenOptions& given,
                                    bool bert_specials) {
  TrainerOptions& t = run.trainer;
  PreTokenizerConfig& split = run.corpus.pretokenizer;
  auto is_given = [&](std::string_view name) { return given.contains(std::string(name)); };
  TM_RETURN_IF_ERROR(OnlyWithAlgorithm(given, t.algorithm, Algorithm::kUnigram,
                                       {"seed_size", "max_piece_length", "sub_iterations",
                                        "shrinking_factor", "split_by_script"}));
  TM_RETURN_IF_ERROR(OnlyWithAlgorithm(given, t.algorithm, Algorithm::kWordPiece,
                                       {"wordpiece_score", "max_input_chars_per_word"}));
  if (t.algorithm == Algorithm::kUnigram) {
    for (std::string_view name : {"min_frequency", "max_token_length", "continuing_subword_prefix",
                                  "end_of_word_suffix", "hf_compat", "hf_all_bytes",
                                  "marked_symbol_order"}) {
      if (is_given(name)) {
        return OptionError(StrCat("`", name, "` is a BPE option; `algorithm` unigram does not "
                                  "take it",
                                  name == "max_token_length" ? " (its limit is `max_piece_length`)"
                                                             : ""),
                           {"algorithm"});
      }
    }
    if (!is_given("units")) t.units = UnitKind::kChar;
    if (!is_given("special_tokens_at")) t.special_tokens_at = SpecialTokensAt::kStart;
    if (!is_given("preset") && !is_given("pattern")) split.preset = "metaspace";
    if (!is_given("normalize")) split.normalizer.form = NormalForm::kNfkc;
    // A checkpoint after every EM round: rounds are few and long, a state is small beside them.
    if (!is_given("checkpoint_every")) run.checkpoint_every = 1;
    return absl::OkStatus();
  }
  if (t.algorithm == Algorithm::kWordPiece) {
    if (!is_given("units")) t.units = UnitKind::kChar;
    if (!is_given("continuing_subword_prefix")) t.continuing_subword_prefix = "##";
    if (!is_given("byte_fallback")) t.byte_fallback = false;
    if (!is_given("character_coverage")) t.character_coverage = 1.0;
    if (!is_given("special_tokens_at")) t.special_tokens_at = SpecialTokensAt::kStart;
    t.unknown_token = std::string(kBertSpecialTokens[1]);
    if (!is_given("preset") && !is_given("pattern")) {
      split.preset = "bert";
      ApplyPresetNormalizer(&split);
    }
    if (run.corpus.special_tokens.empty() && bert_specials) {
      run.corpus.special_tokens.assign(std::begin(kBertSpecialTokens), std::end(kBertSpecialTokens));
    }
  }
  // `hf_compat` gives special tokens the first ids, as Hugging Face does.
  if (t.hf_compat && !is_given("special_tokens_at")) t.special_tokens_at = SpecialTokensAt::kStart;
  if (t.hf_compat && t.special_tokens_at == SpecialTokensAt::kEnd &&
      !run.corpus.special_tokens.empty()) {
    return OptionError(
        "`hf_compat` gives special tokens the first ids, as Hugging Face does; it conflicts "
        "with `special_tokens_at`=end",
        {"hf_compat", "special_tokens_at"});
  }
  return absl::OkStatus();
}

}  // namespace tokenmill
