// tokenmill pretokenize: prints the pieces a pre-tokenizer cuts the input into, one per line, so
// that users can see why text is split the way it is.
//
// The input (FILE or stdin) is split as one text, as tokenmill's encode --whole does; special
// tokens (--special-token) are cut out first, longest match first, and the text between them
// is prepared (normalization, the metaspace: text_prep.h) before it is split, as in training.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "corpus_flags.h"
#include "common/file_util.h"
#include "common/strings.h"
#include "flags.h"
#include "pretokenize/pretokenizer.h"
#include "pretokenize/presets.h"
#include "pretokenize/special_tokens.h"
#include "pretokenize/text_prep.h"

namespace tokenmill::cli {
namespace {

struct PretokenizeCommandOptions {
  PreTokenizerConfig pretokenizer;
  std::vector<std::string> special_tokens;
};

constexpr char kDescription[] =
    "Prints the pieces that the pre-tokenizer splits FILE (or stdin) into, one piece a line.\n"
    "The input is split as one text, prepared first as training prepares it (--normalize,\n"
    "--strip-accents, --lowercase, BERT's normalizer with --preset bert, \u2581 for spaces\n"
    "with --preset metaspace). Each piece is escaped so that it fits on one line:\n"
    "  \\\\ for a backslash, \\n \\r \\t for newline, carriage return and tab, \\xHH for any\n"
    "  other byte below 0x20, for 0x7F and for each byte that is not valid UTF-8; all other\n"
    "  characters (spaces and valid non-ASCII UTF-8 included) are printed as they are.\n"
    "A special token (--special-token) is printed as '\\special ' followed by the escaped\n"
    "token; no ordinary piece can print like that, since its backslashes are doubled.\n"
    "\n"
    "Custom patterns (--pattern, also in train and count): any regex PCRE2 accepts, with\n"
    "PCRE2's meaning (UTF and Unicode properties on; look-around, \\w, \\d, \\p{P}, \\p{Han},\n"
    "...), run by PCRE2 with JIT (without it where the pattern recurses or calls a group as\n"
    "a subroutine, (?R) (?1) (?&name) \\g<1>: PCRE2's JIT cannot stop such a call that loops).\n"
    "The pieces are its matches, searched for one after another; an empty string is never a\n"
    "match; text no match covers is cut into pieces too, so nothing is lost. The presets run\n"
    "on exact hand-written scanners; a pattern equal to a preset's gets that preset's scanner.";

void AppendEscaped(std::string_view piece, std::string& out) {
  const auto* s = reinterpret_cast<const unsigned char*>(piece.data());
  size_t i = 0;
  while (i < piece.size()) {
    const unsigned char b = s[i];
    size_t len = 1;
    if (b >= 0x80) {
      // A valid UTF-8 sequence is copied; any other byte is escaped.
      len = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
      const std::string_view rest = piece.substr(i, len);
      bool valid = b >= 0xC2 && b <= 0xF4 && rest.size() == len;
      for (size_t k = 1; valid && k < len; ++k) valid = (s[i + k] & 0xC0) == 0x80;
      if (valid && b == 0xE0) valid = s[i + 1] >= 0xA0;
      if (valid && b == 0xED) valid = s[i + 1] < 0xA0;
      if (valid && b == 0xF0) valid = s[i + 1] >= 0x90;
      if (valid && b == 0xF4) valid = s[i + 1] < 0x90;
      if (valid) {
        out.append(rest);
        i += len;
        continue;
      }
      len = 1;
    }
    if (b == '\\') {
      out += "\\\\";
    } else if (b == '\n') {
      out += "\\n";
    } else if (b == '\r') {
      out += "\\r";
    } else if (b == '\t') {
      out += "\\t";
    } else if (b < 0x20 || b >= 0x7F) {
      static constexpr char kHex[] = "0123456789ABCDEF";
      out += "\\x";
      out.push_back(kHex[b >> 4]);
      out.push_back(kHex[b & 15]);
    } else {
      out.push_back(static_cast<char>(b));
    }
    i += len;
  }
}

}  // namespace

int RunPretokenize(int argc, char** argv) {
  PretokenizeCommandOptions options;
  FlagSet flags("pretokenize", "[--preset NAME | --pattern REGEX] [--special-token T]... [FILE]",
                kDescription);
  flags.AddChoice("preset", &options.pretokenizer.preset, PresetNames(),
                  "pre-tokenizer preset");
  AddTextFlags(flags, &options.pretokenizer);
  flags.AddString("pattern", &options.pretokenizer.pattern,
                  "a custom pattern (any PCRE2 regex) instead of a preset");
  flags.AddStrings("special-token", &options.special_tokens,
                   "a literal token cut out before pre-tokenization");
  absl::StatusOr<std::vector<std::string>> positional = flags.Parse(argc, argv, 2);
  if (!positional.ok()) {
    PrintError("pretokenize", positional.status());
    return kExitUsage;
  }
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return kExitOk;
  }
  if (positional->size() > 1) {
    PrintError("pretokenize", "give at most one input file (or none to read stdin)");
    return kExitUsage;
  }
  if (absl::Status s = FinishPreTokenizerFlags(flags, &options.pretokenizer); !s.ok()) {
    PrintError("pretokenize", s);
    return kExitUsage;
  }
  absl::StatusOr<std::unique_ptr<PreTokenizer>> pretokenizer =
      PreTokenizer::Create(options.pretokenizer);
  if (!pretokenizer.ok()) {
    PrintError("pretokenize", StrCat(flags.WasSet("pattern") ? "--pattern: " : "--preset: ",
                                     Message(pretokenizer.status())));
    return kExitUsage;
  }
  absl::StatusOr<std::unique_ptr<TextPrep>> prep = TextPrep::Create(options.pretokenizer);
  if (!prep.ok()) {
    PrintError("pretokenize", prep.status());
    return kExitFailure;
  }
  absl::StatusOr<std::unique_ptr<SpecialTokenMatcher>> specials =
      SpecialTokenMatcher::Create(options.special_tokens);
  if (!specials.ok()) {
    PrintError("pretokenize", StrCat("--special-token: ", Message(specials.status())));
    return kExitUsage;
  }
  const std::string input = positional->empty() ? "-" : (*positional)[0];
  absl::StatusOr<std::string> text = ReadFile(input);
  if (!text.ok()) {
    PrintError("pretokenize", text.status());
    return kExitFailure;
  }
  std::string out, prepared;
  auto flush_if_full = [&] {
    if (out.size() >= (1 << 20)) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
  };
  (*specials)->Split(*text, [&](std::string_view segment, int special_index) {
    if (special_index >= 0) {
      out += "\\special ";
      AppendEscaped(segment, out);
      out.push_back('\n');
      flush_if_full();
      return;
    }
    (*pretokenizer)->Split((*prep)->Prepared(segment, prepared), [&](std::string_view piece) {
      AppendEscaped(piece, out);
      out.push_back('\n');
      flush_if_full();
    });
  });
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (std::fflush(stdout) != 0) {
    PrintError("pretokenize", "cannot write the output");
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace tokenmill::cli
