#include "common/option_error.h"

#include "absl/types/optional.h"

#include "absl/strings/cord.h"
#include "absl/strings/str_split.h"
#include "common/strings.h"

namespace tokenmill {
namespace {

constexpr char kNames[] = "tokenmill/options";
constexpr char kInvalid[] = "tokenmill/invalid-option";

}  // namespace

absl::Status MentioningOptions(absl::Status status, std::initializer_list<std::string_view> names) {
  std::string joined;
  if (absl::optional<absl::Cord> earlier = status.GetPayload(kNames)) joined = std::string(*earlier);
  for (std::string_view name : names) StrAppend(&joined, joined.empty() ? "" : ",", name);
  status.SetPayload(kNames, absl::Cord(joined));
  return status;
}

absl::Status OptionError(std::string_view message, std::initializer_list<std::string_view> names) {
  absl::Status status = MentioningOptions(absl::InvalidArgumentError(ToAbsl(message)), names);
  status.SetPayload(kInvalid, absl::Cord("1"));
  return status;
}

std::vector<std::string> OptionNamesOf(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kNames);
  if (!payload.has_value()) return {};
  std::vector<std::string> names;
  for (absl::string_view name : absl::StrSplit(std::string(*payload), ',', absl::SkipEmpty())) {
    names.emplace_back(name);
  }
  return names;
}

bool IsOptionError(const absl::Status& status) { return status.GetPayload(kInvalid).has_value(); }

}  // namespace tokenmill
