// jemalloc's options for the tokenmill executables (the CLI and tokenmill_bench), compiled into
// them: jemalloc reads this symbol when it starts (before main), as it would read the
// MALLOC_CONF environment variable, which still overrides it. Only linked when CMake links the
// executable with jemalloc (TOKENMILL_JEMALLOC); the library itself keeps its user's allocator.
//
// Why: on the 2-core virtual machines we measure on, a first touch of a 4 KiB page costs about
// 7 µs in the kernel, and loading o200k_base touches ~24,000 pages (its tables, freed and
// touched again as they are built), so page faults were half of an empty `tokenmill encode`
// (0.46 s). Transparent huge pages (2 MiB, madvised: Debian's default is THP "madvise") take
// that to a few hundred faults; jemalloc asks for them on its own mappings with `thp:always`
// and on its metadata with `metadata_thp:always`, which glibc's malloc does only under the
// glibc.malloc.hugetlb tunable, an environment variable.
extern "C" {
const char* malloc_conf = "thp:always,metadata_thp:always";
}
