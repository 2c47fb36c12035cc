#include "pretokenize/text_prep.h"

#include "pretokenize/normalizer.h"

namespace tokenmill {

TextPrep::~TextPrep() = default;

absl::StatusOr<std::unique_ptr<TextPrep>> TextPrep::Create(const PreTokenizerConfig& config) {
  std::unique_ptr<TextPrep> prep(new TextPrep());
  if (!config.normalizer.identity()) {
    absl::StatusOr<std::unique_ptr<Normalizer>> normalizer = Normalizer::Create(config.normalizer);
    if (!normalizer.ok()) return normalizer.status();
    prep->normalizer_ = *std::move(normalizer);
  }
  prep->metaspace_ = config.preset == "metaspace";
  prep->prefix_ = prep->metaspace_ && config.metaspace_prefix;
  prep->identity_ = prep->normalizer_ == nullptr && !prep->metaspace_;
  return prep;
}

void TextPrep::Prepare(std::string_view text, std::string& out) const {
  out.clear();
  if (normalizer_ == nullptr) {
    out.assign(text);
  } else {
    normalizer_->Normalize(text, out);
  }
  if (!metaspace_) return;
  size_t spaces = 0;
  for (char c : out) spaces += c == ' ';
  const bool prefix = prefix_ && !std::string_view(out).starts_with(kMetaspace) &&
                      !std::string_view(out).starts_with(" ");
  if (spaces == 0 && !prefix) return;
  std::string normalized;
  normalized.swap(out);
  out.reserve(normalized.size() + 2 * spaces + (prefix ? kMetaspace.size() : 0));
  if (prefix) out += kMetaspace;
  for (char c : normalized) {
    if (c == ' ') {
      out += kMetaspace;
    } else {
      out.push_back(c);
    }
  }
}

}  // namespace tokenmill
