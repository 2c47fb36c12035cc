// tokenmill explain --tokenizer T TEXT: why a text became the tokens it did. Prints each
// pre-tokenized piece and, for each, the merges applied in priority order down to the final
// tokens with their ids (or that the piece is a whole token, or a special token).
#include <cstdio>

#include "absl/container/flat_hash_set.h"
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "commands.h"
#include "common/file_util.h"
#include "common/strings.h"
#include "flags.h"
#include "model/bpe/bpe_model.h"
#include "model/encoder.h"
#include "model/model_file.h"
#include "model/text_display.h"

namespace tokenmill::cli {
namespace {

struct ExplainCommandOptions {
  std::string tokenizer;
  std::string file;  // read the text from this file instead of the arguments
  std::string specials = "allow";
};

std::string Quoted(std::string_view bytes) { return StrCat("'", DisplayBytes(bytes), "'"); }

// How explain shows tokens: their bytes quoted, byte-fallback tokens by name (<0xE2>).
class TokenNames {
 public:
  explicit TokenNames(const Model& model) : tokens_(model.token_bytes()) {
    for (TokenId id : model.byte_fallback_ids()) fallback_.insert(id);
  }
  std::string operator()(TokenId id) const {
    if (fallback_.contains(id)) return ByteFallbackName(static_cast<unsigned char>(tokens_[id][0]));
    return Quoted(tokens_[id]);
  }

 private:
  std::span<const std::string> tokens_;
  absl::flat_hash_set<TokenId> fallback_;
};

std::string PartsLine(const TokenNames& name, const std::vector<TokenId>& parts) {
  std::string line;
  for (TokenId id : parts) StrAppend(&line, line.empty() ? "" : " ", name(id));
  return line;
}

void PrintPiece(const Model& model, size_t index, const ExplainedPiece& piece, std::string& out) {
  const TokenNames name(model);
  StrAppend(&out, "piece ", index, ": ", Quoted(piece.text), " (", piece.text.size(), " bytes)\n");
  if (piece.special_index >= 0) {
    StrAppend(&out, "  special token -> ", piece.ids[0], "\n");
    return;
  }
  if (model.type() == ModelType::kWordPiece) {
    if (!piece.unknown_reason.empty()) {
      StrAppend(&out, "  the unknown token: ", piece.unknown_reason, " -> ",
                piece.ids.empty() ? std::string("(none: the vocabulary has no unknown token)")
                                  : StrCat(piece.ids[0]),
                "\n");
      return;
    }
    StrAppend(&out, "  longest match first:");
    for (size_t k = 0; k < piece.ids.size(); ++k) {
      StrAppend(&out, " ", name(piece.ids[k]), " at byte ", piece.piece_starts[k], " (",
                piece.ids[k], ")", k + 1 < piece.ids.size() ? "," : "");
    }
    StrAppend(&out, "\n  tokens:");
    for (TokenId id : piece.ids) StrAppend(&out, " ", id);
    out += "\n";
    return;
  }
  if (model.type() == ModelType::kUnigram) {
    auto path = [&](const std::vector<TokenId>& ids, const std::vector<size_t>& starts) {
      std::string line;
      for (size_t k = 0; k < ids.size(); ++k) {
        StrAppend(&line, k == 0 ? "" : " ", name(ids[k]), "@", starts[k]);
      }
      return line;
    };
    StrAppend(&out, "  best (Viterbi): ", path(piece.ids, piece.piece_starts), "   score ",
              absl::StrFormat("%.6f", piece.path_score), "\n");
    if (piece.has_runner_up) {
      StrAppend(&out, "  runner-up:      ", path(piece.runner_up, piece.runner_up_starts),
                "   score ", absl::StrFormat("%.6f", piece.runner_up_score), " (",
                absl::StrFormat("%.6f", piece.path_score - piece.runner_up_score), " lower)\n");
    } else {
      out += "  runner-up:      none (one segmentation only)\n";
    }
    StrAppend(&out, "  tokens:");
    for (TokenId id : piece.ids) StrAppend(&out, " ", id);
    out += "\n";
    return;
  }
  if (piece.whole_token) {
    StrAppend(&out, "  the whole piece is a token -> ", piece.ids[0],
              " (no merges needed: the model encodes whole-token pieces directly)\n");
    return;
  }
  std::vector<TokenId> parts = piece.initial;
  const bool chars = model.units().kind() == UnitKind::kChar;
  StrAppend(&out, chars ? "  characters: " : "  bytes:  ", PartsLine(name, parts), "\n");
  const BpeModel* bpe = AsBpe(model);
  const char* priority_name =
      bpe != nullptr && bpe->priority == MergePriority::kTokenRank ? "rank" : "merge";
  for (const MergeStep& step : piece.merges) {
    parts[step.part] = step.result;
    parts.erase(parts.begin() + static_cast<long>(step.part) + 1);
    StrAppend(&out, "  ", priority_name, " ", step.priority, ": ", name(step.left), " + ",
              name(step.right), " -> ", name(step.result), " (", step.result, ")   ",
              PartsLine(name, parts), "\n");
  }
  StrAppend(&out, "  tokens:");
  for (TokenId id : piece.ids) StrAppend(&out, " ", id);
  out += "\n";
}

}  // namespace

int RunExplain(int argc, char** argv) {
  ExplainCommandOptions options;
  FlagSet flags("explain", "--tokenizer FILE TEXT... | --file FILE",
                "Shows how TEXT is encoded: its pre-tokenized pieces and, for each, the merges\n"
                "applied in priority order (merge index for tokenizer.json, token rank for\n"
                ".tiktoken) down to the final tokens and their ids; for WordPiece, the longest\n"
                "matches and where each starts, or why a word became the unknown token; for\n"
                "Unigram, the best segmentation (token@byte) with its score, and the runner-up.\n"
                "Several TEXT arguments are joined with spaces.");
  flags.AddString("tokenizer", &options.tokenizer,
                  "tokenizer.json, .tiktoken or BERT's vocab.txt (required)");
  flags.AddString("file", &options.file, "explain the contents of this file instead of TEXT");
  flags.AddChoice("specials", &options.specials, {"allow", "disallow", "text"},
                  "special tokens in the text: become their ids, are an error, or are text");
  absl::StatusOr<std::vector<std::string>> positional = flags.Parse(argc, argv, 2);
  if (!positional.ok()) {
    PrintError("explain", positional.status());
    return kExitUsage;
  }
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return kExitOk;
  }
  if (options.tokenizer.empty()) {
    PrintError("explain", "--tokenizer is required");
    return kExitUsage;
  }
  if (positional->empty() == options.file.empty()) {
    PrintError("explain", "give the text as arguments or with --file, not both or neither");
    return kExitUsage;
  }
  std::string text;
  if (!options.file.empty()) {
    absl::StatusOr<std::string> contents = ReadFile(options.file);
    if (!contents.ok()) {
      PrintError("explain", contents.status());
      return kExitFailure;
    }
    text = *std::move(contents);
  } else {
    for (const std::string& arg : *positional) text += (text.empty() ? "" : " ") + arg;
  }
  absl::StatusOr<std::unique_ptr<Model>> model = LoadModel(options.tokenizer);
  if (!model.ok()) {
    PrintError("explain", model.status());
    return kExitFailure;
  }
  absl::StatusOr<std::unique_ptr<Encoder>> encoder = Encoder::Create(*std::move(model));
  if (!encoder.ok()) {
    PrintError("explain", encoder.status());
    return kExitFailure;
  }
  SpecialPolicy policy = options.specials == "allow"      ? SpecialPolicy::kAllow
                         : options.specials == "disallow" ? SpecialPolicy::kDisallow
                                                          : SpecialPolicy::kAsText;
  absl::StatusOr<std::vector<ExplainedPiece>> pieces = (*encoder)->Explain(text, policy);
  if (!pieces.ok()) {
    PrintError("explain", pieces.status());
    return kExitFailure;
  }
  std::string out;
  const PreTokenizerConfig& pre = (*encoder)->model().pre_tokenizer();
  if (!pre.normalizer.identity() || pre.preset == "metaspace") {
    std::vector<std::string> steps;
    if (pre.normalizer.form != NormalForm::kNone) {
      steps.push_back(pre.normalizer.form == NormalForm::kNfc ? "nfc normalization"
                                                              : "nfkc normalization");
    }
    if (pre.normalizer.clean_text) steps.push_back("control characters dropped, whitespace as spaces");
    if (pre.normalizer.handle_chinese_chars) steps.push_back("spaces around CJK ideographs");
    if (pre.normalizer.strip_accents) steps.push_back("accents stripped (NFD, marks dropped)");
    if (pre.normalizer.lowercase) steps.push_back("lowercase");
    if (pre.preset == "metaspace") steps.push_back("spaces as \u2581");
    if (pre.preset == "metaspace" && pre.metaspace_prefix) steps.push_back("a \u2581 first");
    StrAppend(&out, "text is prepared before it is split: ", absl::StrJoin(steps, ", "),
              "; the pieces below are of the prepared text\n");
  }
  std::vector<TokenId> all;
  for (size_t i = 0; i < pieces->size(); ++i) {
    PrintPiece((*encoder)->model(), i + 1, (*pieces)[i], out);
    all.insert(all.end(), (*pieces)[i].ids.begin(), (*pieces)[i].ids.end());
  }
  StrAppend(&out, "\n", text.size(), " bytes, ", pieces->size(), " pieces, ", all.size(), " tokens:");
  for (TokenId id : all) StrAppend(&out, " ", id);
  out += "\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
}

}  // namespace tokenmill::cli
