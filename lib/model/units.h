// Units: what a model's tokens are made of, shared by training and encoding. A unit kind says
// which initial symbols (the alphabet) a corpus needs, how a word becomes initial symbols, how
// two tokens join into one and how long a token is (for a length limit), and how tokens and
// the text around them are written in tokenizer.json.
//
// Byte-level units (GPT-2 style, the first kind): the alphabet is the 256 byte values, every
// word is its bytes, tokens join by concatenation, length is in bytes, and tokenizer.json writes
// token bytes through GPT-2's byte-to-character map (ByteLevel pre-tokenizer and decoder).
// Later kinds fit the same interface without the trainer's merge loop, pair index, queue or
// deltas knowing of them (lib/README.md): characters with byte fallback (the alphabet is the
// frequent characters plus 256 <0xNN> tokens that never merge: Length() of such a token
// exceeds any limit), and a continuing-subword prefix (a word's later symbols carry "##", and
// Join drops the right token's prefix).
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
};
// "byte".
std::string_view UnitKindName(UnitKind kind);

// How training picks the alphabet.
struct AlphabetOptions {
  // Hugging Face's alphabet: only the symbols that occur, in its order (byte level: ordered by
  // the GPT-2 byte-level code point) instead of all of them in their natural order.
  bool hf_compat = false;
  // With hf_compat: every symbol of the units, seen or not (byte level: all 256, still in
  // Hugging Face's order), as Hugging Face's `initial_alphabet` adds them.
  bool every_symbol = false;
};

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

  // Training. The alphabet `words` (distinct words with counts) need, as the initial tokens'
  // bytes in id order.
  virtual std::vector<std::string> Alphabet(
      std::span<const std::pair<std::string_view, uint64_t>> words,
      const AlphabetOptions& options) const = 0;
  // Splits words into `alphabet` (as Alphabet() gave it), whose first token has id `first_id`.
  virtual std::unique_ptr<SymbolSplitter> Splitter(std::span<const std::string> alphabet,
                                                   uint32_t first_id) const = 0;
  // The bytes of the token that `left` followed by `right` forms.
  virtual std::string Join(std::string_view left, std::string_view right) const = 0;
  // A token's length as a max_token_length limit counts it.
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
  // The "pre_tokenizer" object that splits as `config` does, and the "decoder" object.
  virtual std::string HfPreTokenizer(const PreTokenizerConfig& config) const = 0;
  virtual std::string_view HfDecoder() const = 0;
  // The BPE model's "byte_fallback" flag.
  virtual bool byte_fallback() const = 0;
};

// Byte level: the byte values that no regular token of `tokens` is (a token of that one byte
// whose id is not marked in `is_special`; ids past its end are regular).
std::bitset<256> BytesWithoutToken(std::span<const std::string> tokens,
                                   const std::vector<bool>& is_special);

// The units of `kind` (one shared, stateless object each).
const Units& UnitsOf(UnitKind kind);

}  // namespace tokenmill
