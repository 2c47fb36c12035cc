// Loading and saving a Model in any supported file format.
//
// Formats: Hugging Face tokenizer.json and tiktoken's .tiktoken (+ its JSON sidecar). Loading
// looks at the content, not the name: a JSON object with a "model" field is a tokenizer.json;
// a JSON object with a "pattern" field is a tiktoken sidecar, loaded with the .tiktoken file
// next to it; anything else is read as a .tiktoken ranks file. Saving goes by the extension
// of the output path.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "model/bpe/bpe_model.h"
#include "model/model.h"

namespace tokenmill {

enum class ModelFormat { kHfJson, kTiktoken };

std::string_view ModelFormatName(ModelFormat format);

// Which format `path` holds, from its first bytes. Errors name the file.
absl::StatusOr<ModelFormat> DetectModelFormat(const std::string& path);

// Loads `path` in the format DetectModelFormat() finds.
absl::StatusOr<std::unique_ptr<Model>> LoadModel(const std::string& path);
// The same for a file that must hold a BPE model (an error names the type it holds instead).
absl::StatusOr<BpeModel> LoadBpeModel(const std::string& path);

// The format SaveModel() writes for `path`: ".tiktoken" -> kTiktoken, ".json" -> kHfJson.
absl::StatusOr<ModelFormat> OutputFormatOf(const std::string& path);

// Every file SaveModel(model, path) writes (a .tiktoken also writes its sidecar).
absl::StatusOr<std::vector<std::string>> OutputFilesOf(const std::string& path);

absl::Status SaveModel(const Model& model, const std::string& path);
// Saves `model` at `path` in `format` (whatever the path's extension).
absl::Status SaveModelAs(const Model& model, const std::string& path, ModelFormat format);

}  // namespace tokenmill
