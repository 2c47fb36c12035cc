// Units: what a model's tokens are made of, shared by training and encoding. A unit kind says
// which initial symbols (the alphabet) a corpus needs, how a word becomes initial symbols, how
// two tokens join into one and how long a token is (for a length limit), and how tokens and
// the text around them are written in tokenizer.json.
//
// Byte-level units (GPT-2 style, the first kind): the alphabet is the 256 byte values, every
// word is its bytes, tokens join by concatenation, length is in bytes, and tokenizer.json writes
// token bytes through GPT-2's byte-to-character map (ByteLevel pre-tokenizer and decoder).
// Character units (SentencePiece/Llama style): the alphabet is the corpus's characters (all, or
// those covering a share of the occurrences, or the most frequent), plus either 256 byte-fallback
// tokens <0x00>..<0xFF> (each stored as its one byte, so that decoding is concatenation) that
// never merge (Length() is kNeverMerges), or one unknown token "<unk>" (a special token).
// A character outside the alphabet, and each byte that is not well-formed UTF-8, becomes its
// bytes' fallback tokens (or <unk>); tokens join by concatenation and length is in characters.
// The trainer's merge loop, pair index, queue and deltas know nothing of this (lib/README.md).
#pragma once

#include <bitset>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "pretokenize/pretokenizer_config.h"

namespace tokenmill {

// Unit kinds, numbered for checkpoints: a number is never reused.
enum class UnitKind : uint8_t {
  kByte = 1,
  kChar = 2,
};
// "byte", "char".
std::string_view UnitKindName(UnitKind kind);

// The unknown token of character units without byte fallback, unless named otherwise.
inline constexpr std::string_view kUnknownToken = "<unk>";

// How training picks the alphabet.
struct AlphabetOptions {
  // Hugging Face's alphabet: only the symbols that occur, in its order (byte level: ordered by
  // the GPT-2 byte-level code point) instead of all of them in their natural order.
  bool hf_compat = false;
  // With hf_compat: every symbol of the units, seen or not (byte level: all 256, still in
  // Hugging Face's order), as Hugging Face's `initial_alphabet` adds them.
  bool every_symbol = false;
  // Characters: keep the most frequent characters until they cover this share of all character
  // occurrences (SentencePiece's character_coverage: in order of count, then code point, each
  // added while the share so far is below it); 1 keeps all.
  double character_coverage = 1.0;
  // Characters: keep at most this many (the most frequent; ties by smaller code point); 0: all.
  size_t limit_alphabet = 0;
  // Characters: left-out characters become byte-fallback tokens (else the unknown token; with
  // hf_compat and neither, they are dropped from the words, as Hugging Face's trainer does).
  bool byte_fallback = true;
  bool unknown_token = false;
  std::string unknown_name = std::string(kUnknownToken);  // the unknown token's text
  // Characters: word-boundary markers (TrainerOptions::continuing_subword_prefix, ...).
  std::string continuing_prefix;
  std::string end_suffix;
  // Characters with markers: the marked symbols listed here come first among the marked ones,
  // in this order (the rest follow as usual). Hugging Face gives them ids in the order it
  // meets them in a hash map, so at random per run; this reproduces one run.
  std::vector<std::string> marked_order;
};

// The length of a token that never merges (byte-fallback tokens): more than any two others.
inline constexpr uint32_t kNeverMerges = UINT32_MAX;

// A training alphabet: the initial tokens, in id order.
struct Alphabet {
  std::vector<std::string> symbols;  // the tokens' bytes
  // symbols[0] is the unknown token (AlphabetOptions::unknown_name), a special token (character units without byte fallback).
  bool unknown = false;
  // symbols[unknown, unknown + 256) are the byte-fallback tokens of bytes 0..255 (one byte each).
  bool byte_fallback = false;
  // Character units: occurrences of characters in the words (by count), of the characters the
  // alphabet leaves out, and of bytes that are no well-formed UTF-8; distinct characters seen.
  uint64_t char_occurrences = 0;
  uint64_t uncovered_occurrences = 0;
  uint64_t invalid_bytes = 0;
  size_t distinct_chars = 0;
  // The index in `symbols` of the first character (after <unk> and byte tokens).
  size_t first_char() const { return (unknown ? 1 : 0) + (byte_fallback ? 256 : 0); }
  // Character units: symbols[first_char() + k] is character chars[k].first as a word's symbol
  // of kind chars[k].second (a CharVariant mask: with the prefix when not the word's first,
  // with the suffix when its last). The plain characters come first, by code point, then the
  // variants that occur, by code point and kind.
  std::vector<std::pair<uint32_t, uint8_t>> chars;
  std::string continuing_prefix, end_suffix;  // the markers, or ""
  // The id of the unknown token when it is not symbols[0] (a special token listed before the
  // alphabet), else UINT32_MAX.
  uint32_t unknown_id = UINT32_MAX;
};

// How a character appears as a word's symbol with word-boundary markers.
enum CharVariant : uint8_t {
  kPlainChar = 0,
  kPrefixedChar = 1,  // continuing_subword_prefix + c: not the word's first symbol
  kSuffixedChar = 2,  // c + end_of_word_suffix: the word's last symbol
};
// The variant of the symbol at a word's position (first, last) under these markers.
inline uint8_t CharVariantAt(bool first, bool last, bool has_prefix, bool has_suffix) {
  return static_cast<uint8_t>((!first && has_prefix ? kPrefixedChar : 0) |
                              (last && has_suffix ? kSuffixedChar : 0));
}

// Words to the ids of their initial symbols, for one alphabet.
class SymbolSplitter {
 public:
  virtual ~SymbolSplitter() = default;
  // Writes the ids of `word`'s initial symbols to out[0..) (room for word.size() ids) and
  // returns how many there are.
  virtual size_t Split(std::string_view word, uint32_t* out) const = 0;
};

class Units {
 public:
  virtual ~Units() = default;
  virtual UnitKind kind() const = 0;

  // Training. The alphabet `words` (distinct words with counts) need.
  virtual Alphabet MakeAlphabet(std::span<const std::pair<std::string_view, uint64_t>> words,
                                const AlphabetOptions& options) const = 0;
  // Splits words into `alphabet` (as MakeAlphabet() gave it), whose first token has id
  // `first_id`. Symbols the alphabet has no token for are dropped.
  virtual std::unique_ptr<SymbolSplitter> Splitter(const Alphabet& alphabet,
                                                   uint32_t first_id) const = 0;
  // The bytes of the token that `left` followed by `right` forms.
  virtual std::string Join(std::string_view left, std::string_view right) const = 0;
  // A token's length as a max_token_length limit counts it (bytes, characters).
  virtual size_t Length(std::string_view token) const = 0;

  // Encoding. The byte values that the regular tokens `tokens` (special ones excluded:
  // `is_special`) cannot encode: text holding one of them has no encoding (a vocabulary
  // trained with --hf-compat holds only the bytes seen in training). Empty for a vocabulary
  // that encodes every text.
  virtual std::bitset<256> UnencodableBytes(std::span<const std::string> tokens,
                                            const std::vector<bool>& is_special) const = 0;

  // tokenizer.json. A token's bytes as its vocabulary and merges write them, and back (errors
  // say what is wrong, without the field).
  virtual std::string TokenToText(std::string_view bytes) const = 0;
  virtual absl::StatusOr<std::string> TextToToken(std::string_view text) const = 0;
  // TextToToken appending to `out`, without the error's words (false where it fails): for
  // readers of many tokens, such as tokenizer.json's merges.
  virtual bool AppendTextAsToken(std::string_view text, std::string& out) const {
    absl::StatusOr<std::string> token = TextToToken(text);
    if (!token.ok()) return false;
    out += *token;
    return true;
  }
  // The "pre_tokenizer" object that splits as `config` does, and the "decoder" object of a
  // model with these units and that pre-tokenizer (`byte_fallback`: it has <0xNN> tokens).
  // `prefix` and `suffix`: the model's word-boundary markers (character units), or "".
  virtual std::string HfPreTokenizer(const PreTokenizerConfig& config) const = 0;
  virtual std::string HfDecoder(const PreTokenizerConfig& config, bool byte_fallback,
                                std::string_view prefix = "",
                                std::string_view suffix = "") const = 0;
};

// How many of `by_count` (characters with their counts, ranked by count descending, then code
// point) the alphabet keeps: SentencePiece's coverage rule (a character is added while the
// share of `total` covered before it is below `coverage`; 1 keeps all), then at most
// `limit` (0: no limit). MakeAlphabet's rule, which the Unigram trainer shares.
size_t KeptCharacters(std::span<const std::pair<uint32_t, uint64_t>> by_count, uint64_t total,
                      double coverage, size_t limit);

// "<0x41>": how tokenizer.json and SentencePiece name the byte-fallback token of a byte.
std::string ByteFallbackName(unsigned char byte);
// The byte `name` is the fallback token of, or -1.
int ParseByteFallbackName(std::string_view name);

// Byte level: the byte values that no regular token of `tokens` is (a token of that one byte
// whose id is not marked in `is_special`; ids past its end are regular).
std::bitset<256> BytesWithoutToken(std::span<const std::string> tokens,
                                   const std::vector<bool>& is_special);

// The units of `kind` (one shared, stateless object each).
const Units& UnitsOf(UnitKind kind);

}  // namespace tokenmill
