#include "model/hf_json.h"

#include <simdjson.h>

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "model/bpe/bpe_hf_json.h"
#include "model/hf_json_fields.h"
#include "model/json_writer.h"
#include "pretokenize/presets.h"

namespace tokenmill {
namespace {

// The file up to the model object's "type" (the model type's section follows), as pieces
// (model/bpe/bpe_hf_json.h appends chunks built in parallel).
std::vector<std::string> HfJsonPieces(const Model& model) {
  const Units& units = model.units();
  std::string head;
  head += "{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n";
  head += "  \"added_tokens\": [";
  std::span<const SpecialToken> specials = model.special_tokens();
  for (size_t i = 0; i < specials.size(); ++i) {
    const SpecialToken& s = specials[i];
    head += i == 0 ? "\n    " : ",\n    ";
    StrAppend(&head, "{\"id\": ", s.id, ", \"content\": ");
    AppendJsonString(s.content, head);
    head += ", \"single_word\": false, \"lstrip\": false, \"rstrip\": false, "
            "\"normalized\": false, \"special\": true}";
  }
  head += specials.empty() ? "],\n" : "\n  ],\n";
  StrAppend(&head, "  \"normalizer\": ", HfNormalizer(model.normalization()), ",\n");
  head += "  \"pre_tokenizer\": ";
  head += units.HfPreTokenizer(model.pre_tokenizer());
  head += ",\n  \"post_processor\": null,\n";
  StrAppend(&head, "  \"decoder\": ", units.HfDecoder(), ",");
  StrAppend(&head, "\n  \"model\": {\n    \"type\": \"", ModelTypeName(model.type()), "\",\n");
  std::vector<std::string> pieces;
  pieces.push_back(std::move(head));
  switch (model.type()) {
    case ModelType::kBpe:
      AppendBpeModelJson(*AsBpe(model), pieces);
      break;
  }
  return pieces;
}

absl::StatusOr<PreTokenizerConfig> ParsePreTokenizer(simdjson::dom::element pre,
                                                     std::string_view source) {
  auto error = [&](std::string_view field, std::string_view what) {
    return HfJsonFieldError(source, field, what);
  };
  PreTokenizerConfig config;
  if (pre.is_null()) return error("pre_tokenizer", "is null; tokenmill needs a byte-level pre-tokenizer");
  std::string_view type;
  if (pre["type"].get(type)) return error("pre_tokenizer.type", "is missing");
  if (type == "ByteLevel") {
    bool use_regex = true;
    if (simdjson::dom::element e; !pre["use_regex"].get(e)) {
      if (e.get(use_regex)) return error("pre_tokenizer.use_regex", "is not a boolean");
    }
    if (!use_regex) {
      return error("pre_tokenizer", "is ByteLevel without a regex, which tokenmill does not support");
    }
    config.preset = "gpt2";
    return config;
  }
  if (type != "Sequence") {
    return error("pre_tokenizer.type",
                 StrCat("is '", type, "'; tokenmill reads ByteLevel or Sequence[Split, ByteLevel]"));
  }
  simdjson::dom::array parts;
  if (pre["pretokenizers"].get(parts)) return error("pre_tokenizer.pretokenizers", "is not an array");
  std::string_view pattern;
  for (simdjson::dom::element part : parts) {
    std::string_view part_type;
    if (part["type"].get(part_type)) return error("pre_tokenizer.pretokenizers[].type", "is missing");
    if (part_type == "Split") {
      if (part["pattern"]["Regex"].get(pattern)) {
        return error("pre_tokenizer.pretokenizers[].pattern.Regex", "is missing");
      }
    } else if (part_type != "ByteLevel") {
      return error("pre_tokenizer.pretokenizers[].type", StrCat("is '", part_type, "', not supported"));
    }
  }
  if (pattern.empty()) return error("pre_tokenizer", "has no Split regex");
  config.preset = "custom";
  config.pattern = std::string(pattern);
  for (const PreTokenizerPreset& p : kPreTokenizerPresets) {
    if (p.pattern == pattern) {
      config.preset = std::string(p.name);
      config.pattern.clear();
    }
  }
  return config;
}

// The added tokens: literal contents at their ids.
absl::Status ParseAddedTokens(simdjson::dom::element root, std::string_view source,
                              absl::flat_hash_map<TokenId, std::string>& added,
                              std::vector<SpecialToken>& specials) {
  simdjson::dom::array added_tokens;
  simdjson::dom::element e;
  if (root["added_tokens"].get(e) || e.is_null()) return absl::OkStatus();
  if (e.get(added_tokens)) return HfJsonFieldError(source, "added_tokens", "is not an array");
  size_t index = 0;
  for (simdjson::dom::element t : added_tokens) {
    std::string field = StrCat("added_tokens[", index++, "]");
    uint64_t id;
    std::string_view content;
    if (t["id"].get(id) || id >= UINT32_MAX) {
      return HfJsonFieldError(source, field + ".id", "is missing or not an id");
    }
    if (t["content"].get(content) || content.empty()) {
      return HfJsonFieldError(source, field + ".content", "is missing, not a string or empty");
    }
    added[static_cast<TokenId>(id)] = std::string(content);
    specials.push_back({std::string(content), static_cast<TokenId>(id)});
  }
  return absl::OkStatus();
}

}  // namespace

std::string ToHfJson(const Model& model) {
  std::vector<std::string> pieces = HfJsonPieces(model);
  size_t size = 0;
  for (const std::string& piece : pieces) size += piece.size();
  std::string out;
  out.reserve(size);
  for (const std::string& piece : pieces) out += piece;
  return out;
}

absl::StatusOr<std::unique_ptr<Model>> FromHfJson(std::string_view json, std::string_view source) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json);
  simdjson::dom::element root;
  if (auto error = parser.parse(padded).get(root)) {
    return absl::InvalidArgumentError(
        StrCat(source, ": not valid JSON (", simdjson::error_message(error), ")"));
  }
  simdjson::dom::element model_json;
  if (root["model"].get(model_json)) return HfJsonFieldError(source, "model", "is missing");
  std::string_view type;
  if (simdjson::dom::element e; model_json["type"].get(e)) {
    return HfJsonFieldError(source, "model.type", "is missing");
  } else if (e.get(type)) {
    return HfJsonFieldError(source, "model.type", "is not a string");
  }
  if (type != ModelTypeName(ModelType::kBpe)) {
    return HfJsonFieldError(source, "model.type", StrCat("is \"", type, "\"; tokenmill reads \"BPE\""));
  }
  auto model = std::make_unique<BpeModel>();
  TM_RETURN_IF_ERROR(ParseBpeModelFlags(model_json, source, *model));
  simdjson::dom::element pre;
  if (root["pre_tokenizer"].get(pre)) return HfJsonFieldError(source, "pre_tokenizer", "is missing");
  TM_ASSIGN_OR_RETURN(model->pretokenizer, ParsePreTokenizer(pre, source));
  absl::flat_hash_map<TokenId, std::string> added;
  TM_RETURN_IF_ERROR(ParseAddedTokens(root, source, added, model->specials));
  TM_RETURN_IF_ERROR(ParseBpeModelJson(model_json, added, source, *model));
  return std::unique_ptr<Model>(std::move(model));
}

absl::StatusOr<BpeModel> BpeModelFromHfJson(std::string_view json, std::string_view source) {
  TM_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, FromHfJson(json, source));
  return TakeBpe(std::move(model), source);
}

absl::Status SaveHfJson(const Model& model, const std::string& path) {
  std::vector<std::string> pieces = HfJsonPieces(model);
  std::vector<std::string_view> views(pieces.begin(), pieces.end());
  return WriteFileAtomically(path, views);
}

absl::StatusOr<std::unique_ptr<Model>> LoadHfJson(const std::string& path) {
  TM_ASSIGN_OR_RETURN(std::string json, ReadFile(path));
  return FromHfJson(json, path);
}

}  // namespace tokenmill
