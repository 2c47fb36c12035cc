// Fuzzes tokenizer.json loading (FromHfJson). Any bytes must give a model or an error, never
// a crash; an accepted model must validate, write back to the same model (ToHfJson round
// trip) and encode losslessly (model_check.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_util.h"
#include "model/bpe/bpe_hf_json.h"
#include "model/hf_json.h"
#include "model_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenmill;
  std::string_view json(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<BpeModel> model = BpeModelFromHfJson(json, "fuzz.json");
  if (!model.ok()) {
    if (model.status().message().find("fuzz.json") == std::string_view::npos) {
      fuzz::Fail("the error does not name the input:", model.status().message());
    }
    return 0;
  }
  absl::StatusOr<BpeModel> again = BpeModelFromHfJson(ToHfJson(*model), "written.json");
  if (!again.ok()) fuzz::Fail("ToHfJson output does not load:", again.status().message());
  if (!(*again == *model)) fuzz::Fail("ToHfJson/FromHfJson round trip changed the model");
  fuzz::CheckLoadedModel(*model, "Hello wörld 123 <|endoftext|>  \n\xff");
  return 0;
}
