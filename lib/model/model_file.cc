#include "model/model_file.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <optional>

#include "common/binary_io.h"
#include "common/file_util.h"
#include "common/utf8.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "model/bpe/bpe_encoder.h"
#include "model/bpe/bpe_model.h"
#include "model/bpe/lookup_tables.h"
#include "model/hf_json.h"
#include "model/tiktoken_file.h"
#include "model/vocab_cache.h"
#include "model/wordpiece/wordpiece_model.h"
#include "model/wordpiece/wordpiece_files.h"
#include "pretokenize/presets.h"

namespace tokenmill {
namespace {

// Whether a text that is no JSON could be a vocab.txt: UTF-8 without NUL or control bytes but
// tab and line ends (a binary file, a checkpoint or a .zst is none).
bool LooksLikeVocabTxt(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') return false;
    size_t subpart = 0;
    const size_t n = ValidUtf8Length(text.substr(i), &subpart);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// Whether a text that is no JSON is a .tiktoken ranks file: its first line "<base64> <rank>".
bool LooksLikeTiktoken(std::string_view text) {
  const std::string_view line = text.substr(0, text.find('\n'));
  const size_t space = line.find(' ');
  if (space == std::string_view::npos || space == 0 || space + 1 == line.size()) return false;
  for (char c : line.substr(0, space)) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '/' && c != '=') {
      return false;
    }
  }
  for (char c : line.substr(space + 1)) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '\r') return false;
  }
  return true;
}

}  // namespace

std::string_view ModelFormatName(ModelFormat format) {
  switch (format) {
    case ModelFormat::kHfJson: return "tokenizer.json";
    case ModelFormat::kTiktoken: return "tiktoken";
    case ModelFormat::kVocabTxt: return "vocab.txt";
  }
  return "?";
}

absl::StatusOr<ModelFormat> DetectModelFormat(const std::string& path) {
  TM_ASSIGN_OR_RETURN(SharedBytes mapped, MapFile(path));  // as LoadModelFrom does
  const std::string_view text = mapped.view();
  switch (ClassifyJson(text, path)) {
    case JsonKind::kNotJson:
      return LooksLikeTiktoken(text) || std::string_view(path).ends_with(".tiktoken") ||
                     !LooksLikeVocabTxt(text)
                 ? ModelFormat::kTiktoken
                 : ModelFormat::kVocabTxt;
    case JsonKind::kTiktokenSidecar:
      return ModelFormat::kTiktoken;
    case JsonKind::kTokenizerJson:
      return ModelFormat::kHfJson;
    case JsonKind::kOther:
      break;
  }
  return absl::InvalidArgumentError(StrCat(
      path, ": a JSON file that is neither a tokenizer.json (no 'model' field) nor a tiktoken "
            "sidecar (no 'pattern' field)"));
}

std::string ModelFileReplacedBy(const std::string& output, const std::string& model_path) {
  const std::string target = CanonicalPath(output);
  if (target == CanonicalPath(model_path)) return model_path;
  for (const std::string& file : {TiktokenSidecarPath(model_path), TiktokenRanksPath(model_path)}) {
    if (target != CanonicalPath(file)) continue;
    absl::StatusOr<ModelFormat> format = DetectModelFormat(model_path);
    if (format.ok() && *format == ModelFormat::kTiktoken) return file;
  }
  return "";
}

PreTokenizerConfig BertTextSettings() {
  PreTokenizerConfig config("bert");
  ApplyPresetNormalizer(&config);
  return config;
}

namespace {

// A tiktoken vocabulary's two files, read.
struct TiktokenFiles {
  SharedBytes ranks;
  std::string ranks_path;
  SharedBytes sidecar;
  std::string sidecar_path;
};

// LoadModel(path, vocab_txt_text); `checked` is set when the reader has checked all that the
// model's Validate() does (the BPE readers: LoadTiktoken, FromTiktoken, FromHfJson's BPE).
// With `tiktoken` given, a tiktoken vocabulary is not read into a model: its files go there
// and the model returned is null (LoadEncoder reads them).
absl::StatusOr<std::unique_ptr<Model>> LoadModelFrom(
    const std::string& path, const PreTokenizerConfig& vocab_txt_text, bool& checked,
    std::optional<TiktokenFiles>* tiktoken = nullptr) {
  checked = false;
  if (tiktoken != nullptr) tiktoken->reset();
  // Mapped, not copied (o200k_base.tiktoken's 3.6 MB: 1.24 ms read into memory, 0.09 ms
  // mapped, on one core at any thread count).
  TM_ASSIGN_OR_RETURN(SharedBytes mapped, MapFile(path));
  const std::string_view text = mapped.view();
  absl::StatusOr<std::unique_ptr<Model>> hf_json = nullptr;  // a tokenizer.json's model
  const JsonKind kind = ClassifyJson(text, path, &hf_json);
  switch (kind) {
    case JsonKind::kNotJson: {
      if (!LooksLikeTiktoken(text) && !std::string_view(path).ends_with(".tiktoken")) {
        if (!LooksLikeVocabTxt(text)) {
          return absl::InvalidArgumentError(StrCat(
              path, ": not a tokenizer file (no tokenizer.json, .tiktoken or vocab.txt: it is "
                    "not text)"));
        }
        TM_ASSIGN_OR_RETURN(WordPieceModel model, FromVocabTxt(text, path));
        model.pretokenizer = vocab_txt_text;
        return std::unique_ptr<Model>(std::make_unique<WordPieceModel>(std::move(model)));
      }
      if (tiktoken != nullptr) {
        TM_ASSIGN_OR_RETURN(std::string sidecar, ReadTiktokenSidecar(path));
        *tiktoken = TiktokenFiles{mapped, path, SharedBytes(std::move(sidecar)),
                                  TiktokenSidecarPath(path)};
        return nullptr;
      }
      TM_ASSIGN_OR_RETURN(BpeModel model, LoadTiktoken(path, text));
      checked = true;
      return std::unique_ptr<Model>(std::make_unique<BpeModel>(std::move(model)));
    }
    case JsonKind::kTiktokenSidecar: {
      std::string ranks_path = TiktokenRanksPath(path);
      TM_ASSIGN_OR_RETURN(SharedBytes ranks, MapFile(ranks_path));
      if (tiktoken != nullptr) {
        *tiktoken = TiktokenFiles{ranks, ranks_path, mapped, path};
        return nullptr;
      }
      TM_ASSIGN_OR_RETURN(BpeModel model, FromTiktoken(ranks.view(), ranks_path, text, path));
      checked = true;
      return std::unique_ptr<Model>(std::make_unique<BpeModel>(std::move(model)));
    }
    case JsonKind::kTokenizerJson:
    case JsonKind::kOther:
      break;
  }
  // A tokenizer.json, read from ClassifyJson's parse; or not valid JSON, or JSON of another
  // kind: then the tokenizer.json reader says what is wrong.
  if (kind != JsonKind::kTokenizerJson) hf_json = FromHfJson(text, path);
  TM_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, std::move(hf_json));
  checked = model->type() == ModelType::kBpe;  // ParseBpeModelJson ends with Validate()
  return model;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Model>> LoadModel(const std::string& path) {
  return LoadModel(path, BertTextSettings());
}

absl::StatusOr<std::unique_ptr<Model>> LoadModel(const std::string& path,
                                                 const PreTokenizerConfig& vocab_txt_text) {
  bool checked;
  return LoadModelFrom(path, vocab_txt_text, checked);
}

namespace {

// What a tiktoken vocabulary's tables depend on, as the cache's inputs: both files and the
// options (the character segments: split_pieces, and long_piece, by which their BPE is done).
std::string TableOptions(const EncoderOptions& options) {
  return StrCat(options.split_pieces ? "split_pieces" : "whole_pieces", " long_piece ",
                options.long_piece);
}

// Where a cache entry's payload starts in its file (VocabCache): a multiple of this.
constexpr size_t kPayloadAlignment = VocabCache::kPayloadAlignment;

// A cache entry's payload: the model's tokens (a count, their end offsets, their bytes), then
// the piece encoder's tables (BpeEncoder::AppendTables).
std::string TokensRecord(const std::vector<std::string>& tokens) {
  std::vector<uint64_t> ends(tokens.size());
  uint64_t end = 0;
  for (size_t id = 0; id < tokens.size(); ++id) ends[id] = end += tokens[id].size();
  std::string record;
  BinaryWriter w(&record);
  WriteArray(w, std::span<const uint64_t>(ends));
  record.reserve(record.size() + end + kPayloadAlignment);
  for (const std::string& token : tokens) w.Raw(token);
  // Zero bytes to a multiple of kPayloadAlignment: the tables that follow start aligned, to be
  // used where they lie (BpeEncoder::ReadTables).
  w.Pad(kPayloadAlignment);
  return record;
}

// The token count of a TokensRecord at the start of `in`, and its ends and bytes, moving `in`
// past it; none when it is not one.
struct TokensView {
  size_t count = 0;
  const char* ends = nullptr;  // count uint64_t, unaligned
  std::string_view bytes;
  uint64_t end(size_t id) const {
    uint64_t e;
    std::memcpy(&e, ends + id * sizeof(uint64_t), sizeof(e));
    return e;
  }
};
std::optional<TokensView> ViewTokensRecord(BinaryReader& in) {
  TokensView view;
  uint64_t count;
  std::string_view ends;
  if (!in.Varint(&count) || count > in.remaining() / sizeof(uint64_t) ||
      !in.Raw(count * sizeof(uint64_t), &ends)) {
    return std::nullopt;
  }
  view.count = count;
  view.ends = ends.data();
  for (size_t id = 1; id < count; ++id) {
    if (view.end(id) < view.end(id - 1)) return std::nullopt;
  }
  if (!in.Raw(count == 0 ? 0 : view.end(count - 1), &view.bytes) ||
      !in.SkipPad(kPayloadAlignment)) {
    return std::nullopt;
  }
  return view;
}

// The encoder of a cache entry's payload; an error when the payload is not one for these files.
absl::StatusOr<std::unique_ptr<Encoder>> EncoderFromCache(const SharedBytes& payload,
                                                          const TiktokenFiles& files,
                                                          const EncoderOptions& options) {
  BinaryReader in(payload);
  std::optional<TokensView> view = ViewTokensRecord(in);
  if (!view) return absl::InvalidArgumentError("not a cached vocabulary");
  // The tokens' strings (o200k_base: 200,000, 6 MB of fresh memory) made while the tables are
  // read, which do not need them.
  std::vector<std::string> tokens;
  absl::StatusOr<BpeEncoder::Tables> tables;
  tbb::parallel_invoke(
      [&] {
        tokens.resize(view->count);
        tbb::parallel_for(tbb::blocked_range<size_t>(0, view->count, 8192),
                          [&](const tbb::blocked_range<size_t>& r) {
                            for (size_t id = r.begin(); id < r.end(); ++id) {
                              const uint64_t start = id == 0 ? 0 : view->end(id - 1);
                              tokens[id].assign(view->bytes.data() + start, view->end(id) - start);
                            }
                          });
      },
      [&] {
        // Used where they lie in the mapped entry (no fresh memory), which the encoder keeps.
        tables = BpeEncoder::ReadTables(payload.view().substr(in.offset()), payload.owner(),
                                        view->count, /*rank_merges_implied=*/true, options);
      });
  if (!tables.ok()) return tables.status();
  TM_ASSIGN_OR_RETURN(BpeModel model, TiktokenModelOf(std::move(tokens), files.sidecar.view(),
                                                      files.sidecar_path));
  // What the files' reader made sure of, checked again cheaply: every byte is a token, and the
  // table finds regular tokens (every 97th) at their ids.
  const TokenTable& table = *tables->tokens;
  for (int b = 0; b < 256; ++b) {
    if (table.Find(std::string_view(reinterpret_cast<const char*>(&b), 1)) == TokenTable::kMissing) {
      return absl::InvalidArgumentError("a cached vocabulary without a byte");
    }
  }
  const std::vector<bool> is_special = SpecialIds(model);
  for (size_t id = 0; id < model.tokens.size(); id += 97) {
    if (is_special[id] || model.tokens[id].empty()) continue;
    if (table.Find(model.tokens[id]) != id) {
      return absl::InvalidArgumentError("a cached vocabulary whose table disagrees with its tokens");
    }
  }
  auto owned = std::make_unique<BpeModel>(std::move(model));
  TM_ASSIGN_OR_RETURN(std::unique_ptr<BpeEncoder> pieces,
                      BpeEncoder::Create(*owned, options, *std::move(tables)));
  return Encoder::CreateChecked(std::move(owned), options, std::move(pieces));
}

// Vocabularies whose ranks file is smaller load in a few milliseconds: not cached.
constexpr size_t kCachedRanksBytes = size_t{256} << 10;

absl::StatusOr<std::unique_ptr<Encoder>> LoadTiktokenEncoder(const TiktokenFiles& files,
                                                             const EncoderOptions& options) {
  std::optional<VocabCache> cache;
  if (files.ranks.size() >= kCachedRanksBytes) cache = VocabCache::FromEnvironment();
  const std::string table_options = TableOptions(options);
  const std::string_view inputs[] = {"tiktoken", files.ranks.view(), files.sidecar.view(),
                                     table_options};
  if (cache) {
    if (std::optional<SharedBytes> payload = cache->Find(inputs)) {
      absl::StatusOr<std::unique_ptr<Encoder>> encoder = EncoderFromCache(*payload, files, options);
      if (encoder.ok()) return encoder;  // else read the files, and replace the entry
    }
  }
  TokenTable index;  // the ranks' table, which reading builds: the encoder's (4-7 ms less)
  TM_ASSIGN_OR_RETURN(BpeModel model, FromTiktoken(files.ranks.view(), files.ranks_path,
                                                   files.sidecar.view(), files.sidecar_path, &index));
  auto owned = std::make_unique<BpeModel>(std::move(model));
  TM_ASSIGN_OR_RETURN(std::unique_ptr<BpeEncoder> pieces,
                      BpeEncoder::Create(*owned, options, std::move(index)));
  if (cache && !cache->Writable()) cache.reset();  // nothing to make a payload for
  std::string tokens, tables;  // the entry's payload, stored once the encoder is made
  if (cache) {
    tokens = TokensRecord(owned->tokens);
    BinaryWriter w(&tables);
    pieces->AppendTables(w);
  }
  TM_ASSIGN_OR_RETURN(std::unique_ptr<Encoder> encoder,
                      Encoder::CreateChecked(std::move(owned), options, std::move(pieces)));
  if (cache) {
    const std::string_view payload[] = {tokens, tables};
    cache->Store(inputs, payload).IgnoreError();  // the cache only saves time
  }
  return encoder;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Encoder>> LoadEncoder(const std::string& path,
                                                     EncoderOptions options) {
  bool checked;
  std::optional<TiktokenFiles> tiktoken;
  TM_ASSIGN_OR_RETURN(std::unique_ptr<Model> model,
                      LoadModelFrom(path, BertTextSettings(), checked, &tiktoken));
  if (tiktoken) return LoadTiktokenEncoder(*tiktoken, options);
  if (checked) return Encoder::CreateChecked(std::move(model), options);
  return Encoder::Create(std::move(model), options);
}

absl::StatusOr<BpeModel> LoadBpeModel(const std::string& path) {
  TM_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, LoadModel(path));
  return TakeBpe(std::move(model), path);
}

absl::StatusOr<ModelFormat> OutputFormatOf(const std::string& path) {
  std::string_view p = path;
  if (p.ends_with(".tiktoken")) return ModelFormat::kTiktoken;
  if (p.ends_with(".json")) return ModelFormat::kHfJson;
  if (p.ends_with(".txt")) return ModelFormat::kVocabTxt;
  return absl::InvalidArgumentError(StrCat(
      path, ": cannot tell the output format; name it *.json (tokenizer.json), *.tiktoken or "
            "*.txt (BERT's vocab.txt)"));
}

absl::StatusOr<std::vector<std::string>> OutputFilesOf(const std::string& path) {
  TM_ASSIGN_OR_RETURN(ModelFormat format, OutputFormatOf(path));
  if (format == ModelFormat::kTiktoken) return std::vector<std::string>{path, TiktokenSidecarPath(path)};
  return std::vector<std::string>{path};
}

absl::Status SaveModel(const Model& model, const std::string& path) {
  TM_ASSIGN_OR_RETURN(ModelFormat format, OutputFormatOf(path));
  return SaveModelAs(model, path, format);
}

absl::Status SaveModelAs(const Model& model, const std::string& path, ModelFormat format) {
  if (format == ModelFormat::kTiktoken) return SaveTiktoken(model, path);
  if (format == ModelFormat::kVocabTxt) {
    const WordPieceModel* wordpiece = AsWordPiece(model);
    if (wordpiece == nullptr) {
      return absl::InvalidArgumentError(StrCat(
          path, ": vocab.txt (BERT's) holds WordPiece models; this is a ",
          ModelTypeName(model.type()), " model (write tokenizer.json)"));
    }
    TM_ASSIGN_OR_RETURN(std::string text, ToVocabTxt(*wordpiece));
    return WriteFileAtomically(path, std::string_view(text));
  }
  return SaveHfJson(model, path);
}

}  // namespace tokenmill
