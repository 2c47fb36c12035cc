#include "reference/reference_wordpiece.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "reference/utf8_reference.h"

namespace tokenmill::testing {
namespace {

[[noreturn]] void Broken(const char* what) {
  std::fprintf(stderr, "ReferenceWordPieceTrain: %s\n", what);
  std::abort();
}

// A word's symbol that is the unknown token. No token is empty, so "" never equals one.
const std::string kUnknownSymbol;

// n * x * y exactly, as three 64-bit limbs, least significant first.
struct Product192 {
  uint64_t limb[3];
};
Product192 Multiply(uint64_t n, uint64_t x, uint64_t y) {
  const unsigned __int128 nx = static_cast<unsigned __int128>(n) * x;
  const unsigned __int128 low = static_cast<unsigned __int128>(static_cast<uint64_t>(nx)) * y;
  const unsigned __int128 high =
      static_cast<unsigned __int128>(static_cast<uint64_t>(nx >> 64)) * y + (low >> 64);
  return {{static_cast<uint64_t>(low), static_cast<uint64_t>(high),
           static_cast<uint64_t>(high >> 64)}};
}
bool Greater(const Product192& a, const Product192& b) {
  for (int i = 2; i >= 0; --i) {
    if (a.limb[i] != b.limb[i]) return a.limb[i] > b.limb[i];
  }
  return false;
}

// The word's characters as (byte offset, byte length, code point or -1 for an invalid byte).
struct Char {
  size_t offset, length;
  int64_t code_point;
};
std::vector<Char> Chars(std::string_view word) {
  std::vector<Char> chars;
  for (size_t i = 0; i < word.size();) {
    const Utf8Sequence seq = DecodeUtf8At(word, i);
    if (seq.length == 0) {
      chars.push_back({i, 1, -1});
      ++i;
    } else {
      chars.push_back({i, seq.length, seq.code_point});
      i += seq.length;
    }
  }
  return chars;
}

std::string Utf8(uint32_t code_point) {
  std::string s;
  AppendUtf8(code_point, s);
  return s;
}

// The kept characters (by code point), as the contract's alphabet rule chooses them.
std::set<uint32_t> KeptCharacters(const std::map<std::string, uint64_t>& words,
                                  const WordPieceReferenceOptions& options) {
  std::map<uint32_t, uint64_t> occurrences;
  uint64_t total = 0;
  for (const auto& [word, count] : words) {
    for (const Char& c : Chars(word)) {
      if (c.code_point < 0) continue;
      occurrences[static_cast<uint32_t>(c.code_point)] += count;
      total += count;
    }
  }
  std::vector<std::pair<uint32_t, uint64_t>> ranked(occurrences.begin(), occurrences.end());
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::set<uint32_t> kept;
  uint64_t covered = 0;
  for (const auto& [code_point, count] : ranked) {
    if (!options.hf_compat && options.character_coverage < 1.0 &&
        static_cast<double>(covered) / static_cast<double>(total) >= options.character_coverage) {
      break;
    }
    if (options.limit_alphabet > 0 && kept.size() >= options.limit_alphabet) break;
    kept.insert(code_point);
    covered += count;
  }
  return kept;
}

struct Pair {
  std::string left, right;
  bool operator<(const Pair& o) const {
    return left != o.left ? left < o.left : right < o.right;
  }
};

}  // namespace

WordPieceReferenceResult ReferenceWordPieceTrain(
    const std::vector<std::pair<std::string, uint64_t>>& input,
    const WordPieceReferenceOptions& options) {
  if (options.hf_compat && options.scoring != WordPieceScoring::kFrequency) {
    Broken("hf_compat needs frequency scoring");
  }
  std::map<std::string, uint64_t> summed;
  for (const auto& [word, count] : input) summed[word] += count;

  WordPieceReferenceResult result;
  // 1. The special tokens.
  result.vocab = options.special_tokens;
  const auto unknown = std::find(result.vocab.begin(), result.vocab.end(), options.unknown_token);
  if (unknown == result.vocab.end()) Broken("the unknown token is no special token");
  result.unknown_id = static_cast<uint32_t>(unknown - result.vocab.begin());

  // 2. The alphabet: plain characters by code point, then the prefixed variants that occur.
  const std::set<uint32_t> kept = KeptCharacters(summed, options);
  std::vector<std::vector<std::string>> words;
  std::vector<uint64_t> counts;
  std::set<uint32_t> prefixed;
  for (const auto& [word, count] : summed) {
    std::vector<std::string> symbols;
    for (const Char& c : Chars(word)) {
      const bool known = c.code_point >= 0 && kept.count(static_cast<uint32_t>(c.code_point)) > 0;
      if (!known) {
        if (!options.hf_compat) symbols.push_back(kUnknownSymbol);
        continue;
      }
      std::string symbol = word.substr(c.offset, c.length);
      if (c.offset > 0 && !options.prefix.empty()) {
        symbol = options.prefix + symbol;
        prefixed.insert(static_cast<uint32_t>(c.code_point));
      }
      symbols.push_back(std::move(symbol));
    }
    words.push_back(std::move(symbols));
    counts.push_back(count);
  }
  std::map<std::string, uint32_t> id_of;  // non-special tokens
  std::map<std::string, size_t> length_of;
  auto add_token = [&](const std::string& token, size_t length) {
    id_of.emplace(token, static_cast<uint32_t>(result.vocab.size()));
    length_of.emplace(token, length);
    result.vocab.push_back(token);
  };
  for (uint32_t c : kept) add_token(Utf8(c), 1);
  for (uint32_t c : prefixed) add_token(options.prefix + Utf8(c), 1);
  result.initial_size = result.vocab.size();

  // 3. The merges, each step counted afresh.
  const uint64_t min_count = std::max<uint64_t>(options.min_frequency, 1);
  while (result.vocab.size() < options.vocab_size) {
    std::map<Pair, uint64_t> pair_counts;
    std::map<std::string, uint64_t> token_counts;
    for (size_t w = 0; w < words.size(); ++w) {
      const std::vector<std::string>& symbols = words[w];
      for (size_t i = 0; i < symbols.size(); ++i) {
        if (symbols[i] == kUnknownSymbol) continue;
        token_counts[symbols[i]] += counts[w];
        if (i + 1 < symbols.size() && symbols[i + 1] != kUnknownSymbol) {
          pair_counts[{symbols[i], symbols[i + 1]}] += counts[w];
        }
      }
    }
    const Pair* best = nullptr;
    uint64_t best_count = 0;
    for (const auto& [pair, count] : pair_counts) {
      if (count < min_count) continue;
      if (options.max_token_length > 0 &&
          length_of.at(pair.left) + length_of.at(pair.right) > options.max_token_length) {
        continue;
      }
      if (best == nullptr) {
        best = &pair;
        best_count = count;
        continue;
      }
      bool better;
      if (options.scoring == WordPieceScoring::kLikelihood) {
        // count / (c(left) c(right)) against the best's, cross-multiplied.
        const Product192 mine =
            Multiply(count, token_counts.at(best->left), token_counts.at(best->right));
        const Product192 theirs =
            Multiply(best_count, token_counts.at(pair.left), token_counts.at(pair.right));
        if (Greater(mine, theirs)) {
          better = true;
        } else if (Greater(theirs, mine)) {
          better = false;
        } else {
          better = pair < *best;
        }
      } else if (count != best_count) {
        better = count > best_count;
      } else if (options.hf_compat) {
        better = std::make_pair(id_of.at(pair.left), id_of.at(pair.right)) <
                 std::make_pair(id_of.at(best->left), id_of.at(best->right));
      } else {
        better = pair < *best;
      }
      if (better) {
        best = &pair;
        best_count = count;
      }
    }
    if (best == nullptr) break;
    const Pair chosen = *best;
    std::string right = chosen.right;
    if (!options.prefix.empty() && right.compare(0, options.prefix.size(), options.prefix) == 0) {
      right.erase(0, options.prefix.size());
    }
    const std::string merged = chosen.left + right;
    result.merges.push_back({chosen.left, chosen.right, best_count});
    if (id_of.count(merged) == 0) {
      add_token(merged, length_of.at(chosen.left) + length_of.at(chosen.right));
    }
    for (std::vector<std::string>& symbols : words) {
      std::vector<std::string> out;
      for (size_t i = 0; i < symbols.size(); ++i) {
        if (i + 1 < symbols.size() && symbols[i] == chosen.left &&
            symbols[i + 1] == chosen.right) {
          out.push_back(merged);
          ++i;
        } else {
          out.push_back(symbols[i]);
        }
      }
      symbols = std::move(out);
    }
  }
  return result;
}

std::vector<uint32_t> ReferenceWordPieceEncode(std::string_view word,
                                               const WordPieceReferenceVocab& vocab) {
  const std::vector<Char> chars = Chars(word);
  if (chars.size() > vocab.max_input_chars_per_word) return {vocab.unknown_id};
  std::vector<uint32_t> ids;
  size_t first = 0;  // index in `chars` where the next piece starts
  while (first < chars.size()) {
    const size_t start = chars[first].offset;
    bool found = false;
    for (size_t last = chars.size(); last > first; --last) {  // the piece is chars[first, last)
      const size_t end = last == chars.size() ? word.size() : chars[last].offset;
      std::string piece(word.substr(start, end - start));
      if (start > 0) piece = vocab.prefix + piece;
      const auto it = vocab.ids.find(piece);
      if (it != vocab.ids.end()) {
        ids.push_back(it->second);
        first = last;
        found = true;
        break;
      }
    }
    if (!found) return {vocab.unknown_id};
  }
  return ids;
}

namespace {

void ReplaceAll(std::string& text, std::string_view from, std::string_view to) {
  std::string out;
  size_t i = 0;
  for (size_t at; (at = text.find(from, i)) != std::string::npos; i = at + from.size()) {
    out.append(text, i, at - i);
    out.append(to);
  }
  out.append(text, i, std::string::npos);
  text = std::move(out);
}

// Hugging Face's decoders::wordpiece::cleanup.
void Cleanup(std::string& part) {
  static const std::pair<std::string_view, std::string_view> kReplacements[] = {
      {" .", "."},     {" ?", "?"},     {" !", "!"},   {" ,", ","},
      {" ' ", "'"},    {" n't", "n't"}, {" 'm", "'m"}, {" do not", " don't"},
      {" 's", "'s"},   {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kReplacements) ReplaceAll(part, from, to);
}

}  // namespace

std::string ReferenceWordPieceDecode(const std::vector<std::string>& tokens,
                                     std::string_view prefix, bool cleanup) {
  std::string text;
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string part = tokens[i];
    if (i > 0) {
      if (part.compare(0, prefix.size(), prefix) == 0) {
        part.erase(0, prefix.size());
      } else {
        part = " " + part;
      }
    }
    if (cleanup) Cleanup(part);
    text += part;
  }
  return text;
}

}  // namespace tokenmill::testing
