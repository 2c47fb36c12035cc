#include "reference/reference_unigram.h"

#include <unicode/uscript.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <set>
#include <sstream>

#include "reference/utf8_reference.h"

namespace tokenmill::testing {
namespace {

[[noreturn]] void Broken(const char* what) {
  std::fprintf(stderr, "reference_unigram: %s\n", what);
  std::abort();
}

constexpr double kFixedOne = 16777216.0;  // 2^24: the fixed-point unit of the E-step's sums
constexpr double kUnknownPenalty = 10.0;
constexpr double kExpectedThreshold = 0.5;
constexpr uint32_t kWordStart = 0x2581;  // "▁"

// One unit of a text: a well-formed character, or one byte that begins none (code point -1).
struct Unit {
  std::string bytes;
  int64_t code_point;
};
std::vector<Unit> Units(std::string_view text) {
  std::vector<Unit> units;
  for (size_t i = 0; i < text.size();) {
    const Utf8Sequence seq = DecodeUtf8At(text, i);
    const size_t length = seq.length == 0 ? 1 : seq.length;
    units.push_back({std::string(text.substr(i, length)),
                     seq.length == 0 ? int64_t{-1} : int64_t{seq.code_point}});
    i += length;
  }
  return units;
}

std::string Utf8(uint32_t code_point) {
  std::string s;
  AppendUtf8(code_point, s);
  return s;
}

// ---- the lattice ----------------------------------------------------------------------------

// Pieces by index, with a lookup from their text.
struct PieceTable {
  std::vector<std::string> text;
  std::vector<double> score;
  std::map<std::string, size_t> index;
  size_t max_units = 0;  // the longest piece, in units
};
PieceTable MakeTable(const UnigramPieces& pieces) {
  PieceTable table;
  for (const auto& [text, score] : pieces) {
    if (text.empty()) Broken("an empty piece");
    if (!table.index.emplace(text, table.text.size()).second) Broken("a piece listed twice");
    table.text.push_back(text);
    table.score.push_back(score);
    table.max_units = std::max(table.max_units, Units(text).size());
  }
  return table;
}
PieceTable MakeTable(const std::map<std::string, double>& pieces) {
  return MakeTable(UnigramPieces(pieces.begin(), pieces.end()));
}
double MinScore(const PieceTable& table) {
  if (table.score.empty()) return 0;  // no pieces: every edge is unknown, scored -10
  return *std::min_element(table.score.begin(), table.score.end());
}

struct Edge {
  size_t begin, end;  // units [begin, end)
  std::optional<size_t> piece;  // none: an unknown edge
  double score;
};
struct Lattice {
  std::vector<Unit> units;
  std::vector<size_t> offsets;  // byte offset of each unit, and the text's size at the end
  std::vector<Edge> edges;  // by begin, then end (the unknown edge has length 1: first)
};
Lattice MakeLattice(std::string_view text, const PieceTable& table, double unk_score) {
  Lattice lattice;
  lattice.units = Units(text);
  const size_t n = lattice.units.size();
  size_t offset = 0;
  for (const Unit& u : lattice.units) {
    lattice.offsets.push_back(offset);
    offset += u.bytes.size();
  }
  lattice.offsets.push_back(offset);
  for (size_t b = 0; b < n; ++b) {
    std::vector<Edge> here;
    std::string run;
    bool one_unit_piece = false;
    for (size_t e = b + 1; e <= n && e - b <= table.max_units; ++e) {
      run += lattice.units[e - 1].bytes;
      const auto it = table.index.find(run);
      if (it == table.index.end()) continue;
      here.push_back({b, e, it->second, table.score[it->second]});
      if (e == b + 1) one_unit_piece = true;
    }
    if (!one_unit_piece) lattice.edges.push_back({b, b + 1, std::nullopt, unk_score});
    lattice.edges.insert(lattice.edges.end(), here.begin(), here.end());
  }
  return lattice;
}

UnigramSegmentation ToSegmentation(const Lattice& lattice, const std::vector<size_t>& path) {
  UnigramSegmentation seg;
  for (size_t k : path) {
    const Edge& edge = lattice.edges[k];
    std::string text;
    for (size_t u = edge.begin; u < edge.end; ++u) text += lattice.units[u].bytes;
    seg.pieces.push_back(std::move(text));
    seg.unknown.push_back(!edge.piece.has_value());
    seg.starts.push_back(lattice.offsets[edge.begin]);
    seg.score += edge.score;
  }
  return seg;
}

// The dynamic programme (Hugging Face's encode_optimized): positions in order, an edge replaces
// the best path into its end only when strictly better. `allow` filters the edges; `last_from`
// is the lowest start allowed for an edge that ends at the text's end (1 excludes the one-edge
// path). Returns the edges of the best path, none when the end is unreachable.
template <class Allow>
std::optional<std::vector<size_t>> BestPath(const Lattice& lattice, Allow allow,
                                            size_t last_from) {
  const size_t n = lattice.units.size();
  if (n == 0 && last_from > 0) return std::nullopt;  // no edge can end the path
  std::vector<double> best(n + 1, 0.0);
  std::vector<std::optional<size_t>> into(n + 1);  // the best path's last edge into each unit
  std::vector<bool> reached(n + 1, false);
  reached[0] = true;
  for (size_t k = 0; k < lattice.edges.size(); ++k) {  // by begin: best[begin] is final
    const Edge& edge = lattice.edges[k];
    if (!reached[edge.begin] || !allow(edge)) continue;
    if (edge.end == n && edge.begin < last_from) continue;
    const double candidate = best[edge.begin] + edge.score;
    if (!reached[edge.end] || candidate > best[edge.end]) {
      best[edge.end] = candidate;
      into[edge.end] = k;
      reached[edge.end] = true;
    }
  }
  if (!reached[n]) return std::nullopt;
  std::vector<size_t> path;
  for (size_t u = n; u > 0; u = lattice.edges[path.back()].begin) path.push_back(*into[u]);
  std::reverse(path.begin(), path.end());
  return path;
}

std::vector<size_t> ViterbiPath(const Lattice& lattice) {
  return *BestPath(lattice, [](const Edge&) { return true; }, 0);
}
std::optional<std::vector<size_t>> AlternativePath(const Lattice& lattice) {
  return BestPath(lattice, [](const Edge& e) { return e.piece.has_value(); }, 1);
}

// Every path from unit `from` to the end, appended to `out` (edges in order).
void AllPaths(const Lattice& lattice, size_t from, std::vector<size_t>& path,
              std::vector<std::vector<size_t>>& out) {
  if (from == lattice.units.size()) {
    out.push_back(path);
    return;
  }
  for (size_t k = 0; k < lattice.edges.size(); ++k) {
    if (lattice.edges[k].begin != from) continue;
    path.push_back(k);
    AllPaths(lattice, lattice.edges[k].end, path, out);
    path.pop_back();
  }
}

// The path order, written as the contract states it: from the last edge backwards, at each step
// the sums of the paths so far (left to right), then the edges' starts.
struct RankedPath {
  std::vector<size_t> edges;
  std::vector<double> prefix_sum;  // prefix_sum[j]: the sum of edges [0, j]
};
bool Better(const Lattice& lattice, const RankedPath& p, const RankedPath& q) {
  size_t i = p.edges.size(), j = q.edges.size();
  while (i > 0 && j > 0) {
    const double sum_p = p.prefix_sum[i - 1], sum_q = q.prefix_sum[j - 1];
    if (sum_p != sum_q) return sum_p > sum_q;
    const size_t begin_p = lattice.edges[p.edges[i - 1]].begin;
    const size_t begin_q = lattice.edges[q.edges[j - 1]].begin;
    if (begin_p != begin_q) return begin_p < begin_q;
    // The same last edge (both end where the previous step began): compare the prefixes.
    --i, --j;
  }
  return false;  // the same path
}

// ---- the alphabet, pieces and seeds ---------------------------------------------------------

int32_t ScriptOf(uint32_t code_point) {
  UErrorCode error = U_ZERO_ERROR;
  const UScriptCode script = uscript_getScript(static_cast<UChar32>(code_point), &error);
  if (U_FAILURE(error)) Broken("uscript_getScript failed");
  if (script == USCRIPT_HIRAGANA || script == USCRIPT_KATAKANA || code_point == 0x30FC) {
    return USCRIPT_HAN;
  }
  return script;
}

constexpr int32_t kAnyScript = -1;

// "<0x41>": a byte-fallback token's name, which no piece may spell.
bool SpellsByteToken(std::string_view text) {
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'); };
  return text.size() == 6 && text.substr(0, 3) == "<0x" && hex(text[3]) && hex(text[4]) &&
         text[5] == '>';
}

bool ValidUnits(const std::vector<Unit>& units, bool split_by_script) {
  int32_t previous = kAnyScript;
  for (size_t pos = 0; pos < units.size(); ++pos) {
    if (units[pos].code_point < 0) return false;
    const uint32_t c = static_cast<uint32_t>(units[pos].code_point);
    if (c == kWordStart) {
      if (pos > 0) return false;
      continue;
    }
    if (!split_by_script) continue;
    int32_t script = ScriptOf(c);
    if (script == USCRIPT_INHERITED) script = previous;
    if (script != kAnyScript && previous != kAnyScript && script != previous) return false;
    previous = script;
  }
  return true;
}

// The alphabet's characters in count order (count descending, then code point ascending), with
// their counts.
std::vector<std::pair<uint32_t, uint64_t>> Alphabet(const std::map<std::string, uint64_t>& words,
                                                    const UnigramReferenceOptions& options) {
  std::map<uint32_t, uint64_t> occurrences;
  uint64_t total = 0;
  for (const auto& [word, count] : words) {
    for (const Unit& u : Units(word)) {
      if (u.code_point < 0) continue;
      occurrences[static_cast<uint32_t>(u.code_point)] += count;
      total += count;
    }
  }
  std::vector<std::pair<uint32_t, uint64_t>> ranked(occurrences.begin(), occurrences.end());
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::vector<std::pair<uint32_t, uint64_t>> kept;
  uint64_t covered = 0;
  for (const auto& [code_point, count] : ranked) {
    if (options.character_coverage < 1.0 &&
        static_cast<double>(covered) / static_cast<double>(total) >= options.character_coverage) {
      break;
    }
    if (options.limit_alphabet > 0 && kept.size() >= options.limit_alphabet) break;
    kept.push_back({code_point, count});
    covered += count;
  }
  return kept;
}

struct SubstringStats {
  uint64_t freq = 0;
  size_t units = 0;
  std::map<std::string, uint64_t> followed_by;  // the next character's bytes -> count
};

// The seeds and their weights, by the contract.
void MakeSeeds(const std::map<std::string, uint64_t>& words,
               const std::vector<std::pair<uint32_t, uint64_t>>& alphabet,
               const UnigramReferenceOptions& options, UnigramReferenceResult& result) {
  std::set<uint32_t> in_alphabet;
  for (const auto& [c, count] : alphabet) in_alphabet.insert(c);
  auto known = [&](const Unit& u) {
    return u.code_point >= 0 && in_alphabet.count(static_cast<uint32_t>(u.code_point)) > 0;
  };
  // Every run of 2..max_piece_length known units, with what follows each occurrence.
  std::map<std::string, SubstringStats> substrings;
  for (const auto& [word, count] : words) {
    const std::vector<Unit> units = Units(word);
    for (size_t b = 0; b < units.size(); ++b) {
      std::string run;
      for (size_t e = b + 1; e <= units.size() && e - b <= options.max_piece_length; ++e) {
        if (!known(units[e - 1])) break;
        run += units[e - 1].bytes;
        if (e - b < 2) continue;
        SubstringStats& stats = substrings[run];
        stats.freq += count;
        stats.units = e - b;
        if (e < units.size() && known(units[e])) stats.followed_by[units[e].bytes] += count;
      }
    }
  }
  struct Candidate {
    std::string text;
    uint64_t weight;
  };
  std::vector<Candidate> candidates;
  for (const auto& [text, stats] : substrings) {
    if (stats.freq < 2) continue;
    bool branches = true;
    for (const auto& [next, count] : stats.followed_by) {
      if (count >= stats.freq) branches = false;
    }
    if (!branches) continue;
    if (!ValidUnits(Units(text), options.split_by_script) || SpellsByteToken(text)) continue;
    candidates.push_back({text, stats.freq * stats.units});
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return a.weight != b.weight ? a.weight > b.weight : a.text < b.text;
  });
  if (candidates.size() > options.seed_size) candidates.resize(options.seed_size);

  for (const auto& [c, count] : alphabet) {
    result.seeds.push_back({Utf8(c), 0.0});
    result.seed_weights.push_back(count);
  }
  for (const Candidate& c : candidates) {
    result.seeds.push_back({c.text, 0.0});
    result.seed_weights.push_back(c.weight);
  }
  unsigned __int128 sum = 0;
  for (uint64_t w : result.seed_weights) sum += w;
  const double log_sum = std::log(static_cast<double>(sum));
  for (size_t i = 0; i < result.seeds.size(); ++i) {
    result.seeds[i].second = std::log(static_cast<double>(result.seed_weights[i])) - log_sum;
  }
}

// ---- EM and pruning -------------------------------------------------------------------------

double LogAdd(double x, double y) {
  const double high = std::max(x, y), low = std::min(x, y);
  return high + std::log1p(std::exp(low - high));
}

UnigramPieces MStep(const UnigramPieces& pieces, const std::vector<int64_t>& fixed_expected,
                    bool ml) {
  UnigramPieces kept;
  int64_t sum = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const double e = static_cast<double>(fixed_expected[i]) / kFixedOne;
    if (e < kExpectedThreshold) continue;
    kept.push_back({pieces[i].first, e});
    sum += fixed_expected[i];
  }
  const double total = static_cast<double>(sum) / kFixedOne;
  for (auto& [text, score] : kept) {
    score = ml ? std::log(score) - std::log(total)
               : ReferenceDigamma(score) - ReferenceDigamma(total);
  }
  return kept;
}

UnigramPieces Prune(const UnigramPieces& pieces, const std::map<std::string, uint64_t>& words,
                    size_t desired, double shrinking_factor, UnigramPieces& losses) {
  const PieceTable table = MakeTable(pieces);
  const double unk = MinScore(table) - kUnknownPenalty;
  const size_t n = pieces.size();
  // 1. Each piece's own Viterbi path, and its alternative.
  std::vector<bool> not_itself(n, false);
  std::vector<std::optional<std::vector<size_t>>> alternative(n);  // piece indices
  for (size_t i = 0; i < n; ++i) {
    const Lattice lattice = MakeLattice(table.text[i], table, unk);
    if (ViterbiPath(lattice).size() != 1) {
      not_itself[i] = true;
      continue;
    }
    const std::optional<std::vector<size_t>> path = AlternativePath(lattice);
    if (!path) continue;
    std::vector<size_t> ids;
    for (size_t k : *path) ids.push_back(*lattice.edges[k].piece);
    alternative[i] = ids;
  }
  // 2. Every word's Viterbi path.
  std::vector<uint64_t> freq(n, 0);
  uint64_t total = 0, all_words = 0;
  for (const auto& [word, count] : words) {
    const Lattice lattice = MakeLattice(word, table, unk);
    all_words += count;
    for (size_t k : ViterbiPath(lattice)) {
      const Edge& edge = lattice.edges[k];
      if (!edge.piece) continue;
      freq[*edge.piece] += count;
      total += count;
    }
  }
  // 3. Kept pieces and candidates.
  UnigramPieces result;
  std::vector<std::pair<size_t, double>> candidates;
  for (size_t i = 0; i < n; ++i) {
    if (not_itself[i] || freq[i] == 0) continue;
    if (!alternative[i]) {
      result.push_back(pieces[i]);
      continue;
    }
    const std::vector<size_t>& alt = *alternative[i];
    const double f = static_cast<double>(freq[i]);
    const double F = f / static_cast<double>(all_words);
    const double logsum_alt =
        std::log(static_cast<double>(total) + f * static_cast<double>(alt.size() - 1));
    double logprob_alt = 0;
    for (size_t a : alt) logprob_alt += std::log(static_cast<double>(freq[a]) + f) - logsum_alt;
    const double logprob = std::log(f) - std::log(static_cast<double>(total));
    candidates.push_back({i, F * (logprob - logprob_alt)});
    losses.push_back({pieces[i].first, candidates.back().second});
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  const size_t target = std::max(
      desired, static_cast<size_t>(std::floor(shrinking_factor * static_cast<double>(n))));
  for (const auto& [i, loss] : candidates) {
    if (result.size() >= target) break;
    result.push_back(pieces[i]);
  }
  return result;
}

}  // namespace

double ReferenceDigamma(double x) {
  double result = 0.0;
  for (; x < 7; ++x) result -= 1 / x;
  x -= 1.0 / 2.0;
  const double xx = 1.0 / x;
  const double xx2 = xx * xx;
  const double xx4 = xx2 * xx2;
  result += std::log(x) + (1.0 / 24.0) * xx2 - (7.0 / 960.0) * xx4 + (31.0 / 8064.0) * xx4 * xx2 -
            (127.0 / 30720.0) * xx4 * xx4;
  return result;
}

bool ReferenceUnigramValidPiece(std::string_view piece, bool split_by_script) {
  return ValidUnits(Units(piece), split_by_script);
}

std::vector<UnigramSegmentation> ReferenceBestSegmentations(
    std::string_view text, const std::map<std::string, double>& pieces, double unk_score,
    size_t n) {
  const PieceTable table = MakeTable(pieces);
  const Lattice lattice = MakeLattice(text, table, unk_score);
  std::vector<std::vector<size_t>> paths;
  std::vector<size_t> path;
  AllPaths(lattice, 0, path, paths);
  std::vector<RankedPath> ranked;
  for (std::vector<size_t>& edges : paths) {
    RankedPath r;
    double sum = 0;
    for (size_t k : edges) {
      sum += lattice.edges[k].score;
      r.prefix_sum.push_back(sum);
    }
    r.edges = std::move(edges);
    ranked.push_back(std::move(r));
  }
  std::sort(ranked.begin(), ranked.end(),
            [&](const RankedPath& p, const RankedPath& q) { return Better(lattice, p, q); });
  std::vector<UnigramSegmentation> out;
  for (size_t i = 0; i < ranked.size() && i < n; ++i) {
    out.push_back(ToSegmentation(lattice, ranked[i].edges));
  }
  return out;
}

UnigramSegmentation ReferenceUnigramViterbi(std::string_view text,
                                            const std::map<std::string, double>& pieces,
                                            double unk_score) {
  const Lattice lattice = MakeLattice(text, MakeTable(pieces), unk_score);
  return ToSegmentation(lattice, ViterbiPath(lattice));
}

std::optional<UnigramSegmentation> ReferenceUnigramAlternative(
    std::string_view text, const std::map<std::string, double>& pieces) {
  // The unknown score does not matter: no unknown edge is taken.
  const Lattice lattice = MakeLattice(text, MakeTable(pieces), 0.0);
  const std::optional<std::vector<size_t>> path = AlternativePath(lattice);
  if (!path) return std::nullopt;
  return ToSegmentation(lattice, *path);
}

UnigramEStepResult ReferenceUnigramEStep(const std::vector<std::pair<std::string, uint64_t>>& words,
                                         const UnigramPieces& pieces) {
  const PieceTable table = MakeTable(pieces);
  const double unk = MinScore(table) - kUnknownPenalty;
  UnigramEStepResult result;
  result.expected.assign(pieces.size(), 0.0);
  result.fixed_expected.assign(pieces.size(), 0);
  for (const auto& [word, count] : words) {
    const Lattice lattice = MakeLattice(word, table, unk);
    const size_t n = lattice.units.size();
    // alpha[u]: paths from the start to u; beta[u]: from u to the end.
    std::vector<std::optional<double>> alpha(n + 1), beta(n + 1);
    alpha[0] = 0.0;
    for (size_t u = 1; u <= n; ++u) {
      for (const Edge& edge : lattice.edges) {  // by begin ascending
        if (edge.end != u) continue;
        const double term = *alpha[edge.begin] + edge.score;
        alpha[u] = alpha[u] ? LogAdd(*alpha[u], term) : term;
      }
    }
    beta[n] = 0.0;
    for (size_t u = n; u-- > 0;) {
      for (const Edge& edge : lattice.edges) {  // by end ascending, for this begin
        if (edge.begin != u) continue;
        const double term = edge.score + *beta[edge.end];
        beta[u] = beta[u] ? LogAdd(*beta[u], term) : term;
      }
    }
    for (const Edge& edge : lattice.edges) result.unknown_edges += edge.piece ? 0 : 1;
    const double z = *alpha[n];
    const double c = static_cast<double>(count);
    for (const Edge& edge : lattice.edges) {
      if (!edge.piece) continue;
      const double p = std::exp(((*alpha[edge.begin] + edge.score) + *beta[edge.end]) - z);
      result.expected[*edge.piece] += c * p;
      result.fixed_expected[*edge.piece] += std::llround(c * p * kFixedOne);
    }
    result.log_likelihood += c * z;
    result.fixed_log_likelihood += std::llround(c * z * kFixedOne);
    result.log_z.push_back(z);
  }
  return result;
}

UnigramReferenceResult ReferenceUnigramTrain(
    const std::vector<std::pair<std::string, uint64_t>>& input,
    const UnigramReferenceOptions& options) {
  if (options.sub_iterations < 0) Broken("negative sub_iterations");
  std::map<std::string, uint64_t> words;
  for (const auto& [word, count] : input) words[word] += count;
  const std::vector<std::pair<std::string, uint64_t>> word_list(words.begin(), words.end());

  UnigramReferenceResult result;
  const std::vector<std::pair<uint32_t, uint64_t>> alphabet = Alphabet(words, options);
  for (const auto& [c, count] : alphabet) result.alphabet.push_back(c);
  MakeSeeds(words, alphabet, options, result);

  // The rounds.
  const size_t desired =
      static_cast<size_t>(std::floor(1.1 * static_cast<double>(options.vocab_size)));
  UnigramPieces pieces = result.seeds;
  while (true) {
    UnigramReferenceRound round;
    for (int iteration = 0; iteration < options.sub_iterations; ++iteration) {
      const UnigramEStepResult e = ReferenceUnigramEStep(word_list, pieces);
      round.log_likelihoods.push_back(static_cast<double>(e.fixed_log_likelihood) / kFixedOne);
      round.e_step_pieces.push_back(pieces.size());
      round.e_step_unknown_edges.push_back(e.unknown_edges);
      pieces = MStep(pieces, e.fixed_expected, options.ml_m_step);
    }
    round.pieces_after_em = pieces.size();
    if (pieces.size() <= desired) {
      round.pieces = pieces;
      result.rounds.push_back(std::move(round));
      break;
    }
    pieces = Prune(pieces, words, desired, options.shrinking_factor, round.losses);
    round.pruned = true;
    round.pieces = pieces;
    const bool stuck = pieces.size() == round.pieces_after_em;
    result.rounds.push_back(std::move(round));
    if (stuck) break;
  }

  // The final vocabulary.
  std::map<std::string, double> final_pieces;
  std::map<std::string, double> current(pieces.begin(), pieces.end());
  const double lowest = MinScore(MakeTable(pieces));
  size_t dropped = 0;
  for (uint32_t c : result.alphabet) {
    const std::string s = Utf8(c);
    const auto it = current.find(s);
    if (it != current.end()) {
      final_pieces[s] = it->second;
    } else {
      final_pieces[s] = lowest + 0.0001 * static_cast<double>(dropped);
      ++dropped;
    }
  }
  const size_t fixed_ids = options.special_tokens.size() + (options.byte_fallback ? 256 : 0);
  const size_t budget = options.vocab_size > fixed_ids ? options.vocab_size - fixed_ids : 0;
  auto by_score = [](const std::pair<std::string, double>& a,
                     const std::pair<std::string, double>& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  };
  UnigramPieces sorted = pieces;
  std::sort(sorted.begin(), sorted.end(), by_score);
  for (const auto& [text, score] : sorted) {
    if (final_pieces.count(text) > 0) continue;
    if (final_pieces.size() >= budget) break;
    final_pieces[text] = score;
  }
  UnigramPieces ordered(final_pieces.begin(), final_pieces.end());
  // Scores kept to 15 significant digits (what tokenizer.json holds, which every JSON reader
  // reads back exactly), then ranked.
  for (auto& [text, score] : ordered) {
    std::ostringstream digits;
    digits << std::setprecision(15) << score;
    score = std::stod(digits.str());
  }
  std::sort(ordered.begin(), ordered.end(), by_score);

  for (const std::string& special : options.special_tokens) {
    result.tokens.push_back(special);
    result.scores.push_back(0.0);
  }
  if (options.byte_fallback) {
    for (int b = 0; b < 256; ++b) {
      result.tokens.push_back(std::string(1, static_cast<char>(b)));
      result.scores.push_back(0.0);
    }
  }
  result.first_piece_id = result.tokens.size();
  for (const auto& [text, score] : ordered) {
    result.tokens.push_back(text);
    result.scores.push_back(score);
  }
  return result;
}

}  // namespace tokenmill::testing
