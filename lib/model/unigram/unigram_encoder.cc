#include "model/unigram/unigram_encoder.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "common/strings.h"
#include "common/utf8.h"

namespace tokenmill {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr uint32_t kNoNode = UINT32_MAX;

inline double LogAdd(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  const double hi = std::max(a, b), lo = std::min(a, b);
  return hi + std::log1p(std::exp(lo - hi));
}

}  // namespace

absl::StatusOr<std::unique_ptr<UnigramEncoder>> UnigramEncoder::Create(
    const UnigramModel& model, const EncoderOptions& options) {
  std::unique_ptr<UnigramEncoder> e(new UnigramEncoder(model));
  e->alpha_ = options.unigram_alpha;
  e->nbest_ = options.unigram_nbest;
  e->seed_ = options.sample_seed;
  static std::atomic<uint64_t> next_serial{1};
  e->serial_ = next_serial.fetch_add(1, std::memory_order_relaxed);
  // Hugging Face: the unknown edge scores the lowest score of the whole vocabulary minus 10.
  double min_score = std::numeric_limits<double>::infinity();
  for (double s : model.scores) min_score = std::min(min_score, s);
  e->unknown_score_ = (model.scores.empty() ? 0.0 : min_score) - 10.0;
  absl::flat_hash_set<TokenId> skip(model.byte_fallback.begin(), model.byte_fallback.end());
  for (const SpecialToken& s : model.specials) skip.insert(s.id);
  e->root_.assign(256, kNoNode);
  e->token_at_.push_back(kUnknown);
  e->has_children_.push_back(1);
  for (TokenId id = 0; id < model.tokens.size(); ++id) {
    if (skip.contains(id) || model.tokens[id].empty()) continue;
    uint32_t node = 0;
    for (unsigned char b : model.tokens[id]) {
      uint32_t next = kNoNode;
      if (node == 0) {
        next = e->root_[b];
      } else if (auto it = e->children_.find((uint64_t{node} << 8) | b); it != e->children_.end()) {
        next = it->second;
      }
      if (next == kNoNode) {
        next = static_cast<uint32_t>(e->token_at_.size());
        e->token_at_.push_back(kUnknown);
        e->has_children_.push_back(0);
        if (node == 0) {
          e->root_[b] = next;
        } else {
          e->children_.emplace((uint64_t{node} << 8) | b, next);
          e->has_children_[node] = 1;
        }
      }
      node = next;
    }
    e->token_at_[node] = id;
  }
  return e;
}

void UnigramEncoder::Edges(std::string_view piece, std::vector<Edge>& edges) const {
  edges.clear();
  const auto* s = reinterpret_cast<const unsigned char*>(piece.data());
  const size_t n = piece.size();
  for (size_t start = 0; start < n;) {
    const size_t char_len = DecodeCodePoint(s, n, start).len;
    bool single = false;
    uint32_t node = 0;
    for (size_t i = start; i < n; ++i) {
      if (node == 0) {
        node = root_[s[i]];
      } else if (!has_children_[node]) {
        node = kNoNode;
      } else {
        auto it = children_.find((uint64_t{node} << 8) | s[i]);
        node = it == children_.end() ? kNoNode : it->second;
      }
      if (node == kNoNode) break;
      if (const TokenId id = token_at_[node]; id != kUnknown) {
        edges.push_back({static_cast<uint32_t>(start), static_cast<uint32_t>(i + 1), id,
                         model_.scores[id]});
        if (i + 1 - start == char_len) single = true;
      }
    }
    if (!single) {
      edges.push_back({static_cast<uint32_t>(start), static_cast<uint32_t>(start + char_len),
                       kUnknown, unknown_score_});
    }
    start += char_len;
  }
}

void UnigramEncoder::Best(std::string_view piece, const std::vector<Edge>& edges,
                          std::vector<uint32_t>& path) const {
  const size_t n = piece.size();
  thread_local std::vector<double> best;
  thread_local std::vector<uint32_t> from;
  best.assign(n + 1, 0);
  from.assign(n + 1, kNoNode);
  for (uint32_t k = 0; k < edges.size(); ++k) {
    const Edge& e = edges[k];
    const double candidate = best[e.start] + e.score;
    // Hugging Face's rule: the first candidate, or a strictly better one.
    if (from[e.end] == kNoNode || candidate > best[e.end]) {
      best[e.end] = candidate;
      from[e.end] = k;
    }
  }
  path.clear();
  for (size_t at = n; at > 0;) {
    path.push_back(from[at]);
    at = edges[from[at]].start;
  }
  std::reverse(path.begin(), path.end());
}

void UnigramEncoder::Emit(std::string_view piece, const std::vector<Edge>& edges,
                          const std::vector<uint32_t>& path, UnigramPath& out) const {
  for (size_t k = 0; k < path.size();) {
    const Edge& e = edges[path[k]];
    if (e.id != kUnknown) {
      out.ids.push_back(e.id);
      out.starts.push_back(e.start);
      ++k;
      continue;
    }
    // A run of unknown edges, fused (Hugging Face's fuse_unk).
    size_t end = k;
    while (end < path.size() && edges[path[end]].id == kUnknown) ++end;
    const size_t from = e.start, to = edges[path[end - 1]].end;
    if (!model_.byte_fallback.empty()) {
      for (size_t b = from; b < to; ++b) {
        out.ids.push_back(model_.byte_fallback[static_cast<unsigned char>(piece[b])]);
        out.starts.push_back(b);
      }
    } else if (model_.unk_id != kNoUnknownToken) {
      out.ids.push_back(model_.unk_id);
      out.starts.push_back(from);
    }
    k = end;
  }
}

void UnigramEncoder::EncodePiece(std::string_view piece, std::vector<TokenId>& out) const {
  if (alpha_ > 0) {
    // Keyed by the encoder's serial, not its address: an encoder created where a destroyed
    // one was must start from its own seed, not continue the other's draws. (A thread that
    // alternates between two sampling encoders still restarts each one's draws at each switch.)
    thread_local uint64_t owner = 0;
    thread_local std::mt19937_64 rng;
    if (owner != serial_) {
      owner = serial_;
      rng.seed(seed_);
    }
    UnigramPath path = Sample(piece, alpha_, nbest_, rng);
    out.insert(out.end(), path.ids.begin(), path.ids.end());
    return;
  }
  thread_local std::vector<Edge> edges;
  thread_local std::vector<uint32_t> path;
  Edges(piece, edges);
  Best(piece, edges, path);
  const auto* s = reinterpret_cast<const unsigned char*>(piece.data());
  for (size_t k = 0; k < path.size();) {
    const Edge& e = edges[path[k]];
    if (e.id != kUnknown) {
      out.push_back(e.id);
      ++k;
      continue;
    }
    size_t end = k;
    while (end < path.size() && edges[path[end]].id == kUnknown) ++end;
    if (!model_.byte_fallback.empty()) {
      for (size_t b = e.start; b < edges[path[end - 1]].end; ++b) out.push_back(model_.byte_fallback[s[b]]);
    } else if (model_.unk_id != kNoUnknownToken) {
      out.push_back(model_.unk_id);
    }
    k = end;
  }
}

void UnigramEncoder::EncodeText(std::string_view text, const PreTokenizer& pretokenizer,
                                std::vector<TokenId>& out) const {
  pretokenizer.Split(text, [&](std::string_view piece) { EncodePiece(piece, out); });
}

std::vector<UnigramPath> UnigramEncoder::NBest(std::string_view piece, size_t n) const {
  std::vector<Edge> edges;
  Edges(piece, edges);
  const size_t len = piece.size();
  // At each byte position, up to n (score, edge, rank of the path at the edge's start), best
  // first; of equal scores the one found first (Viterbi's tie rule).
  struct Entry {
    double score;
    uint32_t edge, rank;
  };
  std::vector<std::vector<Entry>> at(len + 1);
  at[0].push_back({0, kNoNode, 0});
  for (uint32_t k = 0; k < edges.size(); ++k) {
    const Edge& e = edges[k];
    for (uint32_t r = 0; r < at[e.start].size(); ++r) {
      const Entry candidate{at[e.start][r].score + e.score, k, r};
      std::vector<Entry>& list = at[e.end];
      auto pos = std::find_if(list.begin(), list.end(),
                              [&](const Entry& x) { return candidate.score > x.score; });
      if (static_cast<size_t>(pos - list.begin()) >= n) continue;
      list.insert(pos, candidate);
      if (list.size() > n) list.pop_back();
    }
  }
  std::vector<UnigramPath> paths;
  for (uint32_t r = 0; r < at[len].size(); ++r) {
    std::vector<uint32_t> path;
    size_t pos = len;
    uint32_t rank = r;
    while (pos > 0) {
      const Entry& entry = at[pos][rank];
      path.push_back(entry.edge);
      pos = edges[entry.edge].start;
      rank = entry.rank;
    }
    std::reverse(path.begin(), path.end());
    UnigramPath out;
    out.score = at[len][r].score;
    Emit(piece, edges, path, out);
    paths.push_back(std::move(out));
  }
  return paths;
}

UnigramPath UnigramEncoder::Sample(std::string_view piece, double alpha, int nbest,
                                   std::mt19937_64& rng) const {
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  if (nbest > 0) {
    std::vector<UnigramPath> paths = NBest(piece, static_cast<size_t>(nbest));
    std::vector<double> weights;
    const double top = paths.front().score;
    for (const UnigramPath& p : paths) weights.push_back(std::exp(alpha * (p.score - top)));
    std::discrete_distribution<size_t> pick(weights.begin(), weights.end());
    return std::move(paths[pick(rng)]);
  }
  std::vector<Edge> edges;
  Edges(piece, edges);
  const size_t len = piece.size();
  std::vector<double> forward(len + 1, kNegInf);
  forward[0] = 0;
  for (const Edge& e : edges) forward[e.end] = LogAdd(forward[e.end], forward[e.start] + alpha * e.score);
  // Backward: at each position, draw the edge ending there among those reached.
  std::vector<std::vector<uint32_t>> into(len + 1);
  for (uint32_t k = 0; k < edges.size(); ++k) into[edges[k].end].push_back(k);
  std::vector<uint32_t> path;
  for (size_t pos = len; pos > 0;) {
    double u = uniform(rng);
    uint32_t chosen = into[pos].back();
    for (uint32_t k : into[pos]) {
      const Edge& e = edges[k];
      if (forward[e.start] == kNegInf) continue;
      u -= std::exp(forward[e.start] + alpha * e.score - forward[pos]);
      if (u <= 0) {
        chosen = k;
        break;
      }
    }
    path.push_back(chosen);
    pos = edges[chosen].start;
  }
  std::reverse(path.begin(), path.end());
  UnigramPath out;
  // Added left to right, as NBest adds them: the same path has the same score.
  for (uint32_t k : path) out.score += edges[k].score;
  Emit(piece, edges, path, out);
  return out;
}

absl::Status UnigramEncoder::CheckEncodable(std::string_view text, size_t offset) const {
  if (!may_refuse()) return absl::OkStatus();
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  for (size_t i = 0; i < text.size();) {
    const size_t len = DecodeCodePoint(s, text.size(), i).len;
    uint32_t node = root_[s[i]];
    for (size_t k = 1; k < len && node != kNoNode; ++k) {
      auto it = children_.find((uint64_t{node} << 8) | s[i + k]);
      node = it == children_.end() ? kNoNode : it->second;
    }
    if (node == kNoNode || token_at_[node] == kUnknown) {
      return absl::InvalidArgumentError(
          StrCat("the character '", text.substr(i, len), "' at byte ", offset + i,
                 " has no token, and the vocabulary has neither an unknown token nor byte "
                 "fallback"));
    }
    i += len;
  }
  return absl::OkStatus();
}

void UnigramEncoder::ExplainPiece(ExplainedPiece& out) const {
  std::vector<UnigramPath> paths = NBest(out.text, 2);
  out.ids = paths[0].ids;
  out.piece_starts = paths[0].starts;
  out.path_score = paths[0].score;
  out.whole_token = out.ids.size() == 1;
  if (paths.size() > 1) {
    out.has_runner_up = true;
    out.runner_up = paths[1].ids;
    out.runner_up_starts = paths[1].starts;
    out.runner_up_score = paths[1].score;
  }
}

}  // namespace tokenmill
