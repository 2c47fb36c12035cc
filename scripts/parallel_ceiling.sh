#!/usr/bin/env bash
# What this machine gives from 1 to N threads when nothing is shared: each thread runs the same
# fixed work of its own (a compute-bound xorshift loop; random 4-byte reads from a 64 MB table
# of its own), so T threads take as long as 1 on a machine that scales perfectly; the speed-up
# printed is T x time(1) / time(T). The ceiling for any "x from 1 to 2 threads" target on this
# machine (bench/RESULTS.md, corpus encoding). Runs alternate the thread counts; medians.
#
#   scripts/parallel_ceiling.sh [--runs N] [THREADS...]   (default: 1 2 ... nproc, 5 runs)
set -euo pipefail
runs=5
threads=()
while (($# > 0)); do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    -*) echo "parallel_ceiling.sh: unknown flag $1" >&2; exit 2 ;;
    *) threads+=("$1"); shift ;;
  esac
done
((${#threads[@]} > 0)) || mapfile -t threads < <(seq 1 "$(nproc)")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/ceiling.cc" <<'EOF'
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

// argv: threads, "compute" | "reads". Prints the wall seconds of all threads' work.
int main(int argc, char** argv) {
  const int threads = std::atoi(argv[1]);
  const bool reads = std::strcmp(argv[2], "reads") == 0;
  constexpr size_t kTable = size_t{1} << 24;  // 4-byte entries: 64 MB per thread
  const long steps = reads ? 40'000'000 : 400'000'000;
  std::vector<std::vector<uint32_t>> tables(threads);
  for (auto& t : tables) t.assign(reads ? kTable : 1, 1);  // touched before the clock starts
  std::vector<uint64_t> sums(threads);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int k = 0; k < threads; ++k) {
    pool.emplace_back([&, k] {
      uint64_t x = 88172645463325252ull + k, sum = 0;
      const uint32_t* table = tables[k].data();
      for (long i = 0; i < steps; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        sum += reads ? table[x & (kTable - 1)] : (x >> 3);
      }
      sums[k] = sum;
    });
  }
  for (auto& t : pool) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  uint64_t all = 0;
  for (uint64_t s : sums) all += s;
  std::printf("%.4f %llu\n", seconds, static_cast<unsigned long long>(all & 1));
}
EOF
g++ -O2 -pthread "$work/ceiling.cc" -o "$work/ceiling"
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
echo "$(nproc) cores, $runs runs, medians; speed-up = T x time(1 thread) / time(T threads)"
echo
echo "| work | threads | seconds | speed-up |"
echo "|---|---|---|---|"
for kind in compute reads; do
  for ((i = 0; i < runs; i++)); do
    order=("${threads[@]}")
    if ((i % 2 == 1)); then mapfile -t order < <(printf '%s\n' "${threads[@]}" | tac); fi
    for t in "${order[@]}"; do "$work/ceiling" "$t" "$kind" | cut -d' ' -f1 >> "$work/$kind.$t"; done
  done
  base=$(median < "$work/$kind.${threads[0]}")
  for t in "${threads[@]}"; do
    m=$(median < "$work/$kind.$t")
    printf '| %s | %s | %.3f | %.2f× |\n' "$kind" "$t" "$m" "$(echo "$t * $base / $m / ${threads[0]}" | bc -l)"
  done
done
