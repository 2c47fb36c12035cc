#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) if needed and runs one for a while.
# Usage: scripts/fuzz.sh TARGET SECONDS [extra libFuzzer flags...]
#   TARGET: pretokenize | custom_pattern | decode | jsonl | hf_json | tiktoken | counts_file |
#           checkpoint (or NAME_fuzz)
# Env: FUZZ_BUILD_DIR (default build-fuzz), FUZZ_JOBS (build jobs, default all cores).
# The seed corpus is tests/fuzz/seeds/TARGET (read only); new inputs go to a scratch corpus in
# $FUZZ_BUILD_DIR/corpus/TARGET, crashes to $FUZZ_BUILD_DIR/findings/TARGET. Prints the final
# executions per second and coverage (cov: edges, ft: features) and exits non-zero on a finding.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if (($# < 2)); then
  echo "usage: scripts/fuzz.sh TARGET SECONDS [libFuzzer flags...]" >&2
  exit 2
fi
target=${1%_fuzz}
seconds=$2
shift 2
build_dir=${FUZZ_BUILD_DIR:-"$root/build-fuzz"}
seeds="$root/tests/fuzz/seeds/$target"
if [[ ! -f "$root/tests/fuzz/${target}_fuzz.cc" ]]; then
  echo "fuzz.sh: no target '$target' (tests/fuzz/${target}_fuzz.cc)" >&2
  exit 2
fi

if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  generator=()
  if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
  cmake -S "$root" -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DTOKENMILL_BUILD_FUZZERS=ON \
    -DTOKENMILL_BUILD_TESTS=OFF -DTOKENMILL_BUILD_BENCHMARKS=OFF >/dev/null
fi
# One build at a time in the folder (ci_hardening.sh runs two targets at once).
flock "$build_dir/.fuzz-build.lock" \
  cmake --build "$build_dir" -j "${FUZZ_JOBS:-$(nproc)}" --target "${target}_fuzz"

corpus="$build_dir/corpus/$target"
findings="$build_dir/findings/$target"
log="$build_dir/fuzz-$target.log"
mkdir -p "$corpus" "$findings"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
echo "fuzz.sh: $target for $seconds s (log: $log)"
status=0
"$build_dir/tests/fuzz/${target}_fuzz" "$corpus" "$seeds" -max_total_time="$seconds" \
  -rss_limit_mb=2048 -timeout=30 -max_len=65536 -print_final_stats=1 \
  -artifact_prefix="$findings/" "$@" >"$log" 2>&1 || status=$?
last=$(grep -E '^#[0-9]+.*(cov|pulse|DONE|NEW|REDUCE)' "$log" | tail -1 || true)
execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}' || true)
rate=$(grep -E '^stat::average_exec_per_sec' "$log" | awk '{print $2}' || true)
echo "fuzz.sh: $target: ${execs:-?} runs, ${rate:-?} execs/s; last status: ${last:-none}"
if ((status != 0)); then
  echo "fuzz.sh: $target FOUND A PROBLEM (exit $status); inputs in $findings/; tail of the log:" >&2
  tail -40 "$log" >&2
  exit 1
fi
