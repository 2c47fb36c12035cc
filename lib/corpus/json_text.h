// JsonTextExtractor: pulls the text to train on out of one JSON-lines record with simdjson.
//
// Contract: Extract() parses `record` fully (a malformed record is an error even when the
// field comes first) and returns the unescaped string at `field`: a top-level key, or a JSON
// pointer when `field` starts with '/' (e.g. "/meta/body"). The bytes from record.data() up to
// record.data() + record.size() + kJsonPadding must be readable. The returned view is valid
// until the next Extract() call. One extractor per thread.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tokenmill {

inline constexpr size_t kJsonPadding = 64;  // == SIMDJSON_PADDING, checked in json_text.cc

class JsonTextExtractor {
 public:
  enum class Problem { kNone, kMalformed, kMissingField, kNotAString };

  explicit JsonTextExtractor(std::string field);
  ~JsonTextExtractor();

  // On failure sets `problem` and `detail` (what was wrong, without the location).
  bool Extract(std::string_view record, std::string_view* text, Problem* problem,
               std::string* detail);

  const std::string& field() const { return field_; }

 private:
  struct Parser;
  std::string field_;
  std::unique_ptr<Parser> parser_;
};

// True if `line` holds only spaces, tabs, '\r' or '\n' (skipped silently in JSON lines).
bool IsBlankLine(std::string_view line);

}  // namespace tokenmill
