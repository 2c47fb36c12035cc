#include "model/id_text.h"

#include "common/strings.h"

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
      return absl::InvalidArgumentError(StrCat("'", field, "' is not a token id"));
    }
    ids->push_back(id);
    i = end;
  }
  return absl::OkStatus();
}

}  // namespace tokenmill
