#include "model/bpe/piece_bpe.h"

#include <algorithm>
#include <cstring>

namespace tokenmill {
namespace {

// The scan once merges[i] holds the merge of (ids[i], ids[i + 1]) for every i; returns the
// number of parts left in ids[0..].
template <typename OnMerge>
size_t ScanLoop(const PairTable& pairs, TokenId* ids, size_t n, PairMerge* merges,
                OnMerge on_merge) {
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
    --n;
    if (at > 0) merges[at - 1] = pairs.Find(ids[at - 1], ids[at]);
    if (at + 1 < n) merges[at] = pairs.Find(ids[at], ids[at + 1]);
  }
  return n;
}

// The scan from the parts ids[0..n), shared by EncodeByScan, Trace and MergeParts. `merges`
// has room for n entries; returns the number of parts left in ids[0..].
template <typename OnMerge>
size_t ScanMergeParts(const PairTable& pairs, TokenId* ids, size_t n, PairMerge* merges,
                      OnMerge on_merge) {
  for (size_t i = 0; i + 1 < n; ++i) merges[i] = pairs.Find(ids[i], ids[i + 1]);
  return ScanLoop(pairs, ids, n, merges, on_merge);
}

// The scan from the piece's bytes. `ids` and `merges` have room for piece.size() entries.
template <typename OnMerge>
size_t ScanMerge(std::string_view piece, const PairTable& pairs, const TokenId* byte_token,
                 const PairMerge* byte_pairs, TokenId* ids, PairMerge* merges,
                 OnMerge on_merge) {
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(piece.data());
  const size_t n = piece.size();
  for (size_t i = 0; i < n; ++i) ids[i] = byte_token[bytes[i]];
  if (byte_pairs == nullptr) return ScanMergeParts(pairs, ids, n, merges, on_merge);
  for (size_t i = 0; i + 1 < n; ++i) merges[i] = byte_pairs[bytes[i] << 8 | bytes[i + 1]];
  return ScanLoop(pairs, ids, n, merges, on_merge);
}

}  // namespace

void PieceBpe::EncodeByScan(std::string_view piece, std::vector<TokenId>& out) const {
  constexpr size_t kStack = 256;
  if (piece.size() <= kStack) {
    TokenId ids[kStack];
    PairMerge merges[kStack];
    size_t n = ScanMerge(piece, *pairs_, byte_token_, byte_pairs_, ids, merges,
                         [](const MergeStep&) {});
    out.insert(out.end(), ids, ids + n);
    return;
  }
  std::vector<TokenId> ids(piece.size());
  std::vector<PairMerge> merges(piece.size());
  size_t n = ScanMerge(piece, *pairs_, byte_token_, byte_pairs_, ids.data(), merges.data(),
                       [](const MergeStep&) {});
  out.insert(out.end(), ids.begin(), ids.begin() + n);
}

size_t PieceBpe::MergeParts(TokenId* ids, size_t n) const {
  constexpr size_t kStack = 256;
  if (n <= kStack) {
    PairMerge merges[kStack];
    return ScanMergeParts(*pairs_, ids, n, merges, [](const MergeStep&) {});
  }
  std::vector<PairMerge> merges(n);
  return ScanMergeParts(*pairs_, ids, n, merges.data(), [](const MergeStep&) {});
}

std::vector<MergeStep> PieceBpe::Trace(std::string_view piece, std::vector<TokenId>& out) const {
  std::vector<MergeStep> steps;
  std::vector<TokenId> ids(piece.size());
  std::vector<PairMerge> merges(piece.size());
  size_t n = ScanMerge(piece, *pairs_, byte_token_, byte_pairs_, ids.data(), merges.data(),
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
size_t HeapMergeParts(const PairTable& pairs, TokenId* ids, size_t count) {
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
    PairMerge m = pairs.Find(id[left], id[right]);
    if (m.priority == PairTable::kNone) return;
    heap.push_back({m.priority, left, right, id[left], id[right], m.result});
    std::push_heap(heap.begin(), heap.end(), later);
  };
  for (uint32_t i = 0; i + 1 < n; ++i) {
    PairMerge m = pairs.Find(id[i], id[i + 1]);
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
  out.resize(start + HeapMergeParts(*pairs_, out.data() + start, piece.size()));
}

size_t PieceBpe::MergeIds(TokenId* ids, size_t n) const {
  return n <= long_piece_ ? MergeParts(ids, n) : HeapMergeParts(*pairs_, ids, n);
}

std::vector<MergeStep> PieceBpe::TraceParts(std::span<const TokenId> parts,
                                            std::vector<TokenId>& out) const {
  std::vector<MergeStep> steps;
  std::vector<TokenId> ids(parts.begin(), parts.end());
  std::vector<PairMerge> merges(ids.size());
  size_t n = ScanMergeParts(*pairs_, ids.data(), ids.size(), merges.data(),
                            [&](const MergeStep& step) { steps.push_back(step); });
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

}  // namespace tokenmill
