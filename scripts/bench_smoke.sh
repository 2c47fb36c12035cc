#!/usr/bin/env bash
# Smoke test of the microbenchmarks (CI): runs every BM_* function of tokenmill_bench once on the
# bundled sample (tests/data/sample.txt, 1.1 MB), with a short minimum time, and fails if any
# benchmark fails or the whole run takes longer than the limit. It checks that the benchmarks
# build, run and finish; the figures it prints are not measurements to quote.
#
# Usage: scripts/bench_smoke.sh [BUILD_DIR] [extra benchmark flags...]
#   BUILD_DIR defaults to build/ and must already hold tokenmill_bench (scripts/build.sh).
# Environment: BENCH_SMOKE_LIMIT_S (default 60), the limit on the whole run in seconds.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${1:-"$root/build"}
shift || true
bench="$build_dir/tokenmill_bench"
limit=${BENCH_SMOKE_LIMIT_S:-60}
if [[ ! -x $bench ]]; then
  echo "bench_smoke.sh: error: no benchmark executable at $bench (build with scripts/build.sh $build_dir)" >&2
  exit 2
fi

start=$(date +%s%N)
rc=0
TOKENMILL_BENCH_FILE="$root/tests/data/sample.txt" timeout -k 5 "$limit" "$bench" \
  --benchmark_min_time=0.01 --benchmark_counters_tabular=true "$@" || rc=$?
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
if ((rc == 124 || rc == 137)); then
  echo "bench_smoke.sh: error: the benchmarks did not finish within ${limit} s on the bundled sample" >&2
  exit 1
elif ((rc != 0)); then
  echo "bench_smoke.sh: error: tokenmill_bench exited with status $rc" >&2
  exit 1
fi
printf 'bench_smoke.sh: every benchmark ran on the bundled sample in %d.%03d s (limit %d s)\n' \
  $((elapsed_ms / 1000)) $((elapsed_ms % 1000)) "$limit"
