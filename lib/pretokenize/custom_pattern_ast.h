// The custom-pattern matcher's inner pieces, shared by its parser (custom_pattern_parser.cc)
// and its matcher (custom_pattern.cc): character sets, the pattern's syntax tree and the
// graph of nodes the backtracking matcher walks. Internal to lib/pretokenize.
#pragma once

#include <bitset>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "pretokenize/unicode_classes.h"

namespace tokenmill::custom_pattern {

// A set of characters: class bytes (properties) and code point ranges (literals).
struct CharSet {
  std::bitset<256> by_class;
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
  bool negated = false;

  bool Contains(uint32_t cp, uint8_t cls) const {
    bool in = by_class[cls];
    for (size_t i = 0; !in && i < ranges.size(); ++i) {
      in = cp >= ranges[i].first && cp <= ranges[i].second;
    }
    return in != negated;
  }
};

// General-category groups as bits; the tables tell apart only these unions ("atoms").
constexpr unsigned kGcLuLt = 1, kGcLl = 2, kGcLmLo = 4, kGcM = 8, kGcN = 16;

inline unsigned GcAtomOfClass(uint8_t cls) {
  if (cls & kClassInvalid) return 0;
  const bool upper = cls & kClassUpper, lower = cls & kClassLower;
  if (cls & kClassL) return upper && lower ? kGcLmLo : upper ? kGcLuLt : kGcLl;
  if (upper && lower) return kGcM;
  if (cls & kClassN) return kGcN;
  return 0;
}

struct Ast {
  enum Kind { kSet, kSeq, kAlt, kRepeat, kLookahead };
  explicit Ast(Kind k = kSeq) : kind(k) {}
  Kind kind;
  int set = -1;
  int min = 1, max = 1;  // max -1: unbounded
  bool greedy = true;
  bool negated = false;  // kLookahead
  std::vector<Ast> kids;
};

struct Node {
  enum Op { kSet, kAlt, kRepeatSet, kLookahead, kEnd } op = kEnd;
  int set = -1;
  int min = 1, max = 1;
  bool greedy = true;
  bool negated = false;
  std::vector<const Node*> branches;
  const Node* body = nullptr;
  const Node* next = nullptr;
};

// Parses `pattern` (the subset of PCRE listed in pretokenizer.h) into its syntax tree; its
// character sets go to `sets`. Errors give the pattern offset and the construct.
absl::StatusOr<Ast> ParsePattern(std::string_view pattern, std::vector<CharSet>* sets);

// Whether the tree can match the empty string.
bool Nullable(const Ast& a);

}  // namespace tokenmill::custom_pattern
