#include "train/unigram/unigram_words.h"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <unicode/uscript.h>

#include <algorithm>

#include "common/utf8.h"
#include "model/units.h"

namespace tokenmill::unigram {
namespace {

constexpr uint32_t kMetaspace = 0x2581;  // ▁
constexpr size_t kDirect = 0x10000;     // code points counted in an array (the rest in a map)

void AppendUtf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

struct CharTally {
  std::vector<uint64_t> direct = std::vector<uint64_t>(kDirect, 0);
  absl::flat_hash_map<uint32_t, uint64_t> rest;
  uint64_t invalid = 0;
};

}  // namespace

std::string UnigramWords::Text(std::span<const uint32_t> piece) const {
  std::string out;
  for (uint32_t id : piece) AppendUtf8(chars[id], out);
  return out;
}

std::vector<uint32_t> UnigramWords::Symbols(std::string_view text) const {
  std::vector<uint32_t> out;
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  for (size_t i = 0; i < text.size();) {
    const CodePoint c = DecodeCodePoint(s, text.size(), i);
    auto it = c.cp < 0 ? id_of.end() : id_of.find(static_cast<uint32_t>(c.cp));
    if (it == id_of.end()) return {};
    out.push_back(it->second);
    i += c.len;
  }
  return out;
}

UnigramWords ReadWords(std::span<const WordSource::Entry> entries, const TrainerOptions& options) {
  UnigramWords words;
  const size_t n = entries.size();
  // Characters, weighted by the words' counts.
  tbb::enumerable_thread_specific<CharTally> tallies;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 1024), [&](const tbb::blocked_range<size_t>& r) {
    CharTally& t = tallies.local();
    for (size_t w = r.begin(); w != r.end(); ++w) {
      const auto [word, count] = entries[w];
      const auto* s = reinterpret_cast<const unsigned char*>(word.data());
      for (size_t i = 0; i < word.size();) {
        const CodePoint c = DecodeCodePoint(s, word.size(), i);
        if (c.cp < 0) {
          t.invalid += count;
        } else if (static_cast<size_t>(c.cp) < kDirect) {
          t.direct[c.cp] += count;
        } else {
          t.rest[static_cast<uint32_t>(c.cp)] += count;
        }
        i += c.len;
      }
    }
  });
  std::vector<uint64_t> direct(kDirect, 0);
  absl::flat_hash_map<uint32_t, uint64_t> rest;
  for (const CharTally& t : tallies) {
    for (size_t cp = 0; cp < kDirect; ++cp) direct[cp] += t.direct[cp];
    for (const auto& [cp, count] : t.rest) rest[cp] += count;
    words.invalid_bytes += t.invalid;
  }
  std::vector<std::pair<uint32_t, uint64_t>> seen;
  for (size_t cp = 0; cp < kDirect; ++cp) {
    if (direct[cp] > 0) seen.emplace_back(static_cast<uint32_t>(cp), direct[cp]);
  }
  for (const auto& [cp, count] : rest) seen.emplace_back(cp, count);
  std::sort(seen.begin(), seen.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  words.distinct_chars = seen.size();
  for (const auto& [cp, count] : seen) words.char_occurrences += count;
  // SentencePiece's coverage: a character is added while the share covered before it is below
  // the coverage.
  const size_t keep = KeptCharacters(seen, words.char_occurrences, options.character_coverage,
                                     options.limit_alphabet);
  for (size_t k = 0; k < seen.size(); ++k) {
    if (k < keep) {
      words.id_of.emplace(seen[k].first, static_cast<uint32_t>(k));
      words.chars.push_back(seen[k].first);
      words.char_counts.push_back(seen[k].second);
    } else {
      words.uncovered_occurrences += seen[k].second;
    }
  }
  // The words' symbols: word w's at most |w| symbols start at its byte offset, then are
  // packed.
  std::vector<uint64_t> byte_begin(n + 1, 0);
  for (size_t w = 0; w < n; ++w) byte_begin[w + 1] = byte_begin[w] + entries[w].first.size();
  std::vector<uint32_t> wide(byte_begin[n]);
  std::vector<uint32_t> length(n);
  std::vector<uint32_t> direct_id(kDirect, kUnknownSymbol);
  for (size_t k = 0; k < words.chars.size(); ++k) {
    if (words.chars[k] < kDirect) direct_id[words.chars[k]] = static_cast<uint32_t>(k);
  }
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 1024), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t w = r.begin(); w != r.end(); ++w) {
      const std::string_view word = entries[w].first;
      const auto* s = reinterpret_cast<const unsigned char*>(word.data());
      uint32_t* out = wide.data() + byte_begin[w];
      uint32_t len = 0;
      for (size_t i = 0; i < word.size();) {
        const CodePoint c = DecodeCodePoint(s, word.size(), i);
        uint32_t id = kUnknownSymbol;
        if (c.cp >= 0 && static_cast<size_t>(c.cp) < kDirect) {
          id = direct_id[c.cp];
        } else if (c.cp >= 0) {
          auto it = words.id_of.find(static_cast<uint32_t>(c.cp));
          if (it != words.id_of.end()) id = it->second;
        }
        out[len++] = id;
        i += c.len;
      }
      length[w] = len;
    }
  });
  words.begin.resize(n + 1);
  words.begin[0] = 0;
  for (size_t w = 0; w < n; ++w) words.begin[w + 1] = words.begin[w] + length[w];
  words.symbols.resize(words.begin[n]);
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 4096), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t w = r.begin(); w != r.end(); ++w) {
      std::copy_n(wide.data() + byte_begin[w], length[w], words.symbols.data() + words.begin[w]);
    }
  });
  words.counts.resize(n);
  for (size_t w = 0; w < n; ++w) {
    words.counts[w] = entries[w].second;
    words.total_count += entries[w].second;
  }
  return words;
}

PieceRules::PieceRules(const UnigramWords& words, bool split_by_script)
    : split_by_script_(split_by_script) {
  script_.resize(words.chars.size());
  code_point_ = words.chars;
  for (size_t k = 0; k < words.chars.size(); ++k) {
    const uint32_t cp = words.chars[k];
    if (cp == kMetaspace) {
      metaspace_ = static_cast<uint32_t>(k);
      script_[k] = kNoScript;
      continue;
    }
    UErrorCode error = U_ZERO_ERROR;
    UScriptCode s = uscript_getScript(static_cast<UChar32>(cp), &error);
    if (U_FAILURE(error)) s = USCRIPT_UNKNOWN;
    if (s == USCRIPT_HIRAGANA || s == USCRIPT_KATAKANA || cp == 0x30FC) s = USCRIPT_HAN;
    script_[k] = s == USCRIPT_INHERITED ? kInherited : static_cast<int32_t>(s);
  }
}

bool PieceRules::Valid(const uint32_t* ids, size_t n) const {
  if (n == 6) {
    // A byte-fallback token's name ("<0x41>"): Hugging Face would read the piece and the token
    // as one entry.
    auto cp = [&](size_t k) { return code_point_[ids[k]]; };
    auto hex = [](uint32_t c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'); };
    if (cp(0) == '<' && cp(1) == '0' && cp(2) == 'x' && hex(cp(3)) && hex(cp(4)) && cp(5) == '>') {
      return false;
    }
  }
  int32_t prev = kNoScript;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t id = ids[i];
    if (id == metaspace_) {
      if (i > 0) return false;  // "▁" only starts a piece
      continue;
    }
    if (!split_by_script_) continue;
    int32_t s = script_[id];
    if (s == kInherited) s = prev;
    if (s != kNoScript && prev != kNoScript && s != prev) return false;
    prev = s;
  }
  return true;
}

}  // namespace tokenmill::unigram
