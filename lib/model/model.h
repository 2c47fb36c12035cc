// Model: the interface every tokenizer model implements (BPE, WordPiece, Unigram), so
// that the encoder pipeline, the file writers and the tools need no algorithm's internals: its
// vocabulary (an id to its bytes), its special tokens, how text is split before it (the
// pre-tokenizer) and what its tokens are made of (its units), and the piece encoder that turns
// pre-tokenized pieces into ids.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "common/strings.h"
#include "model/units.h"
#include "pretokenize/pretokenizer_config.h"

namespace tokenmill {

using TokenId = uint32_t;

struct SpecialToken {
  std::string content;
  TokenId id = 0;
  bool operator==(const SpecialToken&) const = default;
};

// The kinds of model, numbered for checkpoints: a number is never reused.
enum class ModelType : uint8_t {
  kBpe = 1,
  kWordPiece = 2,
  kUnigram = 3,
};
// As tokenizer.json's "model.type" spells it ("BPE", "WordPiece", "Unigram").
std::string_view ModelTypeName(ModelType type);

// The ids of `specials`, checked against `tokens` (each model's Validate): a special token is not
// empty, is stored at its id, and no two share an id. Errors say which.
absl::StatusOr<absl::flat_hash_set<TokenId>> CheckSpecialTokens(
    std::span<const std::string> tokens, std::span<const SpecialToken> specials);

// tokenizer.json's "normalizer" value for `config` ("null" for the identity): the form (NFC,
// NFKC), then Lowercase, or a BertNormalizer (with its lowercase) when a BERT step is on.
std::string HfNormalizer(const NormalizerConfig& config);

class PieceEncoder;
struct EncoderOptions;

class Model {
 public:
  virtual ~Model() = default;

  virtual ModelType type() const = 0;
  // The bytes of every id, special tokens included; "" marks an id no token has (a gap).
  virtual std::span<const std::string> token_bytes() const = 0;
  // The special tokens (literal strings never split or merged) with their ids.
  virtual std::span<const SpecialToken> special_tokens() const = 0;
  // How text is normalized, then split into pieces, before the model sees it.
  virtual const PreTokenizerConfig& pre_tokenizer() const = 0;
  // The ids of the byte-fallback tokens of bytes 0..255 (character units, units.h), or none.
  // They are no regular tokens for TokenIndex(): their bytes may be a character token's too.
  virtual std::span<const TokenId> byte_fallback_ids() const { return {}; }
  // Word-boundary markers in the tokens' bytes (character units): a word's later pieces start
  // with the prefix, its last ends with the suffix. Decoding drops the prefix and turns the
  // suffix into a space (none after the last token), as Hugging Face's decoders do.
  virtual std::string_view continuing_subword_prefix() const { return {}; }
  virtual std::string_view end_of_word_suffix() const { return {}; }
  // What the model's tokens are made of (bytes, ...): see units.h.
  virtual const Units& units() const = 0;
  // Checks the model's own contract (ids in range, no two tokens with the same bytes, ...).
  virtual absl::Status Validate() const = 0;
  // What encodes this model's pieces; reads the model, which must outlive it.
  virtual absl::StatusOr<std::unique_ptr<PieceEncoder>> MakePieceEncoder(
      const EncoderOptions& options) const = 0;
  virtual std::unique_ptr<Model> Clone() const = 0;

  // Ids in use (non-gap entries of token_bytes()).
  size_t VocabSize() const;
  // A token's bytes to its id, for regular (non-special) tokens.
  StringMap<TokenId> TokenIndex() const;
  // Each id's text as tokenizer.json's vocabulary writes it (and Hugging Face shows it): a
  // special token's content, "<0x41>" for a byte-fallback token, units().TokenToText of the
  // bytes for the rest (byte-level "Ġthe" for " the"); "" for an id no token holds.
  std::vector<std::string> TokenTexts() const;
};

}  // namespace tokenmill
