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

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "common/file_util.h"
#include "common/strings.h"
#include "corpus/line_reader.h"
#include "flags.h"
#include "model/encoder.h"
#include "model/id_text.h"
#include "model/model_file.h"
#include "model/text_display.h"

namespace tokenmill::cli {
namespace {

struct EncodeCommandOptions {
  std::string tokenizer;
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
};

absl::StatusOr<std::unique_ptr<Encoder>> LoadEncoder(const std::string& path,
                                                     EncoderOptions options = {}) {
  absl::StatusOr<std::unique_ptr<Model>> model = LoadModel(path);
  if (!model.ok()) return model.status();
  return Encoder::Create(*std::move(model), options);
}

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

}  // namespace

int RunEncode(int argc, char** argv) {
  EncodeCommandOptions options;
  FlagSet flags("encode", "--tokenizer FILE [FILE]",
                "Encodes FILE (or stdin) into token ids: one output line of space-separated ids\n"
                "per input line (the line's newline included in its ids). The tokenizer is a\n"
                "tokenizer.json or a .tiktoken file (with its .json sidecar, or the sidecar itself).");
  flags.AddString("tokenizer", &options.tokenizer, "tokenizer.json or .tiktoken to encode with (required)");
  flags.AddBool("whole", &options.whole, "encode the whole input as one text: one output line");
  flags.AddChoice("specials", &options.specials, {"allow", "disallow", "text"},
                  "special tokens in the input: become their ids, are an error, or are encoded as text");
  flags.AddEnum("unknown-bytes", &options.unknown_bytes,
                {{"error", UnknownBytes::kError}, {"drop", UnknownBytes::kDrop}},
                "a byte no token holds (a --hf-compat vocabulary has only the bytes seen in "
                "training): an error naming the line and byte, or left out as Hugging Face does");
  flags.AddInt("threads", &options.threads, "worker threads for line encoding (0: all cores)");
  flags.AddSize("block-bytes", &options.block_bytes, "lines are encoded in parallel blocks of about this many bytes");
  flags.AddDouble("alpha", &options.alpha,
                  "Unigram: sample each piece's segmentation with probability proportional to "
                  "exp(alpha * score) instead of taking the best (subword regularization; 0: off)");
  flags.AddInt("nbest", &options.nbest,
               "with --alpha: sample among the N best segmentations (0: among all of them, by "
               "forward filtering and backward sampling)");
  flags.AddUint64("seed", &options.seed,
                  "with --alpha: the random seed (each thread's generator starts from it: with "
                  "--threads 1 the draws repeat)");
  ParsedInput parsed = ParseOneInput(flags, "encode", options.tokenizer, argc, argv);
  if (parsed.exit_code >= 0) return parsed.exit_code;
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
  tbb::global_control parallelism(
      tbb::global_control::max_allowed_parallelism,
      options.threads > 0 ? static_cast<size_t>(options.threads)
                          : std::max(1u, std::thread::hardware_concurrency()));
  absl::Status status;
  if (options.whole) {
    absl::StatusOr<std::string> text = ReadFile(parsed.input);
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
      status = absl::InvalidArgumentError(StrCat(parsed.input, ": ", ids.status().message()));
    }
  } else {
    LineEncoder lines(**encoder, policy, parsed.input, std::max<size_t>(1, options.block_bytes));
    absl::Status read = ForEachLine(parsed.input, [&](std::string_view line) { lines.Add(line); });
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
  flags.AddString("tokenizer", &options.tokenizer, "tokenizer.json or .tiktoken to decode with (required)");
  flags.AddBool("lossy", &options.lossy,
                "write valid UTF-8: each invalid byte sequence of a line's text becomes U+FFFD");
  ParsedInput parsed = ParseOneInput(flags, "decode", options.tokenizer, argc, argv);
  if (parsed.exit_code >= 0) return parsed.exit_code;
  absl::StatusOr<std::unique_ptr<Encoder>> encoder = LoadEncoder(options.tokenizer);
  if (!encoder.ok()) {
    PrintError("decode", encoder.status());
    return kExitFailure;
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
          StrCat(parsed.input, ":", line_number, ": ", parsed_line.message()));
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
