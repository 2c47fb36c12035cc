// The slow reference Unigram language-model trainer (Kudo 2018, SentencePiece's default model)
// and brute-force segmentation oracles, for tests only ("should never be used in production").
// Every step is written the plain way: the seeds by enumerating every substring of every word
// into a std::map, the E-step by forward-backward per word, Viterbi by the textbook dynamic
// programme, and ReferenceBestSegmentations by listing every segmentation of a text and sorting
// them. It shares no code with lib/ (only the oracles' UTF-8 decoder, utf8_reference.h, and ICU
// for the scripts), and is the oracle the product's UnigramTrainer (Algorithm::kUnigram,
// lib/train/unigram/unigram_trainer.h, whose header states the same contract in brief) is
// compared against.
//
// THE CONTRACT (what the product must do too)
//
// Input: distinct words (UTF-8 byte strings, which may hold invalid UTF-8) with counts (equal
// words are summed); options.
//
// Units. A word is a sequence of units: each well-formed UTF-8 character is one unit, each byte
// that does not begin a well-formed sequence is one unit on its own.
//
// Alphabet. The characters are ranked by count (occurrences weighted by the words' counts)
// descending, then code point ascending; each is added while the share covered so far
// (covered / total, in double) is below character_coverage (1 keeps all), at most
// limit_alphabet of them (0: no limit). "The alphabet's count order" is this ranking. A unit
// that is no alphabet character (a dropped character, an invalid byte) is an unknown position.
//
// Valid pieces (SentencePiece's IsValidSentencePiece, as far as the contract keeps it): U+2581
// "▁" only as the first character; with split_by_script, all the other characters are of one
// script: ICU's uscript_getScript, where Hiragana, Katakana and U+30FC count as Han, and an
// Inherited character takes the script of the character before it. An Inherited character with
// no character before it (first, or right after the leading "▁") matches any script and does
// not fix one (SentencePiece's kAnyType); the next character fixes it. Common is a script like
// any other ("a1", "a." and "a-b" are invalid; "1.", "-1" valid). "▁" itself fixes no script.
//
// Seeds. freq(s) is the number of occurrences of s as a run of units in the words, each word
// weighted by its count (overlapping occurrences count: "aaa" holds "aa" twice). A candidate is
// a valid s of 2..max_piece_length units, none of them an unknown position, with freq(s) >= 2
// and freq(s c) < freq(s) for every character c (an occurrence at the end of its word or before
// an unknown position is followed by no character): the internal nodes of the words' suffix
// tree, every word end a distinct terminator. (Not quite SentencePiece's: its suffix array puts
// the same U+0000 after every sentence, so a run whose every occurrence ends a sentence, "abc"
// in {"abc" x2}, is no node there; and it counts each sentence once, not by its count.) A
// candidate's weight is freq(s) * |s| (|s| in units); the seed_size candidates of the
// highest weight (ties: bytes ascending) follow every alphabet character (weighted by its count,
// in the alphabet's count order). Each seed's initial score is log(weight) - log(sum of the
// seeds' weights): the sum taken exactly (integers), converted to double once.
//
// Lattice of a text under pieces with scores: an edge for every occurrence of a piece (as a run
// of whole units); at every unit where no one-unit piece starts (an unknown position, or a
// character whose piece was dropped) an unknown edge of that one unit, scored unk = min(piece
// scores) - 10. Edges are identified by (start unit, end unit): there is at most one per pair.
// Every position has an outgoing edge of one unit, so every text has a path.
//
// Path order (Viterbi: pruning and encoding). A path's score is the sum of its edges' scores,
// added left to right in double (S_j: the sum of its first j edges). Path P is better than path
// Q (both ending at the same unit) when S(P) > S(Q); on equal sums, when its last edge starts
// earlier (the longest last piece); on the same last edge, when its prefix (the path without
// the last edge) is better by this same order, compared from its own sum again. This is exactly
// what Hugging Face's encode_optimized computes (positions in order, a candidate replaces the
// best path into its end only when strictly better), since a dynamic programme keeps one best
// prefix per position. NOTE: it is not "sum, then the reversed sequence of start offsets": in
// double, two prefixes of different sums a < b can give the same total after the same last edge
// (a + w == b + w), and the DP keeps b; see ReferenceBestSegmentations.
//
// E-step (one pass over the words): per word, forward-backward in log space (alpha[u]: the log
// of the sum of exp(score) over paths from the start to unit u; beta[u]: from u to the end;
// Z = alpha[end]); each piece edge (b, e) has marginal p = exp(((alpha[b] + score) + beta[e]) -
// Z) and adds llround(count * p * 2^24) to its piece's expected count (an int64 sum); the
// log-likelihood adds llround(count * Z * 2^24) into an int128 sum. (The contract does not fix
// the log-sum-exp's rounding; here log(exp(x) + exp(y)) = max + log1p(exp(min - max)), terms
// summed in order of the other end ascending, so Z and p may differ from the product's in their
// last bits, and a fixed-point count by one unit of 2^-24 now and then.)
//
// M-step (SentencePiece's Bayesian one): a piece of expected count e = sum / 2^24 (double) below
// 0.5 is dropped; every other gets digamma(e) - digamma(E), E the sum of the kept pieces' int64
// counts / 2^24, in the same order. digamma is SentencePiece's (ReferenceDigamma).
//
// Rounds. desired = floor(1.1 * vocab_size) (in double). A round is sub_iterations E+M steps;
// then, when more than desired pieces are left, pruning:
//  1. for each piece, in order: when its text's Viterbi path (under all pieces, with unknown
//     edges) is not the piece itself, it is dropped; else its alternative is the best path of
//     its text, by the path order, among the paths other than the one-edge path that hold no
//     unknown edge (none: no alternative);
//  2. every word's Viterbi path: freq(i) = sum of the word counts over the occurrences of piece
//     i on those paths (unknown edges count nowhere), total = sum of freq(i), words = sum of the
//     word counts (all words);
//  3. a piece (not dropped in 1) with freq 0 is dropped; with no alternative, kept; every other
//     is a candidate with loss (in double, in this order; integers converted to double first)
//       F = freq(i) / words; logsum_alt = log(total + freq(i) * (|alt| - 1));
//       loss = F * ((log(freq(i)) - log(total)) -
//                   sum over a in alt, left to right, of (log(freq(a) + freq(i)) - logsum_alt))
//  4. the new piece list: the kept pieces (in order), then candidates by loss descending (ties:
//     piece order) while fewer than max(desired, floor(shrinking_factor * pieces)) are listed
//     (pieces: the count before pruning). When the kept ones reach that number, no candidate is
//     listed (SentencePiece compares with ==, so when they exceed it, it lists all of them).
// Rounds repeat until a round's EM leaves at most desired pieces. When a pruning removes no
// piece at all (every piece is its own Viterbi path, occurs, and has no alternative) training
// stops there too: the contract does not say, and as written it would loop for ever.
//
// Final vocabulary: every alphabet character, in the alphabet's count order, with its score, or
// when its piece was dropped lowest + 0.0001 * k for the k-th dropped one (k = 0, 1, ...: the
// first dropped character gets the lowest score itself, as in SentencePiece; a product in
// double, where SentencePiece adds 0.0001 up in float; lowest: the lowest score of the pieces
// after the last round); then the other pieces by score descending (ties: bytes ascending)
// while fewer than vocab_size - specials - byte tokens are listed (the characters are all kept
// even beyond that; SentencePiece's == would then list every piece). Ids: the special tokens
// in order ("<unk>" at 0 by default), then with byte_fallback the 256 byte tokens, then the
// final pieces by score descending (ties: bytes ascending).
//
// Rounds are the training steps: each round's pieces and scores after it (after pruning when it
// pruned) are what the product's TrainEvent of that step carries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tokenmill::testing {

struct UnigramReferenceOptions {
  size_t vocab_size = 8000;  // ids: specials, byte tokens and pieces
  size_t seed_size = 1000000;  // substring seeds (the alphabet's characters come on top)
  size_t max_piece_length = 16;  // units
  int sub_iterations = 2;  // E+M steps per round
  double shrinking_factor = 0.75;
  double character_coverage = 1.0;
  size_t limit_alphabet = 0;  // 0: no limit
  bool split_by_script = true;
  bool byte_fallback = true;
  std::vector<std::string> special_tokens = {"<unk>"};
  // NOT the contract, for the EM tests: the plain maximum-likelihood M-step, score = log(e) -
  // log(E) (same threshold, same fixed-point counts) instead of digamma(e) - digamma(E).
  bool ml_m_step = false;
};

// Pieces with scores, in the trainer's order (which matters: the M-step and pruning keep it).
using UnigramPieces = std::vector<std::pair<std::string, double>>;

struct UnigramReferenceRound {
  std::vector<double> log_likelihoods;  // one per E-step: the int128 fixed-point sum / 2^24
  // Parallel, for the EM tests: how many pieces each E-step ran on, and how many unknown edges
  // its lattices held (all words, not weighted).
  std::vector<size_t> e_step_pieces;
  std::vector<size_t> e_step_unknown_edges;
  size_t pieces_after_em = 0;  // pieces left by the round's EM, before any pruning
  bool pruned = false;
  // Pruning's candidates (neither dropped nor kept outright) with their loss, in piece order.
  UnigramPieces losses;
  UnigramPieces pieces;  // after the round (after pruning when it pruned)
};

struct UnigramReferenceResult {
  // Id order: the specials, with byte_fallback the 256 byte tokens (byte b as the one-byte
  // string std::string(1, char(b))), then the pieces. The specials' and the byte tokens'
  // scores are 0 here (the product gives them fixed scores of its own): compare scores only
  // from first_piece_id on.
  std::vector<std::string> tokens;
  std::vector<double> scores;
  size_t first_piece_id = 0;
  std::vector<uint32_t> alphabet;  // code points, in the alphabet's count order
  UnigramPieces seeds;  // the alphabet's characters, then the substrings; initial scores
  std::vector<uint64_t> seed_weights;  // parallel to seeds: a character's count, freq(s) * |s|
  std::vector<UnigramReferenceRound> rounds;
};

// Trains on `words` ((bytes, count) pairs; equal words are summed) by the contract above.
UnigramReferenceResult ReferenceUnigramTrain(
    const std::vector<std::pair<std::string, uint64_t>>& words,
    const UnigramReferenceOptions& options);

// SentencePiece's digamma (unigram_model_trainer.cc), for x > 0.
double ReferenceDigamma(double x);

// The contract's "valid piece" rule for a piece of well-formed UTF-8 (length not checked).
bool ReferenceUnigramValidPiece(std::string_view piece, bool split_by_script);

// One path through a text's lattice.
struct UnigramSegmentation {
  std::vector<std::string> pieces;  // the edges' text in order (an unknown edge: its unit)
  std::vector<bool> unknown;  // parallel: an unknown edge
  std::vector<size_t> starts;  // parallel: each edge's start, a byte offset into the text
  double score = 0;  // the edges' scores added left to right
};

// Brute force: EVERY path through the lattice of `text` under `pieces` (piece -> score; no
// empty piece) with unknown edges scored `unk_score` (the trainer passes min(scores) - 10),
// sorted best first by the path order, the first `n` (all of them when there are fewer). Use
// on short texts: the number of paths grows exponentially. Ties are never left to the sort:
// distinct paths always compare unequal.
std::vector<UnigramSegmentation> ReferenceBestSegmentations(
    std::string_view text, const std::map<std::string, double>& pieces, double unk_score,
    size_t n);

// The best path by the dynamic programme the trainer uses (Hugging Face's encode_optimized);
// equal to ReferenceBestSegmentations(text, pieces, unk_score, 1)[0].
UnigramSegmentation ReferenceUnigramViterbi(std::string_view text,
                                            const std::map<std::string, double>& pieces,
                                            double unk_score);

// Pruning's alternative for the piece `text`, by dynamic programme: the best path among those
// other than the one-edge path and without unknown edges; none when there is no such path.
std::optional<UnigramSegmentation> ReferenceUnigramAlternative(
    std::string_view text, const std::map<std::string, double>& pieces);

// One E-step (unk = min(scores) - 10) over `words` (not summed: each pair counts as given).
struct UnigramEStepResult {
  std::vector<double> expected;  // per piece: sum of count * p, unrounded
  std::vector<int64_t> fixed_expected;  // per piece: sum of llround(count * p * 2^24)
  double log_likelihood = 0;  // sum of count * Z, unrounded
  __int128 fixed_log_likelihood = 0;  // sum of llround(count * Z * 2^24)
  std::vector<double> log_z;  // per word: Z
  size_t unknown_edges = 0;  // in all the words' lattices
};
UnigramEStepResult ReferenceUnigramEStep(const std::vector<std::pair<std::string, uint64_t>>& words,
                                         const UnigramPieces& pieces);

}  // namespace tokenmill::testing
