// TrainerOptions: every setting of training, with its default, in one place. The CLI's flags
// take their defaults from here; Validate() is the one place they are checked; Fields() lists
// them for checkpoints and resuming (common/option_fields.h), with their library names (the
// members' names), which errors use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <span>

#include "absl/status/status.h"
#include "common/option_fields.h"
#include "model/units.h"
#include "pretokenize/pretokenizer_config.h"

namespace tokenmill {

// Training algorithms, numbered for checkpoints: a number is never reused.
enum class Algorithm : uint8_t {
  kBpe = 1,
  kWordPiece = 2,
  kUnigram = 3,
};
// "bpe", "wordpiece", "unigram".
std::string_view AlgorithmName(Algorithm algorithm);

// How WordPiece training ranks the pairs, numbered for checkpoints.
enum class WordPieceScore : uint8_t {
  // count(ab) / (count(a) count(b)): how much the merge raises the corpus likelihood
  // (log P(ab) - log P(a) - log P(b)), the original WordPiece's criterion.
  kLikelihood = 1,
  // count(ab), as BPE: what Hugging Face's WordPieceTrainer does (its BPE trainer, renamed).
  kFrequency = 2,
};
// "likelihood", "frequency".
std::string_view WordPieceScoreName(WordPieceScore score);

enum class SpecialTokensAt : uint8_t {
  kStart = 1,  // ids 0..k-1, before the alphabet (Hugging Face)
  kEnd = 2,    // after the last merge (tiktoken)
};

struct TrainerOptions {
  Algorithm algorithm = Algorithm::kBpe;
  // What tokens are made of (model/units.h).
  UnitKind units = UnitKind::kByte;
  // Total number of ids: alphabet + merges + special tokens.
  size_t vocab_size = 30000;
  // Stop when the most frequent pair occurs fewer times than this (0 or 1: never stop early).
  uint64_t min_frequency = 0;
  // Never form a token longer than this (0: no limit), in the units' length (bytes here).
  size_t max_token_length = 0;
  // The pre-tokenizer the words were split with (counting's); the model records it.
  PreTokenizerConfig pretokenizer;
  // Literal strings that get their own ids and are never split or merged.
  std::vector<std::string> special_tokens;
  SpecialTokensAt special_tokens_at = SpecialTokensAt::kEnd;
  // Hugging Face's alphabet (bytes that occur, by byte-level code point), ids and tie-break.
  bool hf_compat = false;
  // With hf_compat: every byte in the alphabet, seen or not (Hugging Face's
  // `initial_alphabet = ByteLevel.alphabet()`, as GPT-2-style setups train), so that every text
  // can be encoded. Without hf_compat the alphabet always holds every byte.
  bool hf_all_bytes = false;
  // Character units (model/units.h): the characters kept in the alphabet cover this share of
  // all character occurrences (SentencePiece's default; 1 keeps all); at most limit_alphabet of
  // them (0: no limit). With hf_compat, coverage is not applied (Hugging Face keeps every
  // character) and limit_alphabet drops the rarest, as Hugging Face's limit_alphabet does.
  double character_coverage = 0.9995;
  size_t limit_alphabet = 0;
  // Character units: the characters left out, and bytes that are not UTF-8, become the 256
  // byte-fallback tokens <0x00>..<0xFF> (ids right after the special tokens at the start); when
  // false, one unknown token "<unk>" (a special token, first id after those specials), or with
  // hf_compat nothing (Hugging Face's trainer drops them from the words).
  bool byte_fallback = true;
  // Character units, classic BPE's word-boundary markers (Hugging Face's BpeTrainer options):
  // every symbol of a word but its first carries continuing_subword_prefix (e.g. "##"), the
  // last one end_of_word_suffix (e.g. "</w>", Sennrich's subword-nmt). A merge drops the right
  // token's prefix ("a" + "##b" = "ab"). Empty: none.
  std::string continuing_subword_prefix;
  std::string end_of_word_suffix;
  // WordPiece (algorithm kWordPiece, which needs character units, a continuing_subword_prefix
  // such as "##", no end_of_word_suffix and no byte_fallback): how pairs are ranked.
  WordPieceScore wordpiece_score = WordPieceScore::kLikelihood;
  // Character units without byte fallback: the token that characters outside the alphabet
  // become (one of special_tokens, or a special token of its own first after them).
  std::string unknown_token = "<unk>";
  // WordPiece: a word of more characters than this encodes as the unknown token (BERT's rule;
  // the model records it).
  size_t max_input_chars_per_word = 100;
  // Worker threads (0: all cores). Never changes the result.
  int threads = 0;
  // BPE, for tests: when resuming, leave out of the pair table the pairs counted below this
  // (0: the trainer chooses; see lib/train/bpe/pair_recount.cc), so that recounting every
  // pair, when a pair left out could be the best, is exercised. Never changes the result.
  uint64_t resume_pair_floor = 0;
  // Unigram, for tests: the maximum-likelihood M-step (log(expected) - log(sum)) instead of
  // SentencePiece's digamma one, under which EM never lowers the log-likelihood. Not stored.
  bool unigram_ml_m_step = false;
  // Character units with word-boundary markers, to reproduce one Hugging Face run exactly
  // (AlphabetOptions::marked_order): the marked symbols in the order of that run's ids (empty:
  // by code point).
  std::vector<std::string> marked_symbol_order;
  // Unigram (algorithm kUnigram, on character units without word-boundary markers; the
  // unknown token is a special token at the start, added first when not listed): the seed
  // vocabulary's size (its most frequent substrings, beside every character), the longest
  // piece in characters, the EM steps per round, the share of pieces a round keeps, and
  // whether a piece keeps to one Unicode script (train/unigram/unigram_trainer.h).
  size_t seed_size = 1000000;
  size_t max_piece_length = 16;
  size_t sub_iterations = 2;
  double shrinking_factor = 0.75;
  bool split_by_script = true;

  // Errors name the options (common/option_error.h).
  absl::Status Validate() const;
  // Every field but resume_pair_floor (a test knob), with its stable tag.
  static std::span<const OptionField<TrainerOptions>> Fields();
};

}  // namespace tokenmill
