#include "model/bpe/piece_bpe.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace tokenmill {
namespace {

// How the scan and the heap find the merge of two adjacent parts. Find(ids, i): of the scan's
// parts i and i + 1 (ids[] holds the parts in order); Remove(part, n): the scan's part `part` of
// n was merged into the one before it; FindParts(id, left, right, end): of the heap's parts that
// start at `left` and `right`, the part after them starting at `end` (n: none).
//
// ByIds: by the two ids, in a PairTable.
struct ByIds {
  const PairTable* pairs;
  PairMerge Find(const TokenId* ids, size_t i) const { return pairs->Find(ids[i], ids[i + 1]); }
  void Remove(size_t, size_t) const {}
  PairMerge FindParts(const TokenId* id, uint32_t left, uint32_t right, uint32_t) const {
    return pairs->Find(id[left], id[right]);
  }
};

// ByBytes: by the bytes the two parts cover together, in a RankPairs. Part i starts at
// bytes[starts[i]]; `starts` has one more entry, where the last part ends.
struct ByBytes {
  const RankPairs* ranks;
  const char* bytes;
  uint32_t* starts;
  PairMerge Find(const TokenId*, size_t i) const {
    return ranks->Find(bytes + starts[i], starts[i + 2] - starts[i]);
  }
  void Remove(size_t part, size_t n) const {
    std::memmove(starts + part, starts + part + 1, (n - part) * sizeof(uint32_t));
  }
  PairMerge FindParts(const TokenId*, uint32_t left, uint32_t, uint32_t end) const {
    return ranks->Find(bytes + starts[left], starts[end] - starts[left]);
  }
};

// The scan once merges[i] holds the merge of (ids[i], ids[i + 1]) for every i; returns the
// number of parts left in ids[0..].
template <typename Finder, typename OnMerge>
size_t ScanLoop(Finder find, TokenId* ids, size_t n, PairMerge* merges, OnMerge on_merge) {
  while (n > 1) {
    uint32_t best = PairTable::kNone;
    size_t at = 0;
    for (size_t i = 0; i + 1 < n; ++i) {
      if (merges[i].priority < best) {
        best = merges[i].priority;
        at = i;
      }
    }
    if (best == PairTable::kNone) break;
    on_merge(MergeStep{at, ids[at], ids[at + 1], merges[at].result, best});
    ids[at] = merges[at].result;
    std::memmove(ids + at + 1, ids + at + 2, (n - at - 2) * sizeof(TokenId));
    std::memmove(merges + at, merges + at + 1, (n - at - 2) * sizeof(PairMerge));
    find.Remove(at + 1, n);
    --n;
    if (at > 0) merges[at - 1] = find.Find(ids, at - 1);
    if (at + 1 < n) merges[at] = find.Find(ids, at);
  }
  return n;
}

// The scan from the parts ids[0..n), shared by EncodeByScan, Trace and MergeParts. `merges`
// has room for n entries; returns the number of parts left in ids[0..].
template <typename Finder, typename OnMerge>
size_t ScanMergeParts(Finder find, TokenId* ids, size_t n, PairMerge* merges, OnMerge on_merge) {
  for (size_t i = 0; i + 1 < n; ++i) merges[i] = find.Find(ids, i);
  return ScanLoop(find, ids, n, merges, on_merge);
}

// The tables a PieceBpe reads.
struct Tables {
  const PairTable* pairs;
  const RankPairs* ranks;
  const TokenId* byte_token;
  const PairMerge* byte_pairs;
};

// The scan from the piece's bytes. `ids` and `merges` have room for piece.size() entries,
// `starts` (used with ranks) for one more.
template <typename OnMerge>
size_t ScanMerge(std::string_view piece, const Tables& t, TokenId* ids, PairMerge* merges,
                 uint32_t* starts, OnMerge on_merge) {
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(piece.data());
  const size_t n = piece.size();
  for (size_t i = 0; i < n; ++i) ids[i] = t.byte_token[bytes[i]];
  if (t.ranks != nullptr) {
    for (size_t i = 0; i <= n; ++i) starts[i] = static_cast<uint32_t>(i);
    const ByBytes find{t.ranks, piece.data(), starts};
    if (t.byte_pairs == nullptr) return ScanMergeParts(find, ids, n, merges, on_merge);
    for (size_t i = 0; i + 1 < n; ++i) merges[i] = t.byte_pairs[bytes[i] << 8 | bytes[i + 1]];
    return ScanLoop(find, ids, n, merges, on_merge);
  }
  if (t.byte_pairs == nullptr) return ScanMergeParts(ByIds{t.pairs}, ids, n, merges, on_merge);
  for (size_t i = 0; i + 1 < n; ++i) merges[i] = t.byte_pairs[bytes[i] << 8 | bytes[i + 1]];
  return ScanLoop(ByIds{t.pairs}, ids, n, merges, on_merge);
}

// Returns body(find), `find` the finder of the parts ids[0..n): by their ids in `pairs`, or
// (with `ranks`) by the bytes they cover, copied out before body merges the parts.
template <typename Body>
size_t WithPartsFinder(const PairTable* pairs, const RankPairs* ranks, const TokenId* ids,
                       size_t n, Body body) {
  if (ranks == nullptr) return body(ByIds{pairs});
  std::string bytes;
  std::vector<uint32_t> starts(n + 1);
  for (size_t i = 0; i < n; ++i) {
    starts[i] = static_cast<uint32_t>(bytes.size());
    bytes += ranks->bytes(ids[i]);
  }
  starts[n] = static_cast<uint32_t>(bytes.size());
  return body(ByBytes{ranks, bytes.data(), starts.data()});
}

}  // namespace

void PieceBpe::EncodeByScan(std::string_view piece, std::vector<TokenId>& out) const {
  constexpr size_t kStack = 256;
  const Tables tables{pairs_, ranks_, byte_token_, byte_pairs_};
  if (piece.size() <= kStack) {
    TokenId ids[kStack];
    PairMerge merges[kStack];
    uint32_t starts[kStack + 1];
    size_t n = ScanMerge(piece, tables, ids, merges, starts, [](const MergeStep&) {});
    out.insert(out.end(), ids, ids + n);
    return;
  }
  std::vector<TokenId> ids(piece.size());
  std::vector<PairMerge> merges(piece.size());
  std::vector<uint32_t> starts(ranks_ != nullptr ? piece.size() + 1 : 0);
  size_t n = ScanMerge(piece, tables, ids.data(), merges.data(), starts.data(), [](const MergeStep&) {});
  out.insert(out.end(), ids.begin(), ids.begin() + n);
}

size_t PieceBpe::MergeParts(TokenId* ids, size_t n) const {
  return WithPartsFinder(pairs_, ranks_, ids, n, [&](auto find) {
    constexpr size_t kStack = 256;
    if (n <= kStack) {
      PairMerge merges[kStack];
      return ScanMergeParts(find, ids, n, merges, [](const MergeStep&) {});
    }
    std::vector<PairMerge> merges(n);
    return ScanMergeParts(find, ids, n, merges.data(), [](const MergeStep&) {});
  });
}

std::vector<MergeStep> PieceBpe::Trace(std::string_view piece, std::vector<TokenId>& out) const {
  std::vector<MergeStep> steps;
  std::vector<TokenId> ids(piece.size());
  std::vector<PairMerge> merges(piece.size());
  std::vector<uint32_t> starts(piece.size() + 1);
  size_t n = ScanMerge(piece, Tables{pairs_, ranks_, byte_token_, byte_pairs_}, ids.data(),
                       merges.data(), starts.data(),
                       [&](const MergeStep& step) { steps.push_back(step); });
  out.insert(out.end(), ids.begin(), ids.begin() + n);
  return steps;
}

namespace {

// BPE by a heap of candidate pairs over a linked list, from the parts ids[0..n), in place;
// returns the number of parts left. Parts are identified by the index where they start; that
// never changes when a part absorbs its right neighbour, so (priority, index) orders candidates
// exactly as the scan's "lowest priority, leftmost first" does. Stale candidates are skipped
// on pop.
template <typename Finder>
size_t HeapMergeParts(Finder find, TokenId* ids, size_t count) {
  constexpr TokenId kDead = UINT32_MAX;
  const uint32_t n = static_cast<uint32_t>(count);
  std::vector<TokenId> id(ids, ids + n);
  std::vector<uint32_t> next(n), prev(n);
  for (uint32_t i = 0; i < n; ++i) {
    next[i] = i + 1;
    prev[i] = i - 1;  // wraps for i == 0: "no previous part"
  }
  struct Candidate {
    uint32_t priority;
    uint32_t left;
    uint32_t right;
    TokenId left_id;
    TokenId right_id;
    TokenId result;
  };
  auto later = [](const Candidate& a, const Candidate& b) {
    return a.priority != b.priority ? a.priority > b.priority : a.left > b.left;
  };
  std::vector<Candidate> heap;
  heap.reserve(n);
  auto consider = [&](uint32_t left, uint32_t right) {
    PairMerge m = find.FindParts(id.data(), left, right, next[right]);
    if (m.priority == PairTable::kNone) return;
    heap.push_back({m.priority, left, right, id[left], id[right], m.result});
    std::push_heap(heap.begin(), heap.end(), later);
  };
  for (uint32_t i = 0; i + 1 < n; ++i) {
    PairMerge m = find.FindParts(id.data(), i, i + 1, i + 2);
    if (m.priority != PairTable::kNone) heap.push_back({m.priority, i, i + 1, id[i], id[i + 1], m.result});
  }
  std::make_heap(heap.begin(), heap.end(), later);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    Candidate c = heap.back();
    heap.pop_back();
    if (id[c.left] != c.left_id || next[c.left] != c.right || id[c.right] != c.right_id) continue;
    id[c.left] = c.result;
    id[c.right] = kDead;
    next[c.left] = next[c.right];
    if (next[c.left] < n) prev[next[c.left]] = c.left;
    if (prev[c.left] < n) consider(prev[c.left], c.left);
    if (next[c.left] < n) consider(c.left, next[c.left]);
  }
  size_t left = 0;
  for (uint32_t i = 0; i < n; i = next[i]) ids[left++] = id[i];
  return left;
}

}  // namespace

void PieceBpe::EncodeByHeap(std::string_view piece, std::vector<TokenId>& out) const {
  const size_t start = out.size();
  for (unsigned char c : piece) out.push_back(byte_token_[c]);
  size_t n;
  if (ranks_ != nullptr) {
    std::vector<uint32_t> starts(piece.size() + 1);
    for (size_t i = 0; i <= piece.size(); ++i) starts[i] = static_cast<uint32_t>(i);
    n = HeapMergeParts(ByBytes{ranks_, piece.data(), starts.data()}, out.data() + start, piece.size());
  } else {
    n = HeapMergeParts(ByIds{pairs_}, out.data() + start, piece.size());
  }
  out.resize(start + n);
}

size_t PieceBpe::MergeIds(TokenId* ids, size_t n) const {
  if (n <= long_piece_) return MergeParts(ids, n);
  return WithPartsFinder(pairs_, ranks_, ids, n,
                         [&](auto find) { return HeapMergeParts(find, ids, n); });
}

std::vector<MergeStep> PieceBpe::TraceParts(std::span<const TokenId> parts,
                                            std::vector<TokenId>& out) const {
  std::vector<MergeStep> steps;
  std::vector<TokenId> ids(parts.begin(), parts.end());
  std::vector<PairMerge> merges(ids.size());
  auto record = [&](const MergeStep& step) { steps.push_back(step); };
  const size_t n = WithPartsFinder(pairs_, ranks_, ids.data(), ids.size(), [&](auto find) {
    return ScanMergeParts(find, ids.data(), ids.size(), merges.data(), record);
  });
  out.insert(out.end(), ids.begin(), ids.begin() + n);
  return steps;
}

std::vector<PairMerge> BytePairMerges(const std::vector<std::pair<uint64_t, PairMerge>>& entries,
                                      const TokenId* byte_token) {
  std::vector<PairMerge> table(size_t{1} << 16, PairMerge{PairTable::kNone, 0});
  // The byte of each byte token, by id (ids no entry names are left out).
  TokenId most = 0;
  for (const auto& entry : entries) {
    most = std::max({most, static_cast<TokenId>(entry.first >> 32), static_cast<TokenId>(entry.first)});
  }
  std::vector<int> byte_of(entries.empty() ? 0 : size_t{most} + 1, -1);
  for (int b = 255; b >= 0; --b) {
    if (byte_token[b] < byte_of.size()) byte_of[byte_token[b]] = b;
  }
  for (const auto& [key, merge] : entries) {
    const int left = byte_of[key >> 32], right = byte_of[static_cast<TokenId>(key)];
    if (left < 0 || right < 0) continue;
    // The first entry of a pair, as PairTable::Build keeps (no merge has priority kNone).
    PairMerge& slot = table[static_cast<size_t>(left) << 8 | static_cast<size_t>(right)];
    if (slot.priority == PairTable::kNone) slot = merge;
  }
  return table;
}

std::vector<PairMerge> RankBytePairs(const std::vector<std::string>& tokens,
                                     const std::vector<bool>& skip) {
  std::vector<PairMerge> table(size_t{1} << 16, PairMerge{PairTable::kNone, 0});
  for (size_t id = 0; id < tokens.size(); ++id) {
    if (tokens[id].size() != 2 || skip[id]) continue;
    const auto* b = reinterpret_cast<const unsigned char*>(tokens[id].data());
    PairMerge& slot = table[size_t{b[0]} << 8 | b[1]];
    if (slot.priority == PairTable::kNone) slot = {static_cast<TokenId>(id), static_cast<TokenId>(id)};
  }
  return table;
}

}  // namespace tokenmill
