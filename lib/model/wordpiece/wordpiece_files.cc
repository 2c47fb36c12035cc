#include "model/wordpiece/wordpiece_files.h"

#include "absl/container/flat_hash_set.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "model/hf_json_fields.h"
#include "model/json_writer.h"

namespace tokenmill {
namespace {

// Whether `text` ends with a White_Space character (Rust's char::is_whitespace, which Hugging
// Face's vocab.txt reader trims with str::trim_end).
size_t TrailingWhitespace(std::string_view text) {
  static constexpr std::string_view kSpaces[] = {
      "\t", "\n", "\v", "\f", "\r", " ", "\xC2\x85", "\xC2\xA0", "\xE1\x9A\x80",
      "\xE2\x80\x80", "\xE2\x80\x81", "\xE2\x80\x82", "\xE2\x80\x83", "\xE2\x80\x84",
      "\xE2\x80\x85", "\xE2\x80\x86", "\xE2\x80\x87", "\xE2\x80\x88", "\xE2\x80\x89",
      "\xE2\x80\x8A", "\xE2\x80\xA8", "\xE2\x80\xA9", "\xE2\x80\xAF", "\xE2\x81\x9F",
      "\xE3\x80\x80"};
  for (std::string_view space : kSpaces) {
    if (text.ends_with(space)) return space.size();
  }
  return 0;
}

}  // namespace

void AppendWordPieceModelJson(const WordPieceModel& model, std::vector<std::string>& pieces) {
  // Hugging Face's field order (models/wordpiece/serialization.rs).
  std::string& out = pieces.back();
  out += "    \"unk_token\": ";
  AppendJsonString(model.unk_token, out);
  out += ",\n    \"continuing_subword_prefix\": ";
  AppendJsonString(model.prefix, out);
  StrAppend(&out, ",\n    \"max_input_chars_per_word\": ", model.max_input_chars_per_word,
            ",\n    \"vocab\": {");
  bool first = true;
  for (TokenId id = 0; id < model.tokens.size(); ++id) {
    if (model.tokens[id].empty()) continue;
    out += first ? "\n      " : ",\n      ";
    first = false;
    AppendJsonString(model.tokens[id], out);
    StrAppend(&out, ": ", id);
  }
  out += first ? "}\n  }\n}\n" : "\n    }\n  }\n}\n";
}

std::string WordPieceHfDecoder(const WordPieceModel& model) {
  std::string out = R"({"type":"WordPiece","prefix":)";
  AppendJsonString(model.prefix, out);
  StrAppend(&out, R"(,"cleanup":)", model.cleanup ? "true" : "false", "}");
  return out;
}

absl::Status ParseWordPieceModelJson(simdjson::dom::element model_json,
                                     const absl::flat_hash_map<TokenId, std::string>& added,
                                     std::string_view source, WordPieceModel& model) {
  auto optional_string = [&](const char* field, std::string& value) -> absl::Status {
    simdjson::dom::element e;
    if (model_json[field].get(e) || e.is_null()) return absl::OkStatus();
    std::string_view text;
    if (e.get(text)) return HfJsonFieldError(source, StrCat("model.", field), "is not a string");
    value = std::string(text);
    return absl::OkStatus();
  };
  TM_RETURN_IF_ERROR(optional_string("unk_token", model.unk_token));
  TM_RETURN_IF_ERROR(optional_string("continuing_subword_prefix", model.prefix));
  if (model.prefix.empty()) {
    return HfJsonFieldError(source, "model.continuing_subword_prefix",
                            "is empty; tokenmill needs a prefix to tell a word's later pieces");
  }
  if (simdjson::dom::element e; !model_json["max_input_chars_per_word"].get(e)) {
    uint64_t n;
    if (e.get(n) || n == 0) {
      return HfJsonFieldError(source, "model.max_input_chars_per_word", "is not a count of 1 or more");
    }
    model.max_input_chars_per_word = n;
  }
  simdjson::dom::object vocab;
  if (model_json["vocab"].get(vocab)) {
    return HfJsonFieldError(source, "model.vocab", "is missing or not an object");
  }
  const size_t entries = vocab.size() + added.size();
  const uint64_t id_limit = 2 * entries + 1024;  // ids far past the entries would be huge gaps
  for (auto [key, value] : vocab) {
    const std::string field = StrCat("model.vocab[\"", key, "\"]");
    uint64_t id;
    if (value.get(id) || id > UINT32_MAX) return HfJsonFieldError(source, field, "is not a token id");
    if (id >= id_limit) {
      return HfJsonFieldError(source, field, StrCat("has id ", id, ", far beyond the ", entries,
                                                    " tokens the file defines"));
    }
    if (key.empty()) return HfJsonFieldError(source, field, "is empty");
    if (id >= model.tokens.size()) model.tokens.resize(id + 1);
    if (!model.tokens[id].empty()) return HfJsonFieldError(source, field, StrCat("reuses id ", id));
    model.tokens[id] = std::string(key);
  }
  for (const auto& [id, content] : added) {
    if (id >= id_limit) {
      return HfJsonFieldError(source, "added_tokens[].id",
                              StrCat("has id ", id, ", far beyond the tokens the file defines"));
    }
    if (id >= model.tokens.size()) model.tokens.resize(id + 1);
    if (!model.tokens[id].empty() && model.tokens[id] != content) {
      return HfJsonFieldError(source, "added_tokens[].id",
                              StrCat("puts '", content, "' at id ", id, ", which the vocab gives '",
                                     model.tokens[id], "'"));
    }
    model.tokens[id] = content;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ToVocabTxt(const WordPieceModel& model) {
  std::string out;
  for (TokenId id = 0; id < model.tokens.size(); ++id) {
    const std::string& t = model.tokens[id];
    if (t.empty()) {
      return absl::InvalidArgumentError(
          StrCat("id ", id, " has no token; vocab.txt gives every id up to the last one a line"));
    }
    if (t.find_first_of("\r\n") != std::string::npos) {
      return absl::InvalidArgumentError(
          StrCat("token ", id, " holds a line break, which vocab.txt cannot hold"));
    }
    if (TrailingWhitespace(t) > 0) {
      return absl::InvalidArgumentError(
          StrCat("token ", id, " ('", t, "') ends with whitespace, which Hugging Face trims from "
                 "each line of a vocab.txt: write tokenizer.json"));
    }
    StrAppend(&out, t, "\n");
  }
  return out;
}

absl::StatusOr<WordPieceModel> FromVocabTxt(std::string_view text, std::string_view source) {
  WordPieceModel model;
  absl::flat_hash_set<std::string_view> seen;
  size_t line = 0;
  while (!text.empty()) {
    ++line;
    size_t end = text.find('\n');
    std::string_view token = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    // Trailing whitespace goes, as Hugging Face's reader trims it (the "\r" of "\r\n" too).
    while (size_t n = TrailingWhitespace(token)) token.remove_suffix(n);
    if (token.empty()) {
      return absl::InvalidArgumentError(StrCat(
          source, ": line ", line, " is empty or only whitespace (vocab.txt holds one token per line)"));
    }
    if (!seen.insert(token).second) {
      return absl::InvalidArgumentError(
          StrCat(source, ": line ", line, " repeats the token '", token, "'"));
    }
    model.tokens.emplace_back(token);
  }
  if (model.tokens.empty()) return absl::InvalidArgumentError(StrCat(source, ": holds no token"));
  for (std::string_view s : kBertSpecialTokens) {
    for (TokenId id = 0; id < model.tokens.size(); ++id) {
      if (model.tokens[id] == s) model.specials.push_back({std::string(s), id});
    }
  }
  return model;
}

}  // namespace tokenmill
