// tokenmill inspect FILE: what a tokenmill file holds. The file's kind is recognised from its
// content by the entries of kInspectors, tried in order (the most specific formats first; the
// tokenizer entry accepts any text, so it stays last). To inspect a new kind of file, add a
// Recognize/Print pair and one line to kInspectors.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "checkpoint/checkpoint.h"
#include "driver/describe.h"
#include "commands.h"
#include "tokens/token_file.h"
#include "train/train_progress.h"
#include "count/counts_file.h"
#include "common/file_util.h"
#include "common/strings.h"
#include "flags.h"
#include "model/bpe/bpe_model.h"
#include "model/unigram/unigram_model.h"
#include "model/wordpiece/wordpiece_model.h"
#include "model/encoder.h"
#include "model/model_file.h"
#include "model/model_stats.h"
#include "model/text_display.h"
#include "option_flags.h"
#include "pretokenize/presets.h"

namespace tokenmill::cli {
namespace {

struct InspectCommandOptions {
  size_t top = 20;     // entries to list: longest tokens, most frequent words
  std::string corpus;  // tokenizers: measure compression on this text file
  // Token files (tokenmill encode --output): the tokenizer to decode the first documents with,
  // the format of a raw file without a telling extension, and its Megatron index.
  std::string tokenizer;
  std::string input_format = "auto";
  std::string index;
  size_t documents = 3;
};

// One kind of file `inspect` understands.
struct Inspector {
  std::string_view kind;
  // Whether `path`, whose first bytes are `head` (up to 4 KB), is of this kind.
  bool (*recognize)(const std::string& path, std::string_view head);
  // Prints the report on stdout; errors go through PrintError. Returns the exit code.
  int (*print)(const std::string& path, const InspectCommandOptions& options);
};

int PrintDescription(const absl::StatusOr<std::string>& description) {
  if (!description.ok()) {
    PrintError("inspect", description.status());
    return kExitFailure;
  }
  std::fputs(description->c_str(), stdout);
  return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
}

// ---- word-count files (tokenmill count --output) ------------------------------

// By content; a file named *.tmc that is not one is reported as a bad word-count file, not as a
// tokenizer it is not.
bool RecognizeCounts(const std::string& path, std::string_view) {
  return IsCountsFile(path) || path.ends_with(".tmc");
}

int PrintCounts(const std::string& path, const InspectCommandOptions& options) {
  std::string description;
  absl::Status status = DescribeCountsFile(path, options.top, &description);
  if (!status.ok()) return PrintDescription(status);
  return PrintDescription(description);
}

// ---- training checkpoints (tokenmill train) ----------------------------------

// By content; a file named *.ckpt that is not one is reported as a bad checkpoint.
bool RecognizeCheckpoint(const std::string& path, std::string_view) {
  return IsCheckpointFile(path) || path.ends_with(".ckpt");
}

int PrintCheckpoint(const std::string& path, const InspectCommandOptions&) {
  absl::StatusOr<Checkpoint> checkpoint = ReadCheckpoint(path);
  if (!checkpoint.ok()) return PrintDescription(checkpoint.status());
  // Options as flags; those without one (the algorithm, the units, the inputs) by name.
  return PrintDescription(DescribeCheckpoint(*checkpoint, [](std::string_view name) {
    const std::string flag = FlagOf(name);
    return flag.empty() ? std::string(name) : "--" + flag;
  }));
}

// ---- tokenizers (tokenizer.json, .tiktoken, tiktoken sidecar) ----------------

bool RecognizeTokenizer(const std::string&, std::string_view) { return true; }

// What becomes of characters without a token, for a model of character units without byte
// fallback.
std::string_view CharUnitsNote(const Model& model) {
  if (const WordPieceModel* wordpiece = AsWordPiece(model)) {
    return wordpiece->unknown() ? " (characters; a word no tokens cover becomes the unknown token)"
                                : " (characters; a word no tokens cover cannot be encoded)";
  }
  const BpeModel* bpe = AsBpe(model);
  return bpe != nullptr && bpe->unknown
             ? " (characters; those without a token become the unknown token)"
             : " (characters; those without a token cannot be encoded, or are dropped)";
}

// The normalizer's steps in the order they run: "nfkc, then lowercase"; BERT's named as such.
std::string DescribeNormalizer(const NormalizerConfig& n) {
  if (n.identity()) return "none";
  if (!n.bert() && n.form == NormalForm::kNone) return "lowercase";
  if (!n.bert()) return StrCat(NormalFormName(n.form), n.lowercase ? ", then lowercase" : "");
  std::vector<std::string> steps;
  if (n.form != NormalForm::kNone) steps.emplace_back(NormalFormName(n.form));
  if (n.clean_text) steps.push_back("BERT's clean text (controls dropped, whitespace as spaces)");
  if (n.handle_chinese_chars) steps.push_back("BERT's spaces around CJK ideographs");
  if (n.strip_accents) steps.push_back("accents stripped (NFD, marks dropped)");
  if (n.lowercase) steps.push_back("lowercase");
  return absl::StrJoin(steps, ", then ");
}

int PrintTokenizer(const std::string& path, const InspectCommandOptions& options) {
  absl::StatusOr<ModelFormat> format = DetectModelFormat(path);
  absl::StatusOr<std::unique_ptr<Model>> loaded =
      format.ok() ? LoadModel(path) : absl::StatusOr<std::unique_ptr<Model>>(format.status());
  if (!loaded.ok()) {
    PrintError("inspect", loaded.status());
    return kExitFailure;
  }
  std::unique_ptr<Model>& model = *loaded;
  std::span<const std::string> tokens = model->token_bytes();
  std::string out;
  size_t specials = model->special_tokens().size();
  size_t regular = model->VocabSize() - specials;
  size_t max_len = 0, total_len = 0;
  for (TokenId id = 0; id < tokens.size(); ++id) {
    max_len = std::max(max_len, tokens[id].size());
    total_len += tokens[id].size();
  }

  StrAppend(&out, "file:          ", path, " (", ModelFormatName(*format), ")\n");
  StrAppend(&out, "vocabulary:    ", model->VocabSize(), " tokens (", regular, " regular + ",
            specials, " special), ids 0..", tokens.size() - 1, "\n");
  StrAppend(&out, "model:         ", ModelTypeName(model->type()), "\n");
  if (const WordPieceModel* wordpiece = AsWordPiece(*model)) {
    size_t continuing = 0;
    for (TokenId id = 0; id < tokens.size(); ++id) {
      continuing += std::string_view(tokens[id]).starts_with(wordpiece->prefix) &&
                    tokens[id].size() > wordpiece->prefix.size();
    }
    const std::optional<TokenId> unknown = wordpiece->unknown();
    StrAppend(&out, "word pieces:   ", regular - continuing, " start a word, ", continuing,
              " continue one (prefix '", wordpiece->prefix, "'); greedy longest match first\n");
    StrAppend(&out, "unknown:       '", wordpiece->unk_token, "'",
              unknown ? StrCat(" = ", *unknown) : std::string(" (not in the vocabulary: a word "
                                                                "it cannot match is an error)"),
              ", for a word of more than ", wordpiece->max_input_chars_per_word,
              " characters or one no tokens cover\n");
    StrAppend(&out, "decoder:       WordPiece", wordpiece->cleanup ? ", with cleanup" : "", "\n");
  }
  if (const UnigramModel* unigram = AsUnigram(*model)) {
    absl::flat_hash_set<TokenId> skip(unigram->byte_fallback.begin(), unigram->byte_fallback.end());
    for (const SpecialToken& s : unigram->specials) skip.insert(s.id);
    double lo = 0, hi = 0;
    bool any = false;
    for (TokenId id = 0; id < unigram->scores.size(); ++id) {
      if (skip.contains(id)) continue;
      lo = any ? std::min(lo, unigram->scores[id]) : unigram->scores[id];
      hi = any ? std::max(hi, unigram->scores[id]) : unigram->scores[id];
      any = true;
    }
    StrAppend(&out, "pieces:        ", unigram->tokens.size() - skip.size(),
              " scored (log-probabilities ", absl::StrFormat("%.4f", hi), " .. ",
              absl::StrFormat("%.4f", lo), "); Viterbi: the segmentation of the highest score\n");
    StrAppend(&out, "unknown:       ",
              unigram->unk_id == kNoUnknownToken
                  ? std::string("none (a character no piece covers cannot be encoded)")
                  : StrCat("'", unigram->tokens[unigram->unk_id], "' = ", unigram->unk_id,
                           unigram->byte_fallback.empty() ? "" : " (characters no piece covers "
                                                                  "become byte-fallback tokens)"),
              "\n");
  }
  if (const BpeModel* bpe = AsBpe(*model)) {
    StrAppend(&out, "merges:        ",
              bpe->rank_merges_implied ? StrCat(MergeList(*bpe).size(), " implied by the ranks")
                                       : StrCat(bpe->merges.size()),
              ", applied by ",
              bpe->priority == MergePriority::kTokenRank ? "token rank (tiktoken)"
                                                          : "merge index (Hugging Face)",
              "\n");
    StrAppend(&out, "whole pieces:  ",
              bpe->ignore_merges ? "a piece that is a token encodes as that token (ignore_merges)"
                                 : "every piece goes through the merges",
              "\n");
  }
  const PreTokenizerConfig& pre = model->pre_tokenizer();
  const std::span<const TokenId> fallback = model->byte_fallback_ids();
  StrAppend(&out, "units:         ", UnitKindName(model->units().kind()),
            model->units().kind() == UnitKind::kByte
                ? " (byte-level: every byte has a token)"
                : (fallback.empty()
                       ? std::string(CharUnitsNote(*model))
                       : StrCat(" (characters; byte fallback: the 256 tokens <0x00>..<0xFF> at "
                                "ids ", fallback.front(), "..", fallback.back(), ")")),
            "\n");
  size_t chars = 0;
  if (model->units().kind() == UnitKind::kChar) {
    std::vector<bool> skip(tokens.size(), false);
    for (TokenId id : fallback) skip[id] = true;
    for (const SpecialToken& s : model->special_tokens()) skip[s.id] = true;
    for (TokenId id = 0; id < tokens.size(); ++id) {
      chars += !skip[id] && !tokens[id].empty() && model->units().Length(tokens[id]) == 1;
    }
    StrAppend(&out, "characters:    ", chars, " single-character tokens\n");
  }
  StrAppend(&out, "normalizer:    ", DescribeNormalizer(pre.normalizer), "\n");
  StrAppend(&out, "pre-tokenizer: ", pre.preset,
            pre.preset == "metaspace"
                ? (pre.metaspace_prefix ? " (spaces become \u2581, one goes first)"
                                        : " (spaces become \u2581, no prefix)")
            : pre.preset == "bert" ? " (whitespace dropped, each punctuation character alone)"
                                   : "",
            pre.split_digits ? ", then each digit alone" : "", "\n");
  StrAppend(&out, "pattern:       ", EffectivePattern(pre), "\n");
  StrAppend(&out, "special tokens:");
  for (const SpecialToken& s : model->special_tokens()) StrAppend(&out, " ", s.content, "=", s.id);
  StrAppend(&out, specials == 0 ? " none\n" : "\n");
  out += absl::StrFormat("token bytes:   mean %.2f, max %d\n",
                         model->VocabSize() ? double(total_len) / double(model->VocabSize()) : 0.0,
                         max_len);
  std::vector<TokenId> longest = LongestTokens(*model, options.top);
  StrAppend(&out, "longest tokens:\n");
  for (TokenId id : longest) {
    out += absl::StrFormat("  %8d  %3d bytes  '%s'\n", id, tokens[id].size(),
                           DisplayBytes(tokens[id]));
  }
  if (!options.corpus.empty()) {
    absl::StatusOr<std::unique_ptr<Encoder>> encoder = Encoder::Create(std::move(model));
    absl::StatusOr<CorpusStats> stats =
        encoder.ok() ? MeasureCorpus(**encoder, options.corpus) : encoder.status();
    if (!stats.ok()) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      PrintError("inspect", stats.status());
      return kExitFailure;
    }
    StrAppend(&out, "corpus:        ", options.corpus, "\n");
    out += absl::StrFormat(
        "  %d bytes, %d lines, %d characters, %d words -> %d tokens\n"
        "  %.3f bytes/token, %.3f tokens/word, %.3f tokens/character\n"
        "  encoded in %.2f s (%.1f MB/s, lines in parallel)\n",
        stats->bytes, stats->lines, stats->characters, stats->words, stats->tokens,
        stats->BytesPerToken(), stats->TokensPerWord(), stats->TokensPerCharacter(),
        stats->seconds, stats->seconds > 0 ? double(stats->bytes) / 1e6 / stats->seconds : 0.0);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
}

// Most specific first; the tokenizer reader accepts anything and reports what is wrong.
// encode's text output (lines of space-separated ids) by its first bytes: only digits, spaces
// and line ends, and two ids on one line somewhere (a vocab.txt has one token a line, without
// spaces; a file of one-id lines is left to --input-format text).
bool LooksLikeIdLines(std::string_view head) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  bool two_on_a_line = false;
  for (size_t i = 0; i < head.size(); ++i) {
    const char c = head[i];
    if (c == ' ') {
      two_on_a_line |= i > 0 && i + 1 < head.size() && digit(head[i - 1]) && digit(head[i + 1]);
    } else if (c != '\n' && !digit(c)) {
      return false;
    }
  }
  return two_on_a_line;
}

// The file's first 4 KiB, what the recognizers look at; nullopt when it cannot be opened.
std::optional<std::string> ReadHead(const std::string& path) {
  std::string head(4096, '\0');
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return std::nullopt;
  head.resize(std::fread(head.data(), 1, head.size(), file));
  std::fclose(file);
  return head;
}

bool RecognizeTokenFile(const std::string& path, std::string_view head) {
  return head.starts_with("\x93NUMPY") || path.ends_with(".u16") || path.ends_with(".u32") ||
         LooksLikeIdLines(head);
}

int PrintTokenFile(const std::string& path, const InspectCommandOptions& options) {
  std::optional<TokenFileFormat> given;
  if (options.input_format != "auto") given = *ParseTokenFileFormat(options.input_format);
  absl::StatusOr<TokenFileFormat> format = DetectTokenFileFormat(path, given);
  if (!format.ok() && !given && LooksLikeIdLines(ReadHead(path).value_or(""))) format = TokenFileFormat::kText;
  if (!format.ok()) {
    PrintError("inspect", format.status());
    return kExitUsage;
  }
  // A binary file is mapped, not read: its ids are looked at where needed (a file of any size).
  std::optional<MappedTokenFile> mapped;
  std::vector<TokenId> text_ids;
  std::vector<size_t> line_ends;
  if (*format == TokenFileFormat::kText) {
    absl::StatusOr<TokenFileContents> contents = ReadTokenFile(path, *format);
    if (!contents.ok()) {
      PrintError("inspect", contents.status());
      return kExitFailure;
    }
    text_ids = std::move(contents->ids);
    line_ends = std::move(contents->line_ends);
  } else {
    absl::StatusOr<MappedTokenFile> opened = MappedTokenFile::Open(path, *format);
    if (!opened.ok()) {
      PrintError("inspect", opened.status());
      return kExitFailure;
    }
    mapped.emplace(*std::move(opened));
  }
  const size_t count = mapped ? mapped->size() : text_ids.size();
  auto id_at = [&](size_t i) { return mapped ? (*mapped)[i] : text_ids[i]; };
  TokenId max_id = 0;
  for (size_t i = 0; i < count; ++i) max_id = std::max(max_id, id_at(i));
  std::printf("token file: %s (%s)\n", path.c_str(), std::string(TokenFileFormatName(*format)).c_str());
  std::printf("tokens: %zu\n", count);
  if (count > 0) {
    const unsigned long long bound = static_cast<unsigned long long>(max_id) + 1;  // 2^32 for id 2^32-1
    std::printf("ids: all below %llu (the vocabulary needs at least %llu ids)\n", bound, bound);
  }
  // (A vocabulary of up to 262,144 ids: a u32 id's high half is at most 3.)
  if (*format == TokenFileFormat::kU16 && LooksLikeU32ReadAsU16(*mapped, 3)) {
    std::printf("note: every second id is below 4, as a u32 id's high half: is it a file of u32 ids? "
                "then give --input-format u32\n");
  }
  // Documents: the text file's lines, or the index (--index, or PATH's .idx beside it).
  std::vector<std::pair<size_t, size_t>> documents;  // [begin, end) in ids
  if (*format == TokenFileFormat::kText) {
    size_t begin = 0;
    for (size_t end : line_ends) documents.push_back({begin, end}), begin = end;
  } else {
    std::string index = options.index;
    if (index.empty()) {
      // (The extension of the file's name only: a folder named v1.0 has none of it.)
      const std::string beside = std::filesystem::path(path).replace_extension(".idx").string();
      if (CheckReadableFile(beside).ok()) index = beside;
    }
    if (!index.empty()) {
      absl::StatusOr<MegatronIndex> read = ReadMegatronIndex(index);
      if (!read.ok()) {
        PrintError("inspect", read.status());
        return kExitFailure;
      }
      // The index's dtype gives the width (an npy file's ids need not reach 65,536).
      const size_t width = read->dtype_code == 8 ? 2 : 4;
      uint64_t total = 0;
      for (size_t i = 0; i < read->sizes.size(); ++i) {
        // Each document must lie within the token file: an index of another file would
        // otherwise decode ids past its end.
        const int64_t pointer = read->pointers[i];
        const int64_t size = read->sizes[i];
        if (pointer < 0 || size < 0 || pointer % static_cast<int64_t>(width) != 0 ||
            static_cast<uint64_t>(pointer) / width + static_cast<uint64_t>(size) > count) {
          PrintError("inspect", StrCat("index '", index, "' does not fit '", path, "' (", count,
                                       " tokens): its document ", i + 1, " is ", size,
                                       " tokens at byte ", pointer, "; is it this file's index?"));
          return kExitFailure;
        }
        const size_t begin = static_cast<size_t>(pointer) / width;
        documents.push_back({begin, begin + static_cast<size_t>(size)});
        total += static_cast<uint64_t>(size);
      }
      // Megatron's documents cover the token file exactly; an index covering less belongs to
      // another file (or is damaged), and its documents would be wrong ones.
      if (total != count) {
        PrintError("inspect", StrCat("index '", index, "' covers ", total, " tokens, '", path,
                                     "' holds ", count, "; is it this file's index?"));
        return kExitFailure;
      }
      std::printf("index: %s, %zu documents, %llu tokens\n", index.c_str(), read->sizes.size(),
                  static_cast<unsigned long long>(total));
    }
  }
  if (!documents.empty()) {
    std::printf("documents: %zu, %.2f tokens per document\n", documents.size(),
                static_cast<double>(count) / static_cast<double>(documents.size()));
  }
  if (options.tokenizer.empty()) {
    std::printf("first ids:");
    for (size_t i = 0; i < count && i < 20; ++i) std::printf(" %u", id_at(i));
    std::printf("\n(give --tokenizer to see the first documents decoded)\n");
    return kExitOk;
  }
  absl::StatusOr<std::unique_ptr<Model>> model = LoadModel(options.tokenizer);
  if (!model.ok()) {
    PrintError("inspect", model.status());
    return kExitFailure;
  }
  absl::StatusOr<std::unique_ptr<Encoder>> encoder = Encoder::Create(*std::move(model));
  if (!encoder.ok()) {
    PrintError("inspect", encoder.status());
    return kExitFailure;
  }
  const size_t vocab = (*encoder)->model().token_bytes().size();
  if (count > 0 && max_id >= vocab) {
    size_t first = 0;
    while (id_at(first) < vocab) ++first;
    PrintError("inspect", StrCat(path, ": token ", first + 1, " is id ", id_at(first),
                                 ", beyond this tokenizer's ", vocab, " ids: was the file written with "
                                 "another vocabulary?",
                                 *format == TokenFileFormat::kU32 ? U16ReadAsU32Hint(id_at(first), vocab) : ""));
    return kExitFailure;
  }
  // No index: the documents' ends are unknown, so the first ids are shown as such.
  const bool no_documents = documents.empty();
  if (no_documents) documents.push_back({0, std::min<size_t>(count, 200)});
  for (size_t d = 0; d < documents.size() && d < options.documents; ++d) {
    const auto [begin, end] = documents[d];
    std::vector<TokenId> ids;
    const size_t stop = std::min(end, count);
    if (mapped) {
      mapped->AppendIds(begin, stop, ids);
    } else {
      ids.assign(text_ids.begin() + static_cast<ptrdiff_t>(begin),
                 text_ids.begin() + static_cast<ptrdiff_t>(stop));
    }
    std::string text;
    absl::Status s = (*encoder)->DecodeTo(ids, text);
    if (!s.ok()) {
      PrintError("inspect", s);
      return kExitFailure;
    }
    if (text.size() > 300) text = text.substr(0, 300) + "...";
    if (no_documents) {
      std::printf("first %zu ids (no index: document ends unknown): %s\n", end - begin,
                  ShowBytes(text).c_str());
    } else {
      std::printf("document %zu (%zu tokens): %s\n", d + 1, end - begin, ShowBytes(text).c_str());
    }
  }
  return kExitOk;
}

constexpr Inspector kInspectors[] = {
    {"tokens", RecognizeTokenFile, PrintTokenFile},
    {"counts", RecognizeCounts, PrintCounts},
    {"checkpoint", RecognizeCheckpoint, PrintCheckpoint},
    {"tokenizer", RecognizeTokenizer, PrintTokenizer},
};

}  // namespace

int RunInspect(int argc, char** argv) {
  InspectCommandOptions options;
  FlagSet flags("inspect", "FILE",
                "Describes a tokenmill file, recognised by its content:\n"
                "  a tokenizer (tokenizer.json or .tiktoken): vocab size, special tokens, pattern,\n"
                "    longest tokens, and with --corpus the compression it achieves on your text;\n"
                "  a word-count file (tokenmill count --output): its header (pre-tokenizer,\n"
                "    special tokens, totals) and the most frequent words;\n"
                "  a training checkpoint (tokenmill train): its configuration, merges done of\n"
                "    the target, corpus fingerprint and sizes;\n"
                "  a token file (tokenmill encode --output): its count, the ids' bound, and with\n"
                "    --tokenizer the first documents decoded (.npy by its header; raw u16/u32 by\n"
                "    their extension or --input-format; lines of ids by their content).");
  flags.AddSize("top", &options.top, "how many entries to list (longest tokens, most frequent words)");
  flags.AddString("corpus", &options.corpus,
                  "text file to measure bytes/token and tokens/word on (lines as documents)");
  flags.AddString("tokenizer", &options.tokenizer,
                  "token files: decode the first documents with this tokenizer");
  flags.AddChoice("input-format", &options.input_format, {"auto", "text", "u16", "u32", "npy"},
                  "token files: the format (npy is recognised by its header, u16/u32 by the "
                  "extension .u16/.u32)");
  flags.AddString("index", &options.index,
                  "token files: the Megatron .idx with the documents (default: FILE's .idx beside it)");
  flags.AddSize("documents", &options.documents, "token files: how many documents to decode");
  absl::StatusOr<std::vector<std::string>> positional = flags.Parse(argc, argv, 2);
  if (!positional.ok()) {
    PrintError("inspect", positional.status());
    return kExitUsage;
  }
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return kExitOk;
  }
  if (positional->size() != 1) {
    PrintError("inspect", "give exactly one file to inspect");
    return kExitUsage;
  }
  const std::string& path = (*positional)[0];
  if (absl::Status readable = CheckReadableFile(path); !readable.ok()) {
    PrintError("inspect", readable);
    return kExitFailure;
  }
  const std::optional<std::string> head = ReadHead(path);
  if (!head) {
    PrintError("inspect", StrCat(path, ": cannot open"));
    return kExitFailure;
  }
  if (options.input_format != "auto") return PrintTokenFile(path, options);
  for (const Inspector& inspector : kInspectors) {
    if (inspector.recognize(path, *head)) return inspector.print(path, options);
  }
  PrintError("inspect", StrCat(path, ": not a file tokenmill knows"));
  return kExitFailure;
}

}  // namespace tokenmill::cli
