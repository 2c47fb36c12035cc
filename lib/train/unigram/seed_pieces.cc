#include "train/unigram/seed_pieces.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace tokenmill::unigram {
namespace {

struct Candidate {
  uint64_t score;
  uint64_t pos;  // in the text
  uint32_t len;
};

}  // namespace

std::vector<ScoredPiece> MakeSeedPieces(const UnigramWords& words, const PieceRules& rules,
                                        size_t seed_size, size_t max_piece_length,
                                        SeedStats* stats) {
  // The text: every word's character ids + 1, each word and each unknown position ending a run
  // (0). weight_of[w] for the run's word.
  const size_t word_count = words.size();
  std::vector<uint32_t> text;
  std::vector<uint32_t> word_at;  // by text position
  text.reserve(words.symbols.size() + word_count + 1);
  word_at.reserve(text.capacity());
  for (size_t w = 0; w < word_count; ++w) {
    for (uint32_t id : words.Word(w)) {
      text.push_back(id == kUnknownSymbol ? 0 : id + 1);
      word_at.push_back(static_cast<uint32_t>(w));
    }
    text.push_back(0);
    word_at.push_back(static_cast<uint32_t>(w));
  }
  const size_t n = text.size();
  // dist[i]: characters from i to the run's end, capped (only compared with small lengths).
  std::vector<uint8_t> dist(n + 1, 0);
  for (size_t i = n; i-- > 0;) {
    dist[i] = text[i] == 0 ? 0 : static_cast<uint8_t>(std::min<unsigned>(dist[i + 1] + 1u, 255u));
  }
  // Suffix array of the run starts, sorted on their first `depth` >= max_piece_length + 1
  // characters by prefix doubling (each round two stable counting sorts).
  std::vector<uint32_t> order;
  for (size_t i = 0; i < n; ++i) {
    if (text[i] != 0) order.push_back(static_cast<uint32_t>(i));
  }
  const size_t m = order.size();
  std::vector<uint32_t> rank(text.begin(), text.end());  // rank 0: a run's end
  uint32_t max_rank = static_cast<uint32_t>(words.chars.size());
  const size_t depth = max_piece_length + 1;
  std::vector<uint32_t> other(m), new_rank(n, 0), hist;
  auto second = [&](uint32_t i, size_t cur) -> uint32_t {
    return dist[i] >= cur ? rank[i + cur] : 0;
  };
  auto counting_sort = [&](const std::vector<uint32_t>& from, std::vector<uint32_t>& to, auto key) {
    hist.assign(size_t{max_rank} + 2, 0);
    for (uint32_t i : from) ++hist[key(i) + 1];
    for (size_t k = 1; k < hist.size(); ++k) hist[k] += hist[k - 1];
    for (uint32_t i : from) to[hist[key(i)]++] = i;
  };
  bool distinct = false;
  // First: by the first character.
  counting_sort(std::vector<uint32_t>(order), order, [&](uint32_t i) { return rank[i]; });
  for (size_t cur = 1; cur < depth && !distinct; cur *= 2) {
    counting_sort(order, other, [&](uint32_t i) { return second(i, cur); });
    counting_sort(other, order, [&](uint32_t i) { return rank[i]; });
    uint32_t r = 0;
    for (size_t k = 0; k < m; ++k) {
      const uint32_t i = order[k];
      if (k == 0 || rank[i] != rank[order[k - 1]] || second(i, cur) != second(order[k - 1], cur)) {
        ++r;
      }
      new_rank[i] = r;
    }
    for (uint32_t i : order) rank[i] = new_rank[i];
    max_rank = r;
    distinct = r == m;
  }
  std::vector<uint32_t>().swap(other);
  std::vector<uint32_t>().swap(new_rank);
  std::vector<uint32_t>().swap(hist);
  std::vector<uint32_t>().swap(rank);
  // lcp[k]: common characters of order[k - 1] and order[k] (at most depth); lcp[0] = lcp[m] = 0.
  std::vector<uint8_t> lcp(m + 1, 0);
  for (size_t k = 1; k < m; ++k) {
    const uint32_t a = order[k - 1], b = order[k];
    size_t l = 0;
    while (l < depth && text[a + l] != 0 && text[a + l] == text[b + l]) ++l;
    lcp[k] = static_cast<uint8_t>(l);
  }
  // Weight prefix sums in suffix-array order.
  std::vector<uint64_t> weight(m + 1, 0);
  for (size_t k = 0; k < m; ++k) weight[k + 1] = weight[k] + words.counts[word_at[order[k]]];
  std::vector<uint32_t>().swap(word_at);

  // Candidates, keeping the best seed_size (score descending, then code points ascending).
  std::vector<uint32_t> buffer(max_piece_length);
  auto valid = [&](uint64_t pos, uint32_t len) {
    for (uint32_t k = 0; k < len; ++k) buffer[k] = text[pos + k] - 1;
    return rules.Valid(buffer.data(), len);
  };
  auto better = [&](const Candidate& a, const Candidate& b) {
    if (a.score != b.score) return a.score > b.score;
    const uint32_t len = std::min(a.len, b.len);
    for (uint32_t k = 0; k < len; ++k) {
      const uint32_t ca = words.chars[text[a.pos + k] - 1], cb = words.chars[text[b.pos + k] - 1];
      if (ca != cb) return ca < cb;
    }
    return a.len < b.len;
  };
  std::vector<Candidate> kept;
  uint64_t candidates = 0;
  auto offer = [&](uint64_t pos, uint32_t len, uint64_t freq) {
    if (!valid(pos, len)) return;
    ++candidates;
    kept.push_back({freq * len, pos, len});
    if (kept.size() >= 2 * seed_size + 1024) {
      std::nth_element(kept.begin(), kept.begin() + static_cast<long>(seed_size), kept.end(), better);
      kept.resize(seed_size);
    }
  };
  // Internal nodes: lcp intervals of depth 2..max_piece_length.
  std::vector<std::pair<uint32_t, size_t>> stack;  // (lcp, left bound)
  stack.emplace_back(0, 0);
  for (size_t k = 1; k <= m; ++k) {
    size_t lb = k - 1;
    const uint32_t h = lcp[k];
    while (h < stack.back().first) {
      auto [depth_here, left] = stack.back();
      stack.pop_back();
      if (depth_here >= 2 && depth_here <= max_piece_length) {
        offer(order[left], depth_here, weight[k] - weight[left]);
      }
      lb = left;
    }
    if (h > stack.back().first) stack.emplace_back(h, lb);
  }
  // Leaves: a run's whole rest, occurring in one word that is counted at least twice.
  for (size_t k = 0; k < m; ++k) {
    const uint32_t len = dist[order[k]];
    const uint64_t w = weight[k + 1] - weight[k];
    if (len >= 2 && len <= max_piece_length && w >= 2 && std::max(lcp[k], lcp[k + 1]) < len) {
      offer(order[k], len, w);
    }
  }
  std::sort(kept.begin(), kept.end(), better);
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
  if (stats != nullptr) {
    stats->positions = m;
    stats->candidates = candidates;
  }
  return seeds;
}

}  // namespace tokenmill::unigram
