#include "pretokenize/special_tokens.h"

#include "absl/container/flat_hash_set.h"
#include "common/strings.h"

namespace tokenmill {
namespace {

// Interim matcher: tries every token at every position where one could start.
class NaiveSpecialTokenMatcher final : public SpecialTokenMatcher {
 public:
  explicit NaiveSpecialTokenMatcher(std::vector<std::string> tokens)
      : SpecialTokenMatcher(std::move(tokens)) {
    for (const std::string& t : this->tokens()) first_bytes_.insert(t[0]);
  }

  void Split(std::string_view text,
             absl::FunctionRef<void(std::string_view, int)> on_segment) const override {
    size_t plain_start = 0;
    size_t pos = 0;
    while (pos < text.size()) {
      int best = -1;
      if (first_bytes_.contains(text[pos])) {
        for (size_t i = 0; i < tokens().size(); ++i) {
          const std::string& t = tokens()[i];
          if (text.substr(pos).starts_with(t) &&
              (best < 0 || t.size() > tokens()[best].size())) {
            best = static_cast<int>(i);
          }
        }
      }
      if (best < 0) {
        ++pos;
        continue;
      }
      if (pos > plain_start) on_segment(text.substr(plain_start, pos - plain_start), -1);
      on_segment(text.substr(pos, tokens()[best].size()), best);
      pos += tokens()[best].size();
      plain_start = pos;
    }
    if (plain_start < text.size()) on_segment(text.substr(plain_start), -1);
  }

 private:
  absl::flat_hash_set<char> first_bytes_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SpecialTokenMatcher>> SpecialTokenMatcher::Create(
    std::vector<std::string> tokens) {
  StringSet seen;
  for (const std::string& t : tokens) {
    if (t.empty()) return absl::InvalidArgumentError("a special token is empty");
    if (!seen.insert(t).second) {
      return absl::InvalidArgumentError(StrCat("special token '", t, "' is given twice"));
    }
  }
  return std::make_unique<NaiveSpecialTokenMatcher>(std::move(tokens));
}

}  // namespace tokenmill
