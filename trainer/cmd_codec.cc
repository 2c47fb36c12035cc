// tokenmill encode / decode: text <-> token ids with a saved tokenizer (tokenizer.json or
// .tiktoken, told apart by content).
//
// encode: each input line (with its '\n') becomes one output line of space-separated ids;
//         --whole encodes the whole input as one text (one output line). Lines are encoded in
//         parallel in blocks; the output order is the input order whatever --threads is.
// decode: each input line of ids is turned back into its bytes, written with nothing added,
//         so `decode(encode(FILE)) == FILE` byte for byte; --lossy writes valid UTF-8 instead
//         (invalid sequences become U+FFFD), as tiktoken's and Hugging Face's decode to text do.
#include <tbb/global_control.h>
#include <unistd.h>

#include <algorithm>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "corpus_flags.h"
#include "common/file_util.h"
#include "common/strings.h"
#include "common/utf8.h"
#include "corpus/line_reader.h"
#include "count/count_corpus.h"
#include "flags.h"
#include "model/encoder.h"
#include "model/id_text.h"
#include "model/model_file.h"
#include "model/text_display.h"
#include "interrupt.h"
#include "option_flags.h"
#include "tokens/encode_corpus.h"
#include "tokens/token_file.h"

namespace tokenmill::cli {

// The other way round from LooksLikeU32ReadAsU16: u16 ids read as u32 give ids of two u16 ids
// each, which are no token; when the first such id is made of two ids below the bound, the
// hint says so.
std::string U16ReadAsU32Hint(TokenId id, size_t id_bound) {
  if (id < (TokenId{1} << 16) || (id & 0xFFFF) >= id_bound || (id >> 16) >= id_bound) return "";
  return " (read as u32: is it a file of u16 ids? then give --input-format u16)";
}

namespace {

struct EncodeCommandOptions {
  std::string tokenizer;
  EncodeCorpusOptions corpus;
  std::string output_format = "text";  // npy for an --output ending in .npy unless given
  std::string eot;
  bool stats = false;
  bool whole = false;
  std::string specials = "allow";
  int threads = 0;                   // 0: all cores
  UnknownBytes unknown_bytes = UnknownBytes::kError;
  size_t block_bytes = 4 << 20;      // lines are encoded in parallel blocks of about this size
  double alpha = 0;                  // Unigram sampling (subword regularization)
  int nbest = 0;
  uint64_t seed = 0;
};

struct DecodeCommandOptions {
  std::string tokenizer;
  bool lossy = false;
  std::string input_format = "auto";  // npy by its header, u16/u32 by extension, else text
};

// Parses flags; returns the single optional input path ("-" when none) or an exit code. The
// tokenizer (bound to --tokenizer) is required: its absence is a usage error.
struct ParsedInput {
  std::string input = "-";
  int exit_code = -1;  // >= 0: stop with this code
};

ParsedInput ParseOneInput(FlagSet& flags, std::string_view command, const std::string& tokenizer,
                          int argc, char** argv) {
  ParsedInput parsed;
  absl::StatusOr<std::vector<std::string>> positional = flags.Parse(argc, argv, 2);
  if (!positional.ok()) {
    PrintError(command, positional.status());
    parsed.exit_code = kExitUsage;
  } else if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    parsed.exit_code = kExitOk;
  } else if (tokenizer.empty()) {
    PrintError(command, "--tokenizer is required");
    parsed.exit_code = kExitUsage;
  } else if (positional->size() > 1) {
    PrintError(command, "give at most one input file (or none to read stdin)");
    parsed.exit_code = kExitUsage;
  } else if (positional->size() == 1) {
    parsed.input = (*positional)[0];
  }
  return parsed;
}

void AppendIds(absl::Span<const TokenId> ids, std::string& out) {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out.push_back(' ');
    StrAppend(&out, ids[i]);
  }
  out.push_back('\n');
}

// Encodes blocks of lines in parallel and writes their ids in input order.
class LineEncoder {
 public:
  LineEncoder(const Encoder& encoder, SpecialPolicy policy, std::string input, size_t block_bytes)
      : encoder_(encoder), policy_(policy), input_(std::move(input)), block_bytes_(block_bytes) {}

  void Add(std::string_view line) {
    if (!status_.ok()) return;
    offsets_.push_back(block_.size());
    block_.append(line);
    if (block_.size() >= block_bytes_) Flush();
  }

  // Encodes what is buffered; returns the first error (naming the input line).
  absl::Status Finish() {
    Flush();
    return status_;
  }

 private:
  void Flush() {
    if (!status_.ok() || offsets_.empty()) return;
    std::vector<std::string_view> lines;
    lines.reserve(offsets_.size());
    for (size_t i = 0; i < offsets_.size(); ++i) {
      size_t end = i + 1 < offsets_.size() ? offsets_[i + 1] : block_.size();
      lines.push_back(std::string_view(block_).substr(offsets_[i], end - offsets_[i]));
    }
    absl::StatusOr<EncodedBatch> ids = encoder_.EncodeBatch(lines, policy_);
    if (!ids.ok()) {
      // Rare: find the first failing line again, sequentially, to name it.
      for (size_t i = 0; i < lines.size(); ++i) {
        absl::StatusOr<std::vector<TokenId>> one = encoder_.Encode(lines[i], policy_);
        if (!one.ok()) {
          status_ = absl::InvalidArgumentError(
              StrCat(input_, ":", first_line_ + i, ": ", one.status().message()));
          break;
        }
      }
      if (status_.ok()) status_ = ids.status();
    }
    std::string out;
    for (size_t i = 0; status_.ok() && i < ids->size(); ++i) {
      AppendIds((*ids)[i], out);
      if (out.size() > (1 << 20)) {
        std::fwrite(out.data(), 1, out.size(), stdout);
        out.clear();
      }
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    first_line_ += offsets_.size();
    offsets_.clear();
    block_.clear();
  }

  const Encoder& encoder_;
  SpecialPolicy policy_;
  std::string input_;
  size_t block_bytes_;
  std::string block_;
  std::vector<size_t> offsets_;
  uint64_t first_line_ = 1;
  absl::Status status_;
};

// The id of --eot: a special token's text, or a token's text as tokenizer.json writes it.
absl::StatusOr<TokenId> EotId(const Model& model, const std::string& text) {
  for (const SpecialToken& s : model.special_tokens()) {
    if (s.content == text) return s.id;
  }
  const StringMap<TokenId> index = model.TokenIndex();
  if (auto it = index.find(text); it != index.end()) return it->second;
  // No token has that text: an id, when it is one (--eot 50256).
  uint64_t id = 0;
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos &&
      ParseInt(std::string_view(text), &id) && id < model.token_bytes().size() &&
      !model.token_bytes()[id].empty()) {
    return static_cast<TokenId>(id);
  }
  return absl::InvalidArgumentError(StrCat(
      "--eot '", text, "' is no token of this tokenizer (give a special token such as "
      "<|endoftext|>; add one with `tokenmill add-special-tokens`)"));
}

// The bytes at the end of `text` that begin a UTF-8 character still incomplete there (which the
// next part of a decoded sequence may complete): 0-3.
size_t OpenUtf8Tail(std::string_view text) {
  for (size_t back = 1; back <= std::min<size_t>(3, text.size()); ++back) {
    const auto c = static_cast<unsigned char>(text[text.size() - back]);
    if (c < 0x80) return 0;
    if (c >= 0xC0) {
      size_t subpart = 0;
      const bool open = ValidUtf8Length(text.substr(text.size() - back), &subpart) == 0 && subpart == back;
      return open ? back : 0;
    }
  }
  return 0;
}


// --stats: what users look at to judge a tokenizer on their data.
void PrintStats(const Model& model, const EncodeCorpusResult& r) {
  const double tokens = static_cast<double>(r.tokens);
  std::fprintf(stderr, "stats: %llu documents, %llu bytes, %llu tokens%s\n",
               static_cast<unsigned long long>(r.documents), static_cast<unsigned long long>(r.bytes),
               static_cast<unsigned long long>(r.tokens),
               r.eot_tokens > 0 ? StrCat(" (", r.eot_tokens, " of them --eot)").c_str() : "");
  // Per byte and per document: the text's own tokens, without the --eot separators.
  const double text_tokens = static_cast<double>(r.tokens - r.eot_tokens);
  std::fprintf(stderr, "stats: %.4f tokens per byte (%.3f bytes per token), %.2f tokens per document%s\n",
               r.bytes > 0 ? text_tokens / static_cast<double>(r.bytes) : 0.0,
               text_tokens > 0 ? static_cast<double>(r.bytes) / text_tokens : 0.0,
               r.documents > 0 ? text_tokens / static_cast<double>(r.documents) : 0.0,
               r.eot_tokens > 0 ? " (without the --eot)" : "");
  std::vector<TokenId> order;
  for (size_t id = 0; id < r.id_counts.size(); ++id) {
    if (r.id_counts[id] > 0) order.push_back(static_cast<TokenId>(id));
  }
  std::sort(order.begin(), order.end(), [&](TokenId a, TokenId b) {
    return r.id_counts[a] != r.id_counts[b] ? r.id_counts[a] > r.id_counts[b] : a < b;
  });
  std::fprintf(stderr, "stats: %zu of %zu ids used; the ten most frequent:\n", order.size(),
               model.token_bytes().size());
  std::vector<bool> special(model.token_bytes().size(), false);
  for (const SpecialToken& s : model.special_tokens()) special[s.id] = true;
  for (size_t i = 0; i < order.size() && i < 10; ++i) {
    const TokenId id = order[i];
    const std::string shown = special[id] ? model.token_bytes()[id] : DisplayBytes(model.token_bytes()[id]);
    std::fprintf(stderr, "  %8u  %-20s %12llu  %5.2f%%\n", id, StrCat("[", shown, "]").c_str(),
                 static_cast<unsigned long long>(r.id_counts[id]),
                 tokens > 0 ? 100.0 * static_cast<double>(r.id_counts[id]) / tokens : 0.0);
  }
  uint64_t fallback = 0, single = 0;
  for (TokenId id : model.byte_fallback_ids()) fallback += r.id_counts[id];
  for (size_t id = 0; id < r.id_counts.size(); ++id) {
    if (!special[id] && model.token_bytes()[id].size() == 1) single += r.id_counts[id];
  }
  // Shares of the text's tokens (an --eot is neither), as per byte and per document above.
  std::fprintf(stderr, "stats: byte-fallback tokens %.3f%% of the text's tokens, single-byte tokens %.3f%%\n",
               text_tokens > 0 ? 100.0 * static_cast<double>(fallback) / text_tokens : 0.0,
               text_tokens > 0 ? 100.0 * static_cast<double>(single) / text_tokens : 0.0);
}

}  // namespace

// What --tokenizer's help says of the cache of loaded vocabularies (model/vocab_cache.h).
constexpr std::string_view kCacheHelp =
    "A .tiktoken of 256 KiB or more is loaded once into tables kept in $TOKENMILL_CACHE_DIR "
    "(else $XDG_CACHE_HOME/tokenmill, else ~/.cache/tokenmill: a folder of the user's that no "
    "one else may write; at most 16 vocabularies; TOKENMILL_CACHE_DIR=off, or a path that is not "
    "absolute: none), which later runs read instead of building them again";

int RunEncode(int argc, char** argv) {
  EncodeCommandOptions options;
  EncodeCorpusOptions& corpus = options.corpus;
  FlagSet flags("encode", "--tokenizer FILE [--output OUT --output-format u32] [INPUT...]",
                "Encodes a corpus (files, folders without their hidden files, globs, .zst/.gz,\n"
                "JSON lines; stdin when no INPUT) into token ids, documents as training reads\n"
                "them (each line with its newline, --doc-mode file, or JSON records'\n"
                "--text-field), in input order, on all cores. Text output: one line of\n"
                "space-separated ids per document. Binary output for training pipelines: u16\n"
                "(nanoGPT's train.bin), u32, npy; --eot after each document, --index a\n"
                "Megatron .idx. The output appears only when complete.\n"
                "The tokenizer is a tokenizer.json, a .tiktoken (with its .json sidecar) or vocab.txt.");
  flags.AddString("tokenizer", &options.tokenizer,
                  "tokenizer.json or .tiktoken to encode with (required). " + std::string(kCacheHelp));
  flags.AddString("output", &corpus.output,
                  "where to write the ids (- : stdout); written to a temporary file and renamed "
                  "when complete, so an interrupted run leaves nothing");
  flags.AddChoice("output-format", &options.output_format, {"text", "u16", "u32", "npy"},
                  "text (decimal ids, a line per document), u16 / u32 (little-endian ids, "
                  "u16 only for vocabularies of at most 65,536 ids), npy (NumPy, uint16 or "
                  "uint32 as the vocabulary needs); default text, or what --output's extension "
                  "says (.npy, .u16, .u32); required for a .bin");
  flags.AddString("eot", &options.eot,
                  "append this token after each document (e.g. <|endoftext|>: a special token, "
                  "any token's text, or an id no token's text spells, such as 50256)");
  flags.AddString("index", &corpus.index,
                  "also write each document's offset and length in tokens here, as Megatron's "
                  "MMapIndexedDataset .idx (with --output-format u16 or u32: OUT.bin + OUT.idx)");
  flags.AddBool("stats", &options.stats,
                "print tokens per byte and per document, the ten most frequent ids and the share "
                "of byte-fallback and single-byte tokens on stderr");
  AddReadingFlags(flags, &corpus.reading);
  flags.AddBool("whole", &options.whole,
                "encode the whole input as one text: one output line (one input; see also "
                "--doc-mode file)");
  flags.AddChoice("specials", &options.specials, {"allow", "disallow", "text"},
                  "special tokens in the input: become their ids, are an error, or are encoded as text");
  flags.AddEnum("unknown-bytes", &options.unknown_bytes,
                {{"error", UnknownBytes::kError}, {"drop", UnknownBytes::kDrop}},
                "a byte no token holds (a --hf-compat vocabulary has only the bytes seen in "
                "training): an error naming the line and byte, or left out as Hugging Face does");
  flags.AddInt("threads", &options.threads,
               "worker threads (0: all cores; at most 8 per core, or 64); the output is the same for any. "
               "Threads that would wait for a compressed input encode the next files ahead (not pipes), their "
               "ids kept in unnamed scratch files beside --output (stdout: in $TMPDIR, else /tmp) until their turn");
  flags.AddSize("block-bytes", &options.block_bytes,
                "with --alpha: lines are sampled in parallel blocks of about this many bytes");
  flags.AddDouble("alpha", &options.alpha,
                  "Unigram: sample each piece's segmentation with probability proportional to "
                  "exp(alpha * score) instead of taking the best (subword regularization; 0: off)");
  flags.AddInt("nbest", &options.nbest,
               "with --alpha: sample among the N best segmentations (0: among all of them, by "
               "forward filtering and backward sampling)");
  flags.AddUint64("seed", &options.seed,
                  "with --alpha: the random seed (each thread's generator starts from it: with "
                  "--threads 1 the draws repeat)");
  InterruptGuard interrupt_guard;
  absl::StatusOr<std::vector<std::string>> positional = flags.Parse(argc, argv, 2);
  if (!positional.ok()) {
    PrintError("encode", positional.status());
    return kExitUsage;
  }
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return kExitOk;
  }
  if (options.tokenizer.empty()) {
    PrintError("encode", "--tokenizer is required");
    return kExitUsage;
  }
  corpus.reading.inputs = positional->empty() ? std::vector<std::string>{"-"} : *positional;
  if (!(options.alpha >= 0) || options.nbest < 0) {
    PrintError("encode", "--alpha must be 0 or more and --nbest 0 or more");
    return kExitUsage;
  }
  if (options.alpha == 0 && (flags.WasSet("nbest") || flags.WasSet("seed"))) {
    PrintError("encode", "--nbest and --seed shape sampling: they need --alpha above 0");
    return kExitUsage;
  }
  if (options.threads < 0) {
    PrintError("encode", "--threads must be 0 (all cores) or more");
    return kExitUsage;
  }
  // The format the --output's extension names (as decode and inspect read it): the default,
  // and an explicit --output-format must agree with it.
  for (const char* format : {"npy", "u16", "u32"}) {
    if (!corpus.output.ends_with(StrCat(".", format)) || options.output_format == format) continue;
    if (flags.WasSet("output-format")) {
      PrintError("encode", StrCat("--output '", corpus.output, "' is named ", format,
                                  " but --output-format is ", options.output_format,
                                  ": decode and inspect would read it as ", format));
      return kExitUsage;
    }
    options.output_format = format;
  }
  if (!flags.WasSet("output-format")) {
    // A .bin (nanoGPT's train.bin, Megatron's X.bin) names binary ids without saying their width:
    // decimal text there would be a surprise found only when training reads it.
    if (corpus.output.ends_with(".bin")) {
      PrintError("encode", StrCat("--output '", corpus.output, "' is a .bin: give --output-format "
                                  "u16 (nanoGPT's train.bin; vocabularies of up to 65,536 ids) or u32"));
      return kExitUsage;
    }
  }
  corpus.format = *ParseTokenFileFormat(options.output_format);
  // --whole and --alpha keep the line encoder (text on stdout, one input).
  const bool legacy = options.whole || options.alpha > 0;
  if (legacy) {
    for (const char* flag : {"output", "output-format", "eot", "index", "stats", "doc-mode",
                             "text-field", "input-format", "include", "exclude",
                             "skip-bad-records"}) {
      if (flags.WasSet(flag)) {
        PrintError("encode", StrCat("--", flag, " does not go with ",
                                    options.whole ? "--whole (use --doc-mode file without --whole for one document per file)" : "--alpha"));
        return kExitUsage;
      }
    }
    if (corpus.reading.inputs.size() > 1) {
      PrintError("encode", "give at most one input file (or none to read stdin)");
      return kExitUsage;
    }
  }
  if (!corpus.index.empty() && corpus.format != TokenFileFormat::kU16 &&
      corpus.format != TokenFileFormat::kU32) {
    PrintError("encode", "--index (Megatron's .idx) goes with --output-format u16 or u32");
    return kExitUsage;
  }
  if (!corpus.index.empty() && !corpus.output.empty() && corpus.output != "-" &&
      CanonicalPath(corpus.index) == CanonicalPath(corpus.output)) {
    PrintError("encode", StrCat("--index and --output are the same file ('", corpus.index,
                                "'): the index would replace the ids"));
    return kExitUsage;
  }
  // An output or index that is the tokenizer (or a tiktoken's other file) would replace it.
  for (const auto& [flag, path] : {std::pair<const char*, const std::string*>{"output", &corpus.output},
                                   {"index", &corpus.index}}) {
    if (path->empty() || *path == "-") continue;
    if (const std::string file = ModelFileReplacedBy(*path, options.tokenizer); !file.empty()) {
      PrintError("encode", StrCat("--", flag, " '", *path, "' is the tokenizer file '", file,
                                  "': writing it would replace the tokenizer"));
      return kExitUsage;
    }
  }
  if (corpus.format != TokenFileFormat::kText && (corpus.output.empty() || corpus.output == "-") &&
      isatty(STDOUT_FILENO)) {
    PrintError("encode", "binary ids would go to the terminal: give --output FILE");
    return kExitUsage;
  }
  // --threads bounds the whole command: loading the vocabulary too (a .tiktoken's ranks, merges
  // and tables are built in parallel), not only the encoding.
  std::optional<tbb::global_control> command_threads;
  if (options.threads > 0) {
    command_threads.emplace(tbb::global_control::max_allowed_parallelism,
                            static_cast<size_t>(ThreadCount(options.threads)));
  }
  EncoderOptions encoder_options;
  encoder_options.unknown_bytes = options.unknown_bytes;
  encoder_options.unigram_alpha = options.alpha;
  encoder_options.unigram_nbest = options.nbest;
  encoder_options.sample_seed = options.seed;
  absl::StatusOr<std::unique_ptr<Encoder>> encoder = LoadEncoder(options.tokenizer, encoder_options);
  if (!encoder.ok()) {
    PrintError("encode", encoder.status());
    return kExitFailure;
  }
  if (options.alpha > 0 && (*encoder)->model().type() != ModelType::kUnigram) {
    PrintError("encode", StrCat("--alpha samples Unigram segmentations; ", options.tokenizer,
                                " is a ", ModelTypeName((*encoder)->model().type()), " model"));
    return kExitUsage;
  }
  SpecialPolicy policy = options.specials == "allow"      ? SpecialPolicy::kAllow
                         : options.specials == "disallow" ? SpecialPolicy::kDisallow
                                                          : SpecialPolicy::kAsText;
  if (!legacy) {
    corpus.specials = policy;
    corpus.threads = options.threads;
    corpus.stats = options.stats;
    if (!options.eot.empty()) {
      absl::StatusOr<TokenId> eot = EotId((*encoder)->model(), options.eot);
      if (!eot.ok()) {
        PrintError("encode", eot.status());
        return kExitUsage;
      }
      corpus.eot = *eot;
    }
    absl::StatusOr<EncodeCorpusResult> result = EncodeCorpus(
        **encoder, corpus, [] { return InterruptGuard::signal_number() != 0; });
    if (int sig = InterruptGuard::signal_number(); sig != 0 && !result.ok() &&
                                                   absl::IsCancelled(result.status())) {
      std::fprintf(stderr, "tokenmill encode: interrupted; nothing was written\n");
      return 128 + sig;
    }
    if (!result.ok()) return ReportError("encode", result.status());
    if (result->skipped_records > 0) {
      std::fprintf(stderr, "tokenmill encode: skipped %llu bad JSON records; the first: %s\n",
                   static_cast<unsigned long long>(result->skipped_records),
                   ShowFlags(result->first_skipped).c_str());
    }
    if (options.stats) PrintStats((*encoder)->model(), *result);
    return kExitOk;
  }
  const std::string input = corpus.reading.inputs[0];
  tbb::global_control parallelism(
      tbb::global_control::max_allowed_parallelism,
      static_cast<size_t>(ThreadCount(options.threads)));
  absl::Status status;
  if (options.whole) {
    absl::StatusOr<std::string> text = ReadFile(input);
    if (!text.ok()) {
      PrintError("encode", text.status());
      return kExitFailure;
    }
    absl::StatusOr<std::vector<TokenId>> ids = (*encoder)->Encode(*text, policy);
    if (ids.ok()) {
      std::string out;
      AppendIds(*ids, out);
      std::fwrite(out.data(), 1, out.size(), stdout);
    } else {
      status = absl::InvalidArgumentError(StrCat(input, ": ", ids.status().message()));
    }
  } else {
    LineEncoder lines(**encoder, policy, input, std::max<size_t>(1, options.block_bytes));
    absl::Status read = ForEachLine(input, [&](std::string_view line) { lines.Add(line); });
    status = lines.Finish();
    if (status.ok()) status = read;
  }
  if (!status.ok()) {
    PrintError("encode", status);
    return kExitFailure;
  }
  return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
}

int RunDecode(int argc, char** argv) {
  DecodeCommandOptions options;
  FlagSet flags("decode", "--tokenizer FILE [FILE]",
                "Decodes lines of space-separated token ids from FILE (or stdin) back into the\n"
                "exact bytes they encode. Newlines between lines are not added: they are ids too.");
  flags.AddString("tokenizer", &options.tokenizer,
                  "tokenizer.json or .tiktoken to decode with (required). " + std::string(kCacheHelp));
  flags.AddBool("lossy", &options.lossy,
                "write valid UTF-8: each invalid byte sequence of a line's text becomes U+FFFD");
  flags.AddChoice("input-format", &options.input_format, {"auto", "text", "u16", "u32", "npy"},
                  "a token file of `tokenmill encode --output`: u16, u32, npy, or text (lines of "
                  "ids); auto: npy by its header, u16/u32 by the extension .u16/.u32, else text. "
                  "A binary file's ids are decoded as one sequence");
  ParsedInput parsed = ParseOneInput(flags, "decode", options.tokenizer, argc, argv);
  if (parsed.exit_code >= 0) return parsed.exit_code;
  absl::StatusOr<std::unique_ptr<Encoder>> encoder = LoadEncoder(options.tokenizer);
  if (!encoder.ok()) {
    PrintError("decode", encoder.status());
    return kExitFailure;
  }
  std::optional<TokenFileFormat> binary;
  bool text_guessed = false;  // read as text only because nothing said otherwise
  if (options.input_format != "auto" && options.input_format != "text") {
    binary = *ParseTokenFileFormat(options.input_format);
  } else if (options.input_format == "auto" && parsed.input != "-") {
    absl::StatusOr<TokenFileFormat> detected = DetectTokenFileFormat(parsed.input, std::nullopt);
    if (detected.ok() && *detected != TokenFileFormat::kText) binary = *detected;
    text_guessed = !detected.ok();
  }
  if (binary) {
    if (parsed.input == "-") {
      PrintError("decode", "a binary token file is read from a file: give its path");
      return kExitUsage;
    }
    absl::StatusOr<MappedTokenFile> file = MappedTokenFile::Open(parsed.input, *binary);
    if (!file.ok()) {
      PrintError("decode", file.status());
      return kExitFailure;
    }
    // One sequence (decoders that drop a first space or join WordPiece tokens see it whole),
    // decoded in parts so that memory stays small whatever the file's size; every id is
    // checked first, so that a bad one leaves nothing on stdout.
    constexpr size_t kPartIds = size_t{1} << 16;
    const size_t id_bound = (*encoder)->model().token_bytes().size();
    if (*binary == TokenFileFormat::kU16 && LooksLikeU32ReadAsU16(*file, (id_bound - 1) >> 16)) {
      std::fprintf(stderr,
                   "tokenmill decode: warning: %s: read as u16 ids, but every second one is %s "
                   "(a u32 id's high half): is it a file of u32 ids? then give --input-format u32\n",
                   parsed.input.c_str(),
                   id_bound <= (size_t{1} << 16) ? "0" : StrCat("at most ", (id_bound - 1) >> 16).c_str());
    }
    std::vector<TokenId> ids;
    for (size_t begin = 0; begin < file->size(); begin += kPartIds) {
      ids.clear();
      file->AppendIds(begin, std::min(file->size(), begin + kPartIds), ids);
      if (absl::Status s = (*encoder)->CheckDecodable(ids, begin); !s.ok()) {
        // The first id that is no token, for the hint.
        const TokenId bad = *std::find_if(ids.begin(), ids.end(),
                                          [&](TokenId id) { return !(*encoder)->Decodable(id); });
        PrintError("decode", StrCat(parsed.input, ": ", s.message(),
                                    *binary == TokenFileFormat::kU32 ? U16ReadAsU32Hint(bad, id_bound) : ""));
        return kExitFailure;
      }
    }
    std::string text, open;  // open: --lossy, a character the next part may complete
    for (size_t begin = 0; begin < file->size(); begin += kPartIds) {
      const size_t end = std::min(file->size(), begin + kPartIds);
      ids.clear();
      file->AppendIds(begin, end, ids);
      text = open;
      absl::Status decoded = (*encoder)->DecodeTo(ids, text, {begin == 0, end == file->size(), begin});
      if (!decoded.ok()) {
        PrintError("decode", StrCat(parsed.input, ": ", decoded.message()));
        return kExitFailure;
      }
      if (options.lossy) {
        const size_t tail = end == file->size() ? 0 : OpenUtf8Tail(text);
        open = text.substr(text.size() - tail);
        text = ReplaceInvalidUtf8(std::string_view(text).substr(0, text.size() - tail));
      }
      if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size()) break;  // reported by main()
    }
    return kExitOk;  // main() reports a failed write to stdout
  }
  absl::Status status;
  uint64_t line_number = 0;
  std::vector<TokenId> ids;
  std::string text;
  absl::Status read = ForEachLine(parsed.input, [&](std::string_view line) {
    ++line_number;
    if (!status.ok()) return;
    ids.clear();
    if (absl::Status parsed_line = ParseIdLine(line, &ids); !parsed_line.ok()) {
      status = absl::InvalidArgumentError(
          StrCat(parsed.input, ":", line_number, ": ", parsed_line.message(),
                 text_guessed ? " (read as lines of ids, as its name has no .u16/.u32/.npy: "
                                "for a binary token file give --input-format u16, u32 or npy)"
                              : ""));
      return;
    }
    text.clear();
    absl::Status decoded = (*encoder)->DecodeTo(ids, text);
    if (!decoded.ok()) {
      status = absl::InvalidArgumentError(
          StrCat(parsed.input, ":", line_number, ": ", decoded.message()));
      return;
    }
    if (options.lossy) text = ReplaceInvalidUtf8(text);
    std::fwrite(text.data(), 1, text.size(), stdout);
  });
  if (status.ok()) status = read;
  if (!status.ok()) {
    PrintError("decode", status);
    return kExitFailure;
  }
  return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
}

}  // namespace tokenmill::cli
