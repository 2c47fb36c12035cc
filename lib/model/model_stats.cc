#include "model/model_stats.h"

#include <algorithm>
#include <chrono>

#include "common/status_macros.h"
#include "corpus/line_reader.h"

namespace tokenmill {

std::vector<TokenId> LongestTokens(const Model& model, size_t count) {
  std::span<const std::string> tokens = model.token_bytes();
  std::vector<bool> is_special(tokens.size(), false);
  for (const SpecialToken& s : model.special_tokens()) is_special[s.id] = true;
  std::vector<TokenId> ids;
  for (TokenId id = 0; id < tokens.size(); ++id) {
    if (!tokens[id].empty() && !is_special[id]) ids.push_back(id);
  }
  auto longer = [&](TokenId a, TokenId b) {
    size_t la = tokens[a].size(), lb = tokens[b].size();
    return la != lb ? la > lb : a < b;
  };
  count = std::min(count, ids.size());
  std::partial_sort(ids.begin(), ids.begin() + static_cast<long>(count), ids.end(), longer);
  ids.resize(count);
  return ids;
}

namespace {

void CountText(std::string_view text, CorpusStats& stats) {
  bool in_word = false;
  for (unsigned char c : text) {
    stats.characters += (c & 0xC0) != 0x80;
    bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
    stats.words += !space && !in_word;
    in_word = !space;
  }
}

}  // namespace

absl::StatusOr<CorpusStats> MeasureCorpus(const Encoder& encoder, const std::string& path) {
  CorpusStats stats;
  std::string block;
  std::vector<size_t> offsets;
  absl::Status status;
  auto flush = [&] {
    std::vector<std::string_view> lines;
    for (size_t i = 0; i < offsets.size(); ++i) {
      size_t end = i + 1 < offsets.size() ? offsets[i + 1] : block.size();
      lines.push_back(std::string_view(block).substr(offsets[i], end - offsets[i]));
      CountText(lines.back(), stats);
    }
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<EncodedBatch> ids = encoder.EncodeBatch(lines, SpecialPolicy::kAsText);
    stats.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!ids.ok()) {
      status = ids.status();
    } else {
      stats.tokens += ids->ids.size();
    }
    block.clear();
    offsets.clear();
  };
  TM_RETURN_IF_ERROR(ForEachLine(path, [&](std::string_view line) {
    offsets.push_back(block.size());
    block.append(line);
    stats.bytes += line.size();
    ++stats.lines;
    if (block.size() >= (4 << 20)) flush();
  }));
  flush();
  TM_RETURN_IF_ERROR(status);
  return stats;
}

}  // namespace tokenmill
