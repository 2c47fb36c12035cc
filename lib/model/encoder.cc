#include "model/encoder.h"

#include <algorithm>
#include <cstdint>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "absl/strings/str_format.h"
#include "common/huge_pages.h"
#include "common/option_error.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "model/wordpiece/wordpiece_model.h"

namespace tokenmill {

Encoder::Encoder(std::unique_ptr<const Model> model, std::unique_ptr<TextPrep> prep,
                 std::unique_ptr<PreTokenizer> pretokenizer,
                 std::unique_ptr<SpecialTokenMatcher> specials,
                 std::unique_ptr<PieceEncoder> pieces, UnknownBytes unknown_bytes)
    : model_(std::move(model)),
      tokens_(model_->token_bytes()),
      prep_(std::move(prep)),
      pretokenizer_(std::move(pretokenizer)),
      specials_(std::move(specials)),
      pieces_(std::move(pieces)),
      unknown_bytes_(unknown_bytes),
      check_pieces_(pieces_->may_refuse()) {
  std::vector<bool> is_special(tokens_.size(), false);
  for (const SpecialToken& s : model_->special_tokens()) {
    special_ids_.push_back(s.id);
    is_special[s.id] = true;
    if (s.content.find('\n') != std::string::npos) special_holds_newline_ = true;
  }
  unencodable_ = model_->units().UnencodableBytes(tokens_, is_special);
  const PreTokenizerConfig& pre = model_->pre_tokenizer();
  prefix_ = std::string(model_->continuing_subword_prefix());
  suffix_ = std::string(model_->end_of_word_suffix());
  const bool metaspace = pre.preset == "metaspace";
  if (const WordPieceModel* wordpiece = AsWordPiece(*model_)) {
    word_pieces_ = true;
    cleanup_ = wordpiece->cleanup;
  } else if (metaspace || !prefix_.empty() || !suffix_.empty()) {
    std::vector<bool> is_byte(tokens_.size(), false);
    for (TokenId id : model_->byte_fallback_ids()) is_byte[id] = true;
    decoded_.resize(tokens_.size());
    for (size_t id = 0; id < tokens_.size(); ++id) {
      decoded_[id] = is_special[id] || is_byte[id] ? tokens_[id] : DecodedToken(tokens_[id], " ");
    }
    strip_prefix_ = metaspace && pre.metaspace_prefix;
  }
}

std::string Encoder::DecodedToken(std::string_view token, std::string_view suffix_as) const {
  // Hugging Face's decoders, in their order: Replace(prefix, ""), BPEDecoder(suffix),
  // Replace("▁", " ").
  auto replace_all = [](std::string_view text, std::string_view pattern, std::string_view with) {
    std::string out;
    for (size_t at; (at = text.find(pattern)) != std::string_view::npos;) {
      StrAppend(&out, text.substr(0, at), with);
      text.remove_prefix(at + pattern.size());
    }
    out += text;
    return out;
  };
  std::string out(token);
  if (!prefix_.empty()) out = replace_all(out, prefix_, "");
  if (!suffix_.empty()) out = replace_all(out, suffix_, suffix_as);
  if (model_->pre_tokenizer().preset == "metaspace") out = replace_all(out, kMetaspace, " ");
  return out;
}

absl::StatusOr<std::unique_ptr<Encoder>> Encoder::Create(std::unique_ptr<const Model> model,
                                                         EncoderOptions options) {
  TM_RETURN_IF_ERROR(model->Validate());
  return CreateChecked(std::move(model), options);
}

absl::StatusOr<std::unique_ptr<Encoder>> Encoder::CreateChecked(
    std::unique_ptr<const Model> model, EncoderOptions options) {
  return CreateChecked(std::move(model), options, nullptr);
}

absl::StatusOr<std::unique_ptr<Encoder>> Encoder::CreateChecked(
    std::unique_ptr<const Model> model, EncoderOptions options,
    std::unique_ptr<PieceEncoder> pieces) {
  TM_ASSIGN_OR_RETURN(std::unique_ptr<TextPrep> prep, TextPrep::Create(model->pre_tokenizer()));
  TM_ASSIGN_OR_RETURN(std::unique_ptr<PreTokenizer> pretokenizer,
                      PreTokenizer::Create(model->pre_tokenizer()));
  std::unique_ptr<SpecialTokenMatcher> specials;
  if (!model->special_tokens().empty()) {
    std::vector<std::string> contents;
    for (const SpecialToken& s : model->special_tokens()) contents.push_back(s.content);
    TM_ASSIGN_OR_RETURN(specials, SpecialTokenMatcher::Create(std::move(contents)));
  }
  if (pieces == nullptr) {
    TM_ASSIGN_OR_RETURN(pieces, model->MakePieceEncoder(options));
  }
  return std::unique_ptr<Encoder>(new Encoder(std::move(model), std::move(prep),
                                              std::move(pretokenizer),
                                              std::move(specials), std::move(pieces),
                                              options.unknown_bytes));
}

template <typename OnSegment>
absl::Status Encoder::SplitSpecials(std::string_view text, SpecialPolicy policy,
                                    OnSegment on_segment) const {
  if (specials_ == nullptr || policy == SpecialPolicy::kAsText) {
    if (!text.empty()) on_segment(text, -1);
    return absl::OkStatus();
  }
  absl::Status status;
  size_t offset = 0;
  specials_->Split(text, [&](std::string_view segment, int special_index) {
    if (!status.ok()) return;
    if (special_index >= 0 && policy == SpecialPolicy::kDisallow) {
      status = MentioningOptions(
          absl::InvalidArgumentError(StrCat("the text contains the special token '", segment, "' at byte ",
                                            offset, ", which `specials` refuses: allow special tokens or "
                                            "encode them as text")),
          {"specials"});
      return;
    }
    on_segment(segment, special_index);
    offset += segment.size();
  });
  return status;
}

absl::Status Encoder::CheckEncodable(std::string_view text, size_t offset) const {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (unencodable_.test(b)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "byte 0x%02X at byte %d is in no token of the vocabulary (it did not occur in "
          "training), so the text cannot be encoded; `unknown_bytes`=drop leaves such bytes "
          "out, as Hugging Face does",
          b, offset + i));
    }
  }
  return absl::OkStatus();
}

std::string_view Encoder::Prepared(std::string_view text) const {
  thread_local std::string prepared;  // one buffer per thread, reused text after text
  return prep_->Prepared(text, prepared);
}

void Encoder::EncodePrepared(std::string_view text, std::vector<TokenId>& out) const {
  pieces_->EncodeText(Prepared(text), *pretokenizer_, out);
}

absl::Status Encoder::EncodeWithUnknownBytes(std::string_view text, size_t offset,
                                             std::vector<TokenId>& out) const {
  // The bytes to check are those of the prepared text (normalization may make or remove them);
  // offsets are counted in it.
  return EncodeUnknownPrepared(Prepared(text), offset, out);
}

absl::Status Encoder::EncodeUnknownPrepared(std::string_view text, size_t offset,
                                            std::vector<TokenId>& out) const {
  if (unknown_bytes_ == UnknownBytes::kError) {
    TM_RETURN_IF_ERROR(CheckEncodable(text, offset));
    pieces_->EncodeText(text, *pretokenizer_, out);
    return absl::OkStatus();
  }
  // Dropped after pre-tokenization, from each piece: the piece's other bytes become neighbours
  // and may merge, as in Hugging Face's BPE, which skips a symbol it has no id for.
  std::string kept;
  pretokenizer_->Split(text, [&](std::string_view piece) {
    bool clean = true;
    for (char c : piece) clean = clean && !unencodable_.test(static_cast<unsigned char>(c));
    if (clean) {
      pieces_->EncodePiece(piece, out);
      return;
    }
    kept.clear();
    for (char c : piece) {
      if (!unencodable_.test(static_cast<unsigned char>(c))) kept.push_back(c);
    }
    if (!kept.empty()) pieces_->EncodePiece(kept, out);
  });
  return absl::OkStatus();
}

absl::Status Encoder::EncodeTo(std::string_view text, SpecialPolicy policy,
                               std::vector<TokenId>& out) const {
  absl::Status status;
  TM_RETURN_IF_ERROR(SplitSpecials(text, policy, [&](std::string_view segment, int special_index) {
    if (special_index >= 0) {
      out.push_back(special_ids_[special_index]);
    } else if (unencodable_.none()) {
      if (check_pieces_ && status.ok()) {
        const std::string_view ready = Prepared(segment);
        status = pieces_->CheckEncodable(ready, segment.data() - text.data());
        if (status.ok()) pieces_->EncodeText(ready, *pretokenizer_, out);
      } else {
        EncodeOrdinary(segment, out);
      }
    } else if (status.ok()) {
      status = EncodeWithUnknownBytes(segment, segment.data() - text.data(), out);
    }
  }));
  return status;
}

absl::Status Encoder::EncodeLines(std::string_view text, SpecialPolicy policy,
                                  std::vector<TokenId>& out, std::vector<size_t>& ends) const {
  const size_t out_start = out.size(), ends_start = ends.size();
  // Text that needs no preparation and no check of its bytes, and special tokens that stay
  // within a line: the occurrences in the whole text are those in each line, and each stretch
  // between them goes to the piece encoder, which encodes its lines one by one.
  if (prep_->identity() && unencodable_.none() && !check_pieces_ && !special_holds_newline_) {
    absl::Status status = SplitSpecials(text, policy, [&](std::string_view segment, int special_index) {
      if (special_index >= 0) {
        out.push_back(special_ids_[special_index]);
      } else {
        pieces_->EncodeLines(segment, *pretokenizer_, out, ends);
      }
    });
    if (status.ok()) {
      if (!text.empty() && text.back() != '\n') ends.push_back(out.size());
      return status;
    }
    // A disallowed special token: line by line below, for EncodeTo's error on its line.
    out.resize(out_start);
    ends.resize(ends_start);
  }
  absl::Status status;
  ForEachLineOf(text, [&](std::string_view line, bool) {
    if (!status.ok()) return;
    status = EncodeTo(line, policy, out);
    if (status.ok()) ends.push_back(out.size());
  });
  return status;
}

absl::StatusOr<std::vector<TokenId>> Encoder::Encode(std::string_view text,
                                                     SpecialPolicy policy) const {
  std::vector<TokenId> ids;
  // Chinese text takes a token per 1.85 bytes (poetry, cl100k_base), English about 4: room for
  // a token per 1.5 bytes avoids a reallocation; pages never written cost nothing.
  ids.reserve(text.size() / 3 * 2 + 16);
  // A whole file's ids take hundreds of MB (poetry: 192 MB): with 4 KB pages, faulting them
  // in took about a fifth of poetry's encode (perf).
  AdviseHugePages(ids.data(), ids.capacity() * sizeof(TokenId));
  TM_RETURN_IF_ERROR(EncodeTo(text, policy, ids));
  return ids;
}

absl::StatusOr<EncodedBatch> Encoder::EncodeBatch(absl::Span<const std::string_view> texts,
                                                   SpecialPolicy policy) const {
  // Texts are encoded in fixed chunks, each into one buffer of its own, then the buffers are
  // copied into place in parallel: one allocation per chunk, not per text, and nothing serial
  // but a prefix sum over the chunks.
  constexpr size_t kChunkTexts = 256;
  const size_t n = texts.size();
  const size_t chunks = (n + kChunkTexts - 1) / kChunkTexts;
  struct Chunk {
    std::vector<TokenId> ids;
    std::vector<size_t> ends;  // each text's end in ids
    absl::Status error;
    size_t failed = 0;  // the failing text, when !error.ok()
  };
  std::vector<Chunk> parts(chunks);
  tbb::parallel_for(size_t{0}, chunks, [&](size_t c) {
    Chunk& part = parts[c];
    const size_t begin = c * kChunkTexts, end = std::min(n, begin + kChunkTexts);
    size_t bytes = 0;
    for (size_t i = begin; i < end; ++i) bytes += texts[i].size();
    part.ids.reserve(bytes / 3 + 16);
    part.ends.reserve(end - begin);
    for (size_t i = begin; i < end; ++i) {
      if (absl::Status s = EncodeTo(texts[i], policy, part.ids); !s.ok()) {
        part.error = std::move(s);
        part.failed = i;
        return;
      }
      part.ends.push_back(part.ids.size());
    }
  });
  std::vector<size_t> start(chunks + 1, 0);
  for (size_t c = 0; c < chunks; ++c) {
    const Chunk& part = parts[c];
    if (!part.error.ok()) {
      return absl::Status(part.error.code(),
                          StrCat("text ", part.failed, ": ", part.error.message()));
    }
    start[c + 1] = start[c] + part.ids.size();
  }
  EncodedBatch batch;
  batch.ids.resize(start[chunks]);
  batch.offsets.resize(n + 1);
  tbb::parallel_for(size_t{0}, chunks, [&](size_t c) {
    Chunk& part = parts[c];
    std::copy(part.ids.begin(), part.ids.end(), batch.ids.begin() + start[c]);
    for (size_t k = 0; k < part.ends.size(); ++k) {
      batch.offsets[c * kChunkTexts + k + 1] = start[c] + part.ends[k];
    }
    std::vector<TokenId>().swap(part.ids);
  });
  return batch;
}

absl::StatusOr<std::vector<ExplainedPiece>> Encoder::Explain(std::string_view text,
                                                             SpecialPolicy policy) const {
  std::vector<ExplainedPiece> pieces;
  absl::Status status;
  TM_RETURN_IF_ERROR(SplitSpecials(text, policy, [&](std::string_view segment, int special_index) {
    if (special_index >= 0) {
      ExplainedPiece& p = pieces.emplace_back();
      p.text = segment;
      p.special_index = special_index;
      p.ids.push_back(special_ids_[special_index]);
      return;
    }
    std::string prepared;
    segment = prep_->Prepared(segment, prepared);
    const size_t offset = prepared.empty() ? segment.data() - text.data() : 0;
    absl::Status s = unencodable_.any() ? CheckEncodable(segment, offset)
                                        : pieces_->CheckEncodable(segment, offset);
    if (!s.ok()) {
      if (status.ok()) status = std::move(s);
      return;
    }
    pretokenizer_->Split(segment, [&](std::string_view piece) {
      ExplainedPiece& p = pieces.emplace_back();
      p.text = piece;
      pieces_->ExplainPiece(p);
    });
  }));
  TM_RETURN_IF_ERROR(status);
  return pieces;
}

namespace {

absl::Status UndecodableId(TokenId id, size_t position) {
  return absl::InvalidArgumentError(StrCat("id ", id, " (position ", position, ") is not in the vocabulary"));
}

}  // namespace

absl::Status Encoder::CheckDecodable(absl::Span<const TokenId> ids, size_t position) const {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!Decodable(ids[i])) return UndecodableId(ids[i], position + i);
  }
  return absl::OkStatus();
}

absl::Status Encoder::DecodeTo(absl::Span<const TokenId> ids, std::string& out) const {
  return DecodeTo(ids, out, DecodePart{});
}

absl::Status Encoder::DecodeTo(absl::Span<const TokenId> ids, std::string& out,
                               const DecodePart& part) const {
  if (word_pieces_) return DecodeWordPieces(ids, out, part);
  std::span<const std::string> tokens = decoded_.empty() ? tokens_ : std::span<const std::string>(decoded_);
  const size_t start = out.size();
  for (size_t i = 0; i < ids.size(); ++i) {
    TokenId id = ids[i];
    if (!Decodable(id)) return UndecodableId(id, part.position + i);
    if (part.last && i + 1 == ids.size() && !suffix_.empty() && !decoded_.empty() &&
        decoded_[id] != tokens_[id]) {
      out += DecodedToken(tokens_[id], "");  // no space after the last word
    } else {
      out += tokens[id];
    }
  }
  if (part.first && strip_prefix_ && out.size() > start && out[start] == ' ') out.erase(start, 1);
  return absl::OkStatus();
}

absl::Status Encoder::DecodeWordPieces(absl::Span<const TokenId> ids, std::string& out,
                                       const DecodePart& part) const {
  // Hugging Face's WordPiece decoder: per token, a later one loses its prefix or gets a space
  // before it, then the cleanup.
  std::string piece;
  for (size_t i = 0; i < ids.size(); ++i) {
    const TokenId id = ids[i];
    if (!Decodable(id)) return UndecodableId(id, part.position + i);
    std::string_view token = tokens_[id];
    const bool later = i > 0 || !part.first;
    if (later && token.starts_with(prefix_)) {
      token.remove_prefix(prefix_.size());
      piece.assign(token);
    } else {
      piece.assign(later ? " " : "");
      piece += token;
    }
    out += cleanup_ ? WordPieceCleanup(std::move(piece)) : piece;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Encoder::Decode(absl::Span<const TokenId> ids) const {
  std::string text;
  TM_RETURN_IF_ERROR(DecodeTo(ids, text));
  return text;
}

}  // namespace tokenmill
