#include "model/wordpiece/wordpiece_encoder.h"

#include <algorithm>

#include "common/status_macros.h"
#include "common/utf8.h"

namespace tokenmill {
namespace {

// The byte length of the character at word[i].
size_t CharLength(std::string_view word, size_t i) {
  return DecodeCodePoint(reinterpret_cast<const unsigned char*>(word.data()), word.size(), i).len;
}

size_t CharCount(std::string_view word, size_t stop_after) {
  size_t n = 0;
  for (size_t i = 0; i < word.size() && n <= stop_after; ++n) i += CharLength(word, i);
  return n;
}

}  // namespace

absl::StatusOr<std::unique_ptr<WordPieceEncoder>> WordPieceEncoder::Create(
    const WordPieceModel& model, const EncoderOptions&) {
  std::unique_ptr<WordPieceEncoder> encoder(new WordPieceEncoder(model));
  const std::string& prefix = model.prefix;
  for (TokenId id = 0; id < model.tokens.size(); ++id) {
    const std::string& t = model.tokens[id];
    if (t.empty()) continue;
    // Hugging Face looks words up in the whole vocabulary, special tokens included.
    encoder->starts_.emplace(t, id);
    encoder->longest_start_ = std::max(encoder->longest_start_, t.size());
    if (t.size() > prefix.size() && std::string_view(t).starts_with(prefix)) {
      encoder->continues_.emplace(std::string_view(t).substr(prefix.size()), id);
      encoder->longest_continue_ = std::max(encoder->longest_continue_, t.size() - prefix.size());
    }
  }
  encoder->unknown_ = model.unknown();
  if (!encoder->unknown_.has_value()) {
    TM_ASSIGN_OR_RETURN(encoder->pretokenizer_, PreTokenizer::Create(model.pretokenizer));
  }
  return encoder;
}

template <typename OnPiece>
size_t WordPieceEncoder::Greedy(std::string_view word, OnPiece&& on_piece) const {
  // Character boundaries of the word: ends[k] is where character k ends (ends[0] = 0).
  thread_local std::vector<uint32_t> ends;
  ends.clear();
  ends.push_back(0);
  for (size_t i = 0; i < word.size();) {
    i += CharLength(word, i);
    ends.push_back(static_cast<uint32_t>(i));
  }
  size_t first = 0;  // the character the next piece starts at
  const size_t chars = ends.size() - 1;
  while (first < chars) {
    const size_t start = ends[first];
    const StringMap<TokenId>& table = first == 0 ? starts_ : continues_;
    const size_t longest = first == 0 ? longest_start_ : longest_continue_;
    size_t last = first + 1;  // one past the last character of the longest candidate
    while (last < chars && ends[last + 1] - start <= longest) ++last;
    bool found = false;
    for (; last > first; --last) {
      if (ends[last] - start > longest) continue;
      if (auto it = table.find(word.substr(start, ends[last] - start)); it != table.end()) {
        on_piece(it->second, start);
        found = true;
        break;
      }
    }
    if (!found) return start;
    first = last;
  }
  return std::string_view::npos;
}

bool WordPieceEncoder::TooLong(std::string_view word) const {
  return CharCount(word, model_.max_input_chars_per_word) > model_.max_input_chars_per_word;
}

WordPieceMatch WordPieceEncoder::Match(std::string_view word) const {
  WordPieceMatch match;
  if (TooLong(word)) {
    match.unknown_reason = StrCat("the word has more than max_input_chars_per_word (",
                                  model_.max_input_chars_per_word, ") characters");
    return match;
  }
  const size_t failed = Greedy(word, [&](TokenId id, size_t start) {
    match.ids.push_back(id);
    match.starts.push_back(start);
  });
  if (failed != std::string_view::npos) {
    match.unknown_reason =
        failed == 0 ? std::string("no token starts the word")
                    : StrCat("no token continues it at byte ", failed, " (none is \"",
                             model_.prefix, word.substr(failed, CharLength(word, failed)),
                             "\" or longer from there)");
    match.ids.clear();
    match.starts.clear();
  }
  return match;
}

bool WordPieceEncoder::Pieces(std::string_view word, std::vector<TokenId>& out) const {
  if (TooLong(word)) return false;
  const size_t mark = out.size();
  if (Greedy(word, [&](TokenId id, size_t) { out.push_back(id); }) != std::string_view::npos) {
    out.resize(mark);
    return false;
  }
  return true;
}

void WordPieceEncoder::EncodePiece(std::string_view piece, std::vector<TokenId>& out) const {
  if (!Pieces(piece, out) && unknown_) out.push_back(*unknown_);
}

void WordPieceEncoder::EncodeText(std::string_view text, const PreTokenizer& pretokenizer,
                                  std::vector<TokenId>& out) const {
  pretokenizer.Split(text, [&](std::string_view piece) { EncodePiece(piece, out); });
}

void WordPieceEncoder::ExplainPiece(ExplainedPiece& out) const {
  WordPieceMatch match = Match(out.text);
  out.whole_token = match.ids.size() == 1 && match.unknown_reason.empty();
  out.ids = match.ids;
  out.piece_starts = std::move(match.starts);
  if (!match.unknown_reason.empty()) {
    out.unknown_reason = std::move(match.unknown_reason);
    out.ids.clear();
    if (unknown_) out.ids.push_back(*unknown_);
  }
}

absl::Status WordPieceEncoder::CheckEncodable(std::string_view text, size_t offset) const {
  if (unknown_) return absl::OkStatus();
  absl::Status status;
  std::vector<TokenId> scratch;
  pretokenizer_->Split(text, [&](std::string_view piece) {
    if (!status.ok()) return;
    scratch.clear();
    if (!Pieces(piece, scratch)) {
      status = absl::InvalidArgumentError(StrCat(
          "the word '", piece, "' at byte ", offset + (piece.data() - text.data()),
          " has no WordPiece encoding and the vocabulary has no unknown token '",
          model_.unk_token, "'"));
    }
  });
  return status;
}

}  // namespace tokenmill
