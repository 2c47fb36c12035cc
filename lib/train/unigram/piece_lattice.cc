#include "train/unigram/piece_lattice.h"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace tokenmill::unigram {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// std::llround for x >= 0 (an expected count in fixed point), without the library call: the
// fractional part x - trunc(x) is exact below 2^52 (and 0 above), so halves round up, away
// from zero, exactly as llround rounds them.
inline int64_t RoundNonNegative(double x) {
  const int64_t whole = static_cast<int64_t>(x);
  return whole + (x - static_cast<double>(whole) >= 0.5 ? 1 : 0);
}

struct Edge {
  uint32_t start, end;
  uint32_t piece;  // PieceTrie::kNone: unknown
  double score;
};

// The lattice's edges of `text`, grouped by start ascending, each start's by end ascending,
// an unknown edge last when no one-character piece starts there.
void Edges(std::span<const uint32_t> text, const PieceSet& set, std::vector<Edge>& edges) {
  edges.clear();
  const size_t n = text.size();
  for (size_t s = 0; s < n; ++s) {
    bool single = false;
    uint32_t node = PieceTrie::kRoot;
    for (size_t e = s; e < n; ++e) {
      if (text[e] == kUnknownSymbol) break;
      node = set.trie.Child(node, text[e]);
      if (node == PieceTrie::kNone) break;
      const uint32_t piece = set.trie.Piece(node);
      if (piece != PieceTrie::kNone && set.alive[piece]) {
        edges.push_back({static_cast<uint32_t>(s), static_cast<uint32_t>(e + 1), piece,
                         set.score[piece]});
        if (e == s) single = true;
      }
    }
    if (!single) {
      edges.push_back({static_cast<uint32_t>(s), static_cast<uint32_t>(s + 1), PieceTrie::kNone,
                       set.unknown_score});
    }
  }
}

// The same from a word's cached occurrences.
void Edges(std::span<const Lattices::Occurrence> cached, size_t n, const PieceSet& set,
           std::vector<Edge>& edges) {
  edges.clear();
  size_t k = 0;
  for (size_t s = 0; s < n; ++s) {
    bool single = false;
    for (; k < cached.size() && cached[k].start == s; ++k) {
      const Lattices::Occurrence& o = cached[k];
      if (!set.alive[o.piece]) continue;
      edges.push_back({static_cast<uint32_t>(s), static_cast<uint32_t>(s + o.length), o.piece,
                       set.score[o.piece]});
      if (o.length == 1) single = true;
    }
    if (!single) {
      edges.push_back({static_cast<uint32_t>(s), static_cast<uint32_t>(s + 1), PieceTrie::kNone,
                       set.unknown_score});
    }
  }
}

// Word w's edges, cached or not.
void WordEdges(const UnigramWords& words, size_t w, const PieceSet& set, const Lattices& lattices,
               std::vector<Edge>& edges) {
  if (lattices.cached()) {
    Edges(lattices.Of(w), words.Word(w).size(), set, edges);
  } else {
    Edges(words.Word(w), set, edges);
  }
}

struct Scratch {
  std::vector<Edge> edges;
  std::vector<double> alpha, beta, sum;
  std::vector<uint32_t> at;        // the E-step's first occurrence at each start
  std::vector<uint8_t> no_single;  // the E-step's: no living one-character piece starts here
  // Room for a word of n characters in alpha, beta, at and no_single (their contents left).
  void Size(size_t n) {
    if (alpha.size() < n + 1) {
      alpha.resize(n + 1);
      beta.resize(n + 1);
      at.resize(n + 1);
      no_single.resize(n + 1);
    }
  }
  std::vector<double> best;
  std::vector<uint32_t> from;  // the best path's last edge into each position (edge index)
  std::vector<uint32_t> piece;  // ViterbiCounts' cached path: that edge's piece
};

}  // namespace

PieceTrie::PieceTrie(std::span<const ScoredPiece> pieces, size_t alphabet)
    : root_(alphabet, kNone) {
  // The pieces in order of their characters (equal ones by index, so that the last of equal
  // pieces ends up at its node, as inserting them in index order would leave it): each shares
  // with the one before it the nodes of their common prefix, and its other nodes are new. A
  // node's children are then made in character order, so a stable grouping of the links by
  // parent lays out the sorted runs. (This replaced inserting through a hash map of
  // (node, character) -> child, whose 30 MB took 35 ms of brown's training, serially.)
  std::vector<uint32_t> order(pieces.size());
  {
    // Sorted on a key of the first four characters (ids + 1 in 16 bits each, 0 past the end,
    // so a prefix comes first), which settles most comparisons without reading the pieces'
    // own arrays; equal keys compare the rest. (An alphabet of 65535 characters or more: 0.)
    constexpr size_t kKeyed = 4;
    const bool packed = alphabet < 0xFFFF;
    struct Keyed {
      uint64_t key;
      uint32_t index;
    };
    std::vector<Keyed> keyed(pieces.size());
    tbb::parallel_for(tbb::blocked_range<size_t>(0, pieces.size(), 4096),
                      [&](const tbb::blocked_range<size_t>& r) {
      for (size_t p = r.begin(); p != r.end(); ++p) {
        const std::vector<uint32_t>& symbols = pieces[p].symbols;
        uint64_t key = 0;
        for (size_t k = 0; k < kKeyed; ++k) {
          key = key << 16 | (packed && k < symbols.size() ? symbols[k] + 1 : 0);
        }
        keyed[p] = {key, static_cast<uint32_t>(p)};
      }
    });
    tbb::parallel_sort(keyed.begin(), keyed.end(), [&](const Keyed& a, const Keyed& b) {
      if (a.key != b.key) return a.key < b.key;
      const std::vector<uint32_t>& x = pieces[a.index].symbols;
      const std::vector<uint32_t>& y = pieces[b.index].symbols;
      const size_t skip = packed ? std::min({kKeyed, x.size(), y.size()}) : 0;
      if (std::equal(x.begin() + skip, x.end(), y.begin() + skip, y.end())) return a.index < b.index;
      return std::lexicographical_compare(x.begin() + skip, x.end(), y.begin() + skip, y.end());
    });
    for (size_t k = 0; k < keyed.size(); ++k) order[k] = keyed[k].index;
  }
  // The pieces' characters gathered in that order (in parallel: each piece's own array is
  // somewhere else in memory), for the serial walk below to read in a row.
  std::vector<size_t> begin(order.size() + 1, 0);
  for (size_t k = 0; k < order.size(); ++k) begin[k + 1] = begin[k] + pieces[order[k]].symbols.size();
  std::vector<uint32_t> flat(begin.back());
  tbb::parallel_for(tbb::blocked_range<size_t>(0, order.size(), 4096),
                    [&](const tbb::blocked_range<size_t>& r) {
    for (size_t k = r.begin(); k != r.end(); ++k) {
      const std::vector<uint32_t>& symbols = pieces[order[k]].symbols;
      std::copy(symbols.begin(), symbols.end(), flat.begin() + static_cast<long>(begin[k]));
    }
  });
  std::vector<uint32_t> piece{kNone};  // by node; the root's first
  struct NewLink {
    uint32_t parent, id, child;
  };
  std::vector<NewLink> made;  // links from nodes other than the root, in the order made
  std::vector<uint32_t> path;  // path[d]: the node after the previous piece's first d + 1 characters
  for (size_t k = 0; k < order.size(); ++k) {
    const std::span<const uint32_t> symbols(flat.data() + begin[k], begin[k + 1] - begin[k]);
    size_t common = 0;
    if (k > 0) {
      const std::span<const uint32_t> previous(flat.data() + begin[k - 1], begin[k] - begin[k - 1]);
      while (common < symbols.size() && common < previous.size() && symbols[common] == previous[common]) {
        ++common;
      }
    }
    path.resize(common);
    for (size_t d = common; d < symbols.size(); ++d) {
      const uint32_t node = static_cast<uint32_t>(piece.size());
      piece.push_back(kNone);
      if (d == 0) {
        root_[symbols[0]] = node;
      } else {
        made.push_back({path[d - 1], symbols[d], node});
      }
      path.push_back(node);
    }
    piece[symbols.empty() ? kRoot : path.back()] = order[k];
  }
  // Records in node order; a node's children were made in character order.
  std::vector<uint32_t> children(piece.size(), 0);
  for (const NewLink& l : made) ++children[l.parent];
  nodes_.resize(piece.size());
  size_t size = 0;
  for (size_t k = 0; k < piece.size(); ++k) {
    nodes_[k] = static_cast<uint32_t>(size);
    size += 2 + 2 * size_t{children[k]};
  }
  if (size >= kNone) {
    // (The trainer refuses piece sets whose characters could reach this: 4 x (characters + 1)
    // bounds the records' size.)
    throw std::length_error("PieceTrie: too many nodes");
  }
  records_.assign(size, 0);
  for (size_t k = 0; k < piece.size(); ++k) {
    records_[nodes_[k]] = piece[k];
    records_[nodes_[k] + 1] = children[k];
  }
  std::vector<uint32_t> filled(piece.size(), 0);
  for (const NewLink& l : made) {
    const size_t at = nodes_[l.parent];
    const uint32_t k = filled[l.parent]++;
    records_[at + 2 + k] = l.id;
    records_[at + 2 + children[l.parent] + k] = nodes_[l.child];
  }
  for (uint32_t& node : root_) {
    if (node != kNone) node = nodes_[node];
  }
}

void PieceTrie::Remap(std::span<const uint32_t> new_index) {
  tbb::parallel_for(tbb::blocked_range<size_t>(0, nodes_.size(), 1 << 16),
                    [&](const tbb::blocked_range<size_t>& r) {
    for (size_t k = r.begin(); k != r.end(); ++k) {
      uint32_t& p = records_[nodes_[k]];
      if (p != kNone) p = new_index[p];
    }
  });
}

PieceSet::PieceSet(std::vector<ScoredPiece> p, size_t alphabet)
    : pieces(std::move(p)), alive(pieces.size(), 1), trie(pieces, alphabet) {
  Refresh();
}

PieceSet::PieceSet(std::vector<ScoredPiece> p, PieceTrie t)
    : pieces(std::move(p)), alive(pieces.size(), 1), trie(std::move(t)) {
  Refresh();
}

void PieceSet::Refresh() {
  double min_score = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (alive[i]) min_score = std::min(min_score, pieces[i].score);
  }
  unknown_score = (alive_count() == 0 ? 0.0 : min_score) - kUnknownPenalty;
  probability.assign(pieces.size(), 0.0);
  score.resize(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    score[i] = pieces[i].score;
    if (alive[i]) probability[i] = std::exp(pieces[i].score);
  }
  unknown_probability = std::exp(unknown_score);
  min_edge_score = unknown_score;
}

std::vector<ScoredPiece> PieceSet::Alive() const {
  std::vector<ScoredPiece> out;
  out.reserve(alive_count());
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (alive[i]) out.push_back(pieces[i]);
  }
  return out;
}

size_t PieceSet::alive_count() const {
  return static_cast<size_t>(std::count(alive.begin(), alive.end(), 1));
}

template <typename FillText>
void Lattices::Fill(size_t n, uint64_t max_edges, FillText fill_text) {
  chunks_.resize((n + kChunkWords - 1) / kChunkWords);
  std::atomic<uint64_t> total{0};
  std::atomic<bool> too_big{false};
  // Each chunk's occurrences gathered in a per-thread buffer, then copied at their exact size:
  // growing each chunk's own vector touched about twice the memory, and fresh memory is dear
  // (the kernel zeroes it).
  tbb::enumerable_thread_specific<std::vector<Occurrence>> buffers;
  tbb::parallel_for(size_t{0}, chunks_.size(), [&](size_t c) {
    if (too_big.load(std::memory_order_relaxed)) return;
    Chunk& chunk = chunks_[c];
    std::vector<Occurrence>& edges = buffers.local();
    edges.clear();
    const size_t first = c * kChunkWords, last = std::min(n, first + kChunkWords);
    chunk.begin.reserve(last - first + 1);
    chunk.begin.push_back(0);
    for (size_t r = first; r < last; ++r) {
      if (!fill_text(r, edges)) {
        too_big = true;
        return;
      }
      chunk.begin.push_back(static_cast<uint32_t>(edges.size()));
    }
    chunk.edges.assign(edges.begin(), edges.end());
    if (total.fetch_add(chunk.edges.size()) + chunk.edges.size() > max_edges) too_big = true;
  });
  cached_ = !too_big;
  if (!cached_) std::vector<Chunk>().swap(chunks_);
}

Lattices::Lattices(const UnigramWords& words, const PieceSet& set, uint64_t max_edges) {
  Fill(words.size(), max_edges, [&](size_t w, std::vector<Occurrence>& edges) {
    std::span<const uint32_t> text = words.Word(w);
    if (text.size() > UINT16_MAX) return false;
    for (size_t s = 0; s < text.size(); ++s) {
      uint32_t node = PieceTrie::kRoot;
      for (size_t e = s; e < text.size() && e - s < UINT16_MAX; ++e) {
        if (text[e] == kUnknownSymbol) break;
        node = set.trie.Child(node, text[e]);
        if (node == PieceTrie::kNone) break;
        const uint32_t piece = set.trie.Piece(node);
        if (piece != PieceTrie::kNone && set.alive[piece]) {
          edges.push_back({piece, static_cast<uint16_t>(s), static_cast<uint16_t>(e + 1 - s)});
        }
      }
    }
    return true;
  });
}

Lattices::Lattices(const UnigramWords& texts, const Lattices& source,
                   std::span<const PieceSite> sites, const PieceSet& set, uint64_t max_edges) {
  Fill(texts.size(), max_edges, [&](size_t r, std::vector<Occurrence>& edges) {
    const size_t from = sites[r].start, to = from + texts.Word(r).size();
    if (texts.Word(r).size() > UINT16_MAX) return false;
    const std::span<const Occurrence> occ = source.Of(sites[r].word);
    auto o = std::lower_bound(occ.begin(), occ.end(), from,
                              [](const Occurrence& x, size_t start) { return x.start < start; });
    for (; o != occ.end() && o->start < to; ++o) {
      if (o->start + size_t{o->length} <= to && set.alive[o->piece]) {
        edges.push_back({o->piece, static_cast<uint16_t>(o->start - from), o->length});
      }
    }
    return true;
  });
}

void Lattices::Remap(std::span<const uint32_t> new_index) {
  if (!cached_) return;
  tbb::parallel_for(size_t{0}, chunks_.size(), [&](size_t c) {
    Chunk& chunk = chunks_[c];
    size_t out = 0, from = 0;
    for (size_t k = 0; k + 1 < chunk.begin.size(); ++k) {
      const size_t to = chunk.begin[k + 1];
      chunk.begin[k] = static_cast<uint32_t>(out);
      for (; from < to; ++from) {
        Occurrence o = chunk.edges[from];
        o.piece = new_index[o.piece];
        if (o.piece != PieceTrie::kNone) chunk.edges[out++] = o;
      }
    }
    chunk.begin.back() = static_cast<uint32_t>(out);
    chunk.edges.resize(out);  // (not shrunk: a copy per round, and the first round's size is the peak)
  });
}

EStep RunEStep(const UnigramWords& words, const PieceSet& set, const Lattices& lattices) {
  // A piece's probability beside this thread's expected count of it: one cache line where
  // an occurrence of a rare piece reads one and adds to the other (two lines, each missed,
  // when they were apart).
  struct Slot {
    double probability;
    int64_t expected;
  };
  struct Local {
    std::vector<Slot> slots;
    __int128 ll = 0;
    Scratch scratch;
  };
  const size_t pieces = set.pieces.size();
  tbb::enumerable_thread_specific<Local> locals([&set, pieces] {
    Local l;
    l.slots.resize(pieces);
    for (size_t p = 0; p < pieces; ++p) l.slots[p] = {set.probability[p], 0};
    return l;
  });
  tbb::parallel_for(tbb::blocked_range<size_t>(0, words.size(), 256),
                    [&](const tbb::blocked_range<size_t>& r) {
    Local& local = locals.local();
    Scratch& s = local.scratch;
    for (size_t w = r.begin(); w != r.end(); ++w) {
      std::span<const uint32_t> text = words.Word(w);
      const size_t n = text.size();
      if (n == 0) continue;
      const double count = static_cast<double>(words.counts[w]);
      // Probabilities when no path's product can underflow (n * the lowest edge score above
      // -kLinearLimit), and for a longer word when its total probability alpha[n] turns out at
      // least exp(-kLinearLimit): every term that moves an expected count (at least 2^-24 of it
      // over the word's count) is then a normal double, and the terms that underflowed are
      // below 1e-300 of the total. Otherwise (rarely: a long word of improbable pieces) logs.
      const bool surely_linear = static_cast<double>(n) * -set.min_edge_score < kLinearLimit;
      auto trusted = [&](double total) {
        return surely_linear || (total >= kLowestLinearTotal && std::isfinite(total));
      };
      if (lattices.cached()) {
        // Probabilities straight from the cached occurrences (no edge list built), in the edge
        // list's order of sums: by start, each start's by length, its unknown edge last
        // forwards and first backwards. A dead piece's probability is 0, so its occurrence
        // adds +0.0 to a sum (which leaves it exactly as it was) and 0 to its expected count:
        // no branch on `alive` but for the one-character piece that decides the unknown edge.
        // at[start]: the first occurrence at `start`; no_single[start]: 1 when no living
        // one-character piece starts there (the unknown edge does).
        const std::span<const Lattices::Occurrence> occ = lattices.Of(w);
        const Lattices::Occurrence* const o = occ.data();
        Slot* const slots = local.slots.data();
        const uint8_t* const alive = set.alive.data();
        const double unknown = set.unknown_probability;
        s.Size(n);
        double* const alpha = s.alpha.data();
        double* const beta = s.beta.data();
        uint32_t* const at = s.at.data();
        uint8_t* const no_single = s.no_single.data();
        std::fill_n(alpha, n + 1, 0.0);
        alpha[0] = 1;
        const size_t size = occ.size();
        size_t k = 0;
        for (size_t start = 0; start < n; ++start) {
          at[start] = static_cast<uint32_t>(k);
          const double a = alpha[start];
          const bool single =
              k < size && o[k].start == start && o[k].length == 1 && alive[o[k].piece] != 0;
          no_single[start] = !single;
          for (; k < size && o[k].start == start; ++k) {
            alpha[start + o[k].length] += a * slots[o[k].piece].probability;
          }
          if (!single) alpha[start + 1] += a * unknown;
        }
        at[n] = static_cast<uint32_t>(size);
        if (trusted(alpha[n])) {
          // The expected counts in the same pass: an occurrence's end is past its start, so
          // its beta is final when its start's turn comes.
          const double scale = count / alpha[n] * kFixedScale;
          beta[n] = 1;
          for (size_t start = n; start-- > 0;) {
            double b = 0;
            if (no_single[start]) b += unknown * beta[start + 1];
            const double a = alpha[start];
            for (size_t j = at[start + 1]; j-- > at[start];) {
              Slot& slot = slots[o[j].piece];
              const double after = beta[start + o[j].length];
              b += slot.probability * after;
              slot.expected += RoundNonNegative(a * slot.probability * after * scale);
            }
            beta[start] = b;
          }
          local.ll += static_cast<__int128>(std::round(count * std::log(alpha[n]) * kFixedScale));
          continue;
        }
      }
      WordEdges(words, w, set, lattices, s.edges);
      if (!lattices.cached()) {
        // Probabilities, as above.
        s.alpha.assign(n + 1, 0.0);
        s.alpha[0] = 1;
        auto prob = [&](const Edge& e) {
          return e.piece == PieceTrie::kNone ? set.unknown_probability : set.probability[e.piece];
        };
        for (const Edge& e : s.edges) s.alpha[e.end] += s.alpha[e.start] * prob(e);
        if (trusted(s.alpha[n])) {
          s.beta.assign(n + 1, 0.0);
          s.beta[n] = 1;
          for (size_t k = s.edges.size(); k-- > 0;) {
            const Edge& e = s.edges[k];
            s.beta[e.start] += prob(e) * s.beta[e.end];
          }
          const double scale = count / s.alpha[n] * kFixedScale;
          for (const Edge& e : s.edges) {
            if (e.piece == PieceTrie::kNone) continue;
            local.slots[e.piece].expected +=
                RoundNonNegative(s.alpha[e.start] * set.probability[e.piece] * s.beta[e.end] * scale);
          }
          local.ll += static_cast<__int128>(std::round(count * std::log(s.alpha[n]) * kFixedScale));
          continue;
        }
      }
      // Logs, each position's sum kept as (largest term, sum of exp(term - largest)) while its
      // terms come in: one exp per edge and one log per position (a log-add's log1p per edge cost
      // about as much again).
      s.alpha.assign(n + 1, kNegInf);
      s.beta.assign(n + 1, kNegInf);
      s.sum.assign(n + 1, 0.0);
      auto add = [](double x, double& top, double& sum) {
        if (x <= top) {
          sum += std::exp(x - top);
        } else {
          sum = sum * std::exp(top - x) + 1.0;  // exp(-inf) = 0 for the first term
          top = x;
        }
      };
      s.alpha[0] = 0;
      s.sum[0] = 1;
      size_t done = 0;  // positions whose alpha is final (as a log)
      for (const Edge& e : s.edges) {
        for (; done <= e.start; ++done) {
          if (done > 0) s.alpha[done] += std::log(s.sum[done]);
        }
        add(s.alpha[e.start] + e.score, s.alpha[e.end], s.sum[e.end]);
      }
      s.alpha[n] += std::log(s.sum[n]);
      s.beta[n] = 0;
      s.sum.assign(n + 1, 0.0);
      for (size_t k = s.edges.size(); k-- > 0;) {
        const Edge& e = s.edges[k];
        add(e.score + s.beta[e.end], s.beta[e.start], s.sum[e.start]);
        if (k == 0 || s.edges[k - 1].start != e.start) s.beta[e.start] += std::log(s.sum[e.start]);
      }
      const double z = s.alpha[n];
      for (const Edge& e : s.edges) {
        if (e.piece == PieceTrie::kNone) continue;
        const double p = std::exp(s.alpha[e.start] + e.score + s.beta[e.end] - z);
        local.slots[e.piece].expected += RoundNonNegative(count * p * kFixedScale);
      }
      local.ll += static_cast<__int128>(std::round(count * z * kFixedScale));
    }
  });
  EStep result;
  result.expected.assign(pieces, 0);
  for (const Local& l : locals) {
    for (size_t p = 0; p < pieces; ++p) result.expected[p] += l.slots[p].expected;
    result.log_likelihood += l.ll;
  }
  return result;
}

namespace {

// The Viterbi path over s.edges of a text of n characters, appended to `path` (edge indices
// into s.edges, in order); false when there is none.
bool BestPath(size_t n, Scratch& s, std::vector<uint32_t>& path) {
  s.best.assign(n + 1, kNegInf);
  s.from.assign(n + 1, PieceTrie::kNone);
  s.best[0] = 0;
  auto reached = [&](size_t at) { return at == 0 || s.from[at] != PieceTrie::kNone; };
  for (size_t k = 0; k < s.edges.size(); ++k) {
    const Edge& e = s.edges[k];
    if (!reached(e.start)) continue;
    const double candidate = s.best[e.start] + e.score;
    if (!reached(e.end) || candidate > s.best[e.end]) {
      s.best[e.end] = candidate;
      s.from[e.end] = static_cast<uint32_t>(k);
    }
  }
  if (!reached(n)) return false;
  const size_t first = path.size();
  for (size_t at = n; at > 0;) {
    const uint32_t k = s.from[at];
    path.push_back(k);
    at = s.edges[k].start;
  }
  std::reverse(path.begin() + static_cast<long>(first), path.end());
  return true;
}

}  // namespace

std::vector<uint64_t> ViterbiCounts(const UnigramWords& words, const PieceSet& set,
                                    const Lattices& lattices) {
  struct Local {
    std::vector<uint64_t> freq;
    Scratch scratch;
    std::vector<uint32_t> path;
  };
  const size_t pieces = set.pieces.size();
  tbb::enumerable_thread_specific<Local> locals([pieces] {
    Local l;
    l.freq.assign(pieces, 0);
    return l;
  });
  // The living pieces' scores, -inf for the dead (the cached path's relaxation skips them so).
  std::vector<double> score(pieces);
  for (size_t i = 0; i < pieces; ++i) score[i] = set.alive[i] ? set.score[i] : kNegInf;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, words.size(), 256),
                    [&](const tbb::blocked_range<size_t>& r) {
    Local& local = locals.local();
    Scratch& s = local.scratch;
    for (size_t w = r.begin(); w != r.end(); ++w) {
      std::span<const uint32_t> text = words.Word(w);
      if (text.empty()) continue;
      if (lattices.cached()) {
        // BestPath over the edges Edges() would list, straight from the cached occurrences
        // (the same order: by start, each start's by length, its unknown edge last; the same
        // rule: the first of equal scores into a position wins). Every position is reached
        // (a one-character piece or the unknown edge leaves each), so "reached" is "best
        // above -inf", and a dead piece's score is -inf (`score`), which never wins. s.from
        // holds the start of the best edge into each position, s.piece its piece.
        const size_t n = text.size();
        const std::span<const Lattices::Occurrence> occ = lattices.Of(w);
        const Lattices::Occurrence* const o = occ.data();
        const size_t size = occ.size();
        s.best.resize(std::max(s.best.size(), n + 1));
        s.from.resize(std::max(s.from.size(), n + 1));
        s.piece.resize(std::max(s.piece.size(), n + 1));
        double* const best = s.best.data();
        uint32_t* const from = s.from.data();
        uint32_t* const piece = s.piece.data();
        std::fill_n(best, n + 1, kNegInf);
        best[0] = 0;
        size_t k = 0;
        for (size_t start = 0; start < n; ++start) {
          const double b = best[start];
          const bool single =
              k < size && o[k].start == start && o[k].length == 1 && set.alive[o[k].piece] != 0;
          // Selects, not branches: which edge wins is data, and a mispredicted branch per
          // edge cost more than the stores.
          auto relax = [&](size_t end, uint32_t p, double candidate) {
            const bool better = candidate > best[end];
            best[end] = better ? candidate : best[end];
            from[end] = better ? static_cast<uint32_t>(start) : from[end];
            piece[end] = better ? p : piece[end];
          };
          for (; k < size && o[k].start == start; ++k) {
            relax(start + o[k].length, o[k].piece, b + score[o[k].piece]);
          }
          if (!single) relax(start + 1, PieceTrie::kNone, b + set.unknown_score);
        }
        if (best[n] == kNegInf) continue;  // (cannot happen: every position is reached)
        for (size_t at = n; at > 0; at = from[at]) {
          if (piece[at] != PieceTrie::kNone) local.freq[piece[at]] += words.counts[w];
        }
        continue;
      }
      WordEdges(words, w, set, lattices, local.scratch.edges);
      local.path.clear();
      BestPath(text.size(), local.scratch, local.path);
      for (uint32_t k : local.path) {
        const uint32_t piece = local.scratch.edges[k].piece;
        if (piece != PieceTrie::kNone) local.freq[piece] += words.counts[w];
      }
    }
  });
  std::vector<uint64_t> freq(pieces, 0);
  for (const Local& l : locals) {
    for (size_t p = 0; p < pieces; ++p) freq[p] += l.freq[p];
  }
  return freq;
}

std::vector<uint32_t> Viterbi(std::span<const uint32_t> text, const PieceSet& set, bool skip_whole) {
  Scratch s;
  Edges(text, set, s.edges);
  if (skip_whole) {
    std::erase_if(s.edges, [&](const Edge& e) {
      return e.piece == PieceTrie::kNone || (e.start == 0 && e.end == text.size());
    });
  }
  std::vector<uint32_t> path;
  if (!BestPath(text.size(), s, path)) return {};
  std::vector<uint32_t> pieces;
  for (uint32_t k : path) pieces.push_back(s.edges[k].piece);
  return pieces;
}

namespace {

// SegmentPiece once s.edges holds the lattice of the piece's n characters.
PieceSegmentations SegmentEdges(size_t n, Scratch& s, std::vector<uint32_t>& path) {
  PieceSegmentations out;
  path.clear();
  BestPath(n, s, path);
  for (uint32_t k : path) out.best.push_back(s.edges[k].piece);
  if (out.best.size() != 1) return out;
  std::erase_if(s.edges, [&](const Edge& e) {
    return e.piece == PieceTrie::kNone || (e.start == 0 && e.end == n);
  });
  path.clear();
  if (BestPath(n, s, path)) {
    for (uint32_t k : path) out.alternative.push_back(s.edges[k].piece);
  }
  return out;
}

}  // namespace

PieceSegmentations SegmentPiece(std::span<const uint32_t> text, const PieceSet& set) {
  thread_local Scratch s;
  thread_local std::vector<uint32_t> path;
  Edges(text, set, s.edges);
  return SegmentEdges(text.size(), s, path);
}

PieceSegmentations SegmentPiece(std::span<const Lattices::Occurrence> occurrences, size_t n,
                                const PieceSet& set) {
  thread_local Scratch s;
  thread_local std::vector<uint32_t> path;
  Edges(occurrences, n, set, s.edges);
  return SegmentEdges(n, s, path);
}

}  // namespace tokenmill::unigram
