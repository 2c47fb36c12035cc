#include <string_view>

#include "pretokenize/pretokenizer_config.h"

namespace tokenmill {
namespace {

struct NamedForm {
  NormalForm form;
  std::string_view name;
};
constexpr NamedForm kNormalForms[] = {
    {NormalForm::kNone, "none"},
    {NormalForm::kNfc, "nfc"},
    {NormalForm::kNfkc, "nfkc"},
};

}  // namespace

std::string_view NormalFormName(NormalForm form) {
  for (const NamedForm& named : kNormalForms) {
    if (named.form == form) return named.name;
  }
  return "unknown";
}

bool ParseNormalForm(std::string_view name, NormalForm* form) {
  for (const NamedForm& named : kNormalForms) {
    if (named.name == name) {
      *form = named.form;
      return true;
    }
  }
  return false;
}

}  // namespace tokenmill
