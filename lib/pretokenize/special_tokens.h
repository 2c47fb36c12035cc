// SpecialTokenMatcher: finds special tokens (literal strings such as "<|endoftext|>") in text so
// they can be cut out before pre-tokenization.
//
// Contract: Split() walks `text` left to right and reports, in order, the stretches of ordinary
// text (special_index == -1, never empty) and each special token occurrence (special_index =
// its index in the list given to Create). At any position the longest special token that
// matches there wins; the reported stretches concatenate to exactly `text`. Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"

namespace tokenmill {

class SpecialTokenMatcher {
 public:
  // Fails if a token is empty or listed twice.
  static absl::StatusOr<std::unique_ptr<SpecialTokenMatcher>> Create(
      std::vector<std::string> tokens);
  virtual ~SpecialTokenMatcher() = default;

  const std::vector<std::string>& tokens() const { return tokens_; }

  virtual void Split(std::string_view text,
                     absl::FunctionRef<void(std::string_view segment, int special_index)>
                         on_segment) const = 0;

 protected:
  explicit SpecialTokenMatcher(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {}

 private:
  std::vector<std::string> tokens_;
};

}  // namespace tokenmill
