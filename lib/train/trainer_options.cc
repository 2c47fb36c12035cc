#include "train/trainer_options.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "common/option_error.h"
#include "common/strings.h"
#include "pretokenize/pretokenizer_config_codec.h"

namespace tokenmill {

template <>
struct EnumNames<Algorithm> {
  static constexpr std::pair<std::string_view, Algorithm> kNames[] = {
      {"bpe", Algorithm::kBpe}, {"wordpiece", Algorithm::kWordPiece},
      {"unigram", Algorithm::kUnigram}};
};
template <>
struct EnumNames<WordPieceScore> {
  static constexpr std::pair<std::string_view, WordPieceScore> kNames[] = {
      {"likelihood", WordPieceScore::kLikelihood}, {"frequency", WordPieceScore::kFrequency}};
};
template <>
struct EnumNames<UnitKind> {
  static constexpr std::pair<std::string_view, UnitKind> kNames[] = {{"byte", UnitKind::kByte},
                                                                        {"char", UnitKind::kChar}};
};
template <>
struct EnumNames<SpecialTokensAt> {
  static constexpr std::pair<std::string_view, SpecialTokensAt> kNames[] = {
      {"start", SpecialTokensAt::kStart}, {"end", SpecialTokensAt::kEnd}};
};

std::string_view AlgorithmName(Algorithm algorithm) {
  for (const auto& [name, value] : EnumNames<Algorithm>::kNames) {
    if (value == algorithm) return name;
  }
  return "?";
}

std::string_view WordPieceScoreName(WordPieceScore score) {
  for (const auto& [name, value] : EnumNames<WordPieceScore>::kNames) {
    if (value == score) return name;
  }
  return "?";
}

std::span<const OptionField<TrainerOptions>> TrainerOptions::Fields() {
  using O = TrainerOptions;
  using E = OptionEffect;
  // Tags are stable: never renumber one, never reuse one of a removed field.
  static const OptionField<O> kFields[] = {
      Field<&O::algorithm>(1, "algorithm", E::kChangesResult),
      Field<&O::units>(2, "units", E::kChangesResult),
      Field<&O::vocab_size>(3, "vocab_size", E::kMayGrow),
      Field<&O::min_frequency>(4, "min_frequency", E::kChangesResult),
      Field<&O::max_token_length>(5, "max_token_length", E::kChangesResult),
      Field<&O::pretokenizer>(6, "pretokenizer", E::kChangesResult),
      Field<&O::special_tokens>(7, "special_tokens", E::kChangesResult),
      Field<&O::special_tokens_at>(8, "special_tokens_at", E::kChangesResult),
      Field<&O::hf_compat>(9, "hf_compat", E::kChangesResult),
      Field<&O::threads>(10, "threads", E::kNone),
      Field<&O::hf_all_bytes>(11, "hf_all_bytes", E::kChangesResult),
      Field<&O::character_coverage>(12, "character_coverage", E::kChangesResult),
      Field<&O::limit_alphabet>(13, "limit_alphabet", E::kChangesResult),
      Field<&O::byte_fallback>(14, "byte_fallback", E::kChangesResult),
      Field<&O::continuing_subword_prefix>(15, "continuing_subword_prefix", E::kChangesResult),
      Field<&O::end_of_word_suffix>(16, "end_of_word_suffix", E::kChangesResult),
      Field<&O::wordpiece_score>(17, "wordpiece_score", E::kChangesResult),
      Field<&O::unknown_token>(18, "unknown_token", E::kChangesResult),
      Field<&O::max_input_chars_per_word>(19, "max_input_chars_per_word", E::kChangesResult),
      Field<&O::marked_symbol_order>(20, "marked_symbol_order", E::kChangesResult),
      Field<&O::seed_size>(21, "seed_size", E::kChangesResult),
      Field<&O::max_piece_length>(22, "max_piece_length", E::kChangesResult),
      Field<&O::sub_iterations>(23, "sub_iterations", E::kChangesResult),
      Field<&O::shrinking_factor>(24, "shrinking_factor", E::kChangesResult),
      Field<&O::split_by_script>(25, "split_by_script", E::kChangesResult),
  };
  return kFields;
}

absl::Status TrainerOptions::Validate() const {
  if (threads < 0) return OptionError("`threads` must be 0 (all cores) or more", {"threads"});
  if (max_token_length == 1) {
    return OptionError(
        "`max_token_length` 1 allows no merge (every merge forms at least 2 bytes); use 0 for no "
        "limit or 2 and more",
        {"max_token_length"});
  }
  StringSet seen;
  for (const std::string& s : special_tokens) {
    if (s.empty()) return OptionError("`special_tokens` must not be empty", {"special_tokens"});
    if (!seen.insert(s).second) {
      return OptionError(StrCat("`special_tokens` '", s, "' is given twice"), {"special_tokens"});
    }
  }
  if (hf_all_bytes && !hf_compat) {
    return OptionError("`hf_all_bytes` applies only with `hf_compat` (without it the alphabet "
                       "holds every byte anyway)",
                       {"hf_all_bytes", "hf_compat"});
  }
  if (!(character_coverage > 0 && character_coverage <= 1)) {
    return OptionError(StrCat("`character_coverage` ", character_coverage,
                              " is outside (0, 1]: it is the share of character occurrences the "
                              "alphabet covers"),
                       {"character_coverage"});
  }
  // WordPiece's conflicts first: the CLI sets its defaults (`units` char, the prefix) only where
  // not given, so a given `units` byte or `byte_fallback` would otherwise be reported as a
  // conflict of a default the user never set, or as a `vocab_size` too small for byte fallback.
  if (algorithm == Algorithm::kWordPiece) {
    if (units != UnitKind::kChar) {
      return OptionError("`algorithm` wordpiece trains on characters: set `units` char",
                         {"algorithm", "units"});
    }
    if (byte_fallback) {
      return OptionError("`algorithm` wordpiece has no byte fallback (a word it cannot match is "
                         "its unknown token): set `byte_fallback` false",
                         {"algorithm", "byte_fallback"});
    }
    if (continuing_subword_prefix.empty()) {
      return OptionError("`algorithm` wordpiece needs a `continuing_subword_prefix` (BERT's "
                         "\"##\"): it tells a word's later pieces from its first",
                         {"algorithm", "continuing_subword_prefix"});
    }
    if (!end_of_word_suffix.empty()) {
      return OptionError("`end_of_word_suffix` is a BPE option; `algorithm` wordpiece marks "
                         "word-internal pieces with `continuing_subword_prefix` only",
                         {"algorithm", "end_of_word_suffix"});
    }
    if (hf_compat && wordpiece_score != WordPieceScore::kFrequency) {
      return OptionError("`hf_compat` gives Hugging Face's WordPieceTrainer, which ranks pairs "
                         "by frequency: set `wordpiece_score` frequency",
                         {"hf_compat", "wordpiece_score"});
    }
    if (max_input_chars_per_word == 0) {
      return OptionError("`max_input_chars_per_word` must be 1 or more",
                         {"max_input_chars_per_word"});
    }
  }
  if (algorithm == Algorithm::kUnigram) {
    if (units != UnitKind::kChar) {
      return OptionError("`algorithm` unigram trains on characters: set `units` char",
                         {"algorithm", "units"});
    }
    if (!continuing_subword_prefix.empty() || !end_of_word_suffix.empty()) {
      return OptionError("`continuing_subword_prefix` and `end_of_word_suffix` are BPE and "
                         "WordPiece options; `algorithm` unigram marks words with the metaspace",
                         {"algorithm", "continuing_subword_prefix", "end_of_word_suffix"});
    }
    if (hf_compat) {
      return OptionError("`hf_compat` is for BPE and WordPiece; `algorithm` unigram writes "
                         "tokenizer.json files that Hugging Face loads and encodes the same",
                         {"algorithm", "hf_compat"});
    }
    if (min_frequency > 1) {
      return OptionError("`min_frequency` is a BPE and WordPiece option (a merge's count); "
                         "`algorithm` unigram prunes by likelihood",
                         {"algorithm", "min_frequency"});
    }
    if (max_token_length > 0) {
      return OptionError("`max_token_length` is a BPE and WordPiece option; `algorithm` "
                         "unigram's is `max_piece_length`",
                         {"algorithm", "max_token_length"});
    }
    if (special_tokens_at != SpecialTokensAt::kStart) {
      return OptionError("`algorithm` unigram puts the special tokens at the start",
                         {"algorithm", "special_tokens_at"});
    }
    if (!(shrinking_factor > 0 && shrinking_factor < 1)) {
      return OptionError(StrCat("`shrinking_factor` ", shrinking_factor,
                                " is outside (0, 1): it is the share of pieces each round keeps"),
                         {"shrinking_factor"});
    }
    if (sub_iterations == 0) {
      return OptionError("`sub_iterations` must be 1 or more (EM steps per round)",
                         {"sub_iterations"});
    }
    if (max_piece_length == 0 || max_piece_length > 64) {
      return OptionError(StrCat("`max_piece_length` ", max_piece_length,
                                " is outside 1..64 (characters)"),
                         {"max_piece_length"});
    }
    if (seed_size == 0) {
      return OptionError("`seed_size` must be 1 or more", {"seed_size"});
    }
    const bool unknown_listed = std::find(special_tokens.begin(), special_tokens.end(),
                                          unknown_token) != special_tokens.end();
    const size_t fixed = special_tokens.size() + (unknown_listed ? 0 : 1) +
                         (byte_fallback ? 256 : 0);
    if (vocab_size <= fixed) {
      return OptionError(StrCat("`vocab_size` ", vocab_size, " leaves no piece beside the ",
                                fixed, " special", byte_fallback ? " and byte-fallback" : "",
                                " tokens"),
                         {"vocab_size"});
    }
  }
  if (units != UnitKind::kChar && limit_alphabet > 0) {
    return OptionError("`limit_alphabet` applies only to character units (`units` char); byte "
                       "units always have the 256 bytes",
                       {"limit_alphabet", "units"});
  }
  if (units != UnitKind::kChar &&
      (!continuing_subword_prefix.empty() || !end_of_word_suffix.empty())) {
    return OptionError("`continuing_subword_prefix` and `end_of_word_suffix` apply to character "
                       "units (`units` char)",
                       {"continuing_subword_prefix", "end_of_word_suffix", "units"});
  }
  if (continuing_subword_prefix.find(' ') != std::string::npos ||
      end_of_word_suffix.find(' ') != std::string::npos) {
    return OptionError("`continuing_subword_prefix` and `end_of_word_suffix` must not hold a "
                       "space (tokenizer.json's merges are written \"left right\")",
                       {"continuing_subword_prefix", "end_of_word_suffix"});
  }
  if (units == UnitKind::kChar && hf_all_bytes) {
    return OptionError("`hf_all_bytes` applies only to byte units; character units have "
                       "`byte_fallback` for the bytes they do not cover",
                       {"hf_all_bytes", "units"});
  }
  // The unknown token takes an id of its own unless it is one of the special tokens (or, with
  // hf_compat and no byte fallback, there is none).
  const bool unknown_listed = std::find(special_tokens.begin(), special_tokens.end(),
                                        unknown_token) != special_tokens.end();
  const bool own_unknown = !byte_fallback && !hf_compat && !unknown_listed;
  if (units == UnitKind::kChar &&
      vocab_size < (byte_fallback ? 256 : own_unknown ? 1 : 0) + special_tokens.size()) {
    return OptionError(
        StrCat("`vocab_size` ", vocab_size, " is smaller than the ",
               byte_fallback ? "256 byte-fallback tokens plus "
               : own_unknown ? "unknown token plus "
                             : "",
               special_tokens.size(), " special tokens"),
        {"vocab_size"});
  }
  if (unknown_token.empty()) {
    return OptionError("`unknown_token` must not be empty", {"unknown_token"});
  }
  if (units == UnitKind::kByte && (!hf_compat || hf_all_bytes) &&
      vocab_size < 256 + special_tokens.size()) {
    return OptionError(StrCat("`vocab_size` ", vocab_size, " is smaller than the 256 byte tokens plus ",
                              special_tokens.size(), " special tokens"),
                       {"vocab_size"});
  }
  return absl::OkStatus();
}

}  // namespace tokenmill
