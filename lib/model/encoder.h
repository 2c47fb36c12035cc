// Encoder: text -> token ids and back, for any Model; exact and fast.
//
// The pipeline: special tokens are cut out (per `SpecialPolicy`) -> each stretch of the rest is
// prepared as the model's PreTokenizerConfig says (text_prep.h: normalization, the metaspace)
// -> the model's pre-tokenizer splits it into pieces -> the model's piece encoder
// (Model::MakePieceEncoder, piece_encoder.h) turns them into ids.
// Decoding concatenates the tokens' bytes (WordPiece models: a space before each token that does
// not continue a word, wordpiece_model.h); for the metaspace split, each "▁" of a token that is
// no byte-fallback token is a space, and the one space a prefix put first is dropped (Hugging
// Face's Replace + Strip decoders). For a model read from OpenAI's .tiktoken files the ids are
// exactly tiktoken's; Decode(Encode(x)) == x for every byte string x when the vocabulary
// covers every byte (all 256 byte-level tokens, or byte fallback) and the text is left as it is
// (no normalization; metaspace: no "▁" in the text and no space first).
//
// EncodeBatch() encodes many texts in parallel (oneTBB), results in input order. The Encoder is
// thread-safe: any number of threads may call it at once.
#pragma once

#include <bitset>
#include <concepts>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "model/model.h"
#include "model/piece_encoder.h"
#include "pretokenize/pretokenizer.h"
#include "pretokenize/special_tokens.h"
#include "pretokenize/text_prep.h"

namespace tokenmill {

// The ids of a batch of texts in one flat array (no allocation per text): text i's ids are
// ids[offsets[i], offsets[i + 1]).
struct EncodedBatch {
  std::vector<TokenId> ids;
  std::vector<size_t> offsets;  // size() + 1 entries, from 0
  size_t size() const { return offsets.empty() ? 0 : offsets.size() - 1; }
  absl::Span<const TokenId> operator[](size_t i) const {
    return absl::Span<const TokenId>(ids.data() + offsets[i], offsets[i + 1] - offsets[i]);
  }
};

// What Encode() does with special-token strings found in the text (tiktoken's allowed /
// disallowed special).
enum class SpecialPolicy {
  kAllow,     // they become their ids
  kDisallow,  // finding one is an error
  kAsText,    // they are encoded as ordinary text
};

class Encoder {
 public:
  // Fails when the model is invalid, its pre-tokenizer or special tokens cannot be built, or
  // its piece encoder refuses it. A vocabulary that cannot encode some bytes loads; text
  // holding one is handled as options.unknown_bytes says.
  static absl::StatusOr<std::unique_ptr<Encoder>> Create(std::unique_ptr<const Model> model,
                                                         EncoderOptions options = {});
  // The same, taking a model by value (BpeModel, ...).
  template <std::derived_from<Model> M>
  static absl::StatusOr<std::unique_ptr<Encoder>> Create(M model, EncoderOptions options = {}) {
    return Create(std::unique_ptr<const Model>(std::make_unique<M>(std::move(model))), options);
  }
  // Create() for a model that passes model->Validate(), which is not called again: for a reader
  // that has checked the same as it read (LoadEncoder(), model_file.h). Loading o200k_base for
  // `tokenmill encode`, the second check was 10-14 ms of about 100.
  static absl::StatusOr<std::unique_ptr<Encoder>> CreateChecked(std::unique_ptr<const Model> model,
                                                                EncoderOptions options = {});
  // CreateChecked() with the model's piece encoder made already, for this very model object
  // (which it reads) and these options: for a reader that hands the encoder tables it built
  // (LoadEncoder() of a .tiktoken file).
  static absl::StatusOr<std::unique_ptr<Encoder>> CreateChecked(
      std::unique_ptr<const Model> model, EncoderOptions options,
      std::unique_ptr<PieceEncoder> pieces);

  absl::StatusOr<std::vector<TokenId>> Encode(std::string_view text,
                                              SpecialPolicy policy = SpecialPolicy::kAllow) const;
  // Like Encode, appending to `out`; on error `out` may hold part of the ids.
  absl::Status EncodeTo(std::string_view text, SpecialPolicy policy,
                        std::vector<TokenId>& out) const;
  // Encodes each line of `text` on its own (a line ends after its '\n'; the last may have
  // none), as EncodeTo would one line at a time: the lines' ids are appended to `out` and the
  // size of `out` after each line to `ends`. For a batch of short lines (documents, one per
  // line) this is faster than a call per line: special tokens are looked for once in the whole
  // text (unless one holds a '\n') and the piece encoder's per-call work is done once. Fails
  // as EncodeTo would on the first line that fails; `ends` then holds the lines before it,
  // `out` their ids and perhaps part of that line's.
  absl::Status EncodeLines(std::string_view text, SpecialPolicy policy, std::vector<TokenId>& out,
                           std::vector<size_t>& ends) const;
  // Encodes text with no special-token handling at all, appending to `out`. The text must hold
  // no unencodable byte (see unencodable_bytes()); EncodeTo checks that, this does not.
  void EncodeOrdinary(std::string_view text, std::vector<TokenId>& out) const {
    if (prep_->identity()) {
      pieces_->EncodeText(text, *pretokenizer_, out);
    } else {
      EncodePrepared(text, out);
    }
  }
  // One pre-tokenized piece (not empty, no unencodable byte), appending to `out`.
  void EncodePiece(std::string_view piece, std::vector<TokenId>& out) const {
    pieces_->EncodePiece(piece, out);
  }

  // Encodes every text, in parallel on the current oneTBB arena; result i belongs to texts[i]
  // whatever the thread count. Fails with the error of the first failing text (by index).
  absl::StatusOr<EncodedBatch> EncodeBatch(absl::Span<const std::string_view> texts,
                                           SpecialPolicy policy = SpecialPolicy::kAllow) const;

  // The bytes no token encodes (empty for a complete vocabulary).
  const std::bitset<256>& unencodable_bytes() const { return unencodable_; }

  // The pieces of `text` and how each became tokens; the ids concatenate to Encode(text).
  // Text holding an unencodable byte is an error here, whatever options.unknown_bytes says.
  absl::StatusOr<std::vector<ExplainedPiece>> Explain(
      std::string_view text, SpecialPolicy policy = SpecialPolicy::kAllow) const;

  // The exact bytes of `ids`. Fails on an id that names no token.
  absl::StatusOr<std::string> Decode(absl::Span<const TokenId> ids) const;
  // Appends the bytes of `ids` to `out`; same errors as Decode.
  absl::Status DecodeTo(absl::Span<const TokenId> ids, std::string& out) const;
  // Where `ids` lie in a longer sequence decoded part by part, in order (a token file of any
  // size): decoding the parts so gives the bytes of decoding the sequence whole, whatever the
  // decoder does at its ends (a first space dropped, WordPiece's space before a word, the last
  // word's suffix). `position`: the index of ids[0] in the sequence, for errors.
  struct DecodePart {
    bool first = true;
    bool last = true;
    size_t position = 0;
  };
  absl::Status DecodeTo(absl::Span<const TokenId> ids, std::string& out, const DecodePart& part) const;
  // DecodeTo's error for the first id of `ids` that names no token, without decoding.
  absl::Status CheckDecodable(absl::Span<const TokenId> ids, size_t position = 0) const;
  // Whether `id` names a token (decoding fails on one that does not).
  bool Decodable(TokenId id) const { return id < tokens_.size() && !tokens_[id].empty(); }

  const Model& model() const { return *model_; }
  const PieceEncoder& piece_encoder() const { return *pieces_; }

 private:
  Encoder(std::unique_ptr<const Model> model, std::unique_ptr<TextPrep> prep,
          std::unique_ptr<PreTokenizer> pretokenizer,
          std::unique_ptr<SpecialTokenMatcher> specials, std::unique_ptr<PieceEncoder> pieces,
          UnknownBytes unknown_bytes);

  absl::Status DecodeWordPieces(absl::Span<const TokenId> ids, std::string& out,
                                const DecodePart& part) const;
  // A token's decoded bytes: markers dropped (the suffix as `suffix_as`), "▁" as a space.
  std::string DecodedToken(std::string_view token, std::string_view suffix_as) const;
  // `text` prepared (text_prep.h): itself when there is nothing to do, else a view of this
  // thread's buffer, valid until the thread's next call.
  std::string_view Prepared(std::string_view text) const;
  // EncodeOrdinary for a model whose text is prepared first.
  void EncodePrepared(std::string_view text, std::vector<TokenId>& out) const;
  // Ordinary text at `offset` in the text being encoded, for a vocabulary without some bytes.
  absl::Status EncodeWithUnknownBytes(std::string_view text, size_t offset,
                                      std::vector<TokenId>& out) const;
  absl::Status EncodeUnknownPrepared(std::string_view text, size_t offset,
                                     std::vector<TokenId>& out) const;
  // The first unencodable byte of `text` (at `offset` in the whole text) as an error, if any.
  absl::Status CheckEncodable(std::string_view text, size_t offset) const;

  // Calls on_segment(text, special_index) for the ordinary stretches (-1) and allowed
  // specials; fails on a disallowed one.
  template <typename OnSegment>
  absl::Status SplitSpecials(std::string_view text, SpecialPolicy policy,
                             OnSegment on_segment) const;

  std::unique_ptr<const Model> model_;
  std::span<const std::string> tokens_;            // model_'s, for decoding
  std::unique_ptr<TextPrep> prep_;
  std::unique_ptr<PreTokenizer> pretokenizer_;
  std::unique_ptr<SpecialTokenMatcher> specials_;  // null when the model has none
  // Metaspace models: each token's decoded bytes ("▁" as a space), and whether a prefix space
  // comes first.
  std::vector<std::string> decoded_;
  bool strip_prefix_ = false;
  std::string prefix_, suffix_;  // the model's word-boundary markers
  // WordPiece models decode by Hugging Face's WordPiece decoder (wordpiece_model.h).
  bool word_pieces_ = false;
  bool cleanup_ = false;
  std::vector<TokenId> special_ids_;               // parallel to specials_->tokens()
  std::unique_ptr<PieceEncoder> pieces_;
  std::bitset<256> unencodable_;
  UnknownBytes unknown_bytes_;
  // Some special token holds a '\n': EncodeLines then looks for them line by line.
  bool special_holds_newline_ = false;
  // The piece encoder may refuse text (PieceEncoder::CheckEncodable): character units without
  // byte fallback or an unknown token, under UnknownBytes::kError.
  bool check_pieces_ = false;
};

}  // namespace tokenmill
