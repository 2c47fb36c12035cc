// PreTokenizer: splits text into the pieces ("words") inside which BPE merges happen.
//
// Contract: Split() calls `on_piece` once per piece, in order; the pieces are non-empty and
// concatenate to exactly `text`, for any bytes (invalid UTF-8 included). Split() is const and
// safe to call from many threads at once on one PreTokenizer.
#pragma once

#include <memory>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "model/bpe_model.h"

namespace tokenmill {

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;

  // Builds the pre-tokenizer that `config` names. Fails with a message naming the preset or
  // the unsupported construct of a custom pattern.
  static absl::StatusOr<std::unique_ptr<PreTokenizer>> Create(const PreTokenizerConfig& config);

  virtual void Split(std::string_view text,
                     absl::FunctionRef<void(std::string_view piece)> on_piece) const = 0;
};

}  // namespace tokenmill
