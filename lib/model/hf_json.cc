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
#include "model/unigram/unigram_files.h"
#include "model/unigram/unigram_model.h"
#include "model/wordpiece/wordpiece_model.h"
#include "model/wordpiece/wordpiece_files.h"
#include "pretokenize/presets.h"
#include "pretokenize/text_prep.h"

namespace tokenmill {
namespace {

// The file up to the model object's "type" (the model type's section follows), as pieces
// (model/bpe/bpe_hf_json.h appends chunks built in parallel).
std::vector<std::string> HfJsonPieces(const Model& model) {
  const Units& units = model.units();
  const BpeModel* bpe = AsBpe(model);
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
  StrAppend(&head, "  \"normalizer\": ", HfNormalizer(model.pre_tokenizer().normalizer), ",\n");
  head += "  \"pre_tokenizer\": ";
  head += units.HfPreTokenizer(model.pre_tokenizer());
  head += ",\n  \"post_processor\": null,\n";
  const WordPieceModel* wordpiece = AsWordPiece(model);
  StrAppend(&head, "  \"decoder\": ",
            wordpiece != nullptr
                ? WordPieceHfDecoder(*wordpiece)
                : units.HfDecoder(model.pre_tokenizer(), !model.byte_fallback_ids().empty(),
                                  bpe != nullptr ? bpe->subword_prefix : "",
                                  bpe != nullptr ? bpe->word_suffix : ""),
            ",");
  StrAppend(&head, "\n  \"model\": {\n    \"type\": \"", ModelTypeName(model.type()), "\",\n");
  std::vector<std::string> pieces;
  pieces.push_back(std::move(head));
  switch (model.type()) {
    case ModelType::kBpe:
      AppendBpeModelJson(*AsBpe(model), pieces);
      break;
    case ModelType::kWordPiece:
      AppendWordPieceModelJson(*wordpiece, pieces);
      break;
    case ModelType::kUnigram:
      AppendUnigramModelJson(*AsUnigram(model), pieces);
      break;
  }
  return pieces;
}

// The pre-tokenizer, and the units it implies: byte-level with a ByteLevel step, else
// characters.
struct ParsedPreTokenizer {
  PreTokenizerConfig config;
  UnitKind units = UnitKind::kChar;
};

absl::StatusOr<ParsedPreTokenizer> ParsePreTokenizer(simdjson::dom::element pre,
                                                     std::string_view source) {
  auto error = [&](std::string_view field, std::string_view what) {
    return HfJsonFieldError(source, field, what);
  };
  ParsedPreTokenizer parsed;
  PreTokenizerConfig& config = parsed.config;
  if (pre.is_null()) {
    config.preset = "none";
    return parsed;
  }
  std::vector<simdjson::dom::element> steps;
  std::string_view type;
  if (pre["type"].get(type)) return error("pre_tokenizer.type", "is missing");
  std::string field = "pre_tokenizer";
  if (type == "Sequence") {
    simdjson::dom::array parts;
    if (pre["pretokenizers"].get(parts)) return error("pre_tokenizer.pretokenizers", "is not an array");
    for (simdjson::dom::element part : parts) steps.push_back(part);
    field = "pre_tokenizer.pretokenizers[]";
  } else {
    steps.push_back(pre);
  }
  std::string split;  // the one splitting step's kind
  for (simdjson::dom::element step : steps) {
    std::string_view step_type;
    if (step["type"].get(step_type)) return error(field + ".type", "is missing");
    if (step_type == "ByteLevel") {
      bool use_regex = true;
      if (simdjson::dom::element e; !step["use_regex"].get(e)) {
        if (e.get(use_regex)) return error(field + ".use_regex", "is not a boolean");
      }
      parsed.units = UnitKind::kByte;
      if (!use_regex) continue;
      if (!split.empty()) return error(field, "splits twice (ByteLevel with its regex after a split)");
      split = "gpt2";
      config.preset = "gpt2";
    } else if (step_type == "Digits") {
      bool individual = false;
      if (simdjson::dom::element e; !step["individual_digits"].get(e)) {
        if (e.get(individual)) return error(field + ".individual_digits", "is not a boolean");
      }
      if (!individual) {
        return error(field, "is Digits without individual_digits, which tokenmill does not read");
      }
      config.split_digits = true;
    } else if (!split.empty()) {
      return error(field, StrCat("has a second splitting step ('", step_type,
                                 "'); tokenmill reads one split, then Digits and ByteLevel"));
    } else if (step_type == "Split") {
      std::string_view pattern, behavior = "Isolated";
      if (step["pattern"]["Regex"].get(pattern)) {
        return error(field + ".pattern.Regex", "is missing (tokenmill reads regex splits)");
      }
      if (simdjson::dom::element e; !step["behavior"].get(e) && e.get(behavior)) {
        return error(field + ".behavior", "is not a string");
      }
      if (behavior != "Isolated") {
        return error(field + ".behavior", StrCat("is '", behavior, "'; tokenmill reads Isolated"));
      }
      split = "split";
      config.preset = "custom";
      config.pattern = std::string(pattern);
      for (const PreTokenizerPreset& p : kPreTokenizerPresets) {
        if (p.pattern == pattern) {
          config.preset = std::string(p.name);
          config.pattern.clear();
        }
      }
    } else if (step_type == "Metaspace") {
      std::string_view replacement = kMetaspace, scheme = "always";
      if (simdjson::dom::element e; !step["replacement"].get(e) && e.get(replacement)) {
        return error(field + ".replacement", "is not a string");
      }
      if (replacement != kMetaspace) {
        return error(field + ".replacement", StrCat("is '", replacement, "'; tokenmill reads '", kMetaspace, "'"));
      }
      if (simdjson::dom::element e; !step["prepend_scheme"].get(e) && e.get(scheme)) {
        return error(field + ".prepend_scheme", "is not a string");
      }
      if (scheme != "always" && scheme != "never") {
        return error(field + ".prepend_scheme",
                     StrCat("is '", scheme, "'; tokenmill reads 'always' and 'never'"));
      }
      bool split_pieces = true;
      if (simdjson::dom::element e; !step["split"].get(e) && e.get(split_pieces)) {
        return error(field + ".split", "is not a boolean");
      }
      if (!split_pieces) return error(field + ".split", "is false; tokenmill reads split Metaspace");
      split = "metaspace";
      config.preset = "metaspace";
      config.metaspace_prefix = scheme == "always";
    } else if (step_type == "Whitespace") {
      split = "whitespace";
      config.preset = "whitespace";
    } else if (step_type == "BertPreTokenizer") {
      split = "bert";
      config.preset = "bert";
    } else {
      return error(field + ".type", StrCat("is '", step_type, "', which tokenmill does not read"));
    }
  }
  if (split.empty()) config.preset = "none";
  return parsed;
}

// A BertNormalizer's fields into `config`; strip_accents null or absent follows lowercase, as in
// Hugging Face.
absl::Status ParseBertNormalizer(simdjson::dom::element step, std::string_view source,
                                 NormalizerConfig& config) {
  for (auto [name, field] : {std::pair<const char*, bool*>{"clean_text", &config.clean_text},
                             {"handle_chinese_chars", &config.handle_chinese_chars},
                             {"lowercase", &config.lowercase}}) {
    if (step[name].get(*field)) {
      return HfJsonFieldError(source, StrCat("normalizer.", name), "is missing or not a boolean");
    }
  }
  config.strip_accents = config.lowercase;
  if (simdjson::dom::element e; !step["strip_accents"].get(e) && !e.is_null()) {
    if (e.get(config.strip_accents)) {
      return HfJsonFieldError(source, "normalizer.strip_accents", "is not a boolean or null");
    }
  }
  return absl::OkStatus();
}

// The normalizer: null, NFC, NFKC, Lowercase, BertNormalizer, or a Sequence of a form and
// Lowercase or BertNormalizer.
absl::StatusOr<NormalizerConfig> ParseNormalizer(simdjson::dom::element root,
                                                 std::string_view source) {
  NormalizerConfig config;
  simdjson::dom::element normalizer;
  if (root["normalizer"].get(normalizer) || normalizer.is_null()) return config;
  std::vector<simdjson::dom::element> steps;
  std::string_view type;
  if (normalizer["type"].get(type)) return HfJsonFieldError(source, "normalizer.type", "is missing");
  if (type == "Sequence") {
    simdjson::dom::array parts;
    if (normalizer["normalizers"].get(parts)) {
      return HfJsonFieldError(source, "normalizer.normalizers", "is not an array");
    }
    for (simdjson::dom::element part : parts) steps.push_back(part);
  } else {
    steps.push_back(normalizer);
  }
  bool last = false;  // a Lowercase or BertNormalizer was read: nothing may follow
  for (simdjson::dom::element step : steps) {
    if (step["type"].get(type)) return HfJsonFieldError(source, "normalizer.type", "is missing");
    if ((type == "NFC" || type == "NFKC") && config.form == NormalForm::kNone && !last) {
      config.form = type == "NFC" ? NormalForm::kNfc : NormalForm::kNfkc;
    } else if (type == "Lowercase" && !last) {
      config.lowercase = true;
      last = true;
    } else if (type == "BertNormalizer" && !last) {
      TM_RETURN_IF_ERROR(ParseBertNormalizer(step, source, config));
      last = true;
    } else {
      return HfJsonFieldError(source, "normalizer",
                              StrCat("has '", type,
                                     "' where tokenmill reads NFC or NFKC, then Lowercase or "
                                     "BertNormalizer"));
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

absl::StatusOr<std::unique_ptr<Model>> WordPieceFromHfJson(simdjson::dom::element root,
                                                           simdjson::dom::element model_json,
                                                           std::string_view source) {
  auto model = std::make_unique<WordPieceModel>();
  simdjson::dom::element pre;
  if (root["pre_tokenizer"].get(pre)) return HfJsonFieldError(source, "pre_tokenizer", "is missing");
  TM_ASSIGN_OR_RETURN(ParsedPreTokenizer parsed, ParsePreTokenizer(pre, source));
  if (parsed.units != UnitKind::kChar) {
    return HfJsonFieldError(source, "pre_tokenizer",
                            "is ByteLevel, which tokenmill does not read with a WordPiece model");
  }
  model->pretokenizer = std::move(parsed.config);
  TM_ASSIGN_OR_RETURN(model->pretokenizer.normalizer, ParseNormalizer(root, source));
  absl::flat_hash_map<TokenId, std::string> added;
  TM_RETURN_IF_ERROR(ParseAddedTokens(root, source, added, model->specials));
  TM_RETURN_IF_ERROR(ParseWordPieceModelJson(model_json, added, source, *model));
  // The decoder's cleanup (Hugging Face's WordPiece decoder; without one, ids decode the same
  // way without cleanup).
  model->cleanup = false;
  simdjson::dom::element decoder;
  std::string_view decoder_type;
  if (!root["decoder"].get(decoder) && !decoder.is_null() && !decoder["type"].get(decoder_type) &&
      decoder_type == "WordPiece") {
    bool cleanup = true;
    if (simdjson::dom::element e; !decoder["cleanup"].get(e) && e.get(cleanup)) {
      return HfJsonFieldError(source, "decoder.cleanup", "is not a boolean");
    }
    model->cleanup = cleanup;
  }
  return std::unique_ptr<Model>(std::move(model));
}

absl::StatusOr<std::unique_ptr<Model>> UnigramFromHfJson(simdjson::dom::element root,
                                                         simdjson::dom::element model_json,
                                                         std::string_view source) {
  auto model = std::make_unique<UnigramModel>();
  simdjson::dom::element pre;
  if (root["pre_tokenizer"].get(pre)) return HfJsonFieldError(source, "pre_tokenizer", "is missing");
  TM_ASSIGN_OR_RETURN(ParsedPreTokenizer parsed, ParsePreTokenizer(pre, source));
  if (parsed.units != UnitKind::kChar) {
    return HfJsonFieldError(source, "pre_tokenizer",
                            "is ByteLevel, which tokenmill does not read with a Unigram model");
  }
  model->pretokenizer = std::move(parsed.config);
  TM_ASSIGN_OR_RETURN(model->pretokenizer.normalizer, ParseNormalizer(root, source));
  absl::flat_hash_map<TokenId, std::string> added;
  TM_RETURN_IF_ERROR(ParseAddedTokens(root, source, added, model->specials));
  TM_RETURN_IF_ERROR(ParseUnigramModelJson(model_json, added, source, *model));
  std::sort(model->specials.begin(), model->specials.end(),
            [](const SpecialToken& a, const SpecialToken& b) { return a.id < b.id; });
  return std::unique_ptr<Model>(std::move(model));
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

namespace {

// FromHfJson on the parsed document.
absl::StatusOr<std::unique_ptr<Model>> FromHfJsonRoot(simdjson::dom::element root,
                                                      std::string_view source) {
  simdjson::dom::element model_json;
  if (root["model"].get(model_json)) return HfJsonFieldError(source, "model", "is missing");
  std::string_view type;
  if (simdjson::dom::element e; model_json["type"].get(e)) {
    return HfJsonFieldError(source, "model.type", "is missing");
  } else if (e.get(type)) {
    return HfJsonFieldError(source, "model.type", "is not a string");
  }
  if (type == ModelTypeName(ModelType::kWordPiece)) return WordPieceFromHfJson(root, model_json, source);
  if (type == ModelTypeName(ModelType::kUnigram)) return UnigramFromHfJson(root, model_json, source);
  if (type != ModelTypeName(ModelType::kBpe)) {
    return HfJsonFieldError(
        source, "model.type",
        StrCat("is \"", type, "\"; tokenmill reads \"BPE\", \"WordPiece\" and \"Unigram\""));
  }
  auto model = std::make_unique<BpeModel>();
  TM_RETURN_IF_ERROR(ParseBpeModelFlags(model_json, source, *model));
  simdjson::dom::element pre;
  if (root["pre_tokenizer"].get(pre)) return HfJsonFieldError(source, "pre_tokenizer", "is missing");
  TM_ASSIGN_OR_RETURN(ParsedPreTokenizer parsed, ParsePreTokenizer(pre, source));
  model->pretokenizer = std::move(parsed.config);
  model->unit_kind = parsed.units;
  TM_ASSIGN_OR_RETURN(model->pretokenizer.normalizer, ParseNormalizer(root, source));
  absl::flat_hash_map<TokenId, std::string> added;
  TM_RETURN_IF_ERROR(ParseAddedTokens(root, source, added, model->specials));
  TM_RETURN_IF_ERROR(ParseBpeModelJson(model_json, added, source, *model));
  return std::unique_ptr<Model>(std::move(model));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Model>> FromHfJson(std::string_view json, std::string_view source) {
  simdjson::dom::parser parser;
  TM_ASSIGN_OR_RETURN(simdjson::dom::element root, ParseJson(parser, json, source));
  return FromHfJsonRoot(root, source);
}

JsonKind ClassifyJson(std::string_view text, std::string_view source,
                      absl::StatusOr<std::unique_ptr<Model>>* model) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || text[first] != '{') return JsonKind::kNotJson;
  simdjson::dom::parser parser;
  const absl::StatusOr<simdjson::dom::element> root = ParseJson(parser, text, source);
  if (!root.ok() || !root->is_object()) return JsonKind::kOther;
  simdjson::dom::element field;
  if (!(*root)["model"].get(field)) {
    if (model != nullptr) *model = FromHfJsonRoot(*root, source);
    return JsonKind::kTokenizerJson;
  }
  if (!(*root)["pattern"].get(field)) return JsonKind::kTiktokenSidecar;
  return JsonKind::kOther;
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
