// Fuzzes .tiktoken loading (FromTiktoken). Input: one mode byte, then either the ranks file
// (with a fixed sidecar) or "sidecar \xff\xfe ranks". Any bytes must give a model or an error
// that names a file, never a crash; an accepted model must validate, save back to the same
// model (ToTiktoken round trip) and encode losslessly (model_check.h).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "model/tiktoken_file.h"
#include "model_check.h"

namespace {
constexpr std::string_view kSidecar =
    R"({"name": "fuzz", "pattern": "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+", )"
    R"("special_tokens": {"<|endoftext|>": 256}, "n_ranks": 256, "explicit_n_vocab": null})";
constexpr std::string_view kSeparator = "\xff\xfe";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenmill;
  if (size == 0) return 0;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string_view sidecar = kSidecar, ranks = rest;
  if (data[0] & 1) {
    size_t cut = rest.find(kSeparator);
    if (cut == std::string_view::npos) return 0;
    sidecar = rest.substr(0, cut);
    ranks = rest.substr(cut + kSeparator.size());
  }
  absl::StatusOr<BpeModel> model = FromTiktoken(ranks, "fuzz.tiktoken", sidecar, "fuzz.json");
  if (!model.ok()) {
    absl::string_view message = model.status().message();
    if (message.find("fuzz.tiktoken") == absl::string_view::npos &&
        message.find("fuzz.json") == absl::string_view::npos) {
      fuzz::Fail("the error names no file:", message);
    }
    return 0;
  }
  absl::StatusOr<TiktokenText> written = ToTiktoken(*model, "fuzz");
  if (written.ok()) {
    absl::StatusOr<BpeModel> again =
        FromTiktoken(written->ranks, "w.tiktoken", written->sidecar, "w.json");
    if (!again.ok()) fuzz::Fail("ToTiktoken output does not load:", again.status().message());
    if (!(*again == *model)) fuzz::Fail("ToTiktoken/FromTiktoken round trip changed the model");
  }
  fuzz::CheckLoadedModel(*model, "Hello wörld 123 <|endoftext|>  \n\xff");
  return 0;
}
