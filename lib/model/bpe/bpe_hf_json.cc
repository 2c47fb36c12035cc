#include "model/bpe/bpe_hf_json.h"

#include <algorithm>
#include <array>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include "common/status_macros.h"
#include "common/strings.h"
#include "model/bpe/lookup_tables.h"
#include "model/hf_json_fields.h"
#include "model/json_writer.h"

namespace tokenmill {
namespace {

constexpr size_t kChunk = 4096;

// Each token's JSON string: the special's content, else its bytes as the units write them.
std::vector<std::string> TokenJson(const BpeModel& model) {
  const Units& units = model.units();
  std::vector<std::string> json(model.tokens.size());
  absl::flat_hash_map<TokenId, const SpecialToken*> special_of_id;
  for (const SpecialToken& s : model.specials) special_of_id[s.id] = &s;
  for (int b = 0; b < static_cast<int>(model.byte_fallback.size()); ++b) {
    AppendJsonString(ByteFallbackName(static_cast<unsigned char>(b)), json[model.byte_fallback[b]]);
  }
  tbb::parallel_for(tbb::blocked_range<size_t>(0, model.tokens.size(), kChunk),
                    [&](const tbb::blocked_range<size_t>& range) {
    for (size_t id = range.begin(); id < range.end(); ++id) {
      auto special = special_of_id.find(static_cast<TokenId>(id));
      if (special != special_of_id.end()) {
        AppendJsonString(special->second->content, json[id]);
      } else if (!model.tokens[id].empty() && json[id].empty()) {
        AppendJsonString(units.TokenToText(model.tokens[id]), json[id]);
      }
    }
  });
  return json;
}

}  // namespace

void AppendBpeModelJson(const BpeModel& model, std::vector<std::string>& pieces) {
  std::string& head = pieces.back();
  head += "    \"dropout\": null,\n    \"unk_token\": ";
  if (model.unknown) {
    AppendJsonString(model.tokens[*model.unknown], head);
  } else {
    head += "null";
  }
  auto optional_string = [&](std::string_view field, const std::string& value) {
    StrAppend(&head, ",\n    \"", field, "\": ");
    if (value.empty()) {
      head += "null";
    } else {
      AppendJsonString(value, head);
    }
  };
  optional_string("continuing_subword_prefix", model.subword_prefix);
  optional_string("end_of_word_suffix", model.word_suffix);
  head += ",\n    \"fuse_unk\": false,\n";
  StrAppend(&head, "    \"byte_fallback\": ", model.byte_fallback.empty() ? "false" : "true",
            ",\n");
  StrAppend(&head, "    \"ignore_merges\": ", model.ignore_merges ? "true" : "false", ",\n");
  head += "    \"vocab\": {";

  // Merges implied by the ranks are listed: tokenizer.json has no such rule.
  std::vector<Merge> implied;
  if (model.rank_merges_implied) implied = MergeList(model);
  const std::vector<Merge>& merge_list = model.rank_merges_implied ? implied : model.merges;
  const size_t tokens = model.tokens.size(), merges = merge_list.size();
  const std::vector<std::string> json = TokenJson(model);
  // The first token listed (ids may have gaps: its entry has no comma before it).
  size_t first = 0;
  while (first < tokens && model.tokens[first].empty()) ++first;
  const size_t vocab_chunks = (tokens + kChunk - 1) / kChunk;
  const size_t merge_chunks = (merges + kChunk - 1) / kChunk;
  if (vocab_chunks == 0) head += "\n    },\n    \"merges\": [";
  const size_t at = pieces.size();
  pieces.resize(at + vocab_chunks + merge_chunks);
  tbb::parallel_for(size_t{0}, vocab_chunks + merge_chunks, [&](size_t c) {
    std::string& out = pieces[at + c];
    if (c < vocab_chunks) {
      const size_t end = std::min(tokens, (c + 1) * kChunk);
      for (size_t id = c * kChunk; id < end; ++id) {
        if (model.tokens[id].empty()) continue;
        out += id == first ? "\n      " : ",\n      ";
        out += json[id];
        StrAppend(&out, ": ", id);
      }
      if (c + 1 == vocab_chunks) out += "\n    },\n    \"merges\": [";
      return;
    }
    c -= vocab_chunks;
    const size_t end = std::min(merges, (c + 1) * kChunk);
    for (size_t i = c * kChunk; i < end; ++i) {
      const Merge& m = merge_list[i];
      out += i == 0 ? "\n      [" : ",\n      [";
      out += json[m.left];
      out += ", ";
      out += json[m.right];
      out += "]";
    }
  });
  pieces.push_back("\n    ]\n  }\n}\n");
}

namespace {

absl::Status ParseVocab(simdjson::dom::element model_json,
                        const absl::flat_hash_map<TokenId, std::string>& added,
                        std::string_view source, bool wants_fallback, BpeModel& model) {
  simdjson::dom::object vocab;
  if (model_json["vocab"].get(vocab)) {
    return HfJsonFieldError(source, "model.vocab", "is missing or not an object");
  }
  // Ids may leave gaps, but not so large that a tiny file makes us allocate gigabytes.
  size_t entries = added.size();
  for ([[maybe_unused]] auto field : vocab) ++entries;
  const uint64_t id_limit = 2 * uint64_t{entries} + 1024;
  // Character units with byte_fallback: the <0xNN> tokens, when all 256 are there.
  bool fallback = false;
  if (model.unit_kind == UnitKind::kChar && wants_fallback) {
    int found = 0;
    for (auto [key, value] : vocab) found += ParseByteFallbackName(key) >= 0;
    fallback = found == 256;
    if (!fallback) {
      return HfJsonFieldError(source, "model.byte_fallback",
                              StrCat("is true but the vocab has ", found,
                                     " of the 256 tokens <0x00>..<0xFF>; tokenmill needs all"));
    }
    model.byte_fallback.assign(256, 0);
  }
  auto far = [&](uint64_t id) {
    return StrCat("has id ", id, ", far beyond the ", entries, " tokens the file defines");
  };
  model.tokens.reserve(entries);
  for (simdjson::dom::key_value_pair entry : vocab) {
    const std::string_view key = entry.key;  // a variable, not a binding: the lambda takes it
    const simdjson::dom::element value = entry.value;
    auto field = [&] { return StrCat("model.vocab[\"", key, "\"]"); };
    uint64_t id;
    if (value.get(id) || id > UINT32_MAX) {
      return HfJsonFieldError(source, field(), "is not a token id");
    }
    if (id >= id_limit) return HfJsonFieldError(source, field(), far(id));
    if (id >= model.tokens.size()) model.tokens.resize(id + 1);
    if (!model.tokens[id].empty()) {
      return HfJsonFieldError(source, field(), StrCat("reuses id ", id));
    }
    if (auto it = added.find(static_cast<TokenId>(id)); it != added.end()) {
      model.tokens[id] = it->second;
      continue;
    }
    if (const int b = ParseByteFallbackName(key); b >= 0 && fallback) {
      model.byte_fallback[b] = static_cast<TokenId>(id);
      model.tokens[id] = std::string(1, static_cast<char>(b));
      continue;
    }
    std::string& bytes = model.tokens[id];
    bytes.clear();
    if (!model.units().AppendTextAsToken(key, bytes) || bytes.empty()) {
      return HfJsonFieldError(source, field(),
                              model.unit_kind == UnitKind::kByte
                                  ? "is not a byte-level token string"
                                  : "is not a token string");
    }
  }
  for (const auto& [id, content] : added) {
    if (id >= id_limit) return HfJsonFieldError(source, "added_tokens[].id", far(id));
    if (id >= model.tokens.size()) model.tokens.resize(id + 1);
    model.tokens[id] = content;
  }
  return absl::OkStatus();
}

// Entry `rank` of "merges": "left right" or [left, right], as the units' text.
absl::Status ParseMergeText(simdjson::dom::element merge, std::string_view source, size_t rank,
                            std::string_view& left, std::string_view& right) {
  auto field = [&] { return StrCat("model.merges[", rank, "]"); };
  if (merge.is_string()) {
    std::string_view text = merge.get_string().value_unsafe();
    size_t space = text.find(' ');
    if (space == std::string_view::npos) {
      return HfJsonFieldError(source, field(), "is not \"left right\"");
    }
    left = text.substr(0, space);
    right = text.substr(space + 1);
    return absl::OkStatus();
  }
  simdjson::dom::array pair;
  if (merge.get(pair) || pair.size() != 2 || pair.at(0).get(left) || pair.at(1).get(right)) {
    return HfJsonFieldError(source, field(), "is neither \"left right\" nor [left, right]");
  }
  return absl::OkStatus();
}

// The bytes of a merge's three tokens from its texts: left, right, and the two joined (less the
// right's subword prefix); false where a text is not the units' text.
bool MergeBytes(std::string_view left_text, std::string_view right_text, const BpeModel& model,
                std::string& left, std::string& right, std::string& joined) {
  left.clear();
  right.clear();
  if (!model.units().AppendTextAsToken(left_text, left) ||
      !model.units().AppendTextAsToken(right_text, right)) {
    return false;
  }
  std::string_view right_part = right;
  if (!model.subword_prefix.empty() && right_part.starts_with(model.subword_prefix)) {
    right_part.remove_prefix(model.subword_prefix.size());
  }
  joined.assign(left).append(right_part);
  return true;
}

// The id of the token `bytes`, or kMissing. The empty string is no token, but TokenTable::Find
// may match it with an empty slot (id 0): a merge "x " has an empty half.
TokenId FindToken(const TokenTable& index, std::string_view bytes) {
  return bytes.empty() ? TokenTable::kMissing : index.Find(bytes);
}

// Merge `rank`, `entry`, as a Merge of the ids `index` finds; the error names the field.
absl::StatusOr<Merge> ReadMerge(simdjson::dom::element entry, size_t rank,
                                const TokenTable& index, const BpeModel& model,
                                std::string_view source) {
  auto field = [&] { return StrCat("model.merges[", rank, "]"); };
  std::string_view left_text, right_text;
  TM_RETURN_IF_ERROR(ParseMergeText(entry, source, rank, left_text, right_text));
  std::string left, right, joined;
  if (!MergeBytes(left_text, right_text, model, left, right, joined)) {
    return HfJsonFieldError(source, field(), "is not byte-level text");
  }
  const Merge m{FindToken(index, left), FindToken(index, right), FindToken(index, joined)};
  if (m.left == TokenTable::kMissing || m.right == TokenTable::kMissing) {
    return HfJsonFieldError(source, field(), StrCat("refers to a token not in the vocab ('",
                                                     left_text, "' or '", right_text, "')"));
  }
  if (m.result == TokenTable::kMissing) {
    return HfJsonFieldError(
        source, field(), StrCat("forms '", left_text, right_text, "', which is not in the vocab"));
  }
  return m;
}

absl::Status ParseMerges(simdjson::dom::element model_json, std::string_view source,
                         BpeModel& model) {
  // The tokens by their bytes, as Model::TokenIndex() finds them (no specials, no byte
  // fallbacks; the lowest id of equal ones), in the encoder's TokenTable: one memory access per
  // lookup, where a StringMap's took two. The three lookups of each merge, each a cache miss,
  // and the merges' text made bytes were most of reading cl100k_base's tokenizer.json (45 of
  // 135 ms here); now a group of merges' bytes is made and its slots fetched before any lookup,
  // in parallel blocks.
  std::vector<bool> skip = SpecialIds(model);
  for (TokenId id : model.byte_fallback_ids()) {
    if (id < skip.size()) skip[id] = true;
  }
  TokenTable index;
  index.Build(model.tokens, skip);
  simdjson::dom::array merges;
  if (model_json["merges"].get(merges)) {
    return HfJsonFieldError(source, "model.merges", "is missing or not an array");
  }
  std::vector<simdjson::dom::element> entries;
  entries.reserve(merges.size());
  for (simdjson::dom::element entry : merges) entries.push_back(entry);
  const size_t n = entries.size();
  model.merges.resize(n);
  // A group with a problem is read again merge by merge, for its first bad merge; the error
  // returned is the one a serial read gives: that of the lowest-ranked bad merge.
  constexpr size_t kGroup = 16;
  const size_t first_bad = tbb::parallel_reduce(
      tbb::blocked_range<size_t>(0, n, 4096), n,
      [&](const tbb::blocked_range<size_t>& r, size_t best) {
        std::array<std::string, kGroup> lefts, rights, joined;
        for (size_t start = r.begin(); start < r.end() && start < best; start += kGroup) {
          const size_t end = std::min(r.end(), start + kGroup);
          bool ok = true;
          for (size_t rank = start; ok && rank < end; ++rank) {
            const size_t g = rank - start;
            std::string_view left_text, right_text;  // (no error is made where there is none)
            ok = ParseMergeText(entries[rank], source, rank, left_text, right_text).ok() &&
                 MergeBytes(left_text, right_text, model, lefts[g], rights[g], joined[g]);
            if (ok) {
              index.Prefetch(lefts[g]);
              index.Prefetch(rights[g]);
              index.Prefetch(joined[g]);
            }
          }
          for (size_t rank = start; ok && rank < end; ++rank) {
            const size_t g = rank - start;
            Merge& m = model.merges[rank];
            m = {FindToken(index, lefts[g]), FindToken(index, rights[g]),
                 FindToken(index, joined[g])};
            ok = m.left != TokenTable::kMissing && m.right != TokenTable::kMissing &&
                 m.result != TokenTable::kMissing;
          }
          if (ok) continue;
          for (size_t rank = start; rank < end; ++rank) {
            absl::StatusOr<Merge> m = ReadMerge(entries[rank], rank, index, model, source);
            if (!m.ok()) return rank;
            model.merges[rank] = *m;
          }
        }
        return best;
      },
      [](size_t a, size_t b) { return std::min(a, b); });
  if (first_bad < n) return ReadMerge(entries[first_bad], first_bad, index, model, source).status();
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseBpeModelFlags(simdjson::dom::element model_json, std::string_view source,
                                BpeModel& model) {
  for (auto [field, target] : {std::pair{"continuing_subword_prefix", &model.subword_prefix},
                               std::pair{"end_of_word_suffix", &model.word_suffix}}) {
    simdjson::dom::element e;
    if (model_json[field].get(e) || e.is_null()) continue;
    std::string_view value;
    if (e.get(value)) return HfJsonFieldError(source, StrCat("model.", field), "is not a string");
    target->assign(value);
  }
  if (simdjson::dom::element e; !model_json["ignore_merges"].get(e) && !e.is_null()) {
    if (e.get(model.ignore_merges)) {
      return HfJsonFieldError(source, "model.ignore_merges", "is not a boolean");
    }
  }
  return absl::OkStatus();
}

absl::Status ParseBpeModelJson(simdjson::dom::element model_json,
                               const absl::flat_hash_map<TokenId, std::string>& added,
                               std::string_view source, BpeModel& model) {
  bool byte_fallback = false;
  if (simdjson::dom::element e; !model_json["byte_fallback"].get(e) && !e.is_null()) {
    if (e.get(byte_fallback)) {
      return HfJsonFieldError(source, "model.byte_fallback", "is not a boolean");
    }
  }
  if (byte_fallback && model.unit_kind == UnitKind::kByte) {
    return HfJsonFieldError(source, "model.byte_fallback",
                            "is true with a ByteLevel pre-tokenizer, which tokenmill does not "
                            "read (byte-level tokens cover every byte already)");
  }
  TM_RETURN_IF_ERROR(ParseVocab(model_json, added, source, byte_fallback, model));
  if (simdjson::dom::element e; !model_json["unk_token"].get(e) && !e.is_null()) {
    std::string_view unk;
    if (e.get(unk)) return HfJsonFieldError(source, "model.unk_token", "is not a string");
    for (const SpecialToken& s : model.specials) {
      if (s.content == unk) model.unknown = s.id;
    }
    if (!model.unknown) {
      return HfJsonFieldError(source, "model.unk_token",
                              StrCat("is '", unk, "', which is not among the added tokens"));
    }
  }
  TM_RETURN_IF_ERROR(ParseMerges(model_json, source, model));
  absl::Status valid = model.Validate();
  if (!valid.ok()) return absl::InvalidArgumentError(StrCat(source, ": ", valid.message()));
  return absl::OkStatus();
}

}  // namespace tokenmill
