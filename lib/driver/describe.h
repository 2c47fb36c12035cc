// A checkpoint described for people (`tokenmill inspect`): its format and size, the merges done
// of the target, the options it stores, and the corpus fingerprint.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "checkpoint/checkpoint.h"

namespace tokenmill {

// `label(name)` is how the caller spells an option (the CLI: its flag, "--vocab-size"; the
// default: the library's name). An option with an empty label is left out.
std::string DescribeCheckpoint(
    const Checkpoint& checkpoint,
    const std::function<std::string(std::string_view name)>& label = nullptr);

}  // namespace tokenmill
