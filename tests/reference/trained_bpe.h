// Tests of the BPE trainer read the trained model as a BpeModel, and compare it with the
// reference trainer's merges (reference_trainer.h).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "count/word_counts.h"
#include "model/bpe/bpe_model.h"
#include "reference/reference_trainer.h"
#include "train/trainer.h"
#include "train/trainer_options.h"

namespace tokenmill {
namespace testing {
inline void PrintTo(const ReferenceMerge& m, std::ostream* os) {
  *os << "'" << m.left << "' + '" << m.right << "' (" << m.count << ")";
}
}  // namespace testing

// The BpeModel a TrainResult holds (aborts when it holds none: a broken test).
inline const BpeModel& Bpe(const TrainResult& result) {
  const BpeModel* model = result.model == nullptr ? nullptr : AsBpe(*result.model);
  if (model == nullptr) std::abort();
  return *model;
}
inline BpeModel& Bpe(TrainResult& result) {
  return const_cast<BpeModel&>(Bpe(static_cast<const TrainResult&>(result)));
}

using TestWords = std::vector<std::pair<std::string, uint64_t>>;

inline WordCounts ToCounts(const TestWords& words) {
  WordCounts counts;
  for (const auto& [w, c] : words) counts.Add(w, c);
  return counts;
}

// A resume of `run` as a checkpoint gives it: its merges as (left bytes, right bytes), and with
// `with_counts` their counts too.
inline TrainControl ResumeOf(const TrainResult& run, bool with_counts) {
  TrainControl resume;
  for (const Merge& m : Bpe(run).merges) {
    resume.resume.merges.emplace_back(Bpe(run).tokens[m.left], Bpe(run).tokens[m.right]);
  }
  if (with_counts) resume.resume.merge_counts = run.merge_counts;
  return resume;
}

// The product's merges as the reference trainer lists them.
inline std::vector<testing::ReferenceMerge> ProductMerges(const TrainResult& result) {
  std::vector<testing::ReferenceMerge> merges;
  for (size_t i = 0; i < Bpe(result).merges.size(); ++i) {
    const Merge& m = Bpe(result).merges[i];
    merges.push_back({Bpe(result).tokens[m.left], Bpe(result).tokens[m.right],
                      result.merge_counts[i]});
  }
  return merges;
}

// The reference trainer's options for `options` (every field it has; character units' fields
// only mean something when `units` is char).
inline testing::ReferenceOptions ToReference(const TrainerOptions& options) {
  testing::ReferenceOptions ref;
  ref.vocab_size = options.vocab_size;
  ref.min_frequency = options.min_frequency;
  ref.max_token_length = options.max_token_length;
  ref.num_special_tokens = options.special_tokens.size();
  ref.hf_compat = options.hf_compat;
  ref.hf_all_bytes = options.hf_all_bytes;
  ref.chars = options.units == UnitKind::kChar;
  if (ref.chars) {
    ref.character_coverage = options.character_coverage;
    ref.limit_alphabet = options.limit_alphabet;
    ref.byte_fallback = options.byte_fallback;
    ref.prefix = options.continuing_subword_prefix;
    ref.suffix = options.end_of_word_suffix;
  }
  return ref;
}

inline std::string Describe(const std::vector<testing::ReferenceMerge>& merges) {
  std::string out;
  for (const testing::ReferenceMerge& m : merges) {
    out += "'" + m.left + "' + '" + m.right + "' (" + std::to_string(m.count) + ")\n";
  }
  return out;
}

}  // namespace tokenmill
