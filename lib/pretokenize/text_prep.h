// TextPrep: what happens to ordinary text (special tokens cut out) before the pre-tokenizer
// splits it, in counting and in encoding alike: normalization (PreTokenizerConfig::normalizer,
// normalizer.h), then, for the metaspace split, every space (U+0020 only) becomes "▁" (U+2581)
// and, with metaspace_prefix, a "▁" goes before a text that does not start with one (Hugging
// Face's Metaspace with prepend_scheme "always": each text between special tokens is such a
// text; so " x" prepares as "▁x", as "x" does).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "pretokenize/pretokenizer_config.h"

namespace tokenmill {

class Normalizer;

class TextPrep {
 public:
  // Fails when the normalizer cannot be built.
  static absl::StatusOr<std::unique_ptr<TextPrep>> Create(const PreTokenizerConfig& config);
  ~TextPrep();

  // Whether text goes to the pre-tokenizer as it is (Prepare would copy it unchanged).
  bool identity() const { return identity_; }
  // Writes the prepared `text` to `out` (replacing what it held). Thread-safe.
  void Prepare(std::string_view text, std::string& out) const;
  // `text` itself when identity(), else Prepare(text, scratch) and a view of `scratch`.
  std::string_view Prepared(std::string_view text, std::string& scratch) const {
    if (identity_) return text;
    Prepare(text, scratch);
    return scratch;
  }

 private:
  TextPrep() = default;
  std::unique_ptr<Normalizer> normalizer_;  // null for the identity
  bool metaspace_ = false;
  bool prefix_ = false;
  bool identity_ = true;
};

// "▁" (U+2581), the metaspace.
inline constexpr std::string_view kMetaspace = "\xE2\x96\x81";

}  // namespace tokenmill
