// The slow reference WordPiece trainer and encoder: the textbook algorithms, for tests only
// ("should never be used in production"). Words are lists of std::string symbols; every step
// recounts all pair counts and token counts from scratch and finds the best pair by a full scan
// (nothing incremental). It shares no code with lib/ nor with reference_trainer.cc (only the
// oracles' UTF-8 decoder, utf8_reference.h), and is the oracle the product's WordPiece trainer
// (Algorithm::kWordPiece) and piece encoder are compared against.
//
// THE CONTRACT (what the product must do too)
//
// Input: distinct words (UTF-8 byte strings, which may hold invalid UTF-8) with counts (equal
// words are summed); options.
//
// Alphabet. Its units are UTF-8 characters; a byte that does not begin a well-formed sequence
// is no character (it counts in no occurrence). The characters kept are chosen as for
// character-level BPE: ranked by count descending, then code point ascending, each added while
// the share of all character occurrences covered so far (covered / total, in double) is below
// character_coverage (1 keeps all); at most limit_alphabet of them (0: no limit). With
// hf_compat the coverage is not applied and limit_alphabet keeps the most frequent (Hugging
// Face's limit_alphabet, whose ties among equal counts are arbitrary; here the smaller code
// point wins).
// A word's symbols: the character at byte offset 0 of the word is plain `c`, every later one is
// `prefix + c` (prefix: continuing_subword_prefix, default "##"; empty: every symbol plain).
// "Later" is by position in the word as written: a character after a dropped one (below) keeps
// its prefix, even when it becomes the word's first symbol (Hugging Face's rule).
// A character outside the alphabet, and each invalid byte, is one unknown symbol, the token
// `unknown_token` (default "[UNK]"), which must be one of the special tokens and keeps that
// special's id; it is in no pair, so it never merges, and its neighbours are not adjacent.
// With hf_compat (frequency scoring only) such characters and bytes are dropped from the word
// instead (Hugging Face's trainer: the neighbours become adjacent).
//
// Ids: the special tokens first, in list order (ids 0..k-1; default [PAD] [UNK] [CLS] [SEP]
// [MASK]); then every plain character of the alphabet by code point; then the prefixed
// variants that occur in some word's symbols, by code point; then each new token in merge
// order.
//
// Counts (recomputed from the words' current segmentation at every step):
//  - pair count c(a, b) = sum over words of count x adjacent positions holding a then b
//    ("aaa", [a ##a ##a], holds (a, ##a) once and (##a, ##a) once; "aaaa" holds (##a, ##a)
//    twice);
//  - token count c(t) = sum over words of count x occurrences of t in the word.
// Eligible pairs: c(a, b) >= max(min_frequency, 1), and when max_token_length > 0,
// length(a) + length(b) <= max_token_length. A token's length is fixed when it first appears:
// a character symbol is 1 (the prefix counts nothing), a merged token the sum of its parts' (a
// token reused by a later merge keeps its length).
// Scoring (WordPieceScoring):
//  - likelihood: the eligible pair with the highest c(ab) / (c(a) * c(b)), compared exactly
//    (cross-multiplied; here in 192-bit integers, so exact for every u64 count), ties to the
//    pair smaller by (bytes of a, bytes of b) compared lexicographically (std::string's <, the
//    prefix bytes included);
//  - frequency: the highest c(a, b), ties by the same byte rule, or with hf_compat by the
//    smaller (id of a, id of b) (Hugging Face's BpeTrainer).
// A merge of (a, b) replaces the pair left to right without overlap in every word; the new
// token's bytes are a + (b without its leading prefix). When a non-special token with those
// bytes exists already (say "##a": a word "##a" has the plain symbols "#", "###", "##a", whose
// merges spell "##a" again), the merge is recorded and reuses that id: the vocabulary does not
// grow. Special tokens are not looked up: a merge spelling a special token's text forms an
// ordinary token.
// Training stops when the vocabulary (specials included) holds vocab_size ids, or when no pair
// is eligible. (When the specials and the alphabet alone reach vocab_size, there is no merge;
// the vocabulary is then larger than vocab_size. The product refuses such a vocab_size.)
// Output: the vocabulary in id order (strings) and the merges (left, right, pair count when
// chosen), reused ones included.
//
// THE ENCODER (BERT's greedy longest-match-first; Hugging Face's WordPiece::tokenize in
// tokenizers/src/models/wordpiece/mod.rs), per pre-tokenized word:
//  - a word of more than max_input_chars_per_word characters (default 100; Hugging Face counts
//    `sequence.chars()`, Unicode scalar values, not bytes; here an invalid byte is one
//    character) is one unknown token;
//  - else, from start = 0: the longest substring word[start, end) ending on a character
//    boundary, with the prefix put before it when start > 0, that is a token; none: the WHOLE
//    word is one unknown token (not the pieces found so far plus [UNK]); else emit it and
//    continue at end. An empty word has no tokens.
// Hugging Face matches against its whole vocabulary (specials included: they are in its vocab
// map). Here only the tokens the caller passes are matched (the tests pass the non-special
// tokens, tokenmill's Model::TokenIndex() convention); a word can differ only if a special's
// text is a piece of it.
//
// THE DECODER (Hugging Face's decoders::WordPiece, tokenizers/src/decoders/wordpiece.rs):
// token 0 is kept as it is (even when it starts with the prefix: HF's own test decodes
// ["##uelo", "Ara", "##új", "##o"] to "##uelo Araújo"); every later token that starts with the
// prefix loses it and is glued on, every other one gets a space before it; the parts are
// concatenated. With `cleanup` (HF's default true), each part (its added space included) is
// then passed through HF's cleanup() on its own: " ." -> ".", " ?" -> "?", " !" -> "!",
// " ," -> ",", " ' " -> "'", " n't" -> "n't", " 'm" -> "'m", " do not" -> " don't",
// " 's" -> "'s", " 've" -> "'ve", " 're" -> "'re" (str::replace, in that order). Being applied
// per token, a pattern only matches inside one part: " ." when the token is "." after a space,
// " do not" never with BERT's pre-tokenizer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tokenmill::testing {

enum class WordPieceScoring { kLikelihood, kFrequency };

struct WordPieceReferenceOptions {
  WordPieceScoring scoring = WordPieceScoring::kLikelihood;
  size_t vocab_size = 30000;  // ids, specials included
  uint64_t min_frequency = 0;
  size_t max_token_length = 0;  // characters, prefix not counted; 0: no limit
  double character_coverage = 1.0;
  size_t limit_alphabet = 0;  // 0: no limit
  // Unknown characters dropped and (id, id) ties; requires scoring == kFrequency.
  bool hf_compat = false;
  std::string prefix = "##";
  std::string unknown_token = "[UNK]";  // must be one of special_tokens
  std::vector<std::string> special_tokens = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
};

struct WordPieceReferenceMerge {
  std::string left, right;
  uint64_t count = 0;
  bool operator==(const WordPieceReferenceMerge&) const = default;
};
// For test messages.
inline void PrintTo(const WordPieceReferenceMerge& m, std::ostream* os) {
  *os << "'" << m.left << "' + '" << m.right << "' (" << m.count << ")";
}

struct WordPieceReferenceResult {
  std::vector<std::string> vocab;  // id order: specials, plain characters, variants, merges
  std::vector<WordPieceReferenceMerge> merges;
  size_t initial_size = 0;  // ids before the first merge (specials + alphabet)
  uint32_t unknown_id = 0;  // the unknown token's id (its place among the specials)
};

// Trains on `words` ((bytes, count) pairs; equal words are summed). Aborts on options the
// contract does not allow (hf_compat with likelihood scoring, an unknown token that is not a
// special token): a broken test.
WordPieceReferenceResult ReferenceWordPieceTrain(
    const std::vector<std::pair<std::string, uint64_t>>& words,
    const WordPieceReferenceOptions& options);

// The vocabulary an encoder matches against.
struct WordPieceReferenceVocab {
  std::map<std::string, uint32_t> ids;  // the matchable tokens' bytes -> id
  uint32_t unknown_id = 0;
  std::string prefix = "##";
  size_t max_input_chars_per_word = 100;
};

// The ids of one pre-tokenized word.
std::vector<uint32_t> ReferenceWordPieceEncode(std::string_view word,
                                               const WordPieceReferenceVocab& vocab);

// The text of `tokens` (their bytes, in order).
std::string ReferenceWordPieceDecode(const std::vector<std::string>& tokens,
                                     std::string_view prefix, bool cleanup = false);

}  // namespace tokenmill::testing
