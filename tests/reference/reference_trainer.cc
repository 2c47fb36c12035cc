#include "reference/reference_trainer.h"

#include <algorithm>
#include <map>
#include <set>

namespace tokenmill::testing {
namespace {

// GPT-2 byte-level code point of a byte, computed from its definition (independent of lib/).
uint32_t ByteLevelCodePoint(unsigned char b) {
  auto printable = [](int x) {
    return (x >= 33 && x <= 126) || (x >= 161 && x <= 172) || (x >= 174 && x <= 255);
  };
  if (printable(b)) return b;
  uint32_t n = 0;
  for (int x = 0; x < b; ++x) n += !printable(x);
  return 256 + n;
}

}  // namespace

std::vector<ReferenceMerge> ReferenceTrain(
    const std::vector<std::pair<std::string, uint64_t>>& input, const ReferenceOptions& options) {
  std::map<std::string, uint64_t> summed;
  for (const auto& [w, c] : input) summed[w] += c;
  std::vector<std::vector<std::string>> words;
  std::vector<uint64_t> counts;
  std::set<unsigned char> seen_bytes;
  for (const auto& [w, c] : summed) {
    std::vector<std::string> symbols;
    for (unsigned char b : w) {
      symbols.emplace_back(1, static_cast<char>(b));
      seen_bytes.insert(b);
    }
    words.push_back(symbols);
    counts.push_back(c);
  }
  // Ids (only used for hf_compat ties): specials first, then the alphabet by code point, then
  // new tokens in order.
  std::map<std::string, uint64_t> id_of;
  std::set<std::string> vocab;
  uint64_t next_id = options.num_special_tokens;
  std::vector<unsigned char> alphabet;
  if (options.hf_compat) {
    if (options.hf_all_bytes) {
      for (int b = 0; b < 256; ++b) seen_bytes.insert(static_cast<unsigned char>(b));
    }
    alphabet.assign(seen_bytes.begin(), seen_bytes.end());
    std::sort(alphabet.begin(), alphabet.end(), [](unsigned char a, unsigned char b) {
      return ByteLevelCodePoint(a) < ByteLevelCodePoint(b);
    });
  } else {
    for (int b = 0; b < 256; ++b) alphabet.push_back(static_cast<unsigned char>(b));
  }
  for (unsigned char b : alphabet) {
    std::string s(1, static_cast<char>(b));
    id_of[s] = next_id++;
    vocab.insert(s);
  }
  std::vector<ReferenceMerge> merges;
  size_t vocab_count = vocab.size() + options.num_special_tokens;
  while (vocab_count < options.vocab_size) {
    std::map<std::pair<std::string, std::string>, uint64_t> pair_counts;
    for (size_t w = 0; w < words.size(); ++w) {
      for (size_t i = 0; i + 1 < words[w].size(); ++i) {
        pair_counts[{words[w][i], words[w][i + 1]}] += counts[w];
      }
    }
    const std::pair<std::string, std::string>* best = nullptr;
    uint64_t best_count = 0;
    for (const auto& [pair, count] : pair_counts) {
      if (options.max_token_length > 0 &&
          pair.first.size() + pair.second.size() > options.max_token_length) {
        continue;
      }
      bool better;
      if (best == nullptr || count > best_count) {
        better = true;
      } else if (count < best_count) {
        better = false;
      } else if (options.hf_compat) {
        better = std::make_pair(id_of[pair.first], id_of[pair.second]) <
                 std::make_pair(id_of[best->first], id_of[best->second]);
      } else {
        better = pair < *best;  // (left bytes, right bytes), lexicographic
      }
      if (better) {
        best = &pair;
        best_count = count;
      }
    }
    if (best == nullptr || best_count < options.min_frequency) break;
    std::string merged = best->first + best->second;
    merges.push_back({best->first, best->second, best_count});
    if (vocab.insert(merged).second) {
      id_of[merged] = next_id++;
      ++vocab_count;
    }
    const std::pair<std::string, std::string> chosen = *best;
    for (std::vector<std::string>& word : words) {
      std::vector<std::string> out;
      for (size_t i = 0; i < word.size(); ++i) {
        if (i + 1 < word.size() && word[i] == chosen.first && word[i + 1] == chosen.second) {
          out.push_back(merged);
          ++i;
        } else {
          out.push_back(word[i]);
        }
      }
      word = std::move(out);
    }
  }
  return merges;
}

}  // namespace tokenmill::testing
