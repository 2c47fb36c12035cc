// The tokenmill version, set once in CMakeLists.txt (project(... VERSION ...)).
#pragma once

#include <string_view>

namespace tokenmill {

// e.g. "0.1.0"
std::string_view Version();
// "tokenmill " + Version(), as files written by tokenmill name their writer.
std::string_view VersionedName();

}  // namespace tokenmill
