#include "common/version.h"

#ifndef TOKENMILL_VERSION
#error "TOKENMILL_VERSION comes from CMakeLists.txt (project VERSION)"
#endif

namespace tokenmill {

std::string_view Version() { return TOKENMILL_VERSION; }
std::string_view VersionedName() { return "tokenmill " TOKENMILL_VERSION; }

}  // namespace tokenmill
