// tokenmill convert IN OUT: rewrites a tokenizer in another format, ids unchanged.
// IN is read by content (tokenizer.json, .tiktoken, a tiktoken sidecar, or BERT's vocab.txt);
// OUT's extension picks the output: *.json -> Hugging Face tokenizer.json, *.tiktoken -> ranks
// file + its sidecar OUT-stem.json, *.txt -> vocab.txt. Refuses to overwrite the input (or the
// input's sidecar).
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "commands.h"
#include "common/file_util.h"
#include "common/strings.h"
#include "flags.h"
#include "model/model_file.h"

namespace tokenmill::cli {
namespace {

struct ConvertCommandOptions {
  bool force = false;  // overwrite existing output files
  // A vocab.txt input's text settings (the file has none): BERT's uncased models lowercase and
  // strip accents.
  bool lowercase = false;
  bool strip_accents = false;
};

}  // namespace

int RunConvert(int argc, char** argv) {
  ConvertCommandOptions options;
  FlagSet flags("convert", "IN OUT",
                "Converts a byte-level BPE tokenizer between Hugging Face tokenizer.json and\n"
                "tiktoken's .tiktoken (+ JSON sidecar with the pattern and special tokens), and\n"
                "a WordPiece tokenizer between tokenizer.json and BERT's vocab.txt.\n"
                "IN is recognised by its content; OUT by its extension (.json, .tiktoken, .txt).\n"
                "Ids are kept; encodings stay the same. A vocab.txt holds no text settings: it\n"
                "reads as BERT's cased setup (--preset bert, no lowercasing) unless --lowercase\n"
                "and --strip-accents say it is uncased.");
  flags.AddBool("force", &options.force, "overwrite output files that already exist");
  flags.AddBool("lowercase", &options.lowercase,
                "IN is a vocab.txt of an uncased model: lowercase the text (BertNormalizer's)");
  flags.AddBool("strip-accents", &options.strip_accents,
                "IN is a vocab.txt of an uncased model: strip accents (BertNormalizer's)");
  absl::StatusOr<std::vector<std::string>> positional = flags.Parse(argc, argv, 2);
  if (!positional.ok()) {
    PrintError("convert", positional.status());
    return kExitUsage;
  }
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return kExitOk;
  }
  if (positional->size() != 2) {
    PrintError("convert", "give exactly two arguments: IN OUT");
    return kExitUsage;
  }
  const std::string& in = (*positional)[0];
  const std::string& out = (*positional)[1];
  absl::StatusOr<std::vector<std::string>> outputs = OutputFilesOf(out);
  if (!outputs.ok()) {
    PrintError("convert", outputs.status());
    return kExitUsage;
  }
  absl::StatusOr<ModelFormat> format = DetectModelFormat(in);
  if ((options.lowercase || options.strip_accents) &&
      !(format.ok() && *format == ModelFormat::kVocabTxt)) {
    PrintError("convert", StrCat("--lowercase and --strip-accents describe a vocab.txt input; ", in,
                                 " records its own text settings"));
    return kExitUsage;
  }
  for (const std::string& file : *outputs) {
    if (!ModelFileReplacedBy(file, in).empty()) {
      PrintError("convert", StrCat("writing ", out, " would overwrite the input file ", file));
      return kExitUsage;
    }
    if (!options.force && std::filesystem::exists(file)) {
      PrintError("convert", StrCat(file, " already exists (use --force to overwrite it)"));
      return kExitFailure;
    }
  }
  PreTokenizerConfig text = BertTextSettings();
  text.normalizer.lowercase = options.lowercase;
  text.normalizer.strip_accents = options.strip_accents;
  absl::StatusOr<std::unique_ptr<Model>> model = LoadModel(in, text);
  if (!model.ok()) {
    PrintError("convert", model.status());
    return kExitFailure;
  }
  if (absl::Status saved = SaveModel(**model, out); !saved.ok()) {
    PrintError("convert", saved);
    return kExitFailure;
  }
  std::string written;
  for (const std::string& file : *outputs) written += (written.empty() ? "" : " and ") + file;
  std::fprintf(stderr, "tokenmill convert: wrote %s\n", written.c_str());
  return kExitOk;
}

}  // namespace tokenmill::cli
