// AdviseHugePages: asks the kernel for transparent huge pages on a large buffer's 2 MB-aligned
// interior, before the buffer is first written (a no-op where the kernel does not grant them,
// and for buffers under 8 MB).
//
// Why: large heap blocks come from mmap with 4 KB pages, and on the machines measured a fault
// costs about a microsecond more than the zeroing it does: faulting in a 66 MB table took more
// time than parsing it. The trainer's own arrays and the encoder's tables use HugeArray
// (huge_array.h); this is for std::string and std::vector buffers: reserve (which does not
// touch the memory), advise, then resize or write.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>

namespace tokenmill {

inline void AdviseHugePages(const void* data, size_t bytes) {
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  if (bytes < 4 * kHugePage) return;
  uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHugePage - 1) & ~(kHugePage - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHugePage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

}  // namespace tokenmill
