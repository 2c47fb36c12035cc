// tokenmill encode / decode: text <-> token ids with a saved tokenizer.
//
// encode: each input line (with its '\n') becomes one output line of space-separated ids;
//         --whole encodes the whole input as one text (one output line).
// decode: each input line of ids is turned back into its bytes, written with nothing added,
//         so `decode(encode(FILE)) == FILE` byte for byte.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "common/strings.h"
#include "absl/strings/str_split.h"
#include "commands.h"
#include "common/file_util.h"
#include "corpus/line_reader.h"
#include "flags.h"
#include "model/encoder.h"
#include "model/model_file.h"

namespace tokenmill::cli {
namespace {

struct EncodeCommandOptions {
  std::string tokenizer;
  bool whole = false;
  std::string specials = "allow";
};

struct DecodeCommandOptions {
  std::string tokenizer;
};

absl::StatusOr<std::unique_ptr<Encoder>> LoadEncoder(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("--tokenizer is required");
  absl::StatusOr<BpeModel> model = LoadModel(path);
  if (!model.ok()) return model.status();
  return Encoder::Create(*std::move(model));
}

// Parses flags; returns the single optional input path ("-" when none) or an exit code.
struct ParsedInput {
  std::string input = "-";
  int exit_code = -1;  // >= 0: stop with this code
};

ParsedInput ParseOneInput(FlagSet& flags, std::string_view command, int argc, char** argv) {
  ParsedInput parsed;
  absl::StatusOr<std::vector<std::string>> positional = flags.Parse(argc, argv, 2);
  if (!positional.ok()) {
    PrintError(command, positional.status());
    parsed.exit_code = kExitUsage;
  } else if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    parsed.exit_code = kExitOk;
  } else if (positional->size() > 1) {
    PrintError(command, "give at most one input file (or none to read stdin)");
    parsed.exit_code = kExitUsage;
  } else if (positional->size() == 1) {
    parsed.input = (*positional)[0];
  }
  return parsed;
}

void AppendIds(const std::vector<TokenId>& ids, std::string& out) {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out.push_back(' ');
    StrAppend(&out, ids[i]);
  }
  out.push_back('\n');
}

}  // namespace

int RunEncode(int argc, char** argv) {
  EncodeCommandOptions options;
  FlagSet flags("encode", "--tokenizer tokenizer.json [FILE]",
                "Encodes FILE (or stdin) into token ids: one output line of space-separated ids\n"
                "per input line (the line's newline included in its ids).");
  flags.AddString("tokenizer", &options.tokenizer, "tokenizer.json to encode with (required)");
  flags.AddBool("whole", &options.whole, "encode the whole input as one text: one output line");
  flags.AddChoice("specials", &options.specials, {"allow", "disallow", "text"},
                  "special tokens in the input: become their ids, are an error, or are encoded as text");
  ParsedInput parsed = ParseOneInput(flags, "encode", argc, argv);
  if (parsed.exit_code >= 0) return parsed.exit_code;
  absl::StatusOr<std::unique_ptr<Encoder>> encoder = LoadEncoder(options.tokenizer);
  if (!encoder.ok()) {
    PrintError("encode", encoder.status());
    return kExitFailure;
  }
  SpecialPolicy policy = options.specials == "allow"      ? SpecialPolicy::kAllow
                         : options.specials == "disallow" ? SpecialPolicy::kDisallow
                                                          : SpecialPolicy::kAsText;
  std::string out;
  absl::Status status;
  uint64_t line_number = 0;
  auto encode_one = [&](std::string_view text) {
    ++line_number;
    if (!status.ok()) return;
    absl::StatusOr<std::vector<TokenId>> ids = (*encoder)->Encode(text, policy);
    if (!ids.ok()) {
      status = absl::InvalidArgumentError(
          StrCat(parsed.input, ":", line_number, ": ", ids.status().message()));
      return;
    }
    AppendIds(*ids, out);
    if (out.size() > (1 << 20)) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
  };
  if (options.whole) {
    absl::StatusOr<std::string> text = ReadFile(parsed.input);
    if (!text.ok()) {
      PrintError("encode", text.status());
      return kExitFailure;
    }
    encode_one(*text);
  } else {
    absl::Status read = ForEachLine(parsed.input, encode_one);
    if (status.ok()) status = read;
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (!status.ok()) {
    PrintError("encode", status);
    return kExitFailure;
  }
  return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
}

int RunDecode(int argc, char** argv) {
  DecodeCommandOptions options;
  FlagSet flags("decode", "--tokenizer tokenizer.json [FILE]",
                "Decodes lines of space-separated token ids from FILE (or stdin) back into the\n"
                "exact bytes they encode. Newlines between lines are not added: they are ids too.");
  flags.AddString("tokenizer", &options.tokenizer, "tokenizer.json to decode with (required)");
  ParsedInput parsed = ParseOneInput(flags, "decode", argc, argv);
  if (parsed.exit_code >= 0) return parsed.exit_code;
  absl::StatusOr<std::unique_ptr<Encoder>> encoder = LoadEncoder(options.tokenizer);
  if (!encoder.ok()) {
    PrintError("decode", encoder.status());
    return kExitFailure;
  }
  absl::Status status;
  uint64_t line_number = 0;
  std::vector<TokenId> ids;
  absl::Status read = ForEachLine(parsed.input, [&](std::string_view line) {
    ++line_number;
    if (!status.ok()) return;
    ids.clear();
    for (absl::string_view field_view : absl::StrSplit(ToAbsl(line), absl::ByAnyChar(" \t\r\n"), absl::SkipEmpty())) {
      std::string_view field = ToStd(field_view);
      uint32_t id;
      if (!ParseInt(field, &id)) {
        status = absl::InvalidArgumentError(StrCat(parsed.input, ":", line_number, ": '",
                                                         field, "' is not a token id"));
        return;
      }
      ids.push_back(id);
    }
    absl::StatusOr<std::string> text = (*encoder)->Decode(ids);
    if (!text.ok()) {
      status = absl::InvalidArgumentError(
          StrCat(parsed.input, ":", line_number, ": ", text.status().message()));
      return;
    }
    std::fwrite(text->data(), 1, text->size(), stdout);
  });
  if (status.ok()) status = read;
  if (!status.ok()) {
    PrintError("decode", status);
    return kExitFailure;
  }
  return std::fflush(stdout) == 0 ? kExitOk : kExitFailure;
}

}  // namespace tokenmill::cli
