// jemalloc's options for the tokenmill executables (the CLI and tokenmill_bench), compiled into
// them: jemalloc reads this symbol when it starts (before main), as it would read the
// MALLOC_CONF environment variable, which still overrides it (MALLOC_CONF=thp:always turns
// huge pages back on). Only linked when CMake links the executable with jemalloc
// (TOKENMILL_JEMALLOC); the library itself keeps its user's allocator.
//
// Why jemalloc: on the 2-core virtual machines we measure on, the C library's malloc gave
// memory back and faulted it in again while a vocabulary loaded (24,000 page faults and half
// of an empty `tokenmill encode` with o200k_base); jemalloc keeps what it freed for reuse.
// Why not on huge pages (thp:never, which jemalloc 5.3's `thp:always` had been): there, a
// first touch of a 2 MiB page that the machine has not touched for a while costs several
// milliseconds, so after a few seconds idle huge pages made every run slower (start-up of
// o200k_base 0.23 s against 0.15 s, linux_docs encode 0.45 against 0.31 s, Unigram brown 0.76
// against 0.64 s) and back to back they gained nothing (0.92-1.08 of the time), at 4-24 MB
// more peak memory: scripts/allocator_bench.sh, bench/RESULTS.md "Allocator".
// Nor jemalloc's own metadata (metadata_thp:disabled): on huge pages it zeroed 2 MiB before
// main and again for each thread's arena, up to 3 ms of an encode's start-up, and held 7-12
// MiB more at peak, with training no faster (bench/RESULTS.md, 2026-12-07 "run 19").
extern "C" {
const char* malloc_conf = "thp:never,metadata_thp:disabled";
}
