#include "flags.h"

#include <cstdio>

#include "absl/strings/numbers.h"
#include "common/strings.h"
#include "absl/strings/str_join.h"

namespace tokenmill::cli {
namespace {

std::string Quote(const std::string& s) { return StrCat("\"", s, "\""); }

}  // namespace

FlagSet::FlagSet(std::string command, std::string usage, std::string description)
    : command_(std::move(command)), usage_(std::move(usage)), description_(std::move(description)) {}

void FlagSet::Add(Flag flag) { flags_.push_back(std::move(flag)); }

void FlagSet::AddString(std::string name, std::string* target, std::string help) {
  Add({name, "TEXT", target->empty() ? "none" : Quote(*target), std::move(help),
       [target](std::string_view v) { *target = std::string(v); return absl::OkStatus(); }});
}

void FlagSet::AddStrings(std::string name, std::vector<std::string>* target, std::string help) {
  Add({name, "TEXT", target->empty() ? "none" : absl::StrJoin(*target, ","),
       std::move(help) + " (repeatable)",
       [target](std::string_view v) {
         target->emplace_back(v);
         return absl::OkStatus();
       }});
}

void FlagSet::AddChoice(std::string name, std::string* target, std::vector<std::string> choices,
                        std::string help) {
  AddChoiceOf(std::move(name), choices, std::move(help),
              [target, choices](size_t i) { *target = choices[i]; }, *target);
}

void FlagSet::AddChoiceOf(std::string name, std::vector<std::string> names, std::string help,
                          std::function<void(size_t)> set, std::string current) {
  std::string value_name = absl::StrJoin(names, "|");
  Add({name, value_name, std::move(current), std::move(help),
       [set, names, name](std::string_view v) -> absl::Status {
         for (size_t i = 0; i < names.size(); ++i) {
           if (names[i] == v) {
             set(i);
             return absl::OkStatus();
           }
         }
         return absl::InvalidArgumentError(StrCat("--", name, " must be one of ",
                                                  absl::StrJoin(names, ", "), ", not '", v, "'"));
       }});
}

template <typename T>
static std::function<absl::Status(std::string_view)> NumberSetter(std::string name, T* target,
                                                                  std::string_view kind) {
  return [target, name, kind = std::string(kind)](std::string_view v) -> absl::Status {
    T parsed;
    if (!ParseInt(v, &parsed)) {
      return absl::InvalidArgumentError(StrCat("--", name, " needs ", kind, ", not '", v, "'"));
    }
    *target = parsed;
    return absl::OkStatus();
  };
}

void FlagSet::AddSize(std::string name, size_t* target, std::string help) {
  Add({name, "N", StrCat(*target), std::move(help),
       NumberSetter(name, target, "a non-negative whole number")});
}

void FlagSet::AddUint64(std::string name, uint64_t* target, std::string help) {
  Add({name, "N", StrCat(*target), std::move(help),
       NumberSetter(name, target, "a non-negative whole number")});
}

void FlagSet::AddInt(std::string name, int* target, std::string help) {
  Add({name, "N", StrCat(*target), std::move(help), NumberSetter(name, target, "a whole number")});
}

void FlagSet::AddDouble(std::string name, double* target, std::string help) {
  Add({name, "X", StrCat(*target), std::move(help),
       [target, name](std::string_view v) -> absl::Status {
         if (!absl::SimpleAtod(ToAbsl(v), target)) {
           return absl::InvalidArgumentError(StrCat("--", name, " needs a number, not '", v, "'"));
         }
         return absl::OkStatus();
       }});
}

void FlagSet::AddBool(std::string name, bool* target, std::string help) {
  Flag flag{name, "", *target ? "true" : "false", std::move(help),
            [target, name](std::string_view v) -> absl::Status {
              if (v == "true" || v == "1" || v == "yes") {
                *target = true;
              } else if (v == "false" || v == "0" || v == "no") {
                *target = false;
              } else {
                return absl::InvalidArgumentError(
                    StrCat("--", name, " takes true or false, not '", v, "'"));
              }
              return absl::OkStatus();
            }};
  flag.is_bool = true;
  Add(std::move(flag));
}

std::vector<std::string> FlagSet::SetFlags() const {
  std::vector<std::string> names;
  for (const Flag& f : flags_) {
    if (f.was_set) names.push_back(f.name);
  }
  return names;
}

bool FlagSet::WasSet(std::string_view name) const {
  for (const Flag& f : flags_) {
    if (f.name == name) return f.was_set;
  }
  return false;
}

absl::StatusOr<std::vector<std::string>> FlagSet::Parse(int argc, char** argv, int first) {
  std::vector<std::string> positional;
  for (int i = first; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") {
      for (++i; i < argc; ++i) positional.emplace_back(argv[i]);
      break;
    }
    if (!arg.starts_with("--")) {
      if (arg.size() > 1 && arg[0] == '-') {
        return absl::InvalidArgumentError(
            StrCat("unknown flag '", arg, "' (flags start with --; see --help)"));
      }
      positional.emplace_back(arg);
      continue;
    }
    std::string_view body = arg.substr(2);
    std::string_view name = body;
    std::string_view value;
    bool has_value = false;
    if (size_t eq = body.find('='); eq != std::string_view::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    if (name == "help") {
      help_requested_ = true;
      continue;
    }
    Flag* flag = nullptr;
    for (Flag& f : flags_) {
      if (f.name == name) flag = &f;
    }
    if (flag == nullptr) {
      return absl::InvalidArgumentError(StrCat("unknown flag '--", name, "' (see tokenmill ",
                                                     command_, " --help)"));
    }
    if (!has_value) {
      if (flag->is_bool) {
        value = "true";
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        return absl::InvalidArgumentError(StrCat("--", name, " needs a value"));
      }
    }
    absl::Status status = flag->set(value);
    if (!status.ok()) return status;
    flag->was_set = true;
  }
  return positional;
}

std::string FlagSet::Help() const {
  std::string out = StrCat("Usage: tokenmill ", command_, " ", usage_, "\n\n", description_,
                                 "\n\nFlags:\n");
  for (const Flag& f : flags_) {
    std::string left = StrCat("  --", f.name, f.value_name.empty() ? "" : "=" + f.value_name);
    if (left.size() < 30) left.resize(30, ' ');
    else left += "\n" + std::string(30, ' ');
    StrAppend(&out, left, f.help, " [default: ", f.default_text, "]\n");
  }
  StrAppend(&out, "  --help                      Show this help and exit\n");
  return out;
}

void PrintError(std::string_view command, std::string_view message) {
  std::fprintf(stderr, "tokenmill %.*s: error: %.*s\n", static_cast<int>(command.size()),
               command.data(), static_cast<int>(message.size()), message.data());
}

}  // namespace tokenmill::cli
