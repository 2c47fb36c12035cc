// Interim trainer: recounts every pair before each merge. Correct, slow; the incremental
// trainer replaces it.
#include "train/bpe_trainer.h"

#include <algorithm>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "common/strings.h"
#include "common/byte_level.h"

namespace tokenmill {

absl::StatusOr<TrainResult> TrainBpe(const WordCounts& counts, const TrainerOptions& options,
                                     const TrainControl& control) {
  (void)control;  // interim trainer: no resume or interruption yet
  absl::Status valid = options.Validate();
  if (!valid.ok()) return valid;
  TrainResult result;
  BpeModel& model = result.model;
  auto add_specials = [&] {
    for (const std::string& s : options.special_tokens) {
      model.specials.push_back({s, static_cast<TokenId>(model.tokens.size())});
      model.tokens.push_back(s);
    }
  };
  if (options.special_tokens_at == SpecialTokensAt::kStart) add_specials();

  // Alphabet.
  std::vector<TokenId> byte_id(256, 0);
  std::vector<int> alphabet;
  if (options.hf_compat) {
    std::vector<bool> seen(256, false);
    for (const auto& [word, count] : counts.Sorted()) {
      for (unsigned char c : word) seen[c] = true;
    }
    for (int b = 0; b < 256; ++b) if (seen[b]) alphabet.push_back(b);
    std::sort(alphabet.begin(), alphabet.end(),
              [](int x, int y) { return ByteToCodePoint(x) < ByteToCodePoint(y); });
  } else {
    for (int b = 0; b < 256; ++b) alphabet.push_back(b);
  }
  for (int b : alphabet) {
    byte_id[b] = static_cast<TokenId>(model.tokens.size());
    model.tokens.emplace_back(1, static_cast<char>(b));
  }
  size_t target_without_end_specials =
      options.special_tokens_at == SpecialTokensAt::kEnd
          ? (options.vocab_size > options.special_tokens.size()
                 ? options.vocab_size - options.special_tokens.size() : 0)
          : options.vocab_size;
  if (model.tokens.size() > target_without_end_specials) {
    return absl::InvalidArgumentError(StrCat(
        "--vocab-size ", options.vocab_size, " is smaller than the alphabet (",
        alphabet.size(), ") plus ", options.special_tokens.size(), " special tokens"));
  }

  // Words.
  std::vector<std::vector<TokenId>> words;
  std::vector<uint64_t> word_counts;
  for (const auto& [word, count] : counts.Sorted()) {
    std::vector<TokenId> symbols;
    for (unsigned char c : word) symbols.push_back(byte_id[c]);
    words.push_back(std::move(symbols));
    word_counts.push_back(count);
  }
  StringMap<TokenId> index = model.TokenIndex();

  auto better = [&](const std::pair<TokenId, TokenId>& x, const std::pair<TokenId, TokenId>& y) {
    if (options.hf_compat) return x < y;
    const std::string& xl = model.tokens[x.first];
    const std::string& yl = model.tokens[y.first];
    if (xl != yl) return xl < yl;
    return model.tokens[x.second] < model.tokens[y.second];
  };

  result.stop_reason = "reached the vocabulary size";
  while (model.tokens.size() < target_without_end_specials) {
    std::map<std::pair<TokenId, TokenId>, uint64_t> pair_counts;
    for (size_t w = 0; w < words.size(); ++w) {
      for (size_t i = 0; i + 1 < words[w].size(); ++i) {
        pair_counts[{words[w][i], words[w][i + 1]}] += word_counts[w];
      }
    }
    bool found = false;
    std::pair<TokenId, TokenId> best;
    uint64_t best_count = 0;
    for (const auto& [pair, count] : pair_counts) {
      if (options.max_token_length > 0 &&
          model.tokens[pair.first].size() + model.tokens[pair.second].size() >
              options.max_token_length) {
        continue;
      }
      if (!found || count > best_count || (count == best_count && better(pair, best))) {
        found = true;
        best = pair;
        best_count = count;
      }
    }
    if (!found) {
      result.stop_reason = "no pair is left to merge";
      break;
    }
    if (best_count < options.min_frequency) {
      result.stop_reason = StrCat("the best pair occurs ", best_count,
                                        " times, below --min-frequency ", options.min_frequency);
      break;
    }
    std::string merged = model.tokens[best.first] + model.tokens[best.second];
    TokenId id;
    if (auto it = index.find(merged); it != index.end()) {
      id = it->second;
    } else {
      id = static_cast<TokenId>(model.tokens.size());
      model.tokens.push_back(merged);
      index.emplace(merged, id);
    }
    model.merges.push_back({best.first, best.second, id});
    result.merge_counts.push_back(best_count);
    for (std::vector<TokenId>& word : words) {
      std::vector<TokenId> out;
      out.reserve(word.size());
      for (size_t i = 0; i < word.size(); ++i) {
        if (i + 1 < word.size() && word[i] == best.first && word[i + 1] == best.second) {
          out.push_back(id);
          ++i;
        } else {
          out.push_back(word[i]);
        }
      }
      word.swap(out);
    }
  }
  if (options.special_tokens_at == SpecialTokensAt::kEnd) add_specials();
  return result;
}

}  // namespace tokenmill
