#include "model/unigram/unigram_files.h"

#include <algorithm>
#include <charconv>

#include "absl/container/flat_hash_set.h"
#include "common/strings.h"
#include "model/hf_json_fields.h"
#include "model/json_writer.h"

namespace tokenmill {

void AppendUnigramModelJson(const UnigramModel& model, std::vector<std::string>& pieces) {
  std::string& out = pieces.back();
  if (model.unk_id == kNoUnknownToken) {
    out += "    \"unk_id\": null,\n";
  } else {
    StrAppend(&out, "    \"unk_id\": ", model.unk_id, ",\n");
  }
  out += "    \"vocab\": [";
  std::vector<int> byte_of(model.tokens.size(), -1);
  for (size_t b = 0; b < model.byte_fallback.size(); ++b) byte_of[model.byte_fallback[b]] = static_cast<int>(b);
  char number[64];
  for (TokenId id = 0; id < model.tokens.size(); ++id) {
    out += id == 0 ? "\n      [" : ",\n      [";
    if (byte_of[id] >= 0) {
      AppendJsonString(ByteFallbackName(static_cast<unsigned char>(byte_of[id])), out);
    } else {
      AppendJsonString(model.tokens[id], out);
    }
    out += ", ";
    // The shortest text that reads back as the same double.
    auto [end, ec] = std::to_chars(number, number + sizeof(number), model.scores[id]);
    std::string_view text(number, static_cast<size_t>(end - number));
    out += text;
    if (text.find_first_of(".eEn") == std::string_view::npos) out += ".0";
    out += "]";
  }
  out += model.tokens.empty() ? "],\n" : "\n    ],\n";
  StrAppend(&out, "    \"byte_fallback\": ", model.byte_fallback.empty() ? "false" : "true", "\n  }\n}\n");
}

absl::Status ParseUnigramModelJson(simdjson::dom::element model_json,
                                   const absl::flat_hash_map<TokenId, std::string>& added,
                                   std::string_view source, UnigramModel& model) {
  bool byte_fallback = false;
  if (simdjson::dom::element e; !model_json["byte_fallback"].get(e) && !e.is_null()) {
    if (e.get(byte_fallback)) return HfJsonFieldError(source, "model.byte_fallback", "is not a boolean");
  }
  std::optional<uint64_t> unk_id;
  if (simdjson::dom::element e; !model_json["unk_id"].get(e) && !e.is_null()) {
    uint64_t id;
    if (e.get(id)) return HfJsonFieldError(source, "model.unk_id", "is not an id or null");
    unk_id = id;
  }
  simdjson::dom::array vocab;
  if (model_json["vocab"].get(vocab)) {
    return HfJsonFieldError(source, "model.vocab", "is missing or not an array");
  }
  std::vector<TokenId> fallback(256, kNoUnknownToken);
  size_t index = 0;
  for (simdjson::dom::element entry : vocab) {
    const std::string field = StrCat("model.vocab[", index, "]");
    simdjson::dom::array pair;
    std::string_view text;
    double score;
    if (entry.get(pair) || pair.size() != 2 || pair.at(0).get(text)) {
      return HfJsonFieldError(source, field, "is not a [piece, score] pair");
    }
    if (simdjson::dom::element s = pair.at(1); s.get(score)) {
      int64_t whole;
      if (s.get(whole)) return HfJsonFieldError(source, field, "has a score that is not a number");
      score = static_cast<double>(whole);
    }
    const TokenId id = static_cast<TokenId>(index);
    std::string token(text);
    if (auto it = added.find(id); it != added.end() && it->second != token) {
      return HfJsonFieldError(source, field,
                              StrCat("is '", token, "' but added_tokens has '", it->second,
                                     "' at id ", id));
    }
    if (byte_fallback && !added.contains(id)) {
      if (int b = ParseByteFallbackName(token); b >= 0) {
        if (fallback[b] != kNoUnknownToken) {
          return HfJsonFieldError(source, field, StrCat("repeats ", token));
        }
        fallback[b] = id;
        token = std::string(1, static_cast<char>(b));
      }
    }
    model.tokens.push_back(std::move(token));
    model.scores.push_back(score);
    ++index;
  }
  if (byte_fallback) {
    for (int b = 0; b < 256; ++b) {
      if (fallback[b] == kNoUnknownToken) {
        return HfJsonFieldError(source, "model.vocab",
                                StrCat("has byte_fallback but no token ", ByteFallbackName(b),
                                       "; tokenmill reads byte fallback with all 256 byte tokens"));
      }
    }
    model.byte_fallback = std::move(fallback);
  }
  for (const auto& [id, content] : added) {
    if (id >= model.tokens.size()) {
      return HfJsonFieldError(source, "added_tokens",
                              StrCat("has id ", id, " ('", content, "') beyond the vocabulary's ",
                                     model.tokens.size(), " pieces"));
    }
  }
  if (unk_id) {
    if (*unk_id >= model.tokens.size()) {
      return HfJsonFieldError(source, "model.unk_id",
                              StrCat("is ", *unk_id, ", beyond the vocabulary's ",
                                     model.tokens.size(), " pieces"));
    }
    model.unk_id = static_cast<TokenId>(*unk_id);
    if (std::find(model.byte_fallback.begin(), model.byte_fallback.end(), model.unk_id) !=
        model.byte_fallback.end()) {
      return HfJsonFieldError(source, "model.unk_id",
                              StrCat("is ", model.unk_id, ", a byte-fallback token (",
                                     ByteFallbackName(static_cast<unsigned char>(
                                         model.tokens[model.unk_id][0])),
                                     "); the unknown token must be a token of its own"));
    }
    if (!added.contains(model.unk_id)) {
      model.specials.push_back({model.tokens[model.unk_id], model.unk_id});
    }
  } else {
    model.unk_id = kNoUnknownToken;
  }
  return absl::OkStatus();
}

}  // namespace tokenmill
