#include "model/model_file.h"

#include <simdjson.h>

#include <cctype>
#include <cstdio>

#include "common/file_util.h"
#include "common/utf8.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "model/bpe/bpe_encoder.h"
#include "model/bpe/bpe_model.h"
#include "model/bpe/lookup_tables.h"
#include "model/hf_json.h"
#include "model/tiktoken_file.h"
#include "model/wordpiece/wordpiece_model.h"
#include "model/wordpiece/wordpiece_files.h"
#include "pretokenize/presets.h"

namespace tokenmill {
namespace {

enum class JsonKind { kNotJson, kTokenizerJson, kTiktokenSidecar, kOther };

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

JsonKind ClassifyJson(std::string_view text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || text[first] != '{') return JsonKind::kNotJson;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(simdjson::padded_string(text)).get(root) || !root.is_object()) {
    return JsonKind::kOther;
  }
  simdjson::dom::element field;
  if (!root["model"].get(field)) return JsonKind::kTokenizerJson;
  if (!root["pattern"].get(field)) return JsonKind::kTiktokenSidecar;
  return JsonKind::kOther;
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
  switch (ClassifyJson(text)) {
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

// LoadModel(path, vocab_txt_text); `checked` is set when the reader has checked all that the
// model's Validate() does (the BPE readers: LoadTiktoken, FromTiktoken, FromHfJson's BPE).
// A .tiktoken reader's table of the tokens goes to `index` when given (FromTiktoken).
absl::StatusOr<std::unique_ptr<Model>> LoadModelFrom(const std::string& path,
                                                     const PreTokenizerConfig& vocab_txt_text,
                                                     bool& checked,
                                                     std::optional<TokenTable>* index = nullptr) {
  checked = false;
  if (index != nullptr) index->reset();
  auto index_out = [&]() -> TokenTable* { return index == nullptr ? nullptr : &index->emplace(); };
  // Mapped, not copied (o200k_base.tiktoken's 3.6 MB: 1.24 ms read into memory, 0.09 ms
  // mapped, on one core at any thread count).
  TM_ASSIGN_OR_RETURN(SharedBytes mapped, MapFile(path));
  const std::string_view text = mapped.view();
  switch (ClassifyJson(text)) {
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
      TM_ASSIGN_OR_RETURN(BpeModel model, LoadTiktoken(path, text, index_out()));
      checked = true;
      return std::unique_ptr<Model>(std::make_unique<BpeModel>(std::move(model)));
    }
    case JsonKind::kTiktokenSidecar: {
      std::string ranks_path = TiktokenRanksPath(path);
      TM_ASSIGN_OR_RETURN(SharedBytes ranks, MapFile(ranks_path));
      TM_ASSIGN_OR_RETURN(BpeModel model,
                          FromTiktoken(ranks.view(), ranks_path, text, path, index_out()));
      checked = true;
      return std::unique_ptr<Model>(std::make_unique<BpeModel>(std::move(model)));
    }
    case JsonKind::kTokenizerJson:
    case JsonKind::kOther:
      break;
  }
  // A tokenizer.json; or not valid JSON, or JSON of another kind: then the tokenizer.json
  // reader says what is wrong.
  TM_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, FromHfJson(text, path));
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

absl::StatusOr<std::unique_ptr<Encoder>> LoadEncoder(const std::string& path,
                                                     EncoderOptions options) {
  bool checked;
  std::optional<TokenTable> index;  // a .tiktoken reader's table of the tokens
  TM_ASSIGN_OR_RETURN(std::unique_ptr<Model> model,
                      LoadModelFrom(path, BertTextSettings(), checked, &index));
  if (index) {
    // The encoder's table is the one reading built (o200k_base: 4-7 ms of start-up less).
    TM_ASSIGN_OR_RETURN(std::unique_ptr<BpeEncoder> pieces,
                        BpeEncoder::Create(*AsBpe(*model), options, *std::move(index)));
    return Encoder::CreateChecked(std::move(model), options, std::move(pieces));
  }
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
