#include "reference/reference_trainer.h"

#include <algorithm>
#include <map>
#include <set>

#include "reference/utf8_reference.h"

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

// A symbol that never merges (a byte-fallback byte or the unknown token): marked by a leading
// 0xFF byte, which no UTF-8 text holds, so never equal to a character or a merge of characters
// (NUL is a character: "\0a" is a token a corpus can form).
std::string Opaque(std::string_view what) {
  std::string out = "\xff";
  out.append(what);
  return out;
}
bool IsOpaque(const std::string& s) { return !s.empty() && s[0] == '\xff'; }

size_t CharLength(const std::string& s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++n) {
    Utf8Sequence seq = DecodeUtf8At(s, i);
    i += seq.length == 0 ? 1 : seq.length;
  }
  return n;
}

// The character-unit words: each word's symbols; the alphabet size (the ids it takes).
size_t CharWords(const std::map<std::string, uint64_t>& summed, const ReferenceOptions& options,
                 std::vector<std::vector<std::string>>& words, std::vector<uint64_t>& counts,
                 std::map<std::string, uint64_t>& id_of, uint64_t& next_id,
                 std::set<std::string>& vocab) {
  std::map<uint32_t, uint64_t> occurrences;
  for (const auto& [w, c] : summed) {
    for (size_t i = 0; i < w.size();) {
      Utf8Sequence seq = DecodeUtf8At(w, i);
      if (seq.length == 0) {
        ++i;
        continue;
      }
      occurrences[seq.code_point] += c;
      i += seq.length;
    }
  }
  uint64_t total = 0;
  std::vector<std::pair<uint32_t, uint64_t>> by_count(occurrences.begin(), occurrences.end());
  for (const auto& [cp, c] : by_count) total += c;
  std::stable_sort(by_count.begin(), by_count.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::set<uint32_t> kept;
  uint64_t covered = 0;
  for (const auto& [cp, c] : by_count) {
    if (!options.hf_compat && options.character_coverage < 1.0 &&
        static_cast<double>(covered) / static_cast<double>(total) >= options.character_coverage) {
      break;
    }
    if (options.limit_alphabet > 0 && kept.size() == options.limit_alphabet) break;
    kept.insert(cp);
    covered += c;
  }
  const bool unknown = !options.byte_fallback && !options.hf_compat;
  size_t ids = 0;
  if (unknown) {
    id_of[Opaque("unk")] = next_id++;
    ++ids;
  }
  if (options.byte_fallback) {
    for (int b = 0; b < 256; ++b) id_of[Opaque(std::string(1, static_cast<char>(b)))] = next_id++;
    ids += 256;
  }
  for (uint32_t cp : kept) {  // std::set: code point order
    std::string s;
    AppendUtf8(cp, s);
    id_of[s] = next_id++;
    vocab.insert(s);
    ++ids;
  }
  // Marked symbols: (code point, 1 prefixed / 2 suffixed / 3 both) as the words hold them.
  std::set<std::pair<uint32_t, int>> marked;
  for (const auto& [w, c] : summed) {
    std::vector<std::string> symbols;
    for (size_t i = 0; i < w.size();) {
      Utf8Sequence seq = DecodeUtf8At(w, i);
      const size_t len = seq.length == 0 ? 1 : seq.length;
      if (seq.length > 0 && kept.count(seq.code_point) > 0) {
        const bool prefixed = i > 0 && !options.prefix.empty();
        const bool suffixed = i + len == w.size() && !options.suffix.empty();
        symbols.push_back((prefixed ? options.prefix : "") + w.substr(i, len) +
                          (suffixed ? options.suffix : ""));
        if (prefixed || suffixed) marked.insert({seq.code_point, (prefixed ? 1 : 0) | (suffixed ? 2 : 0)});
      } else if (options.byte_fallback) {
        for (size_t k = 0; k < len; ++k) symbols.push_back(Opaque(w.substr(i + k, 1)));
      } else if (unknown) {
        symbols.push_back(Opaque("unk"));
      }
      i += len;
    }
    words.push_back(symbols);
    counts.push_back(c);
  }
  for (const auto& [cp, kind] : marked) {
    std::string s = (kind & 1) ? options.prefix : "";
    AppendUtf8(cp, s);
    if (kind & 2) s += options.suffix;
    id_of[s] = next_id++;
    vocab.insert(s);
    ++ids;
  }
  return ids;
}

}  // namespace

std::vector<ReferenceMerge> ReferenceTrain(
    const std::vector<std::pair<std::string, uint64_t>>& input, const ReferenceOptions& options) {
  std::map<std::string, uint64_t> summed;
  for (const auto& [w, c] : input) summed[w] += c;
  std::vector<std::vector<std::string>> words;
  std::vector<uint64_t> counts;
  std::set<unsigned char> seen_bytes;
  // Ids (only used for hf_compat ties): specials first, then the alphabet by code point, then
  // new tokens in order.
  std::map<std::string, uint64_t> id_of;
  std::set<std::string> vocab;
  uint64_t next_id = options.num_special_tokens;
  size_t alphabet_ids = 0;
  if (options.chars) {
    alphabet_ids = CharWords(summed, options, words, counts, id_of, next_id, vocab);
    summed.clear();
  }
  for (const auto& [w, c] : summed) {
    std::vector<std::string> symbols;
    for (unsigned char b : w) {
      symbols.emplace_back(1, static_cast<char>(b));
      seen_bytes.insert(b);
    }
    words.push_back(symbols);
    counts.push_back(c);
  }
  std::vector<unsigned char> alphabet;
  if (options.chars) {
    // the alphabet is built
  } else if (options.hf_compat) {
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
  std::map<std::string, size_t> char_length_of;  // merged tokens' lengths in characters
  for (const std::string& t : vocab) char_length_of[t] = 1;
  size_t vocab_count = (options.chars ? alphabet_ids : vocab.size()) + options.num_special_tokens;
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
      if (options.chars && (IsOpaque(pair.first) || IsOpaque(pair.second))) continue;
      // Characters: a symbol of the alphabet is 1 long (its markers count nothing), a merged
      // token its parts' sum.
      auto char_length = [&](const std::string& t) {
        auto it = char_length_of.find(t);
        return it != char_length_of.end() ? it->second : CharLength(t);
      };
      const size_t length = options.chars ? char_length(pair.first) + char_length(pair.second)
                                          : pair.first.size() + pair.second.size();
      if (options.max_token_length > 0 && length > options.max_token_length) continue;
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
    std::string right = best->second;
    if (!options.prefix.empty() && right.rfind(options.prefix, 0) == 0) {
      right = right.substr(options.prefix.size());
    }
    std::string merged = best->first + right;
    if (options.chars) {
      auto length = [&](const std::string& t) {
        auto it = char_length_of.find(t);
        return it != char_length_of.end() ? it->second : CharLength(t);
      };
      char_length_of.emplace(merged, length(best->first) + length(best->second));
    }
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
