// Shared by the tokenizer.json reader, the model types' sections of it, and the tiktoken
// sidecar's reader.
#pragma once

#include <simdjson.h>

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/strings.h"

namespace tokenmill {

// "<source>: field '<field>' <what>".
inline absl::Status HfJsonFieldError(std::string_view source, std::string_view field,
                                     std::string_view what) {
  return absl::InvalidArgumentError(StrCat(source, ": field '", field, "' ", what));
}

// `json` parsed by `parser` (its root lives as long as the parser's document, until its next
// parse), or "<source>: not valid JSON (<simdjson's words>)".
inline absl::StatusOr<simdjson::dom::element> ParseJson(simdjson::dom::parser& parser,
                                                        std::string_view json,
                                                        std::string_view source) {
  simdjson::dom::element root;
  if (auto error = parser.parse(simdjson::padded_string(json)).get(root)) {
    return absl::InvalidArgumentError(
        StrCat(source, ": not valid JSON (", simdjson::error_message(error), ")"));
  }
  return root;
}

}  // namespace tokenmill
