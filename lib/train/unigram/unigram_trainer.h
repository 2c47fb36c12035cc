// UnigramTrainer: Unigram language-model training (Kudo 2018, SentencePiece's default), the
// Trainer of Algorithm::kUnigram: seed pieces from the words' frequent substrings, EM rounds
// that re-estimate the pieces' log-probabilities, pruning of the pieces whose removal costs the
// corpus likelihood least, down to vocab_size; encoding is Viterbi (model/unigram/).
//
// Semantics (the contract the slow reference in tests/reference/reference_unigram.h
// implements on its own):
//  - Symbols. A word is its characters (character units). The alphabet is MakeAlphabet's
//    (character_coverage, limit_alphabet; SentencePiece's coverage rule). A character outside
//    it, and each byte that is no well-formed UTF-8, is an unknown position: no piece holds one.
//  - Valid pieces: U+2581 "▁" only as the first character; with split_by_script, every other
//    character of one Unicode script (ICU's; Hiragana, Katakana and U+30FC count as Han, an
//    Inherited character takes the script of the one before it): SentencePiece's rules; and
//    no piece spells a byte-fallback token's name, "<0x" two of 0-9A-F ">" (Hugging Face
//    would read the two as one vocabulary entry).
//  - Seeds. freq(s) counts the occurrences of s in the words, each word weighted by its count.
//    The candidates are the valid substrings s of 2..max_piece_length characters without an
//    unknown position, with freq(s) >= 2 and freq(s c) < freq(s) for every character c (an
//    occurrence at the end of a word or before an unknown position is followed by none): the
//    nodes of the words' suffix tree, each word's end distinct. (SentencePiece's suffix array
//    runs over sentences counted once each, their ends all U+0000, so a substring that only
//    ends words is no node there; here "abc" of a word "abc" counted twice is one.) Each scores
//    freq(s) * |s|; the seed_size best (score descending, then bytes ascending) follow every
//    alphabet character (scored by its count; characters by count descending, then code
//    point). Initial scores: log(score) - log(sum of all scores).
//  - The lattice of a word under pieces with scores: an edge for every occurrence of a piece;
//    where no one-character piece starts (an unknown position, or a character whose piece was
//    dropped), an unknown edge of that one character scored min(score) - 10.
//  - Viterbi (pruning, encoding): Hugging Face's encode_optimized DP: best[0] = 0; the edges
//    in order (by start, then end), each setting best[end] = best[start] + score (double) when
//    best[end] has no path yet or this sum is strictly greater; the path is read back from the
//    end. So of equal sums at a position the edge starting first wins (the longest last
//    piece); prefix sums are compared before starts (sums that tie only at the end may go
//    either way).
//  - E-step, over the words in parallel: forward-backward in log space (Z: the log of the sum
//    of all paths' exp(score sum)); each piece edge's marginal p = exp(alpha + score + beta - Z)
//    adds llround(count * p * 2^24) to its piece's expected count (an int64 sum, so the result
//    does not depend on the threads); the log-likelihood adds count * Z, as llround(count * Z *
//    2^24) into an int128 sum. Words whose count-weighted characters reach 2^39 (5.5e11; a
//    piece's sum could wrap) are refused. (How p is computed, in logs or, for short words, probabilities,
//    may move it in its last bits: an implementation may differ by one 2^-24 unit.)
//  - M-step (SentencePiece's Bayesian one): pieces of expected count (sum / 2^24) below 0.5 are
//    dropped; each other gets digamma(expected) - digamma(E), E = the integer sum of the kept
//    expected counts / 2^24, in the same order. (This step does not keep the log-likelihood
//    from falling: exp(digamma(x)) is about x - 1/2, a sparse prior; tests check monotony with
//    the maximum-likelihood step, log(expected) - log(E), TrainerOptions::unigram_ml_m_step.)
//  - A round: sub_iterations E+M steps; then, when more than floor(1.1 * vocab_size) pieces are
//    left (SentencePiece's margin), pruning. Pruning, for each piece in order: if its own
//    Viterbi path is not itself, it is dropped; else its alternative is the best path of its
//    text without the one-edge path (no unknown edges; none: the piece is kept). Then every
//    word's Viterbi path: freq(i) = sum of counts over the occurrences of piece i, total =
//    sum of freq, words = sum of word counts. Pieces with freq 0 are dropped; with no
//    alternative, kept (in order); the others are candidates with loss
//      F = freq(i) / words; logsum_alt = log(total + freq(i) * (|alt| - 1));
//      loss = F * ((log(freq(i)) - log(total)) - sum over a in alt of (log(freq(a) + freq(i)) -
//             logsum_alt))
//    (doubles, in that order), taken by loss descending (then piece order) after the kept ones
//    until max(floor(1.1 * vocab_size), floor(shrinking_factor * pieces)) are left.
//  - Rounds repeat until a round's EM leaves at most floor(1.1 * vocab_size) pieces, or a
//    pruning removes none (every piece kept: nothing more can go). Final
//    vocabulary: every alphabet character (its score, or when it was dropped the lowest score +
//    0.0001 k for the k-th dropped one, k from 0, in the alphabet's count order), then the
//    other pieces by score descending (ties: bytes ascending) up to vocab_size - specials -
//    byte tokens; the scores are then rounded to 15 significant digits (UnigramFileScore:
//    what tokenizer.json holds exactly); ids: the special tokens first ("<unk>" at 0 unless
//    named), the 256 byte-fallback tokens with byte_fallback, then the pieces by rounded score
//    descending (ties: bytes ascending).
//  - Steps are rounds: each TrainEvent carries the pieces and scores after it (serialized,
//    TrainEvent::state), which checkpoints keep; a resume continues from them to the result of
//    one uninterrupted run.
#pragma once

#include "train/trainer.h"

namespace tokenmill {

// What a round's state (TrainEvent::state, a checkpoint's trainer state) says, for people:
// the rounds done, whether only the final cut was left, the target vocab_size, the pieces and
// the last E-step's log-likelihood. Fails on what is no Unigram state.
struct UnigramStateSummary {
  uint64_t rounds = 0;
  bool final = false;
  uint64_t vocab_size = 0;
  uint64_t pieces = 0;
  double log_likelihood = 0;
};
absl::StatusOr<UnigramStateSummary> SummarizeUnigramState(std::string_view state);

class UnigramTrainer : public Trainer {
 public:
  // `options` must be valid (TrainerOptions::Validate) with algorithm kUnigram.
  explicit UnigramTrainer(const TrainerOptions& options) : options_(options) {}

  absl::StatusOr<TrainResult> Train(WordSource words, const TrainControl& control) override;

 private:
  TrainerOptions options_;
};

}  // namespace tokenmill
