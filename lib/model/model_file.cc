#include "model/model_file.h"

#include <simdjson.h>

#include <cstdio>

#include "common/file_util.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "model/bpe/bpe_model.h"
#include "model/hf_json.h"
#include "model/tiktoken_file.h"

namespace tokenmill {
namespace {

enum class JsonKind { kNotJson, kTokenizerJson, kTiktokenSidecar, kOther };

JsonKind ClassifyJson(const std::string& text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') return JsonKind::kNotJson;
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
  return format == ModelFormat::kHfJson ? "tokenizer.json" : "tiktoken";
}

absl::StatusOr<ModelFormat> DetectModelFormat(const std::string& path) {
  TM_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  switch (ClassifyJson(text)) {
    case JsonKind::kNotJson:
      return ModelFormat::kTiktoken;
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

absl::StatusOr<std::unique_ptr<Model>> LoadModel(const std::string& path) {
  TM_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  switch (ClassifyJson(text)) {
    case JsonKind::kNotJson: {
      TM_ASSIGN_OR_RETURN(BpeModel model, LoadTiktoken(path));
      return std::unique_ptr<Model>(std::make_unique<BpeModel>(std::move(model)));
    }
    case JsonKind::kTiktokenSidecar: {
      std::string ranks_path = TiktokenRanksPath(path);
      TM_ASSIGN_OR_RETURN(std::string ranks, ReadFile(ranks_path));
      TM_ASSIGN_OR_RETURN(BpeModel model, FromTiktoken(ranks, ranks_path, text, path));
      return std::unique_ptr<Model>(std::make_unique<BpeModel>(std::move(model)));
    }
    case JsonKind::kTokenizerJson:
      return FromHfJson(text, path);
    case JsonKind::kOther:
      break;
  }
  // Not valid JSON, or JSON of another kind: let the tokenizer.json reader say what is wrong.
  return FromHfJson(text, path);
}

absl::StatusOr<BpeModel> LoadBpeModel(const std::string& path) {
  TM_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, LoadModel(path));
  return TakeBpe(std::move(model), path);
}

absl::StatusOr<ModelFormat> OutputFormatOf(const std::string& path) {
  std::string_view p = path;
  if (p.ends_with(".tiktoken")) return ModelFormat::kTiktoken;
  if (p.ends_with(".json")) return ModelFormat::kHfJson;
  return absl::InvalidArgumentError(StrCat(
      path, ": cannot tell the output format; name it *.json (tokenizer.json) or *.tiktoken"));
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
  return SaveHfJson(model, path);
}

}  // namespace tokenmill
