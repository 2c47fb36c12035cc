#include "model/tiktoken_file.h"

#include <simdjson.h>

#include <tbb/parallel_for.h>
#include <tbb/parallel_invoke.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "model/base64.h"
#include "model/bpe/lookup_tables.h"
#include "model/hf_json_fields.h"
#include "model/json_writer.h"
#include "model/units.h"
#include "pretokenize/presets.h"

namespace tokenmill {
namespace {

absl::Status LineError(std::string_view source, size_t line, std::string_view what) {
  return absl::InvalidArgumentError(StrCat(source, ":", line, ": ", what));
}

absl::Status FieldError(std::string_view source, std::string_view field, std::string_view what) {
  return absl::InvalidArgumentError(StrCat(source, ": field '", field, "' ", what));
}

// Printable form of a token's bytes for messages.
std::string Escaped(std::string_view bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

struct Sidecar {
  PreTokenizerConfig pretokenizer;
  std::vector<SpecialToken> specials;
  bool has_n_ranks = false;
  uint64_t n_ranks = 0;
};

absl::StatusOr<Sidecar> ParseSidecar(std::string_view json, std::string_view source) {
  simdjson::dom::parser parser;
  TM_ASSIGN_OR_RETURN(simdjson::dom::element root, ParseJson(parser, json, source));
  if (!root.is_object()) return absl::InvalidArgumentError(StrCat(source, ": not a JSON object"));
  Sidecar sidecar;
  simdjson::dom::element field;
  if (root["pattern"].get(field)) return FieldError(source, "pattern", "is missing");
  std::string_view pattern;
  if (field.get(pattern)) return FieldError(source, "pattern", "is not a string");
  if (pattern.empty()) return FieldError(source, "pattern", "is empty");
  sidecar.pretokenizer.preset = "custom";
  sidecar.pretokenizer.pattern = std::string(pattern);
  for (const PreTokenizerPreset& p : kPreTokenizerPresets) {
    if (p.pattern == pattern) sidecar.pretokenizer = PreTokenizerConfig(std::string(p.name));
  }
  if (!root["special_tokens"].get(field) && !field.is_null()) {
    simdjson::dom::object specials;
    if (field.get(specials)) return FieldError(source, "special_tokens", "is not an object");
    for (auto [content, value] : specials) {
      uint64_t id;
      if (value.get(id) || id >= UINT32_MAX) {
        return FieldError(source, StrCat("special_tokens[\"", content, "\"]"), "is not a token id");
      }
      if (content.empty()) return FieldError(source, "special_tokens", "has an empty token");
      sidecar.specials.push_back({std::string(content), static_cast<TokenId>(id)});
    }
  }
  if (!root["n_ranks"].get(field) && !field.is_null()) {
    if (field.get(sidecar.n_ranks)) return FieldError(source, "n_ranks", "is not a count");
    sidecar.has_n_ranks = true;
  }
  return sidecar;
}

// The line of `text` at `pos` without its line end ("\n" or "\r\n"); `pos` moves past it.
std::string_view NextLine(std::string_view text, size_t& pos) {
  size_t end = text.find('\n', pos);
  if (end == std::string_view::npos) end = text.size();
  std::string_view line = text.substr(pos, end - pos);
  pos = end + 1;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// Ranks run 0..N-1 except where specials sit, so a rank of rank_limit or more must leave a gap
// (refused before sizing tables by it: a 2-line file must not make us allocate gigabytes).
// `room`: the tokens' vector's room: every rank below rank_limit (with a special at a low id
// and no newline after the last line, the last rank equals the line count), and the specials'
// ids too (o200k_base's sit above its ranks: growing the vector for them later moved all
// 200,000 strings, 7 ms); ids past FromTiktoken's bound are refused there.
struct RankBounds {
  size_t max_lines;
  uint64_t rank_limit;
  size_t room;
};

RankBounds BoundsOf(size_t newlines, const Sidecar& sidecar) {
  RankBounds b;
  b.max_lines = newlines + 1;
  b.rank_limit = uint64_t{b.max_lines} + sidecar.specials.size();
  b.room = b.rank_limit;
  for (const SpecialToken& s : sidecar.specials) {
    if (s.id < 2 * b.rank_limit + 1024) b.room = std::max(b.room, size_t{s.id} + 1);
  }
  return b;
}

// The ranks file's lines, parsed into model.tokens (empty); line_of_rank[r] is the line of rank
// r (0: none). Refuses malformed lines, ranks of specials, repeated ranks and ranks that must
// leave a gap, at the first such line of the file.
absl::Status ParseRankLinesInOrder(
    std::string_view ranks, std::string_view ranks_source, const Sidecar& sidecar,
    std::string_view sidecar_source,
    const absl::flat_hash_map<TokenId, const SpecialToken*>& special_of_id, BpeModel& model,
    std::vector<uint32_t>& line_of_rank) {
  const auto [max_lines, rank_limit, room] =
      BoundsOf(static_cast<size_t>(std::count(ranks.begin(), ranks.end(), '\n')), sidecar);
  model.tokens.reserve(room);
  size_t line_number = 0;
  for (size_t pos = 0; pos < ranks.size();) {
    const std::string_view line = NextLine(ranks, pos);
    ++line_number;
    if (line.empty()) continue;
    auto error = [&](std::string_view what) { return LineError(ranks_source, line_number, what); };
    size_t space = line.find(' ');
    if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos) {
      return error("expected '<base64 token> <rank>'");
    }
    std::string_view encoded = line.substr(0, space);
    std::string_view rank_text = line.substr(space + 1);
    std::optional<std::string> bytes = DecodeBase64(encoded);
    if (!bytes) return error(StrCat("bad base64 '", encoded, "'"));
    if (bytes->empty()) return error("the token is empty");
    uint32_t rank;
    if (!ParseInt(rank_text, &rank) || rank == UINT32_MAX) {
      return error(StrCat("'", rank_text, "' is not a rank"));
    }
    if (auto it = special_of_id.find(rank); it != special_of_id.end()) {
      return error(StrCat("rank ", rank, " is the id of special token '", it->second->content,
                          "' in ", sidecar_source));
    }
    if (rank >= rank_limit) {
      return error(StrCat("rank ", rank, " leaves a gap: the file has only ", max_lines,
                          " lines (ranks run 0, 1, 2, ... except where a special token sits)"));
    }
    if (rank >= line_of_rank.size()) line_of_rank.resize(size_t{rank} + 1, 0);
    if (line_of_rank[rank] != 0) {
      return error(StrCat("rank ", rank, " is already given on line ", line_of_rank[rank]));
    }
    line_of_rank[rank] = static_cast<uint32_t>(line_number);
    if (rank >= model.tokens.size()) model.tokens.resize(size_t{rank} + 1);
    model.tokens[rank] = *std::move(bytes);
  }
  if (line_of_rank.empty()) return absl::InvalidArgumentError(StrCat(ranks_source, ": no ranks"));
  return absl::OkStatus();
}

// The same result as ParseRankLinesInOrder, the lines decoded in parallel blocks (base64 and
// storing the tokens were a fifth of loading o200k_base, 18 of about 100 ms). Each rank is
// claimed by the first line that gets to it; on any problem (a malformed line, a rank of a
// special, a rank given twice, one leaving a gap) the parallel result is dropped and the file
// read again in order, so the error is the first in the file, as that reading reports it.
// `table`, when given, is Reserve()d for as many tokens as the file has lines meanwhile.
absl::Status ParseRankLines(std::string_view ranks, std::string_view ranks_source,
                            const Sidecar& sidecar, std::string_view sidecar_source,
                            const absl::flat_hash_map<TokenId, const SpecialToken*>& special_of_id,
                            BpeModel& model, std::vector<uint32_t>& line_of_rank,
                            TokenTable* table) {
  // Blocks of whole lines; a line number (from 1) needs the lines of the blocks before.
  constexpr size_t kBlockBytes = size_t{64} << 10;
  std::vector<size_t> block_start;
  for (size_t pos = 0; pos < ranks.size();) {
    block_start.push_back(pos);
    const size_t newline = ranks.find('\n', std::min(ranks.size(), pos + kBlockBytes) - 1);
    pos = newline == std::string_view::npos ? ranks.size() : newline + 1;
  }
  block_start.push_back(ranks.size());
  const size_t blocks = block_start.size() - 1;
  auto block = [&](size_t b) {
    return ranks.substr(block_start[b], block_start[b + 1] - block_start[b]);
  };
  std::vector<size_t> first_line(blocks + 1, 1);
  tbb::parallel_for(size_t{0}, blocks, [&](size_t b) {
    const std::string_view text = block(b);
    first_line[b + 1] = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  });
  for (size_t b = 0; b < blocks; ++b) first_line[b + 1] += first_line[b];
  const RankBounds bounds = BoundsOf(first_line[blocks] - 1, sidecar);
  std::vector<uint32_t> claimed;  // the line of each rank, 0: none yet
  std::vector<uint8_t> special;   // special_of_id, by a load per line
  // Making the tokens' strings (cl100k_base: 3 MB, 1.3 ms of one core) beside zeroing the
  // table's memory: the two took 2.8 ms one after the other, with the other core idle.
  tbb::parallel_invoke(
      [&] {
        model.tokens.clear();
        model.tokens.resize(bounds.room);
        claimed.assign(bounds.rank_limit, 0);
        special.assign(bounds.rank_limit, 0);
        for (const auto& [id, token] : special_of_id) {
          if (id < bounds.rank_limit) special[id] = 1;
        }
      },
      [&] {
        if (table != nullptr) table->Reserve(bounds.max_lines);
      });
  std::atomic<bool> failed = false;
  std::atomic<uint64_t> ranks_end = 0;  // one past the largest rank
  tbb::parallel_for(size_t{0}, blocks, [&](size_t b) {
    const std::string_view text = block(b);
    size_t line_number = first_line[b] - 1;
    uint64_t end = 0;
    for (size_t pos = 0; pos < text.size() && !failed.load(std::memory_order_relaxed);) {
      const std::string_view line = NextLine(text, pos);
      ++line_number;
      if (line.empty()) continue;
      const size_t space = line.find(' ');
      uint32_t rank;
      uint32_t no_line = 0;
      // The rank is claimed before its token is decoded in place: no two lines write one.
      if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos ||
          !ParseInt(line.substr(space + 1), &rank) || rank == UINT32_MAX ||
          rank >= bounds.rank_limit || special[rank] ||
          !std::atomic_ref<uint32_t>(claimed[rank]).compare_exchange_strong(
              no_line, static_cast<uint32_t>(line_number), std::memory_order_relaxed) ||
          !DecodeBase64To(line.substr(0, space), model.tokens[rank]) ||
          model.tokens[rank].empty()) {
        failed = true;
        return;
      }
      end = std::max<uint64_t>(end, uint64_t{rank} + 1);
    }
    uint64_t seen = ranks_end.load();
    while (seen < end && !ranks_end.compare_exchange_weak(seen, end)) {
    }
  });
  if (failed || ranks_end == 0) {
    model.tokens.clear();
    line_of_rank.clear();
    return ParseRankLinesInOrder(ranks, ranks_source, sidecar, sidecar_source, special_of_id,
                                 model, line_of_rank);
  }
  claimed.resize(ranks_end);
  line_of_rank = std::move(claimed);
  model.tokens.resize(ranks_end);
  return absl::OkStatus();
}

// Refuses a rank missing between 0 and the last, unless a special token sits there; blames the
// line of the next rank present (in a sorted file, the line after the gap).
absl::Status CheckNoGap(std::string_view ranks_source, const std::vector<uint32_t>& line_of_rank,
                        const absl::flat_hash_map<TokenId, const SpecialToken*>& special_of_id) {
  for (TokenId rank = 0; rank < line_of_rank.size(); ++rank) {
    if (line_of_rank[rank] != 0 || special_of_id.contains(rank)) continue;
    TokenId next = rank + 1;
    while (line_of_rank[next] == 0) ++next;
    return LineError(ranks_source, line_of_rank[next],
                     StrCat("rank ", next, " leaves a gap: no line has rank ", rank,
                            " (ranks run 0, 1, 2, ... except where a special token sits)"));
  }
  return absl::OkStatus();
}

// Refuses a token given twice (at the later of the two lines); returns the number of distinct
// tokens.
absl::StatusOr<size_t> CheckNoDuplicate(std::string_view ranks_source, const BpeModel& model,
                                   const std::vector<uint32_t>& line_of_rank) {
  absl::flat_hash_map<std::string_view, uint32_t, StringHash, StringEq> line_of_bytes;
  line_of_bytes.reserve(model.tokens.size());
  std::vector<TokenId> ranks_by_line;
  for (TokenId rank = 0; rank < line_of_rank.size(); ++rank) {
    if (line_of_rank[rank] != 0) ranks_by_line.push_back(rank);
  }
  std::sort(ranks_by_line.begin(), ranks_by_line.end(),
            [&](TokenId a, TokenId b) { return line_of_rank[a] < line_of_rank[b]; });
  for (TokenId rank : ranks_by_line) {
    auto [seen, inserted] = line_of_bytes.emplace(model.tokens[rank], line_of_rank[rank]);
    if (!inserted) {
      return LineError(ranks_source, line_of_rank[rank],
                       StrCat("token '", Escaped(model.tokens[rank]),
                              "' is already given on line ", seen->second));
    }
  }
  return line_of_bytes.size();
}

// Refuses ranks without every single byte (model.tokens holds only the ranks yet).
absl::Status CheckEveryByte(std::string_view ranks_source, const BpeModel& model) {
  const std::bitset<256> missing = BytesWithoutToken(model.tokens, {});
  if (missing.any()) {
    int b = 0;
    while (!missing.test(b)) ++b;
    return absl::InvalidArgumentError(StrCat(
        ranks_source, ": no rank for the single byte ",
        Escaped(std::string(1, static_cast<char>(b))), ", so not every text can be encoded"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BpeModel> FromTiktoken(std::string_view ranks, std::string_view ranks_source,
                                      std::string_view sidecar_json,
                                      std::string_view sidecar_source, TokenTable* index_out) {
  TM_ASSIGN_OR_RETURN(Sidecar sidecar, ParseSidecar(sidecar_json, sidecar_source));
  BpeModel model;
  model.pretokenizer = sidecar.pretokenizer;
  model.priority = MergePriority::kTokenRank;
  model.ignore_merges = true;
  absl::flat_hash_map<TokenId, const SpecialToken*> special_of_id;
  for (const SpecialToken& s : sidecar.specials) {
    if (!special_of_id.emplace(s.id, &s).second) {
      return FieldError(sidecar_source, StrCat("special_tokens[\"", s.content, "\"]"),
                        StrCat("reuses id ", s.id));
    }
  }
  // The ranks' index: building it tells whether a token repeats (then the slower check says on
  // which lines). The specials are not in model.tokens yet: their ids are gaps, so it is the
  // index of the regular tokens the encoder needs too (`index_out`). Its memory is zeroed
  // while the ranks are read.
  TokenTable index;
  std::vector<uint32_t> line_of_rank;
  TM_RETURN_IF_ERROR(ParseRankLines(ranks, ranks_source, sidecar, sidecar_source, special_of_id,
                                    model, line_of_rank, &index));
  TM_RETURN_IF_ERROR(CheckNoGap(ranks_source, line_of_rank, special_of_id));
  index.Build(model.tokens, std::vector<bool>(model.tokens.size(), false));
  size_t distinct = 0;
  for (uint32_t line : line_of_rank) distinct += line != 0;
  if (!index.distinct()) {
    TM_ASSIGN_OR_RETURN(distinct, CheckNoDuplicate(ranks_source, model, line_of_rank));
  }
  if (sidecar.has_n_ranks && sidecar.n_ranks != distinct) {
    return FieldError(sidecar_source, "n_ranks",
                      StrCat("is ", sidecar.n_ranks, " but ", ranks_source, " has ", distinct,
                             " ranks"));
  }
  TM_RETURN_IF_ERROR(CheckEveryByte(ranks_source, model));
  // Tokens are stored by id, so a special token's id sizes the vocabulary's tables: one far past
  // the ranks is refused (the bound tokenizer.json's ids have) instead of allocating for it
  // (4,000,000,000 took every byte of memory until the kernel killed the process).
  const uint64_t defined = distinct + sidecar.specials.size();
  for (const SpecialToken& s : sidecar.specials) {
    if (s.id >= 2 * defined + 1024) {
      return FieldError(sidecar_source, StrCat("special_tokens[\"", s.content, "\"]"),
                        StrCat("has id ", s.id, ", far beyond the ", defined,
                               " tokens the two files define"));
    }
  }
  for (const SpecialToken& s : sidecar.specials) {
    if (s.id >= model.tokens.size()) model.tokens.resize(size_t{s.id} + 1);
    model.tokens[s.id] = s.content;
  }
  std::sort(sidecar.specials.begin(), sidecar.specials.end(),
            [](const SpecialToken& a, const SpecialToken& b) { return a.id < b.id; });
  model.specials = std::move(sidecar.specials);
  // The merges are the ranks' own rule (no list: deriving o200k_base's 446,189 merges and their
  // table took about half of an empty encode's start-up), and two ranks with the same bytes
  // have been refused.
  model.rank_merges_implied = true;
  absl::Status valid = model.ValidateTokens(/*check_duplicates=*/false);
  if (!valid.ok()) return absl::InvalidArgumentError(StrCat(ranks_source, ": ", valid.message()));
  if (index_out != nullptr) *index_out = std::move(index);
  return model;
}

absl::StatusOr<BpeModel> TiktokenModelOf(std::vector<std::string> tokens, std::string_view sidecar_json,
                                         std::string_view sidecar_source) {
  TM_ASSIGN_OR_RETURN(Sidecar sidecar, ParseSidecar(sidecar_json, sidecar_source));
  for (const SpecialToken& s : sidecar.specials) {
    if (s.id >= tokens.size() || tokens[s.id] != s.content) {
      return absl::InvalidArgumentError(StrCat(sidecar_source, ": special token '", s.content,
                                               "' is not at id ", s.id, " of the tokens given"));
    }
  }
  BpeModel model;
  model.pretokenizer = sidecar.pretokenizer;
  model.priority = MergePriority::kTokenRank;
  model.ignore_merges = true;
  model.tokens = std::move(tokens);
  std::sort(sidecar.specials.begin(), sidecar.specials.end(),
            [](const SpecialToken& a, const SpecialToken& b) { return a.id < b.id; });
  model.specials = std::move(sidecar.specials);
  model.rank_merges_implied = true;
  return model;
}

absl::StatusOr<TiktokenText> ToTiktoken(const Model& model, std::string_view name) {
  if (model.type() != ModelType::kBpe || model.units().kind() != UnitKind::kByte) {
    return absl::InvalidArgumentError(
        StrCat("a .tiktoken file holds a byte-level BPE model, not a ", ModelTypeName(model.type()),
               " model of ", UnitKindName(model.units().kind()), " units"));
  }
  std::span<const std::string> tokens = model.token_bytes();
  std::span<const SpecialToken> specials = model.special_tokens();
  absl::flat_hash_map<TokenId, const SpecialToken*> special_of_id;
  for (const SpecialToken& s : specials) special_of_id.emplace(s.id, &s);
  TiktokenText text;
  size_t n_ranks = 0;
  TokenId last_regular = 0;
  for (TokenId id = 0; id < tokens.size(); ++id) {
    if (special_of_id.contains(id) || tokens[id].empty()) continue;
    ++n_ranks;
    last_regular = id;
  }
  for (TokenId id = 0; id <= last_regular && n_ranks > 0; ++id) {
    if (special_of_id.contains(id)) continue;
    if (tokens[id].empty()) {
      return absl::InvalidArgumentError(StrCat(
          "id ", id, " is unused, but a .tiktoken file cannot leave a gap between ranks"));
    }
    AppendBase64(tokens[id], text.ranks);
    StrAppend(&text.ranks, " ", id, "\n");
  }
  const std::string pattern = EffectivePattern(model.pre_tokenizer());
  text.sidecar = "{\n  \"name\": ";
  AppendJsonString(name, text.sidecar);
  text.sidecar += ",\n  \"pattern\": ";
  AppendJsonString(pattern, text.sidecar);
  text.sidecar += ",\n  \"special_tokens\": {";
  for (size_t i = 0; i < specials.size(); ++i) {
    text.sidecar += i == 0 ? "\n    " : ",\n    ";
    AppendJsonString(specials[i].content, text.sidecar);
    StrAppend(&text.sidecar, ": ", specials[i].id);
  }
  text.sidecar += specials.empty() ? "}" : "\n  }";
  StrAppend(&text.sidecar, ",\n  \"n_ranks\": ", n_ranks, ",\n  \"explicit_n_vocab\": null\n}\n");
  return text;
}

std::string TiktokenSidecarPath(const std::string& ranks_path) {
  constexpr std::string_view kExtension = ".tiktoken";
  if (ranks_path.size() > kExtension.size() && std::string_view(ranks_path).ends_with(kExtension)) {
    return ranks_path.substr(0, ranks_path.size() - kExtension.size()) + ".json";
  }
  return ranks_path + ".json";
}

std::string TiktokenRanksPath(const std::string& sidecar_path) {
  constexpr std::string_view kExtension = ".json";
  std::string stem = std::string_view(sidecar_path).ends_with(kExtension)
                         ? sidecar_path.substr(0, sidecar_path.size() - kExtension.size())
                         : sidecar_path;
  return stem + ".tiktoken";
}

absl::StatusOr<BpeModel> LoadTiktoken(const std::string& ranks_path) {
  TM_ASSIGN_OR_RETURN(SharedBytes ranks, MapFile(ranks_path));  // as LoadModel does
  return LoadTiktoken(ranks_path, ranks.view());
}

absl::StatusOr<std::string> ReadTiktokenSidecar(const std::string& ranks_path) {
  std::string sidecar_path = TiktokenSidecarPath(ranks_path);
  absl::StatusOr<std::string> sidecar = ReadFile(sidecar_path);
  if (!sidecar.ok()) {
    return absl::InvalidArgumentError(
        StrCat(ranks_path, ": needs its JSON sidecar ", sidecar_path,
               " (pattern and special tokens): ", sidecar.status().message()));
  }
  return sidecar;
}

absl::StatusOr<BpeModel> LoadTiktoken(const std::string& ranks_path, std::string_view ranks,
                                      TokenTable* index) {
  TM_ASSIGN_OR_RETURN(std::string sidecar, ReadTiktokenSidecar(ranks_path));
  return FromTiktoken(ranks, ranks_path, sidecar, TiktokenSidecarPath(ranks_path), index);
}

absl::Status SaveTiktoken(const Model& model, const std::string& ranks_path) {
  std::string name = ranks_path.substr(ranks_path.find_last_of('/') + 1);
  if (std::string_view(name).ends_with(".tiktoken")) name.resize(name.size() - 9);
  TM_ASSIGN_OR_RETURN(TiktokenText text, ToTiktoken(model, name));
  std::string sidecar_path = TiktokenSidecarPath(ranks_path);
  TM_RETURN_IF_ERROR(CheckWritableOutput(ranks_path));
  TM_RETURN_IF_ERROR(CheckWritableOutput(sidecar_path));
  TM_RETURN_IF_ERROR(WriteFileAtomically(ranks_path, text.ranks));
  absl::Status sidecar_written = WriteFileAtomically(sidecar_path, text.sidecar);
  if (!sidecar_written.ok()) std::remove(ranks_path.c_str());
  return sidecar_written;
}

}  // namespace tokenmill
