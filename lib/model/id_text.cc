#include "model/id_text.h"

#include "common/strings.h"
#include "model/text_display.h"

namespace tokenmill {

absl::Status ParseIdLine(std::string_view line, std::vector<TokenId>* ids) {
  auto is_separator = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  size_t i = 0;
  while (i < line.size()) {
    if (is_separator(line[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < line.size() && !is_separator(line[end])) ++end;
    const std::string_view field = line.substr(i, end - i);
    uint32_t id;
    if (!ParseInt(field, &id)) {
      // Shown escaped and cut short: a binary file read as text has any bytes in a field.
      constexpr size_t kShown = 40;
      return absl::InvalidArgumentError(
          StrCat("'", DisplayBytes(field.substr(0, kShown)), field.size() > kShown ? "...'" : "'",
                 " is not a token id"));
    }
    ids->push_back(id);
    i = end;
  }
  return absl::OkStatus();
}

}  // namespace tokenmill
