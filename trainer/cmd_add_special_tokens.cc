// tokenmill add-special-tokens TOKENIZER --special-token X... --output OUT: the tokenizer with
// new special tokens after its vocabulary (model/add_special_tokens.h), written as
// tokenizer.json, .tiktoken (+ sidecar) or vocab.txt. Prints each token's id on stderr.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "commands.h"
#include "common/strings.h"
#include "flags.h"
#include "model/add_special_tokens.h"
#include "model/model_file.h"
#include "model/text_display.h"
#include "model/tiktoken_file.h"
#include "model/wordpiece/wordpiece_files.h"
#include "model/wordpiece/wordpiece_model.h"

namespace tokenmill::cli {
namespace {

constexpr char kCommand[] = "add-special-tokens";

struct AddSpecialTokensCommandOptions {
  std::vector<std::string> special_tokens;
  std::string output;
  ModelFormat format = ModelFormat::kHfJson;  // without --format: by OUT's extension
  bool force = false;                         // overwrite existing output files
};

// A vocab.txt marks only BERT's five special tokens; any other would read back as a regular one.
absl::Status CheckVocabTxtSpecials(const std::vector<std::string>& tokens) {
  for (const std::string& token : tokens) {
    if (std::find(std::begin(kBertSpecialTokens), std::end(kBertSpecialTokens), token) ==
        std::end(kBertSpecialTokens)) {
      return absl::InvalidArgumentError(StrCat(
          "vocab.txt marks only BERT's special tokens ([PAD] [UNK] [CLS] [SEP] [MASK]); '",
          DisplayBytes(token), "' would read back as a regular token (write tokenizer.json)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

int RunAddSpecialTokens(int argc, char** argv) {
  AddSpecialTokensCommandOptions options;
  FlagSet flags("add-special-tokens",
                "TOKENIZER --special-token TEXT [--special-token TEXT]... --output OUT",
                "Adds special tokens (literal strings never split or merged) to a trained\n"
                "tokenizer, as Hugging Face's add_special_tokens does: each new one gets the next\n"
                "id after the whole vocabulary, in the order given; one that is already special\n"
                "keeps its id. Text without the new tokens encodes to the same ids as before.\n"
                "Unlike Hugging Face, a token that is already a regular token of the vocabulary\n"
                "(by its bytes, or its text in tokenizer.json) is refused; Hugging Face would make\n"
                "that token special at its id, to be cut out of words too.\n"
                "TOKENIZER is any tokenizer file (tokenizer.json, .tiktoken, vocab.txt), read by\n"
                "its content. OUT is written in the format --format names, by default by its\n"
                "extension: *.tiktoken (+ its sidecar OUT-stem.json), *.txt (vocab.txt, which\n"
                "marks only BERT's five special tokens), anything else tokenizer.json.\n"
                "Prints each token's id on stderr.");
  flags.AddStrings("special-token", &options.special_tokens,
                   "a special token to add, e.g. '<|im_start|>' (at least one)");
  flags.AddString("output", &options.output, "where to write the tokenizer (required)");
  flags.AddEnum("format", &options.format,
                {{"hf", ModelFormat::kHfJson}, {"tiktoken", ModelFormat::kTiktoken},
                 {"vocab-txt", ModelFormat::kVocabTxt}},
                "output format: Hugging Face tokenizer.json, tiktoken's .tiktoken + sidecar "
                "(byte-level BPE), or BERT's vocab.txt (WordPiece); without it OUT's extension "
                "decides (.tiktoken, .txt, else hf)");
  flags.AddBool("force", &options.force, "overwrite output files that already exist");
  absl::StatusOr<std::vector<std::string>> positional = flags.Parse(argc, argv, 2);
  if (!positional.ok()) {
    PrintError(kCommand, positional.status());
    return kExitUsage;
  }
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return kExitOk;
  }
  if (positional->size() != 1) {
    PrintError(kCommand, "give exactly one argument: the TOKENIZER file to add tokens to");
    return kExitUsage;
  }
  if (options.special_tokens.empty()) {
    PrintError(kCommand, "--special-token is required (each token to add; repeatable)");
    return kExitUsage;
  }
  if (options.output.empty()) {
    PrintError(kCommand, "--output is required (where to write the tokenizer)");
    return kExitUsage;
  }
  const std::string& in = (*positional)[0];
  if (!flags.WasSet("format")) {
    options.format = OutputFormatOf(options.output).value_or(ModelFormat::kHfJson);
  }
  std::vector<std::string> outputs = {options.output};
  if (options.format == ModelFormat::kTiktoken) {
    outputs.push_back(TiktokenSidecarPath(options.output));
  }
  for (const std::string& file : outputs) {
    if (!options.force && std::filesystem::exists(file)) {
      PrintError(kCommand, StrCat(file, " already exists (use --force to overwrite it)"));
      return kExitFailure;
    }
  }
  absl::StatusOr<std::unique_ptr<Model>> model = LoadModel(in);
  if (!model.ok()) {
    PrintError(kCommand, model.status());
    return kExitFailure;
  }
  absl::StatusOr<AddedSpecialTokens> added = AddSpecialTokens(**model, options.special_tokens);
  if (!added.ok()) {
    PrintError(kCommand, added.status());
    return kExitFailure;
  }
  if (options.format == ModelFormat::kVocabTxt && AsWordPiece(*added->model) != nullptr) {
    if (absl::Status s = CheckVocabTxtSpecials(options.special_tokens); !s.ok()) {
      PrintError(kCommand, s);
      return kExitFailure;
    }
  }
  if (absl::Status saved = SaveModelAs(*added->model, options.output, options.format);
      !saved.ok()) {
    PrintError(kCommand, saved);
    return kExitFailure;
  }
  const size_t old_size = (*model)->token_bytes().size();
  std::vector<TokenId> reported;
  for (size_t i = 0; i < options.special_tokens.size(); ++i) {
    const std::string shown = DisplayBytes(options.special_tokens[i]);
    const TokenId id = added->ids[i];
    if (std::find(reported.begin(), reported.end(), id) != reported.end()) {
      std::fprintf(stderr, "'%s' was given before: id %u\n", shown.c_str(), id);
    } else if (id >= old_size) {
      std::fprintf(stderr, "added '%s' as id %u\n", shown.c_str(), id);
    } else {
      std::fprintf(stderr, "'%s' was already special token id %u\n", shown.c_str(), id);
    }
    reported.push_back(id);
  }
  std::string written;
  for (const std::string& file : outputs) written += (written.empty() ? "" : " and ") + file;
  std::fprintf(stderr, "wrote %s\n", written.c_str());
  return kExitOk;
}

}  // namespace tokenmill::cli
