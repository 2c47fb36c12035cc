#include "train/unigram/seed_pieces.h"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <memory>
#include <span>
#include <utility>

namespace tokenmill::unigram {
namespace {

// A run start and its current sort key (trivial: an array of them is left untouched until the
// threads fill it).
struct Keyed {
  uint64_t key;
  uint32_t pos;
  friend bool operator<(const Keyed& a, const Keyed& b) {
    return a.key != b.key ? a.key < b.key : a.pos < b.pos;
  }
};

struct Candidate {
  uint64_t score;
  // The first three code points + 1 in 21 bits each (0 past the end), most significant first:
  // ordered as the code points are, a prefix first, so that most ties in score are settled
  // without reading the text.
  uint64_t head;
  uint32_t pos;  // in the text
  uint32_t len;
};

// Sorts `data` by key, stably: a least-significant-digit radix sort on the low `key_bits` bits
// of the keys, 11 bits a pass (a pass where every key has the same digit is skipped).
// `scratch` holds as many elements as `data`.
void RadixSortByKey(std::span<Keyed> data, std::span<Keyed> scratch, int key_bits) {
  constexpr int kDigit = 11;
  constexpr size_t kBuckets = size_t{1} << kDigit;
  std::vector<uint32_t> next(kBuckets);
  Keyed* from = data.data();
  Keyed* to = scratch.data();
  const size_t n = data.size();
  for (int shift = 0; shift < key_bits; shift += kDigit) {
    auto digit = [shift](const Keyed& k) { return (k.key >> shift) & (kBuckets - 1); };
    std::fill(next.begin(), next.end(), 0);
    for (size_t i = 0; i < n; ++i) ++next[digit(from[i])];
    uint32_t sum = 0;
    bool trivial = false;
    for (uint32_t& c : next) {
      trivial |= c == n;
      const uint32_t count = c;
      c = sum;
      sum += count;
    }
    if (trivial) continue;
    for (size_t i = 0; i < n; ++i) to[next[digit(from[i])]++] = from[i];
    std::swap(from, to);
  }
  if (from != data.data()) std::copy(from, from + n, data.data());
}

}  // namespace

std::vector<ScoredPiece> MakeSeedPieces(const UnigramWords& words, const PieceRules& rules,
                                        size_t seed_size, size_t max_piece_length,
                                        SeedStats* stats, std::vector<PieceSite>* sites) {
  // The text: every word's character ids + 1, each word and each unknown position ending a run
  // (0); word w's run starts at begin[w] + w. word_at[i]: the word of text position i. Filled
  // in parallel blocks of words, straight into memory the threads touch first (fresh memory is
  // dear on some machines: the kernel zeroes each page on its first touch).
  const size_t word_count = words.size();
  const size_t n = words.symbols.size() + word_count;
  std::unique_ptr<uint32_t[]> text_buffer(new uint32_t[n + 1]);
  std::unique_ptr<uint32_t[]> word_at(new uint32_t[n]);
  // dist[i]: characters from i to the run's end, capped (only compared with small lengths).
  std::unique_ptr<uint8_t[]> dist(new uint8_t[n + 1]);
  uint32_t* const text = text_buffer.get();
  text[n] = 0;
  dist[n] = 0;
  // The run starts sorted on their first `depth` = max_piece_length + 1 characters (what
  // the nodes up to max_piece_length need): keys of as many characters as fit 64 bits, sorted,
  // and each group of equal keys sorted on the next key (most significant first), in parallel.
  const size_t depth = max_piece_length + 1;
  const int bits = std::bit_width(words.chars.size() + 1);
  const size_t per_key = static_cast<size_t>(64 / bits);
  const size_t levels = (depth + per_key - 1) / per_key;
  auto key = [&](uint32_t pos, size_t level) -> uint64_t {
    const size_t first = level * per_key;
    if (dist[pos] <= first) return 0;  // the run ended before
    uint64_t k = 0;
    size_t i = pos + first;
    const size_t stop = std::min<size_t>(dist[pos] - first, per_key);
    for (size_t c = 0; c < per_key; ++c) {
      k <<= bits;
      if (c < stop) k |= text[i + c];
    }
    return k;
  };
  // The first sort is a bucket sort on the first keys' top bits (counted while the text is
  // filled, the starts placed by bucket: no second array), then each bucket sorted on its own.
  const int key_bits = static_cast<int>(per_key) * bits;
  const int bucket_bits = std::min(12, key_bits);
  const size_t buckets = size_t{1} << bucket_bits;
  auto bucket_of = [&](uint64_t k) { return static_cast<size_t>(k >> (key_bits - bucket_bits)); };
  // Blocks of words, at most 256 (each counts its starts per bucket).
  const size_t word_block = std::max<size_t>(4096, (word_count + 255) / 256);
  const size_t blocks = (word_count + word_block - 1) / word_block;
  // slot[b * buckets + d]: block b's starts in bucket d, then where its next one goes.
  std::vector<uint32_t> slot(blocks * buckets, 0);
  tbb::parallel_for(size_t{0}, blocks, [&](size_t b) {
    const size_t first = b * word_block, last = std::min(word_count, first + word_block);
    uint32_t* const count = slot.data() + b * buckets;
    for (size_t w = first; w < last; ++w) {
      const size_t at = words.begin[w] + w;
      const std::span<const uint32_t> word = words.Word(w);
      for (size_t j = 0; j < word.size(); ++j) {
        text[at + j] = word[j] == kUnknownSymbol ? 0 : word[j] + 1;
        word_at[at + j] = static_cast<uint32_t>(w);
      }
      text[at + word.size()] = 0;
      word_at[at + word.size()] = static_cast<uint32_t>(w);
      uint8_t d = 0;
      dist[at + word.size()] = 0;
      for (size_t j = word.size(); j-- > 0;) {
        d = text[at + j] == 0 ? 0 : static_cast<uint8_t>(std::min<unsigned>(d + 1u, 255u));
        dist[at + j] = d;
      }
      for (size_t j = 0; j < word.size(); ++j) {
        if (text[at + j] != 0) ++count[bucket_of(key(static_cast<uint32_t>(at + j), 0))];
      }
    }
  });
  // Buckets in order, each holding its blocks' starts in block order.
  std::vector<size_t> bucket_begin(buckets + 1, 0);
  size_t m = 0;
  for (size_t d = 0; d < buckets; ++d) {
    bucket_begin[d] = m;
    for (size_t b = 0; b < blocks; ++b) {
      const uint32_t c = slot[b * buckets + d];
      slot[b * buckets + d] = static_cast<uint32_t>(m);
      m += c;
    }
  }
  bucket_begin[buckets] = m;
  // The runs' starts (positions holding a character) with their first keys.
  std::unique_ptr<Keyed[]> sorted_buffer(new Keyed[m]);
  std::span<Keyed> sorted(sorted_buffer.get(), m);
  tbb::parallel_for(size_t{0}, blocks, [&](size_t b) {
    const size_t first = b * word_block, last = std::min(word_count, first + word_block);
    uint32_t* const next = slot.data() + b * buckets;
    for (size_t i = words.begin[first] + first, end = words.begin[last] + last; i < end; ++i) {
      if (text[i] == 0) continue;
      const uint64_t k = key(static_cast<uint32_t>(i), 0);
      sorted[next[bucket_of(k)]++] = {k, static_cast<uint32_t>(i)};
    }
  });
  std::vector<uint32_t>().swap(slot);
  {
    // Each bucket sorted by (key, position): by std::sort on both when small, else by a stable
    // radix sort on the key's other bits (a bucket is in position order as placed).
    tbb::enumerable_thread_specific<std::vector<Keyed>> scratch;
    tbb::parallel_for(tbb::blocked_range<size_t>(0, buckets, 1), [&](const tbb::blocked_range<size_t>& r) {
      for (size_t d = r.begin(); d != r.end(); ++d) {
        const std::span<Keyed> bucket =
            sorted.subspan(bucket_begin[d], bucket_begin[d + 1] - bucket_begin[d]);
        if (bucket.size() < 4096) {
          std::sort(bucket.begin(), bucket.end());
        } else {
          std::vector<Keyed>& local = scratch.local();
          if (local.size() < bucket.size()) local.resize(bucket.size());
          RadixSortByKey(bucket, std::span<Keyed>(local.data(), bucket.size()), key_bits - bucket_bits);
        }
      }
    });
  }
  // Groups of equal keys: sort them on the next key. (Equal keys may still hold a run that
  // ends right after them beside runs that go on: the next key, 0 for the first, tells them.)
  struct Group {
    size_t begin, end, level;
  };
  auto groups_of = [&](size_t begin, size_t end, size_t level, std::vector<Group>& out) {
    for (size_t b = begin; b < end;) {
      size_t e = b + 1;
      while (e < end && sorted[e].key == sorted[b].key) ++e;
      // Equal keys whose runs end before this level's last character (a 0 in the key) are
      // equal to the end, and already in position order: only the others need the next key.
      // (A run ending exactly at the key's end may equal longer ones up to there.)
      if (e - b >= 2 && level + 1 < levels && dist[sorted[b].pos] >= (level + 1) * per_key) {
        out.push_back({b, e, level + 1});
      }
      b = e;
    }
  };
  std::vector<Group> top;
  {
    // Found in parallel over slices of the sorted keys, cut between groups.
    const size_t slices = std::max<size_t>(1, std::min<size_t>(m / (1 << 16), 256));
    std::vector<size_t> cut(slices + 1, m);
    for (size_t k = 0; k < slices; ++k) {
      size_t at = m * k / slices;
      while (at > 0 && at < m && sorted[at].key == sorted[at - 1].key) ++at;
      cut[k] = at;
    }
    std::vector<std::vector<Group>> found(slices);
    tbb::parallel_for(size_t{0}, slices, [&](size_t k) {
      if (cut[k] < cut[k + 1]) groups_of(cut[k], cut[k + 1], 0, found[k]);
    });
    for (auto& f : found) top.insert(top.end(), f.begin(), f.end());
  }
  tbb::parallel_for(tbb::blocked_range<size_t>(0, top.size(), 16), [&](const tbb::blocked_range<size_t>& r) {
    std::vector<Group> stack;
    for (size_t t = r.begin(); t != r.end(); ++t) {
      stack.push_back(top[t]);
      while (!stack.empty()) {
        const Group g = stack.back();
        stack.pop_back();
        for (size_t k = g.begin; k < g.end; ++k) sorted[k].key = key(sorted[k].pos, g.level);
        std::sort(sorted.begin() + static_cast<long>(g.begin), sorted.begin() + static_cast<long>(g.end));
        groups_of(g.begin, g.end, g.level, stack);
      }
    }
  });
  std::unique_ptr<uint32_t[]> order(new uint32_t[m]);
  tbb::parallel_for(tbb::blocked_range<size_t>(0, m, 1 << 16), [&](const tbb::blocked_range<size_t>& r) {
    for (size_t k = r.begin(); k != r.end(); ++k) order[k] = sorted[k].pos;
  });
  sorted = {};
  sorted_buffer.reset();
  // lcp[k]: common characters of order[k - 1] and order[k] (at most depth); lcp[0] = lcp[m] = 0.
  std::vector<uint8_t> lcp(m + 1, 0);
  tbb::parallel_for(tbb::blocked_range<size_t>(1, std::max<size_t>(m, 1), 1 << 14),
                    [&](const tbb::blocked_range<size_t>& r) {
    for (size_t k = r.begin(); k != r.end(); ++k) {
      const uint32_t a = order[k - 1], b = order[k];
      size_t l = 0;
      while (l < depth && text[a + l] != 0 && text[a + l] == text[b + l]) ++l;
      lcp[k] = static_cast<uint8_t>(l);
    }
  });
  // Weight prefix sums in suffix-array order: each slice's sums, then the slices' offsets.
  std::unique_ptr<uint64_t[]> weight(new uint64_t[m + 1]);
  weight[0] = 0;
  {
    constexpr size_t kSlice = size_t{1} << 16;
    const size_t slices = (m + kSlice - 1) / kSlice;
    std::vector<uint64_t> offset(slices + 1, 0);
    tbb::parallel_for(size_t{0}, slices, [&](size_t j) {
      uint64_t sum = 0;
      for (size_t k = j * kSlice, end = std::min(m, k + kSlice); k < end; ++k) {
        sum += words.counts[word_at[order[k]]];
        weight[k + 1] = sum;
      }
      offset[j + 1] = sum;
    });
    for (size_t j = 0; j < slices; ++j) offset[j + 1] += offset[j];
    tbb::parallel_for(size_t{1}, slices, [&](size_t j) {
      for (size_t k = j * kSlice, end = std::min(m, k + kSlice); k < end; ++k) weight[k + 1] += offset[j];
    });
  }
  word_at.reset();

  // Candidates, keeping the best seed_size (score descending, then code points ascending).
  auto better = [&](const Candidate& a, const Candidate& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.head != b.head) return a.head < b.head;
    const uint32_t len = std::min(a.len, b.len);
    for (uint32_t k = 0; k < len; ++k) {
      const uint32_t ca = words.chars[text[a.pos + k] - 1], cb = words.chars[text[b.pos + k] - 1];
      if (ca != cb) return ca < cb;
    }
    return a.len < b.len;
  };
  // Found in parallel over segments of the suffix order cut where lcp <= 1: no interval of
  // depth >= 2 (a node that may be a piece) crosses such a cut, since the lcps inside an
  // interval are at least its depth, so each segment's intervals are those of the whole run.
  // Each thread keeps its own best seed_size (`better` is a strict total order: no two
  // candidates spell the same piece), so the union holds the overall best.
  struct Local {
    std::vector<Candidate> kept;
    std::vector<uint32_t> buffer;
    std::vector<std::pair<uint32_t, size_t>> stack;  // (lcp, left bound)
    uint64_t candidates = 0;
  };
  tbb::enumerable_thread_specific<Local> locals([&] {
    Local l;
    l.buffer.resize(max_piece_length);
    return l;
  });
  auto offer = [&](Local& l, uint64_t pos, uint32_t len, uint64_t freq) {
    for (uint32_t k = 0; k < len; ++k) l.buffer[k] = text[pos + k] - 1;
    if (!rules.Valid(l.buffer.data(), len)) return;
    ++l.candidates;
    uint64_t head = 0;
    for (uint32_t k = 0; k < 3; ++k) {
      head = head << 21 | (k < len ? uint64_t{words.chars[l.buffer[k]]} + 1 : 0);
    }
    l.kept.push_back({freq * len, head, static_cast<uint32_t>(pos), len});
    if (l.kept.size() >= 2 * seed_size + 1024) {
      std::nth_element(l.kept.begin(), l.kept.begin() + static_cast<long>(seed_size), l.kept.end(), better);
      l.kept.resize(seed_size);
    }
  };
  const size_t segments = std::max<size_t>(1, std::min<size_t>(m / 4096, 1024));
  std::vector<size_t> cut(segments + 1, m);
  cut[0] = 0;
  for (size_t j = 1; j < segments; ++j) {
    size_t at = std::max(cut[j - 1], m * j / segments);
    while (at < m && lcp[at] > 1) ++at;
    cut[j] = at;
  }
  tbb::parallel_for(size_t{0}, segments, [&](size_t j) {
    const size_t first = cut[j], last = cut[j + 1];
    if (first >= last) return;
    Local& l = locals.local();
    // Internal nodes: lcp intervals of depth 2..max_piece_length.
    l.stack.assign(1, {0, first});
    for (size_t k = first + 1; k <= last; ++k) {
      size_t lb = k - 1;
      const uint32_t h = k < last ? lcp[k] : 0;
      while (h < l.stack.back().first) {
        auto [depth_here, left] = l.stack.back();
        l.stack.pop_back();
        if (depth_here >= 2 && depth_here <= max_piece_length) {
          offer(l, order[left], depth_here, weight[k] - weight[left]);
        }
        lb = left;
      }
      if (h > l.stack.back().first) l.stack.emplace_back(h, lb);
    }
    // Leaves: a run's whole rest, occurring in one word that is counted at least twice.
    for (size_t k = first; k < last; ++k) {
      const uint32_t len = dist[order[k]];
      const uint64_t w = weight[k + 1] - weight[k];
      if (len >= 2 && len <= max_piece_length && w >= 2 && std::max(lcp[k], lcp[k + 1]) < len) {
        offer(l, order[k], len, w);
      }
    }
  });
  std::vector<Candidate> kept;
  uint64_t candidates = 0;
  for (Local& l : locals) {
    kept.insert(kept.end(), l.kept.begin(), l.kept.end());
    candidates += l.candidates;
  }
  tbb::parallel_sort(kept.begin(), kept.end(), better);
  if (kept.size() > seed_size) kept.resize(seed_size);

  std::vector<ScoredPiece> seeds;
  seeds.reserve(words.chars.size() + kept.size());
  double sum = 0;
  for (size_t c = 0; c < words.chars.size(); ++c) {
    seeds.push_back({{static_cast<uint32_t>(c)}, static_cast<double>(words.char_counts[c])});
    sum += seeds.back().score;
  }
  for (const Candidate& c : kept) {
    ScoredPiece piece;
    piece.symbols.resize(c.len);
    for (uint32_t k = 0; k < c.len; ++k) piece.symbols[k] = text[c.pos + k] - 1;
    piece.score = static_cast<double>(c.score);
    sum += piece.score;
    seeds.push_back(std::move(piece));
  }
  const double log_sum = std::log(sum);
  for (ScoredPiece& p : seeds) p.score = std::log(p.score) - log_sum;
  if (sites != nullptr) {
    // A candidate's text position is in word w's run, which starts at begin[w] + w.
    sites->assign(seeds.size(), PieceSite{});
    tbb::parallel_for(tbb::blocked_range<size_t>(0, kept.size(), 4096), [&](const tbb::blocked_range<size_t>& r) {
      for (size_t i = r.begin(); i != r.end(); ++i) {
        const uint64_t pos = kept[i].pos;
        size_t lo = 0, hi = word_count;  // the last word whose run starts at or before pos
        while (hi - lo > 1) {
          const size_t mid = (lo + hi) / 2;
          if (words.begin[mid] + mid <= pos) {
            lo = mid;
          } else {
            hi = mid;
          }
        }
        (*sites)[words.chars.size() + i] = {static_cast<uint32_t>(lo),
                                            static_cast<uint32_t>(pos - (words.begin[lo] + lo))};
      }
    });
  }
  if (stats != nullptr) {
    stats->positions = m;
    stats->candidates = candidates;
  }
  return seeds;
}

}  // namespace tokenmill::unigram
