// Loading and saving a Model in any supported file format.
//
// Formats: Hugging Face tokenizer.json, tiktoken's .tiktoken (+ its JSON sidecar) and BERT's
// vocab.txt (WordPiece models: model/wordpiece/wordpiece_files.h). Loading looks at the
// content, not the name: a JSON object with a "model" field is a tokenizer.json; a JSON object
// with a "pattern" field is a tiktoken sidecar, loaded with the .tiktoken file next to it; a
// text whose first line is "<base64> <rank>" is a .tiktoken ranks file; any other text is a
// vocab.txt. Saving goes by the extension of the output path (.txt: vocab.txt).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "model/bpe/bpe_model.h"
#include "model/encoder.h"
#include "model/model.h"

namespace tokenmill {

enum class ModelFormat { kHfJson, kTiktoken, kVocabTxt };

std::string_view ModelFormatName(ModelFormat format);

// Which format `path` holds, from its first bytes. Errors name the file.
absl::StatusOr<ModelFormat> DetectModelFormat(const std::string& path);

// The file of the model at `model_path` that writing `output` would replace, or "": the path
// itself or, for a tiktoken model, its ranks file or JSON sidecar (either may be the path
// given). Compared as canonical paths; the model's format is read only when `output` is its
// ranks or sidecar path.
std::string ModelFileReplacedBy(const std::string& output, const std::string& model_path);

// Loads `path` in the format DetectModelFormat() finds. A vocab.txt gets `vocab_txt_text` as
// its pre-tokenizer and normalizer (the file has none; BERT's by default).
absl::StatusOr<std::unique_ptr<Model>> LoadModel(const std::string& path);
absl::StatusOr<std::unique_ptr<Model>> LoadModel(const std::string& path,
                                                 const PreTokenizerConfig& vocab_txt_text);
// LoadModel(path) and Encoder::Create() in one, the model checked once: the BPE readers
// (.tiktoken, tokenizer.json) check all that Model::Validate() does as they read (a .tiktoken's
// merges are true concatenations by construction), so for them the encoder does not again.
absl::StatusOr<std::unique_ptr<Encoder>> LoadEncoder(const std::string& path,
                                                     EncoderOptions options = {});
// BERT's text settings: the bert pre-tokenizer and normalizer, not lowercased.
PreTokenizerConfig BertTextSettings();
// The same for a file that must hold a BPE model (an error names the type it holds instead).
absl::StatusOr<BpeModel> LoadBpeModel(const std::string& path);

// The format SaveModel() writes for `path`: ".tiktoken" -> kTiktoken, ".json" -> kHfJson,
// ".txt" -> kVocabTxt.
absl::StatusOr<ModelFormat> OutputFormatOf(const std::string& path);

// Every file SaveModel(model, path) writes (a .tiktoken also writes its sidecar).
absl::StatusOr<std::vector<std::string>> OutputFilesOf(const std::string& path);

absl::Status SaveModel(const Model& model, const std::string& path);
// Saves `model` at `path` in `format` (whatever the path's extension).
absl::Status SaveModelAs(const Model& model, const std::string& path, ModelFormat format);

}  // namespace tokenmill
