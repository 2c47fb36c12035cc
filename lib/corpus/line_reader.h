// Reading documents from plain-text files: each line with its '\n' is one document (what
// Hugging Face and SentencePiece do with text files); a last line without '\n' is a document
// too. Files are streamed, never held whole.
#pragma once

#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"

namespace tokenmill {

// Calls `on_document` for each line of `path` ("-" reads stdin). Errors name the file.
absl::Status ForEachLine(const std::string& path,
                         absl::FunctionRef<void(std::string_view line)> on_document);

}  // namespace tokenmill
