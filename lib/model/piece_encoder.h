// PieceEncoder: the model-specific stage of the encoder pipeline (encoder.h), which turns
// ordinary text (no special tokens) into ids piece by piece as the pre-tokenizer splits it.
// Each model type has its own (Model::MakePieceEncoder); BPE's is bpe/bpe_encoder.h.
//
// The pipeline hands a piece encoder whole stretches of text with the pre-tokenizer rather
// than one piece at a time, so that the per-piece work (tens of millions of pieces a second)
// stays inside one model's code, free of a virtual call per piece.
#pragma once

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "model/model.h"
#include "pretokenize/pretokenizer.h"

namespace tokenmill {

// Text holding a byte that no token encodes (units.h: UnencodableBytes; a vocabulary trained
// with --hf-compat holds only the bytes seen in training).
enum class UnknownBytes {
  kError,  // encoding fails, naming the byte and its offset
  kDrop,   // each such byte is left out of its pre-tokenized piece, which is encoded without it
           // (what Hugging Face's BPE does with a byte missing from its vocabulary)
};

// How the encoder treats what the vocabulary cannot encode, and tuning of the piece encoders
// (no tuning option changes the ids).
struct EncoderOptions {
  UnknownBytes unknown_bytes = UnknownBytes::kError;
  // Pieces each thread's cache holds before it is emptied; 0 turns the cache off. (linux_docs
  // has 136k distinct pieces that are not whole cl100k tokens; 2^18 entries take ~15 MB.)
  size_t cache_entries = 1 << 18;
  // Longer pieces are not cached (they are rare and would crowd the cache).
  size_t max_cached_piece = 256;
  // BPE: pieces longer than this use the heap algorithm instead of the scan.
  size_t long_piece = 96;
  // BPE: split pieces of 3-byte characters where no token can straddle (CharSegments: exact,
  // and a table lookup per Chinese character); false only to compare against the plain path.
  bool split_pieces = true;
  // Unigram: with unigram_alpha > 0, each piece's segmentation is drawn at random with
  // probability proportional to exp(alpha * score) (subword regularization), among all of them
  // (unigram_nbest <= 0) or among the unigram_nbest best; `sample_seed` seeds each thread's
  // generator (the draws then repeat for one thread). These do change the ids.
  double unigram_alpha = 0;
  int unigram_nbest = 0;
  uint64_t sample_seed = 0;
};

// One step of encoding a piece that joined two parts into one (a BPE merge).
struct MergeStep {
  size_t part;        // index of the left part among the parts just before this step
  TokenId left;
  TokenId right;
  TokenId result;
  uint32_t priority;  // merge index (Hugging Face) or token rank (tiktoken)
};

// How one pre-tokenized piece was encoded (Encoder::Explain).
struct ExplainedPiece {
  std::string text;               // the piece (of the text as prepared: text_prep.h)
  int special_index = -1;         // >= 0: the piece is this special token (Model::special_tokens)
  bool whole_token = false;       // encoded directly as one token
  std::vector<TokenId> initial;   // the piece's initial symbols (its bytes' tokens)
  std::vector<MergeStep> merges;  // the steps applied, in order (empty when whole_token)
  std::vector<TokenId> ids;       // the piece's tokens
  // WordPiece: where each of `ids` starts in `text` (bytes), and, when the piece is the
  // unknown token, why.
  std::vector<size_t> piece_starts;
  std::string unknown_reason;
  // Unigram: the best path's score, and the runner-up (the second-best segmentation; none when
  // the piece has one) with its starts and score.
  double path_score = 0;
  bool has_runner_up = false;
  std::vector<TokenId> runner_up;
  std::vector<size_t> runner_up_starts;
  double runner_up_score = 0;
};

class PieceEncoder {
 public:
  virtual ~PieceEncoder() = default;
  // Appends the ids of `text` (ordinary text: special tokens were cut out before), split into
  // pieces by `pretokenizer`. Thread-safe.
  virtual void EncodeText(std::string_view text, const PreTokenizer& pretokenizer,
                          std::vector<TokenId>& out) const = 0;
  // EncodeText of each line of `text` on its own (a line ends after its '\n'; the last may have
  // none), appending each line's ids to `out` and, for each line that ends with '\n', the size
  // of `out` after it to `ends`. The same ids as a call per line; a piece encoder overrides it
  // to do its per-call work (its thread's cache, room for the ids) once for all the lines.
  virtual void EncodeLines(std::string_view text, const PreTokenizer& pretokenizer,
                           std::vector<TokenId>& out, std::vector<size_t>& ends) const;
  // Appends the ids of one pre-tokenized piece (not empty). Thread-safe.
  virtual void EncodePiece(std::string_view piece, std::vector<TokenId>& out) const = 0;
  // Fills out.initial, whole_token, merges and ids for the piece out.text (not empty).
  virtual void ExplainPiece(ExplainedPiece& out) const = 0;
  // Whether ordinary text `text` (at `offset` in the text being encoded) can be encoded: an
  // error naming what cannot (a character no token covers, where the vocabulary has neither
  // byte fallback nor an unknown token). Byte-level vocabularies answer through
  // Units::UnencodableBytes instead.
  virtual absl::Status CheckEncodable(std::string_view, size_t) const { return absl::OkStatus(); }
  // Whether CheckEncodable can fail (else the encoder skips it).
  virtual bool may_refuse() const { return false; }
};

// Calls on_line(line, ends_with_newline) for each line of `text`, in order: each ends after its
// '\n', the last may have none. Nothing for an empty text. The newlines are found 16 bytes at a
// time (SSE2), each block's as a bit mask: a call to memchr per line was 3-4% of a poetry
// encode, whose lines are about 30 bytes.
template <typename OnLine>
inline void ForEachLineOf(std::string_view text, OnLine on_line) {
  const char* const p = text.data();
  const size_t n = text.size();
  size_t start = 0;
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i newline = _mm_set1_epi8('\n');
  for (; i + 16 <= n; i += 16) {
    const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    for (unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(block, newline)));
         mask != 0; mask &= mask - 1) {
      const size_t end = i + static_cast<size_t>(std::countr_zero(mask)) + 1;
      on_line(text.substr(start, end - start), true);
      start = end;
    }
  }
#endif
  for (; i < n; ++i) {
    if (p[i] == '\n') {
      on_line(text.substr(start, i + 1 - start), true);
      start = i + 1;
    }
  }
  if (start < n) on_line(text.substr(start), false);
}

inline void PieceEncoder::EncodeLines(std::string_view text, const PreTokenizer& pretokenizer,
                                      std::vector<TokenId>& out,
                                      std::vector<size_t>& ends) const {
  ForEachLineOf(text, [&](std::string_view line, bool ends_with_newline) {
    EncodeText(line, pretokenizer, out);
    if (ends_with_newline) ends.push_back(out.size());
  });
}

}  // namespace tokenmill
