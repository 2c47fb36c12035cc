// FlagSet: the command-line flags of one tokenmill command, bound to the fields of that
// command's options struct. A flag's default is the field's value when the flag is added, so
// defaults live only in the options structs and --help always shows the real ones.
//
// Accepted forms: --name=value, --name value, and for booleans --name / --name=false.
// Anything that does not start with "--" (or is exactly "-") is a positional argument; "--"
// ends the flags.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace tokenmill::cli {

class FlagSet {
 public:
  FlagSet(std::string command, std::string usage, std::string description);

  void AddString(std::string name, std::string* target, std::string help);
  void AddStrings(std::string name, std::vector<std::string>* target, std::string help);
  void AddChoice(std::string name, std::string* target, std::vector<std::string> choices,
                 std::string help);
  // A choice bound to a value of any type (an enum): each choice is (its name, its value).
  template <typename E>
  void AddEnum(std::string name, E* target, std::vector<std::pair<std::string, E>> choices,
               std::string help) {
    std::vector<std::string> names;
    for (const auto& choice : choices) names.push_back(choice.first);
    std::string current = "?";
    for (const auto& [n, v] : choices) {
      if (v == *target) current = n;
    }
    AddChoiceOf(std::move(name), std::move(names), std::move(help),
                [target, choices](size_t i) { *target = choices[i].second; }, std::move(current));
  }
  void AddSize(std::string name, size_t* target, std::string help);
  void AddUint64(std::string name, uint64_t* target, std::string help);
  void AddInt(std::string name, int* target, std::string help);
  void AddDouble(std::string name, double* target, std::string help);
  void AddBool(std::string name, bool* target, std::string help);

  // Parses argv[first..argc). Returns the positional arguments. --help sets help_requested().
  // Errors name the flag and say what was expected.
  absl::StatusOr<std::vector<std::string>> Parse(int argc, char** argv, int first);

  bool help_requested() const { return help_requested_; }
  bool WasSet(std::string_view name) const;
  // The flags set by Parse or Set, in the order they were added.
  std::vector<std::string> SetFlags() const;
  std::string Help() const;

 private:
  struct Flag {
    std::string name;
    std::string value_name;  // "" for booleans
    std::string default_text;
    std::string help;
    std::function<absl::Status(std::string_view)> set;
    bool is_bool = false;
    bool was_set = false;
  };
  void Add(Flag flag);
  // A flag taking one of `names`; set(i) stores choice i; `current` names the default.
  void AddChoiceOf(std::string name, std::vector<std::string> names, std::string help,
                   std::function<void(size_t)> set, std::string current);

  std::string command_, usage_, description_;
  std::vector<Flag> flags_;
  bool help_requested_ = false;
};

// Prints "tokenmill <command>: error: <message>" on stderr.
void PrintError(std::string_view command, std::string_view message);
// The same for a library error, with the options it names shown as flags (option_flags.h).
void PrintError(std::string_view command, const absl::Status& status);

}  // namespace tokenmill::cli
