#include "train/unigram/piece_lattice.h"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tokenmill::unigram {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// log(exp(a) + exp(b)).
inline double LogAdd(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  const double hi = std::max(a, b), lo = std::min(a, b);
  return hi + std::log1p(std::exp(lo - hi));
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
      if (piece != PieceTrie::kNone) {
        edges.push_back({static_cast<uint32_t>(s), static_cast<uint32_t>(e + 1), piece,
                         set.pieces[piece].score});
        if (e == s) single = true;
      }
    }
    if (!single) {
      edges.push_back({static_cast<uint32_t>(s), static_cast<uint32_t>(s + 1), PieceTrie::kNone,
                       set.unknown_score});
    }
  }
}

struct Scratch {
  std::vector<Edge> edges;
  std::vector<double> alpha, beta;
  std::vector<double> best;
  std::vector<uint32_t> from;  // the best path's last edge into each position (edge index)
};

}  // namespace

PieceTrie::PieceTrie(std::span<const ScoredPiece> pieces, size_t alphabet)
    : root_(alphabet, kNone) {
  piece_.push_back(kNone);  // the root
  has_children_.push_back(true);
  for (size_t p = 0; p < pieces.size(); ++p) {
    uint32_t node = kRoot;
    for (uint32_t id : pieces[p].symbols) {
      uint32_t next = Child(node, id);
      if (next == kNone) {
        next = static_cast<uint32_t>(piece_.size());
        piece_.push_back(kNone);
        has_children_.push_back(false);
        if (node == kRoot) {
          root_[id] = next;
        } else {
          children_.emplace((uint64_t{node} << 32) | id, next);
          has_children_[node] = true;
        }
      }
      node = next;
    }
    piece_[node] = static_cast<uint32_t>(p);
  }
}

PieceSet::PieceSet(std::vector<ScoredPiece> p, size_t alphabet)
    : pieces(std::move(p)), trie(pieces, alphabet) {
  double min_score = std::numeric_limits<double>::infinity();
  for (const ScoredPiece& piece : pieces) min_score = std::min(min_score, piece.score);
  unknown_score = (pieces.empty() ? 0.0 : min_score) - kUnknownPenalty;
}

EStep RunEStep(const UnigramWords& words, const PieceSet& set) {
  struct Local {
    std::vector<int64_t> expected;
    __int128 ll = 0;
    Scratch scratch;
  };
  const size_t pieces = set.pieces.size();
  tbb::enumerable_thread_specific<Local> locals([pieces] {
    Local l;
    l.expected.assign(pieces, 0);
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
      Edges(text, set, s.edges);
      s.alpha.assign(n + 1, kNegInf);
      s.beta.assign(n + 1, kNegInf);
      s.alpha[0] = 0;
      for (const Edge& e : s.edges) s.alpha[e.end] = LogAdd(s.alpha[e.end], s.alpha[e.start] + e.score);
      s.beta[n] = 0;
      for (size_t k = s.edges.size(); k-- > 0;) {
        const Edge& e = s.edges[k];
        s.beta[e.start] = LogAdd(s.beta[e.start], e.score + s.beta[e.end]);
      }
      const double z = s.alpha[n];
      const double count = static_cast<double>(words.counts[w]);
      for (const Edge& e : s.edges) {
        if (e.piece == PieceTrie::kNone) continue;
        const double p = std::exp(s.alpha[e.start] + e.score + s.beta[e.end] - z);
        local.expected[e.piece] += std::llround(count * p * kFixedScale);
      }
      local.ll += static_cast<__int128>(std::llround(count * z * kFixedScale));
    }
  });
  EStep result;
  result.expected.assign(pieces, 0);
  for (const Local& l : locals) {
    for (size_t p = 0; p < pieces; ++p) result.expected[p] += l.expected[p];
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

std::vector<uint64_t> ViterbiCounts(const UnigramWords& words, const PieceSet& set) {
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
  tbb::parallel_for(tbb::blocked_range<size_t>(0, words.size(), 256),
                    [&](const tbb::blocked_range<size_t>& r) {
    Local& local = locals.local();
    for (size_t w = r.begin(); w != r.end(); ++w) {
      std::span<const uint32_t> text = words.Word(w);
      if (text.empty()) continue;
      Edges(text, set, local.scratch.edges);
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

}  // namespace tokenmill::unigram
